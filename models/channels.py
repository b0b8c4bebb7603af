"""The controller's channels: commands to each switch, messages from each switch.

Two semantics are explicit options of the network (printed in every report):

* **command order** at a switch. ``fifo``: a switch executes its commands in the order they
  arrived (the paper's and NICE's assumption). ``any``: a switch may execute any pending
  command that no earlier barrier request holds back, as OpenFlow allows (OpenFlow 1.0
  section 5.3.7, OpenFlow 1.3 section 6.2: without a barrier, a switch may reorder
  messages); a barrier request itself runs once everything before it ran.
* **threaded controller**. Single-threaded: handler calls run one at a time, in the order
  of each switch's messages, and each call's commands enter a switch's channel as one
  piece. Threaded: any number of handler calls may be in flight (the superset of every
  fixed thread count), so (a) the commands of different calls to one switch race (the
  paper's type-3 race): each call's commands form a *batch*, and a switch takes the next
  command of any batch; (b) the controller may handle the messages of one switch in any
  order. A barrier request orders the commands of its own batch only: the other calls'
  commands may arrive before or after it.

Representation in the state (all interned by the network's queue interner): a command
channel is a FIFO tuple of item ids (``fifo``, single-threaded), or a sorted tuple of
batches, each a tuple of item ids. Under ``any`` each barrier-delimited segment of a batch
is kept sorted: its order carries no meaning, so states that differ only there are equal.
A threaded controller's inbound channel (``ctrlq:D``) is likewise a sorted tuple.

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


def check_command_order(order: str) -> str:
    """``order`` if it is one of :data:`COMMAND_ORDERS`; otherwise :class:`InputError`."""
    if order not in COMMAND_ORDERS:
        raise InputError(f"unknown command order {order!r} (known: {', '.join(COMMAND_ORDERS)})")
    return order


def describe_semantics(command_order: str, threaded: bool) -> str:
    """One line for report headers: the channel semantics in force."""
    order = ("fifo: switches run commands in arrival order" if command_order == "fifo"
             else "any: switches run commands in any order barriers allow")
    threads = "threaded controller (handler calls race)" if threaded else "single-threaded controller"
    return f"{order}; {threads}"


class Channels:
    """Command and message channels of one network, under its options.

    The plain case (``fifo``, single-threaded) keeps the FIFO fast path of
    :class:`~nice_attendre.models.network.Network` (its event sources); the others enumerate
    their events here, cached per channel value.
    """

    def __init__(self, net: "Network", command_order: str, threaded: bool) -> None:
        self.net = net
        self.order = check_command_order(command_order)
        self.threaded = threaded
        self.any_order = command_order == "any"
        #: Whether a command channel holds batches (a sorted tuple of tuples) rather than a FIFO.
        self.batched = threaded or self.any_order
        self._command_events: dict[tuple[int, int], tuple[SwitchProcessCommand, ...]] = {}
        self._handle_events: dict[tuple[int, int], tuple[ControllerHandle, ...]] = {}
        self._fence: dict[int, bool] = {}
        #: the items' stable hashes, by id (filled as items appear): the canonical order
        self._ranks = net._items.hashes
        # The plain case (FIFO, one controller thread) takes the fast paths.
        if not self.batched:
            self.take = self._take_head  # type: ignore[method-assign]
        if not threaded:
            self.to_controller = self._push_to_controller  # type: ignore[method-assign]
            self.from_switch = self._head_from_switch  # type: ignore[method-assign]

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

    def _canonical(self, batch: tuple[int, ...]) -> tuple[int, ...]:
        """``batch`` with each barrier-delimited segment sorted (``any`` order only)."""
        if not self.any_order:
            return batch
        result: list[int] = []
        segment: list[int] = []
        for item in batch:
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
        command at a time would intern every intermediate queue: quadratic memory).
        """
        net = self.net
        slot = net.slot_cmdq[dpid]
        queues = net._queues
        ids = tuple(map(net._items.intern, messages))
        if not self.batched:
            tx.extend(slot, ids)
            return
        current = queues.values[tx.s[slot]]
        if self.threaded:
            batches = current + (self._canonical(ids),)
        elif current:  # any order, one controller thread: one batch holds everything
            batches = (self._canonical(current[0] + ids),)
        else:
            batches = (self._canonical(ids),)
        tx.set_id(slot, queues.intern(tuple(sorted(batches, key=self._batch_rank))))

    def command_events(self, dpid: int, value: int) -> tuple[SwitchProcessCommand, ...]:
        """The commands switch ``dpid`` may execute next when its channel is ``value``: one
        event per distinct (batch, command) choice, in batch order, then position order."""
        key = (dpid, value)
        cached = self._command_events.get(key)
        if cached is None:
            events: list[SwitchProcessCommand] = []
            seen: set[tuple[tuple[int, ...], int]] = set()
            for index, batch in enumerate(self.net._queues.values[value]):
                for pick in self._choices(batch):
                    if (batch, batch[pick]) not in seen:
                        seen.add((batch, batch[pick]))  # type: ignore[arg-type]
                        events.append(SwitchProcessCommand(dpid, index, pick))
            cached = self._command_events[key] = tuple(events)
        return cached

    def _choices(self, batch: Any) -> range:
        """Positions in ``batch`` the switch may take next."""
        if not self.any_order or self._is_fence(batch[0]):
            return range(1)
        end = 1
        while end < len(batch) and not self._is_fence(batch[end]):
            end += 1
        return range(end)

    def _take_head(self, tx: "Tx", dpid: int, batch: int = 0, pick: int = 0) -> Any:
        """:meth:`take` for a FIFO channel: the head command."""
        return tx.pop(self.net.slot_cmdq[dpid])

    def take(self, tx: "Tx", dpid: int, batch: int, pick: int) -> Any:
        """Remove and return the command ``pick`` of ``batch`` at switch ``dpid``."""
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
        item = chosen[pick]  # type: ignore[index]
        remaining = chosen[:pick] + chosen[pick + 1:]  # type: ignore[index]
        if remaining:
            rest = tuple(sorted(rest + (remaining,), key=self._batch_rank))
        tx.set_id(slot, queues.intern(rest))
        return net._items.values[item]

    # ---- messages to the controller -------------------------------------------------

    def handle_events(self, dpid: int, value: int) -> tuple[ControllerHandle, ...]:
        """Threaded controller: one event per distinct message waiting from switch ``dpid``."""
        key = (dpid, value)
        cached = self._handle_events.get(key)
        if cached is None:
            queue = self.net._queues.values[value]
            cached = self._handle_events[key] = tuple(
                ControllerHandle(dpid, index) for index, item in enumerate(queue) if item not in queue[:index])
        return cached

    def _push_to_controller(self, tx: "Tx", dpid: int, message: Any) -> None:
        """:meth:`to_controller` for a single-threaded controller (a FIFO)."""
        tx.push(self.net.slot_ctrlq[dpid], message)

    def _head_from_switch(self, tx: "Tx", dpid: int, pick: int = 0) -> Any:
        """:meth:`from_switch` for a single-threaded controller: the head message."""
        return tx.pop(self.net.slot_ctrlq[dpid])

    def to_controller(self, tx: "Tx", dpid: int, message: Any) -> None:
        """Switch ``dpid`` sends ``message`` to the controller."""
        net = self.net
        slot = net.slot_ctrlq[dpid]
        if not self.threaded:
            tx.push(slot, message)
            return
        queues = net._queues
        tx.set_id(slot, queues.intern(tuple(sorted(queues.values[tx.s[slot]] + (net._items.intern(message),),
                                                   key=self._rank))))

    def from_switch(self, tx: "Tx", dpid: int, pick: int) -> Any:
        """Remove and return message ``pick`` (0 = the head) from switch ``dpid``."""
        net = self.net
        slot = net.slot_ctrlq[dpid]
        queues = net._queues
        queue = queues.values[tx.s[slot]]
        tx.set_id(slot, queues.intern(queue[:pick] + queue[pick + 1:]))
        return net._items.values[queue[pick]]

    # ---- decoding (reports, properties, tests) --------------------------------------

    def decode_commands(self, value: tuple[Any, ...]) -> tuple[Any, ...]:
        """A command channel's items: a FIFO of messages, or a tuple of batches of messages."""
        items = self.net._items.values
        if not self.batched:
            return tuple(items[i] for i in value)
        return tuple(tuple(items[i] for i in batch) for batch in value)

    def encode_commands(self, value: Sequence[Any]) -> tuple[Any, ...]:
        """The inverse of :meth:`decode_commands` (batches canonicalised and sorted)."""
        intern = self.net._items.intern
        if not self.batched:
            return tuple(intern(item) for item in value)
        return tuple(sorted((self._canonical(tuple(intern(item) for item in batch)) for batch in value),
                            key=self._batch_rank))

    def encode_messages(self, value: Sequence[Any]) -> tuple[int, ...]:
        """A controller inbound channel from its messages (sorted when threaded)."""
        ids = tuple(self.net._items.intern(item) for item in value)
        return tuple(sorted(ids, key=self._rank)) if self.threaded else ids
