"""The controller's channels: commands to each switch, messages from each switch.

Two semantics are explicit options of the network (printed in every report):

* **command order** at a switch. ``fifo``: a switch executes its commands in the order they
  arrived (the paper's and NICE's assumption). ``any``: a switch may execute any pending
  command that no earlier barrier request holds back, as OpenFlow allows (OpenFlow 1.0
  section 5.3.7, OpenFlow 1.3 section 6.2: without a barrier, a switch may reorder
  messages); a barrier request itself runs once everything before it ran.
* **threaded controller** (``threaded_controller``). Single-threaded (``False``): handler
  calls run one at a time, in the order of each switch's messages, and each call's
  commands enter a switch's channel as one piece. Threaded, any number of handler calls
  may be in flight (the superset of every fixed thread count), so the commands of different
  calls to one switch race (the paper's type-3 race): each call's commands form a *batch*,
  and a switch takes the next command of any batch. A barrier request orders the commands
  of its own batch only: the other calls' commands may arrive before or after it. Two ways:

  - ``per-switch`` (the default meaning of ``True``; os-ken and the controllers that read
    each switch's connection in one thread): the messages of one switch are handled in
    their order, one call at a time, so the calls handling one switch's messages (its
    joining, packet-ins, replies, port statistics) are sequential and their commands to a
    switch arrive in the order of the calls: each origin's commands to a switch form one
    FIFO, and the FIFOs of different origins interleave;
  - ``any``: the controller may also handle the messages of one switch in any order, and
    any two calls' commands race, whoever made them.

Representation in the state (all interned by the network's queue interner): a command
channel is a FIFO tuple of item ids (``fifo``, single-threaded), or a sorted tuple of
batches, each a tuple of item ids. Under ``per-switch`` a batch starts with the item
``("from", D)`` naming its origin switch D (the transition's ``tx.origin``; a batch made
outside any switch's call has none): the origin is part of the batch, so two channels that
differ only in who sent what differ. Under ``any`` command order each barrier-delimited
segment of a batch is kept sorted: its order carries no meaning, so states that differ only
there are equal. A controller's inbound channel (``ctrlq:D``) is a FIFO, and a sorted tuple
under ``any`` threads.

These orders are by the items' stable hashes (:class:`~nice_attendre.models.intern.Interner`),
not their ids: ids depend on the order a process met the items, and a partitioned search's
processes must agree on every state's representation, its fingerprint (a batch is hashed in
its order) and the order of its events. (Ordered by ids, a state shipped to another process
was stored there under another fingerprint: ``--command-order any`` with three workers
counted states twice, and ``--keep-going`` traces could not be rebuilt.)
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from nice_attendre.errors import InputError
from nice_attendre.models.events import ControllerHandle, SwitchProcessCommand
from nice_attendre.models.messages import BarrierRequest

if TYPE_CHECKING:
    from nice_attendre.models.network import Network, Tx

#: The command-order semantics a switch may have.
COMMAND_ORDERS = ("fifo", "any")
#: The ways a threaded controller may run its handler calls (see the module docstring).
THREAD_MODES = ("per-switch", "any")
#: What ``threaded_controller=True`` (and ``--threaded-controller`` alone) means.
DEFAULT_THREADS = "per-switch"


def check_command_order(order: str) -> str:
    """``order`` if it is one of :data:`COMMAND_ORDERS`; otherwise :class:`InputError`."""
    if order not in COMMAND_ORDERS:
        raise InputError(f"unknown command order {order!r} (known: {', '.join(COMMAND_ORDERS)})")
    return order


def check_threads(threads: bool | str | None) -> bool | str:
    """The canonical ``threaded_controller`` value: ``False`` (single-threaded), or one of
    :data:`THREAD_MODES` (``True`` is :data:`DEFAULT_THREADS`); :class:`InputError` otherwise."""
    if threads is None or threads is False:
        return False
    if threads is True:
        return DEFAULT_THREADS
    if threads not in THREAD_MODES:
        raise InputError(f"unknown threaded controller {threads!r} (known: {', '.join(THREAD_MODES)}, "
                         "or true/false)")
    return threads


def describe_semantics(command_order: str, threaded: bool | str) -> str:
    """One line for report headers: the channel semantics in force."""
    order = ("fifo: switches run commands in arrival order" if command_order == "fifo"
             else "any: switches run commands in any order barriers allow")
    threads = check_threads(threaded)
    if threads == "per-switch":
        mode = ("threaded controller, per-switch (calls for different switches race; "
                "each switch's messages in order)")
    elif threads == "any":
        mode = "threaded controller, any (handler calls race; each switch's messages in any order)"
    else:
        mode = "single-threaded controller"
    return f"{order}; {mode}"


class Channels:
    """Command and message channels of one network, under its options.

    The plain case (``fifo``, single-threaded) keeps the FIFO fast path of
    :class:`~nice_attendre.models.network.Network` (its event sources); the others enumerate
    their events here, cached per channel value.
    """

    def __init__(self, net: "Network", command_order: str, threaded: bool | str) -> None:
        self.net = net
        self.order = check_command_order(command_order)
        #: False, "per-switch" or "any" (see the module docstring).
        self.threaded = check_threads(threaded)
        self.any_order = command_order == "any"
        #: Whether one switch's messages may be handled in any order (``any`` threads).
        self.any_handling = self.threaded == "any"
        #: Whether batches carry their origin (``per-switch`` threads).
        self.per_origin = self.threaded == "per-switch"
        #: Whether a command channel holds batches (a sorted tuple of tuples) rather than a FIFO.
        self.batched = bool(self.threaded) or self.any_order
        self._command_events: dict[tuple[int, int], tuple[SwitchProcessCommand, ...]] = {}
        self._handle_events: dict[tuple[int, int], tuple[ControllerHandle, ...]] = {}
        self._fence: dict[int, bool] = {}
        #: the items' stable hashes, by id (filled as items appear): the canonical order
        self._ranks = net._items.hashes
        self._marker: dict[int, bool] = {}
        self._markers: dict[int, int] = {}
        # The plain case (FIFO, one controller thread) takes the fast paths.
        if not self.batched:
            self.take = self._take_head  # type: ignore[method-assign]
        if not self.threaded:
            self.to_controller = self._push_to_controller  # type: ignore[method-assign]
            self.from_switch = self._head_from_switch  # type: ignore[method-assign]
        elif not self.any_handling:
            self.to_controller = self._push_to_controller  # type: ignore[method-assign]

    # ---- commands to a switch -------------------------------------------------------

    def _is_fence(self, item: int) -> bool:
        found = self._fence.get(item)
        if found is None:
            found = self._fence[item] = type(self.net._items.values[item]) is BarrierRequest
        return found

    def _rank(self, item: int) -> int:
        """Item ``item``'s place in a sorted channel: its stable hash, the same in every process."""
        ranks = self._ranks
        if item >= len(ranks):
            self.net._items.fill_hashes()
        return ranks[item]

    def _batch_rank(self, batch: tuple[int, ...]) -> tuple[int, ...]:
        """A batch's place among the batches of a channel: its items' ranks, in its order."""
        return tuple(map(self._rank, batch))

    def _is_marker(self, item: int) -> bool:
        """Whether item ``item`` is the origin marker of a batch (``per-switch`` threads)."""
        found = self._marker.get(item)
        if found is None:
            value = self.net._items.values[item]
            found = self._marker[item] = type(value) is tuple and len(value) == 2 and value[0] == "from"
        return found

    def _marker_of(self, origin: int) -> int:
        """The item id of the marker of switch ``origin``'s batches."""
        found = self._markers.get(origin)
        if found is None:
            found = self._markers[origin] = self.net._items.intern(("from", origin))
        return found

    def _start(self, batch: tuple[int, ...]) -> int:
        """Where ``batch``'s commands start (1 after an origin marker)."""
        return 1 if self.per_origin and self._is_marker(batch[0]) else 0

    def _canonical(self, batch: tuple[int, ...]) -> tuple[int, ...]:
        """``batch`` with each barrier-delimited segment sorted (``any`` order only; an origin
        marker stays first)."""
        if not self.any_order:
            return batch
        start = self._start(batch)
        result: list[int] = list(batch[:start])
        segment: list[int] = []
        for item in batch[start:]:
            if self._is_fence(item):
                result.extend(sorted(segment, key=self._rank))
                result.append(item)
                segment = []
            else:
                segment.append(item)
        result.extend(sorted(segment, key=self._rank))
        return tuple(result)

    def send(self, tx: "Tx", dpid: int, messages: Sequence[Any]) -> None:
        """One handler call's ``messages`` (in the order sent) enter switch ``dpid``'s channel.

        The queue is interned once per call, however many commands it adds (building it one
        command at a time would intern every intermediate queue: quadratic memory). Under
        ``per-switch`` threads they join the batch of the call's origin (``tx.origin``) if
        one is waiting: the calls of one origin are sequential.
        """
        net = self.net
        slot = net.slot_cmdq[dpid]
        queues = net._queues
        ids = tuple(map(net._items.intern, messages))
        if not self.batched:
            tx.extend(slot, ids)
            return
        current = queues.values[tx.s[slot]]
        if self.per_origin and tx.origin is not None:
            marker = self._marker_of(tx.origin)
            for index, batch in enumerate(current):
                if batch[0] == marker:
                    batches = current[:index] + current[index + 1:] + (self._canonical(batch + ids),)
                    break
            else:
                batches = current + (self._canonical((marker,) + ids),)
        elif self.threaded:
            batches = current + (self._canonical(ids),)
        elif current:  # any order, one controller thread: one batch holds everything
            batches = (self._canonical(current[0] + ids),)
        else:
            batches = (self._canonical(ids),)
        tx.set_id(slot, queues.intern(tuple(sorted(batches, key=self._batch_rank))))

    def command_events(self, dpid: int, value: int) -> tuple[SwitchProcessCommand, ...]:
        """The commands switch ``dpid`` may execute next when its channel is ``value``: one
        event per distinct (batch, command) choice, in batch order, then position order (a
        position counts the batch's commands, not its origin marker)."""
        key = (dpid, value)
        cached = self._command_events.get(key)
        if cached is None:
            events: list[SwitchProcessCommand] = []
            seen: set[tuple[tuple[int, ...], int]] = set()
            for index, batch in enumerate(self.net._queues.values[value]):
                start = self._start(batch)
                for pick in self._choices(batch, start):
                    if (batch, batch[start + pick]) not in seen:
                        seen.add((batch, batch[start + pick]))  # type: ignore[arg-type]
                        events.append(SwitchProcessCommand(dpid, index, pick))
            cached = self._command_events[key] = tuple(events)
        return cached

    def _choices(self, batch: Any, start: int) -> range:
        """Positions, among the commands of ``batch`` (from ``start``), the switch may take next."""
        if not self.any_order or self._is_fence(batch[start]):
            return range(1)
        end = start + 1
        while end < len(batch) and not self._is_fence(batch[end]):
            end += 1
        return range(end - start)

    def _take_head(self, tx: "Tx", dpid: int, batch: int = 0, pick: int = 0) -> Any:
        """:meth:`take` for a FIFO channel: the head command."""
        return tx.pop(self.net.slot_cmdq[dpid])

    def take(self, tx: "Tx", dpid: int, batch: int, pick: int) -> Any:
        """Remove and return the command ``pick`` (counting its commands) of ``batch`` at
        switch ``dpid``."""
        net = self.net
        slot = net.slot_cmdq[dpid]
        queues = net._queues
        if not self.batched:
            queue = queues.values[tx.s[slot]]
            tx.set_id(slot, queues.intern(queue[1:]))
            return net._items.values[queue[0]]
        batches = queues.values[tx.s[slot]]
        chosen = batches[batch]
        rest = batches[:batch] + batches[batch + 1:]
        start = self._start(chosen)
        at = start + pick
        item = chosen[at]  # type: ignore[index]
        remaining = chosen[:at] + chosen[at + 1:]  # type: ignore[index]
        if len(remaining) > start:  # an origin marker alone is no batch
            rest = tuple(sorted(rest + (remaining,), key=self._batch_rank))
        tx.set_id(slot, queues.intern(rest))
        return net._items.values[item]

    # ---- messages to the controller -------------------------------------------------

    def handle_events(self, dpid: int, value: int) -> tuple[ControllerHandle, ...]:
        """Threaded controller: one event per distinct message waiting from switch ``dpid``
        (``any``), or the head one (``per-switch``)."""
        key = (dpid, value)
        cached = self._handle_events.get(key)
        if cached is None:
            queue = self.net._queues.values[value]
            if not self.any_handling:
                cached = self._handle_events[key] = (ControllerHandle(dpid),) if queue else ()
            else:
                cached = self._handle_events[key] = tuple(
                    ControllerHandle(dpid, index) for index, item in enumerate(queue) if item not in queue[:index])
        return cached

    def _push_to_controller(self, tx: "Tx", dpid: int, message: Any) -> None:
        """:meth:`to_controller` for a FIFO inbound channel (not ``any`` threads)."""
        tx.push(self.net.slot_ctrlq[dpid], message)

    def _head_from_switch(self, tx: "Tx", dpid: int, pick: int = 0) -> Any:
        """:meth:`from_switch` for a single-threaded controller: the head message."""
        return tx.pop(self.net.slot_ctrlq[dpid])

    def to_controller(self, tx: "Tx", dpid: int, message: Any) -> None:
        """Switch ``dpid`` sends ``message`` to the controller."""
        net = self.net
        slot = net.slot_ctrlq[dpid]
        if not self.any_handling:
            tx.push(slot, message)
            return
        queues = net._queues
        tx.set_id(slot, queues.intern(tuple(sorted(queues.values[tx.s[slot]] + (net._items.intern(message),),
                                                   key=self._rank))))

    def from_switch(self, tx: "Tx", dpid: int, pick: int) -> Any:
        """Remove and return message ``pick`` (0 = the head) from switch ``dpid``; the
        transition's handler call now runs for ``dpid`` (``tx.origin``)."""
        net = self.net
        slot = net.slot_ctrlq[dpid]
        queues = net._queues
        queue = queues.values[tx.s[slot]]
        tx.set_id(slot, queues.intern(queue[:pick] + queue[pick + 1:]))
        tx.origin = dpid
        return net._items.values[queue[pick]]

    # ---- decoding (reports, properties, tests) --------------------------------------

    def decode_commands(self, value: tuple[Any, ...]) -> tuple[Any, ...]:
        """A command channel's items: a FIFO of messages, or a tuple of batches of messages
        (without their origin markers: :meth:`encode_commands` makes batches of no origin)."""
        items = self.net._items.values
        if not self.batched:
            return tuple(items[i] for i in value)
        return tuple(tuple(items[i] for i in batch[self._start(batch):]) for batch in value)

    def encode_commands(self, value: Sequence[Any]) -> tuple[Any, ...]:
        """The inverse of :meth:`decode_commands` (batches canonicalised and sorted)."""
        intern = self.net._items.intern
        if not self.batched:
            return tuple(intern(item) for item in value)
        return tuple(sorted((self._canonical(tuple(intern(item) for item in batch)) for batch in value),
                            key=self._batch_rank))

    def encode_messages(self, value: Sequence[Any]) -> tuple[int, ...]:
        """A controller inbound channel from its messages (sorted under ``any`` threads)."""
        ids = tuple(self.net._items.intern(item) for item in value)
        return tuple(sorted(ids, key=self._rank)) if self.any_handling else ids
