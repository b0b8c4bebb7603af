"""The network system: hosts, switches, controller and channels as one :class:`System`.

Configuration (topology, host scripts, the app, the protocol variant) is held by
:class:`Network`, with caches that never change what a state means (interning tables,
lookup results); the state is a tuple of interned ids, one per *slot*:

* ``host:H`` (:class:`HostState`) and ``inbox:H`` (the link into host H, a FIFO); for a
  host that moves, ``where:H``: where it is attached (its ``HostState.location`` again);
* per switch: ``table:D`` (flow table), ``buffer:D`` (packet buffer: buffer id -> packet),
  ``ext:D`` (the protocol variant's switch state), ``cmdq:D`` (commands from the
  controller, a FIFO; with several controller threads, a sorted tuple of FIFO batches) and
  ``port:D:P`` (one FIFO per input port);
* controller: ``app`` (the app's state), ``platform`` (the variant's platform state) and
  ``ctrlq:D`` (messages from switch D, a FIFO);
* ``alerts``: what monitors observed on transitions (loops, black holes, packet-ins that
  break direct paths, app exceptions); empty in every correct state;
* ``history`` (only with the one-packet-in-per-flow monitor): flows that caused a
  packet-in; ``expired`` (only with the direct-paths monitors): flows that start over
  because an entry of theirs timed out, and their packets excused (see
  :meth:`Hosts.entry_expires`); ``load`` (only when
  counting control-plane load): message counters.

Queues hold ids of interned items (packets and messages). Every transition copies the
tuple of slot ids and rebuilds only the slots it changes (structural sharing).
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from bisect import bisect_left
from functools import partial
from itertools import chain, compress
from operator import itemgetter, mul
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from nice_attendre.fingerprint import Computed, slot_multiplier, successor
from nice_attendre.errors import InputError, ModelError
from nice_attendre.models.app import (TIME_LIMIT_FAILURE, App, app_failure, checked_new_state, is_app_failure,
                                      state_failure)
from nice_attendre.models.determinism import Detector, Outcome, Read, difference, reads_text
from nice_attendre.models.events import (ControllerHandle, Event, HostAnswer, HostMove, HostReceive, HostSend,
                                         SwitchEntryExpires, SwitchProcessCommand, SwitchProcessPacket)
from nice_attendre.models.chunked import ChunkedState, chunk_shift, slot_list
from nice_attendre.models.channels import Channels, check_command_order, check_threads, describe_semantics
from nice_attendre.models.fairness import process_of
from nice_attendre.models.faults import KINDS as FAULT_KINDS
from nice_attendre.models.faults import ControlLoss, Faults, LinkChange, LinkFault, SwitchRestart, check_link_scope
from nice_attendre.models.hosts import Hosts
from nice_attendre.models.fingerprints import Fingerprinter
from nice_attendre.models.intern import Interner
from nice_attendre.models.memo import MEMO_ENTRIES, LazyReadTrackingList, ReadTrackingList, TransitionMemo
from nice_attendre.models.packet import BROADCAST, Packet
from nice_attendre.models.protocols.openflow import SWITCH_SLOTS
from nice_attendre.models.scenario import Scenario
from nice_attendre.models.topology import Topology
from nice_attendre.watchdog import CallGuard

_NOTHING = object()  # no attribute of that name

#: Monitors a network can run, named after the property that reads their alerts (see
#: :meth:`Tx.alert`). A monitor that is not run records nothing, so the state space is the
#: same as without it except that states with an alert are violations (and not expanded;
#: ``delivery`` is judged at quiescence, so its states are expanded). ``app-exception`` is
#: always run. Three keep history in the state while they run: ``one-packet-in-per-flow``
#: (flows that caused a packet-in), ``direct-paths`` (``Packet.followup``: sent after a
#: packet of its flow reached the destination) and ``strict-direct-paths`` (``Packet.late``:
#: sent after its hosts had exchanged packets both ways); the two direct-paths monitors also
#: keep the ``expired`` slot (see :meth:`Hosts.entry_expires`), which changes only when an
#: entry times out.
MONITORS = ("no-forwarding-loops", "no-black-holes", "direct-paths", "strict-direct-paths",
            "one-packet-in-per-flow", "delivery")

#: Networks with at least this many slots keep their states in chunks (see
#: :mod:`nice_attendre.models.chunked`), compute their enabled events incrementally (from
#: the parent state's and the slots a transition wrote) and ask the search to store their
#: states keyed by fingerprint (see :attr:`Network.large_states`): below it, flat tuples and
#: one C-level pass over the slots are cheaper than the bookkeeping (measured with
#: benchmarks/size.py: the two cost the same at about 430 slots).
INCREMENTAL_SLOTS = 512

#: States whose enabled-event sources an incremental network remembers (by identity; the
#: oldest are forgotten first, and a forgotten parent is recomputed in full).
REMEMBERED_STATES = 4096

#: The start-up semantics as reports print them (see ``Options.joins_first``).
STARTUP_RACE = "hosts may send while switches join (the table-miss race is real)"
STARTUP_JOINS_FIRST = "traffic after every switch has joined and executed its join commands"

#: Control-plane counters kept in the ``load`` slot when counting load.
LOAD_COUNTERS = ("packet_ins", "flow_mods", "packet_outs", "barriers")


_list_items = list.__getitem__
_EVERY = slice(None)

#: A state's non-empty event sources: their indices (ascending) and their events.
Sources = tuple[tuple[int, ...], tuple[tuple[Event, ...], ...]]


def _switch_kind_events(events: Callable[[Sequence[int], int], tuple[Event, ...]], dpid: int,
                        state: Sequence[int]) -> tuple[Event, ...]:
    """A per-switch kind's events of switch ``dpid`` in ``state`` (bound per source)."""
    return events(state, dpid)


def _spliced(indices: tuple[int, ...], found: tuple[tuple[Event, ...], ...], index: int,
             events: tuple[Event, ...]) -> Sources:
    """Non-empty sources ``(indices, found)`` (indices ascending) with source ``index``'s
    events now ``events`` (dropped when empty); the same tuples when nothing changed."""
    at = bisect_left(indices, index)
    if at < len(indices) and indices[at] == index:
        if events == found[at]:
            return indices, found
        if events:
            return indices, found[:at] + (events,) + found[at + 1:]
        return indices[:at] + indices[at + 1:], found[:at] + found[at + 1:]
    if events:
        return indices[:at] + (index,) + indices[at:], found[:at] + (events,) + found[at:]
    return indices, found


def _no_events(value: int) -> tuple[Event, ...]:
    """The one-slot events of a per-switch source (it has none: see ``_kind_events``)."""
    return ()


class Tx:
    """One transition under construction: a mutable copy of the slot ids.

    Handlers read slot values with :meth:`get` (or ids from ``s``), write them with
    :meth:`put` or :meth:`set_id` (never by assigning to ``s``: a :class:`TrackingTx`
    records every write in ``dirty``, from which fingerprints are updated), and use the
    queue helpers; :meth:`Network.apply` turns the result back into a tuple. With ``notes``
    a list, handlers narrate what happens (for traces); otherwise :meth:`note` does nothing.
    ``choice`` is the nondeterministic choice a protocol variant's event made (read by the
    variant's hooks during this transition; ``None`` for the network's events). ``origin``
    is the switch whose message (or joining) the controller handles in this transition, or
    ``None`` (a per-switch threaded controller orders the commands of one switch's calls:
    see :mod:`nice_attendre.models.channels`).
    """

    __slots__ = ("net", "s", "notes", "outbox", "dirty", "choice", "origin")

    def __init__(self, net: "Network", state: Sequence[int], notes: list[str] | None = None) -> None:
        self.net = net
        self.s = slot_list(state)
        self.notes = notes
        self.outbox: dict[int, list[Any]] | None = None  # one handler call's commands, per switch
        self.choice: Any = None
        self.origin: int | None = None

    def get(self, slot: int) -> Any:
        """The value in ``slot``."""
        return self.net._values[slot][self.s[slot]]

    def put(self, slot: int, value: Any) -> None:
        """Store ``value`` in ``slot``."""
        self.s[slot] = self.net._intern[slot](value)

    def set_id(self, slot: int, value_id: int) -> None:
        """Store the already interned value ``value_id`` in ``slot``."""
        self.s[slot] = value_id

    def pop(self, slot: int) -> Any:
        """Remove and return the first item of queue ``slot``."""
        net = self.net
        queue = net._queues.values[self.s[slot]]
        self.s[slot] = net._queues.intern(queue[1:])
        return net._items.values[queue[0]]

    def push(self, slot: int, item: Any) -> None:
        """Append ``item`` to queue ``slot``."""
        self.extend(slot, (self.net._items.intern(item),))

    def extend(self, slot: int, items: tuple[int, ...]) -> None:
        """Append the already interned items ``items`` to queue ``slot``."""
        self.s[slot] = self.net.extend_queue(self.s[slot], items)

    def alert(self, kind: str, detail: str) -> None:
        """Record that a monitor of ``kind`` observed ``detail`` on this transition."""
        alerts = self.get(self.net.slot_alerts)
        record = (kind, detail)
        if record not in alerts:
            self.put(self.net.slot_alerts, tuple(sorted(alerts + (record,))))
        self.note(lambda: f"ALERT {kind}: {detail}")

    def count(self, counter: int, amount: int = 1) -> None:
        """Add ``amount`` to control-plane counter ``counter`` (when counting load)."""
        slot = self.net.slot_load
        if slot >= 0:
            load = list(self.get(slot))
            load[counter] += amount
            self.put(slot, tuple(load))

    def note(self, text: Callable[[], str]) -> None:
        """Narrate ``text()`` when building a trace description; otherwise do nothing.

        ``text`` is a function so that the hot path never formats strings.
        """
        if self.notes is not None:
            self.notes.append(text())


class TrackingTx(Tx):
    """A :class:`Tx` that records the slots it writes in ``dirty`` (keys of a dict, an
    ordered set), for :meth:`Network.apply_fingerprinted`. Plain searches use :class:`Tx`,
    which records nothing."""

    __slots__ = ()

    def __init__(self, net: "Network", state: Sequence[int], notes: list[str] | None = None) -> None:
        super().__init__(net, state, notes)
        self.dirty: dict[int, None] = {}

    def put(self, slot: int, value: Any) -> None:
        Tx.put(self, slot, value)
        self.dirty[slot] = None

    def set_id(self, slot: int, value_id: int) -> None:
        self.s[slot] = value_id
        self.dirty[slot] = None

    def pop(self, slot: int) -> Any:
        self.dirty[slot] = None
        return Tx.pop(self, slot)

    def extend(self, slot: int, items: tuple[int, ...]) -> None:
        Tx.extend(self, slot, items)
        self.dirty[slot] = None


class MemoTx(Tx):
    """A :class:`Tx` whose slot list records what the transition reads and writes (see
    :mod:`nice_attendre.models.memo`); ``dirty`` is the written slots, as for :class:`TrackingTx`."""

    __slots__ = ()

    def __init__(self, net: "Network", state: Sequence[int]) -> None:
        self.net = net
        self.s = tracked = (LazyReadTrackingList if state.__class__ is ChunkedState else ReadTrackingList)(state)
        self.notes = None
        self.outbox = None
        self.choice = None
        self.origin = None
        self.dirty = tracked.written

    def extend(self, slot: int, items: tuple[int, ...]) -> None:
        """A blind append when the transition has not looked at the queue (see
        :mod:`nice_attendre.models.memo`), else an ordinary one."""
        if not self.s.append_blind(slot, items, self.net.extend_queue):
            Tx.extend(self, slot, items)


@dataclass(frozen=True)
class Options:
    """Model options that are configuration.

    * ``monitors``: the monitors to run (see :data:`MONITORS`);
    * ``count_load``: keep control-plane message counters in the state (a larger state
      space: states that differ only in their counts are distinct);
    * ``instant_stats``: port statistics requests are answered at once by the controller
      (NICE's InstantStats): one event per load class instead of a round trip;
    * ``command_order``: ``"fifo"`` (a switch executes commands in arrival order: the
      paper's and NICE's assumption) or ``"any"`` (in any order no barrier forbids, as
      OpenFlow allows); see :mod:`nice_attendre.models.channels`;
    * ``threaded_controller``: ``False`` (one handler call at a time), ``"per-switch"``
      (calls for different switches race, the commands of different calls interleave at a
      switch: the paper's type-3 race; one switch's messages are handled in order, as
      os-ken does) or ``"any"`` (any number of calls in flight: also one switch's messages
      in any order); ``True`` means ``"per-switch"`` (see
      :mod:`nice_attendre.models.channels`);
    * ``faults``: budgets of faults to inject, in :data:`nice_attendre.models.faults.KINDS`
      order (empty or all 0: none; see :mod:`nice_attendre.models.faults`);
    * ``link_scope``: the links a ``link`` fault may hit (``all``, ``switches`` or ``hosts``:
      :data:`nice_attendre.models.faults.LINK_SCOPES`);
    * ``memo``: how many transitions to memoise (see :mod:`nice_attendre.models.memo`;
      0: none). It changes the speed only, never a result;
    * ``joins_first``: the start-up semantics. ``False`` (the default): hosts may send from
      the first step, while the switches are still executing what the app sent them when
      they joined (an OpenFlow 1.3 switch whose table-miss entry is not yet in drops a
      frame: the race is real). ``True``: no host acts until the control plane has settled
      after the joins: every switch has executed every command in its channel and the
      controller has handled every message the switches sent (barrier replies, errors,
      and what the app sent in answer); from the first host event on, the network runs as
      without the option (see :meth:`Network.enabled`).
    """

    monitors: frozenset[str] = frozenset()
    count_load: bool = False
    instant_stats: bool = False
    command_order: str = "fifo"
    threaded_controller: bool | str = False
    faults: tuple[int, ...] = ()
    memo: int = MEMO_ENTRIES
    link_scope: str = "all"
    joins_first: bool = False

    def __post_init__(self) -> None:
        check_command_order(self.command_order)
        object.__setattr__(self, "threaded_controller", check_threads(self.threaded_controller))
        if isinstance(self.memo, bool) or not isinstance(self.memo, int) or self.memo < 0:
            raise InputError(f"memo must be a whole number >= 0, got {self.memo!r}")
        if self.faults and (len(self.faults) != len(FAULT_KINDS) or min(self.faults) < 0):
            raise InputError(f"faults must be {len(FAULT_KINDS)} budgets ({', '.join(FAULT_KINDS)}), "
                             f"got {self.faults!r}")
        check_link_scope(self.link_scope)
        if not isinstance(self.joins_first, bool):
            raise InputError(f"joins_first must be True or False, got {self.joins_first!r}")

    def describe_channels(self) -> str:
        """The channel semantics, one line (every report prints it)."""
        return describe_semantics(self.command_order, self.threaded_controller)

    def describe_startup(self) -> str:
        """The start-up semantics, one line (every report prints it)."""
        return STARTUP_JOINS_FIRST if self.joins_first else STARTUP_RACE


class Network:
    """The network system (a :class:`nice_attendre.System`).

    Build it with a scenario, an app and a protocol: a name (``openflow``, ``openflow-b``,
    ``attendre``, ``pif``, ...), a name with parameters (``pif:action=drop``), a protocol class
    or a :class:`~nice_attendre.models.protocols.ProtocolSpec`; ``protocol_options`` adds
    parameters (see :func:`nice_attendre.models.protocols.resolve`). ``enabled`` returns
    events in the order host sends, host receives, host answers, host moves, switch packets
    (by dpid, port), switch commands, controller handling, then the variant's own events
    (instant statistics first). The handler table is the network's own events plus those the
    variant declares (``event_handlers``).
    """

    def __init__(self, scenario: Scenario, app: App[Any], protocol: Any = "openflow",
                 options: Options = Options(), protocol_options: Mapping[str, Any] | str | None = None,
                 guard: CallGuard | None = None) -> None:
        from nice_attendre.models.protocols import resolve  # registry of variants

        #: Marks calls into the app, so a watchdog may interrupt one that does not return.
        self.guard = guard if guard is not None else CallGuard()
        #: Watches calls into the app for reads of the clock, randomness and addresses.
        self.detector = Detector.for_app(app)

        unknown = sorted(set(options.monitors) - set(MONITORS))
        if unknown:
            raise InputError(f"unknown monitor {unknown[0]!r} (known: {', '.join(MONITORS)})")
        self.scenario = scenario
        self.topology: Topology = scenario.topology
        self.app = app
        self.options = options
        self.specs = {spec.name: spec for spec in scenario.hosts}
        self.hosts = Hosts(self)
        self.mobile = self.hosts.mobile
        self.host_of_mac = self.hosts.host_of_mac
        self._layout()
        self._fingerprints = Fingerprinter(self)
        self._key_multipliers = tuple(slot_multiplier(slot) for slot in range(len(self.slot_names)))
        #: Whether any entry with a timeout was ever installed or adopted (see
        #: :meth:`adopt_values`). Until then no state can have an expiry event, so enabled()
        #: skips looking (a cache: it never changes a result).
        self.timers = False
        self._expiry_cache: dict[tuple[int, int], tuple[SwitchEntryExpires, ...]] = {}
        spec = resolve(protocol, protocol_options)
        self.protocol = spec.cls(self, dict(spec.params))
        self._handlers: dict[type, Callable[[Tx, Any], None]] = {
            HostSend: self.hosts.send,
            HostReceive: self.hosts.receive,
            HostAnswer: self.hosts.answer,
            HostMove: self.hosts.move,
            SwitchProcessPacket: lambda tx, ev: self.protocol.switch_packet(tx, ev.dpid, ev.port),
            SwitchProcessCommand: lambda tx, ev: self.protocol.switch_command(tx, ev.dpid, ev.batch, ev.pick),
            ControllerHandle: lambda tx, ev: self.protocol.controller_handle(tx, ev.dpid, ev.pick),
            SwitchEntryExpires: self._entry_expires,
        }
        if self.faults is not None:
            self._handlers.update({LinkFault: self.faults.link_fault, LinkChange: self.faults.link_change,
                                   ControlLoss: self.faults.control_loss, SwitchRestart: self.faults.restart})
        for event_class, handler in self.protocol.event_handlers().items():
            if event_class in self._handlers:
                raise ModelError(f"protocol {self.protocol.name} declares {event_class.__name__}, "
                                 "an event of the network itself")
            self._handlers[event_class] = handler
        self._layout_sources()
        #: Whether the network is large (see :data:`INCREMENTAL_SLOTS`): enabled events are
        #: then computed incrementally and states are chunked.
        self.incremental = len(self.slot_names) >= INCREMENTAL_SLOTS
        #: Makes a state from its slot ids: a tuple, or for a large network a
        #: :class:`~nice_attendre.models.chunked.ChunkedState` (indexed like a tuple): a
        #: transition then copies the chunks it writes, not the whole state, stored states
        #: share the chunks they have in common, and comparing two costs about the square
        #: root of the slot count.
        shift = chunk_shift(len(self.slot_names))
        self._make_state: Callable[[Iterable[int]], Any] = (
            partial(ChunkedState.of, shift=shift) if self.incremental else tuple)
        #: What happened while the initial state was built (switch joins), for traces.
        self._initial_notes: list[str] = []
        self._initial = self._make_initial(self._initial_notes)
        #: With ``joins_first``: the host slots with their initial ids, and the control
        #: channels' slots (see :meth:`_traffic_may_start`); None: hosts act from the start.
        self._startup: tuple[tuple[tuple[int, int], ...], tuple[int, ...]] | None = None
        if options.joins_first:
            self._startup = (tuple((slot, self._initial[slot]) for slot in self.slot_host.values()),
                             tuple(self.slot_cmdq.values()) + tuple(self.slot_ctrlq.values()))
        if self.incremental:  # states built from scratch from now on (received from another
            # process, narrated, given by name) share their chunks equal to the initial state's
            self._make_state = partial(ChunkedState.of, shift=shift, like=self._initial)
        #: A large network's buffer slots (packet buffer and protocol state) -> their switch,
        #: when no switch holds a packet initially (see :meth:`buffered_packets`).
        self._holding: dict[int, int] | None = None
        self._switch_order = {dpid: order for order, dpid in enumerate(self.topology.switches)}
        if self.incremental and not self.buffered_packets(self._initial):
            self._holding = {slot: dpid for dpid in self.topology.switches
                             for slot in (self.slot_buffer[dpid], self.slot_ext[dpid])}
        #: Memoised transitions (None: every transition runs its handlers).
        self.memo = TransitionMemo(options.memo, self.extend_queue) if options.memo else None
        #: The last transition applied: (new state, old state, ``(slot, id)`` pairs written).
        self._last: tuple[tuple[int, ...], tuple[int, ...], Any] | None = None
        #: id(state) -> (state, its non-empty event sources): see :meth:`_sources_of`.
        self._remembered: dict[int, tuple[tuple[int, ...], Sources]] = {}
        #: The initial state's event sources, once computed (a large network's other states'
        #: are computed from them when their parent is not remembered).
        self._initial_sources: Sources | None = None

        #: ``build_successor(state, handle)``: the successor a peek described (see
        #: :func:`nice_attendre.fingerprint.peek_functions`); a large network also notes it as
        #: the last transition, for its incremental enabled events.
        self.build_successor = self._build_noted if self.incremental else successor
        if self.memo is not None:
            # fingerprinted searches: memo lookups without building the successor
            self.peek_fingerprinted = self.memo.fingerprinted_peeker(  # type: ignore[method-assign]
                self._peek_missed, self._fingerprints.update)
            self.apply_fingerprinted = self._apply_peeked  # type: ignore[method-assign]
            if not self.incremental:
                # the search's apply: memo lookups and replays in one call (see TransitionMemo.applier)
                self.apply = self.memo.applier(self._apply_missed)  # type: ignore[method-assign]

    def _entry_expires(self, tx: Tx, ev: SwitchEntryExpires) -> None:
        """A flow entry times out (the variant removes it); the direct-paths monitors note it."""
        if self.slot_expired >= 0:
            self.hosts.entry_expires(tx, tx.get(self.slot_table[ev.dpid])[ev.index].match)
        self.protocol.expire(tx, ev.dpid, ev.index, ev.reason)

    def _apply_missed(self, state: tuple[int, ...], event: Event) -> tuple[int, ...]:
        """``apply`` of a transition the memo does not know: run it and store it."""
        return self._apply_and_store(state, event)[0]

    def _peek_missed(self, state: tuple[int, ...], fingerprint: int, event: Event) -> tuple[int, Computed]:
        """``peek_fingerprinted`` of a transition the memo does not know: run it and store
        it with its fingerprint delta."""
        if self.incremental:  # the slots written are wanted too, for the enabled events
            new, written = self._apply_and_store(state, event)
            self._last = (new, state, [(slot, new[slot]) for slot in written])
            return self._fingerprints.update(fingerprint, state, new, written), Computed(new)
        new, updated = self._apply_and_store(state, event, fingerprint)
        return updated, Computed(new)

    def _apply_peeked(self, state: tuple[int, ...], fingerprint: int, event: Event) -> tuple[tuple[int, ...], int]:
        """``apply_fingerprinted`` through the memo's peek."""
        updated, writes = self.peek_fingerprinted(state, fingerprint, event)
        return self.build_successor(state, writes), updated

    def _build_noted(self, state: tuple[int, ...], writes: Any) -> tuple[int, ...]:
        """:func:`~nice_attendre.fingerprint.successor`, noted as the last transition (a
        large network's enabled events are then updated from the slots written)."""
        if writes.__class__ is Computed:
            return writes.state  # type: ignore[no-any-return]
        new = state.updated(writes)
        self._last = (new, state, writes)
        return new  # type: ignore[no-any-return]

    @property
    def large_states(self) -> bool:
        """Whether states are large enough that an exact search should store them under
        :meth:`state_key` (hashing a whole state at every transition is then dearer than
        updating its key from the slots written)."""
        return self.incremental

    def extend_queue(self, queue: int, items: tuple[int, ...]) -> int:
        """The id of queue ``queue`` (an id) with the item ids ``items`` appended."""
        queues = self._queues
        return queues.intern(queues.values[queue] + items)

    # ---- layout ------------------------------------------------------------------------

    def _layout(self) -> None:
        topo = self.topology
        self._queues: Interner[tuple[int, ...]] = Interner("queue", ())
        self._items: Interner[Any] = Interner("item")
        kinds: dict[str, Interner[Any]] = {}
        self.slot_names: list[str] = []
        slot_interners: list[Interner[Any]] = []

        def slot(name: str, kind: str) -> int:
            if kind == "queue":
                interner = self._queues
            else:
                interner = kinds.setdefault(kind, Interner(kind))
            self.slot_names.append(name)
            slot_interners.append(interner)
            return len(self.slot_names) - 1

        self.slot_host = {h: slot(f"host:{h}", "host") for h in topo.hosts}
        # where each mobile host is attached (also in its HostState): a slot of its own, so a
        # switch that delivers a frame reads only that, and its memoised transitions do not
        # depend on what the host received
        self.slot_where = {h: slot(f"where:{h}", "where") for h in self.mobile}
        self.slot_inbox = {h: slot(f"inbox:{h}", "queue") for h in topo.hosts}
        self.slot_table = {d: slot(f"table:{d}", "table") for d in topo.switches}
        self.slot_buffer = {d: slot(f"buffer:{d}", "buffer") for d in topo.switches}
        self.slot_ext = {d: slot(f"ext:{d}", "ext") for d in topo.switches}
        self.slot_cmdq = {d: slot(f"cmdq:{d}", "queue") for d in topo.switches}
        self.slot_port = {(d, p): slot(f"port:{d}:{p}", "queue")
                          for d in topo.switches for p in topo.ports[d]}
        self.slot_app = slot("app", "app")
        self.slot_platform = slot("platform", "platform")
        self.slot_ctrlq = {d: slot(f"ctrlq:{d}", "queue") for d in topo.switches}
        self.slot_alerts = slot("alerts", "alerts")
        self.slot_history = slot("history", "history") if "one-packet-in-per-flow" in self.options.monitors else -1
        #: Only while a direct-paths property is checked (it alone reads it): see Hosts.entry_expires.
        self.slot_expired = (slot("expired", "expired")
                             if {"direct-paths", "strict-direct-paths"} & self.options.monitors else -1)
        self.slot_load = slot("load", "load") if self.options.count_load else -1
        self.slot_faults = slot("faults", "faults") if any(self.options.faults) else -1
        self._slot_interners = slot_interners
        self._app_interner = slot_interners[self.slot_app]
        self._values = [interner.values for interner in slot_interners]
        self._intern = [interner.intern for interner in slot_interners]
        self.slot_index = {name: index for index, name in enumerate(self.slot_names)}
        self.hosts.layout()
        #: The faults to inject, or None (then no state or event is about faults).
        self.faults = Faults(self, self.options.faults) if self.slot_faults >= 0 else None
        # Event sources in enabled() order (hosts first, see Hosts.events).
        packet_sources = tuple((self.slot_port[(d, p)], SwitchProcessPacket(d, p))
                               for d in topo.switches for p in topo.ports[d])
        command_sources = tuple((self.slot_cmdq[d], SwitchProcessCommand(d)) for d in topo.switches)
        controller_sources = tuple((self.slot_ctrlq[d], ControllerHandle(d)) for d in topo.switches)
        self.threaded = self.options.threaded_controller
        self.channels = Channels(self, self.options.command_order, self.threaded)
        channels = self.channels
        #: Whether a switch takes its commands from a plain FIFO (the fast path of switch_command).
        self.fifo_commands = not channels.batched
        self.send_commands = channels.send
        self.take_command = channels.take
        self.to_controller = channels.to_controller
        self.from_switch = channels.from_switch
        # Event sources whose events are fixed (one per non-empty slot) come first, in enabled()
        # order; the channels enumerate the others per channel value.
        self._switch_sources = packet_sources
        self._dynamic_commands: tuple[tuple[int, int], ...] = ()
        self._dynamic_handles: tuple[tuple[int, int], ...] = ()
        if self.channels.batched:
            self._dynamic_commands = tuple((self.slot_cmdq[d], d) for d in topo.switches)
        else:
            self._switch_sources += command_sources
        if self.threaded:
            self._dynamic_handles = tuple((self.slot_ctrlq[d], d) for d in topo.switches)
        elif not self._dynamic_commands:
            self._switch_sources += controller_sources
        self._late_controller_sources = controller_sources if self._dynamic_commands and not self.threaded else ()
        #: The fixed sources' events, and a function giving their slots' ids in a state (a tuple).
        self._switch_events = tuple(event for _slot, event in self._switch_sources)
        slots = [slot for slot, _event in self._switch_sources]
        self._switch_ids: Callable[[Sequence[int]], Sequence[int]] = (
            itemgetter(*slots) if len(slots) > 1 else (lambda state: tuple(state[slot] for slot in slots)))

    def _layout_sources(self) -> None:
        """The event sources, in enabled() order, for incremental enabled events.

        A source decides some of the enabled events from one slot's value, or from a few
        slots: a kind of the protocol's
        :meth:`~nice_attendre.models.protocols.openflow.OpenFlow.switch_events` at one switch,
        or a place where faults can happen (:meth:`Faults.sources`, whose events hold only
        while their budgets last). In enabled() order: the switches' sources (input ports,
        command channels, controller queues), the protocol's per-switch kinds (kind by kind,
        switch by switch), the links' faults (from ``_fault_links``), the switches' control
        losses (from ``_fault_controls``) and the flow tables (entries that may expire, from
        ``_tail_sources``). ``_source_of[slot]`` is the slot's one-slot source index or -1
        and ``_source_events[index](value)`` its events when its slot holds ``value``;
        ``_kinds_of[slot]`` the sources of several slots that read it and
        ``_kind_events[index](state)`` their events. The protocol's global events
        (``extra_events``) come before source ``_extra_sources``."""
        sources: list[tuple[int, Callable[[int], tuple[Event, ...]]]] = []

        def fixed(event: Event) -> Callable[[int], tuple[Event, ...]]:
            one = (event,)
            return lambda value: one if value else ()

        for slot, event in self._switch_sources:
            sources.append((slot, fixed(event)))
        channels = self.channels
        for slot, dpid in self._dynamic_commands:
            sources.append((slot, lambda value, d=dpid: channels.command_events(d, value) if value else ()))
        for slot, event in self._late_controller_sources:
            sources.append((slot, fixed(event)))
        for slot, dpid in self._dynamic_handles:
            sources.append((slot, lambda value, d=dpid: channels.handle_events(d, value) if value else ()))
        self._extra_sources = len(sources)
        #: The protocol's kinds of per-switch events (read once: they are configuration).
        self._switch_kinds = self.protocol.switch_events()
        several: list[tuple[Sequence[int], Callable[[Sequence[int]], tuple[Event, ...]]]] = [
            (self._switch_slots(kind.reads, dpid), partial(_switch_kind_events, kind.events, dpid))
            for kind in self._switch_kinds for dpid in self.topology.switches]
        links, controls = self.faults.sources() if self.faults is not None else ([], [])
        self._fault_links = len(sources) + len(several)
        self._fault_controls = self._fault_links + len(links)
        several += links + controls
        self._kind_events: dict[int, Callable[[Sequence[int]], tuple[Event, ...]]] = {}
        kinds_of: dict[int, list[int]] = {}
        for slots, events_of in several:
            index = len(sources)
            self._kind_events[index] = events_of
            for slot in slots:
                kinds_of.setdefault(slot, []).append(index)
            sources.append((-1, _no_events))
        self._kinds_of: dict[int, tuple[int, ...]] | None = (
            {slot: tuple(indices) for slot, indices in kinds_of.items()} if kinds_of else None)
        self._tail_sources = len(sources)
        for dpid, slot in self.slot_table.items():
            sources.append((slot, lambda value, d=dpid: self._expiries(d, value)))
        self._source_of = [-1] * len(self.slot_names)
        for index, (slot, _events) in enumerate(sources):
            if slot < 0:
                continue
            if self._source_of[slot] >= 0:
                raise ModelError(f"slot {self.slot_names[slot]} feeds two event sources")
            self._source_of[slot] = index
        self._source_slots = tuple(slot for slot, _events in sources)
        self._source_events = tuple(events for _slot, events in sources)

    def _switch_slots(self, reads: Sequence[str], dpid: int) -> list[int]:
        """The slots of switch ``dpid`` of the kinds ``reads`` (see
        :class:`~nice_attendre.models.protocols.openflow.SwitchEvents`)."""
        one_slot = {"ext": self.slot_ext, "table": self.slot_table, "buffer": self.slot_buffer}
        slots: list[int] = []
        for kind in reads:
            if kind in one_slot:
                slots.append(one_slot[kind][dpid])
            elif kind == "ports":
                slots.extend(self.slot_port[(dpid, port)] for port in self.topology.ports[dpid])
            else:
                raise ModelError(f"protocol {self.protocol.name}: its switch events read {kind!r}, "
                                 f"not a slot kind of a switch (known: {', '.join(SWITCH_SLOTS)})")
        return slots

    def _make_initial(self, notes: list[str] | None = None) -> tuple[int, ...]:
        topo = self.topology
        state = [0] * len(self.slot_names)
        tx = Tx(self, state, notes)
        for host in topo.hosts:
            tx.put(self.slot_host[host], self.hosts.initial(host))
        for host, slot in self.slot_where.items():
            tx.put(slot, self.topology.host_port[host])
        for dpid in topo.switches:
            tx.put(self.slot_table[dpid], ())
            tx.put(self.slot_buffer[dpid], ())
            tx.put(self.slot_ext[dpid], self.protocol.initial_switch_state(dpid))
        tx.put(self.slot_platform, self.protocol.initial_platform_state())
        tx.put(self.slot_alerts, ())
        if self.slot_history >= 0:
            tx.put(self.slot_history, ())
        if self.slot_expired >= 0:
            tx.put(self.slot_expired, ((), ()))
        if self.slot_load >= 0:
            tx.put(self.slot_load, (0,) * len(LOAD_COUNTERS))
        if self.faults is not None:
            tx.put(self.slot_faults, self.faults.initial())
        name = f"{type(self.app).__name__}.initial_state"
        first, reads = self._initial_app_state()
        kind, problem = "app-exception", first.failure
        if reads:
            kind, problem = "app-nondeterminism", reads_text(reads)
        elif not self.app.checks_own_determinism and (first.failure is None or TIME_LIMIT_FAILURE not in first.failure):
            # called again: the same outcome? (see OpenFlow.run_app)
            second, _reads = self._initial_app_state(watch=False)
            if second.failure is None or TIME_LIMIT_FAILURE not in second.failure:
                differ = difference(first, second)
                if differ is not None:
                    kind, problem = "app-nondeterminism", differ
        if problem is not None:  # an app bug is a finding: the run starts in a violating state
            tx.put(self.slot_app, None)
            tx.alert(kind, f"{name} {problem}")
            return self._make_state(tx.s)
        tx.set_id(self.slot_app, first.key)
        self.protocol.switches_join(tx)
        return self._make_state(tx.s)

    def _initial_app_state(self, watch: bool = True) -> tuple[Outcome, tuple[Read, ...]]:
        """The app's ``initial_state()``, called under the guard and (with ``watch``)
        watched by the detector: its outcome (the state's id, or the failure in words) and
        the nondeterministic reads it made."""
        guard = self.guard
        detector = self.detector
        state: Any = None
        returned = False
        if watch:
            detector.begin()
        try:
            try:
                state = guard.run(self.app.initial_state)
            finally:
                if watch:
                    detector.end()
            returned = True
            outcome = Outcome(None, guard.run(self.intern_app_state, state), state, ())
        except BaseException as exc:  # noqa: BLE001 - the app's failures are findings; the rest passes
            detector.end()
            if not is_app_failure(exc):
                raise
            outcome = Outcome(f"returned {state_failure(state, exc)}" if returned else app_failure(exc), None, None, ())
        return outcome, tuple(detector.reads) if watch else ()

    def intern_app_state(self, state: Any) -> int:
        """The id of app state ``state`` (what a handler returned), interned: user code, run
        under the network's guard by the caller. The state's ``__hash__`` (and ``__eq__``, on
        a hash match) run here; a value never seen before is checked first
        (:func:`~nice_attendre.models.app.checked_new_state`: ``__repr__``, equal to itself),
        so a state whose dunders fail is refused before it is stored. What they raise
        propagates: the caller reports it as an app exception
        (:func:`~nice_attendre.models.app.state_failure` says what is wrong)."""
        interner = self._app_interner
        found = interner.ids.get(state)
        if found is None:
            checked_new_state(state)
            found = interner.intern(state)
        return found

    def adopt_values(self, values: Iterable[Any]) -> None:
        """Component values this process did not compute itself enter its tables (restored
        from a checkpoint, received from another shard): a flow table among them may hold an
        entry that expires, which this process never installed, so it must look for expiry
        events from now on (:attr:`timers`)."""
        if self.timers:
            return
        for value in values:
            if type(value) is tuple and any(
                    getattr(getattr(entry, "timeouts", None), "expires", False) for entry in value):
                self.timers = True
                return

    # ---- System ------------------------------------------------------------------------

    def initial_states(self) -> tuple[tuple[int, ...], ...]:
        """The single initial state: nothing sent, empty tables, switches joined."""
        return (self._initial,)

    def enabled(self, state: tuple[int, ...]) -> list[Event]:
        """Events possible in ``state``, in the fixed order of the class docstring."""
        if self.incremental:
            return self._enabled_from_sources(state)
        events: list[Event] = []
        if self._startup is None or self._traffic_may_start(state):
            self.hosts.events(state, events)
        # the fixed sources in one C-level pass: their events where the slot is not empty
        events.extend(compress(self._switch_events, self._switch_ids(state)))
        if self._dynamic_commands:
            channels = self.channels
            for slot, dpid in self._dynamic_commands:
                if state[slot]:
                    events.extend(channels.command_events(dpid, state[slot]))
            for slot, event in self._late_controller_sources:
                if state[slot]:
                    events.append(event)
        if self._dynamic_handles:
            channels = self.channels
            for slot, dpid in self._dynamic_handles:
                if state[slot]:
                    events.extend(channels.handle_events(dpid, state[slot]))
        extra = self.protocol.extra_events(state)
        if extra:
            events.extend(extra)
        if self._switch_kinds:
            switches = self.topology.switches
            for kind in self._switch_kinds:
                events_of = kind.events
                for dpid in switches:
                    found = events_of(state, dpid)
                    if found:
                        events.extend(found)
        if self.faults is not None:
            self.faults.events(state, events)
        if self.timers:
            for dpid, slot in self.slot_table.items():
                found = self._expiries(dpid, state[slot])
                if found:
                    events.extend(found)
        return events

    def _traffic_may_start(self, state: Sequence[int]) -> bool:
        """With ``joins_first``: whether the hosts may act in ``state``. Before any host has
        acted (every host slot still holds its initial value: only host events change it),
        only once every command channel and every channel to the controller is empty: the
        switches have executed what the app sent them at join, and the app has handled what
        they answered (and what it sent in reply has been executed too). From the first host
        event on, always: later commands are traffic's, not start-up's."""
        hosts, channels = self._startup  # type: ignore[misc]
        for slot, initial in hosts:
            if state[slot] != initial:
                return True
        for slot in channels:
            if state[slot]:
                return False
        return True

    # ---- incremental enabled events (large networks) ------------------------------------

    def _enabled_from_sources(self, state: tuple[int, ...]) -> list[Event]:
        """:meth:`enabled` from the state's non-empty sources (the same events in the same
        order): the hosts' and the protocol's global (``extra_events``) events are computed
        as in :meth:`enabled`, the switches', the protocol's per-switch kinds' and the
        faults' from :meth:`_sources_of` (the faults' budgets applied by
        :meth:`Faults.listed`)."""
        indices, found = self._sources_of(state)
        events: list[Event] = []
        if self._startup is None or self._traffic_may_start(state):
            self.hosts.events(state, events)
        first = bisect_left(indices, self._extra_sources)
        events.extend(chain.from_iterable(found[:first]))
        extra = self.protocol.extra_events(state)
        if extra:
            events.extend(extra)
        if self.faults is None:
            events.extend(chain.from_iterable(found[first:]))
            return events
        links = bisect_left(indices, self._fault_links, first)
        controls = bisect_left(indices, self._fault_controls, links)
        tail = bisect_left(indices, self._tail_sources, controls)
        events.extend(chain.from_iterable(found[first:links]))
        self.faults.listed(state, found[links:controls], found[controls:tail], events)
        events.extend(chain.from_iterable(found[tail:]))
        return events

    def _sources_of(self, state: tuple[int, ...]) -> Sources:
        """``state``'s non-empty sources: their indices, in order, and their events.

        When ``state`` is the result of the last transition and the state it came from is
        remembered, only the sources of the slots that transition wrote are recomputed; a
        forgotten parent is recomputed in full (and remembered again, for its other
        successors). Every state computed is remembered (a bounded table, by identity: each
        entry holds its state, so an id is never that of another live state)."""
        remembered = self._remembered
        last = self._last
        if last is not None and last[0] is state:
            parent = last[1]
            known = remembered.get(id(parent))
            if known is not None and known[0] is parent:
                parent_sources = known[1]
            else:
                parent_sources = self._all_sources(parent)
                self._remember(parent, parent_sources)
            sources = self._updated_sources(parent_sources, last[2], state)
        else:
            known = remembered.get(id(state))
            if known is not None and known[0] is state:
                return known[1]
            sources = self._all_sources(state)
        self._remember(state, sources)
        return sources

    def _all_sources(self, state: tuple[int, ...]) -> Sources:
        """Every non-empty source of ``state``: the initial state's, updated from the
        chunks ``state`` does not share with it (see :class:`ChunkedState`), else one pass
        over the source slots."""
        if state.__class__ is ChunkedState and state is not self._initial:
            initial = self._initial_sources
            if initial is None:
                initial = self._initial_sources = self._all_sources(self._initial)
            return self._updated_sources(initial, ((slot, state[slot]) for slot in state.slots_not_shared(  # type: ignore[attr-defined]
                self._initial)), state)
        indices: list[int] = []
        found: list[tuple[Event, ...]] = []
        kind_events = self._kind_events
        for index, (slot, events_of) in enumerate(zip(self._source_slots, self._source_events)):
            events = events_of(state[slot]) if slot >= 0 else kind_events[index](state)
            if events:
                indices.append(index)
                found.append(events)
        return tuple(indices), tuple(found)

    def _updated_sources(self, parent: Sources, written: Any, state: Sequence[int]) -> Sources:
        """The sources of ``state``, which differs from a state with sources ``parent`` in the
        ``(slot, id)`` pairs ``written`` only (each changed source spliced in by bisection:
        the work is in C, proportional to the number of non-empty sources). A per-switch
        source is recomputed once, from ``state``, if a slot it reads was written."""
        source_of = self._source_of
        source_events = self._source_events
        kinds_of = self._kinds_of
        touched: set[int] | None = None
        indices, found = parent
        for slot, value in written:
            if kinds_of is not None and slot in kinds_of:
                if touched is None:
                    touched = set()
                touched.update(kinds_of[slot])
            index = source_of[slot]
            if index < 0:
                continue
            indices, found = _spliced(indices, found, index, source_events[index](value))
        if touched is not None:
            kind_events = self._kind_events
            for index in sorted(touched):
                indices, found = _spliced(indices, found, index, kind_events[index](state))
        return indices, found

    def _remember(self, state: tuple[int, ...], sources: Sources) -> None:
        remembered = self._remembered
        remembered[id(state)] = (state, sources)
        if len(remembered) > REMEMBERED_STATES:
            del remembered[next(iter(remembered))]

    def _expiries(self, dpid: int, value: int) -> tuple[SwitchEntryExpires, ...]:
        """The entries of switch ``dpid``'s table (value ``value``) that may expire now: those
        with a timeout, one event per timeout (an entry that buffers packets for Attendre
        waits for its message set first)."""
        key = (dpid, value)
        found = self._expiry_cache.get(key)
        if found is None:
            found = self._expiry_cache[key] = tuple(
                SwitchEntryExpires(dpid, index, reason)
                for index, entry in enumerate(self._values[self.slot_table[dpid]][value])
                if entry.timeouts is not None and entry.buffer is None
                for reason in entry.timeouts.reasons())
        return found

    #: The process of each event, for weak fairness (see :mod:`nice_attendre.models.fairness`).
    fairness_group = staticmethod(process_of)

    # ---- partial-order reduction (the Slotted contract, see models/footprints.py) --------

    def _footprints(self) -> Any:
        found = self.__dict__.get("_por_footprints")
        if found is None:
            from nice_attendre.models.footprints import Footprints
            found = self.__dict__["_por_footprints"] = Footprints(self)
        return found

    #: The footprints are the same in every state (see models/footprints.py).
    static_footprints = True

    def footprint(self, state: tuple[int, ...], event: Any) -> Any:
        """What ``event`` may read, write, append to, pop and add to (see :mod:`nice_attendre.por`)."""
        return self._footprints().footprint(state, event)

    def dormant(self, state: tuple[int, ...], enabled: Any) -> list[Any]:
        """Stand-ins for the events not enabled in ``state`` (``enabled``) that may be later."""
        return self._footprints().dormant(state, enabled)  # type: ignore[no-any-return]

    def por_model(self) -> Any:
        """The object holding this network's footprints (see models/footprints.py)."""
        return self._footprints()

    def occurrence(self, state: tuple[int, ...], event: Any) -> Any:
        """The footprint of ``event``'s transition from ``state``, or None (see models/footprints.py)."""
        return self._footprints().occurrence(state, event)

    def bounded(self, state: tuple[int, ...], event: Any) -> Any:
        """A footprint of ``event`` until its feeders happen, and its feeders, or None (see
        models/footprints.py)."""
        return self._footprints().bounded(state, event)

    def enablers(self, state: tuple[int, ...], event: Any) -> Any:
        """The events one of which must happen before dormant ``event`` can, or None (see
        models/footprints.py)."""
        return self._footprints().enablers(state, event)

    def disabled_by(self, state: tuple[int, ...], event: Any) -> frozenset[int]:
        """For ``event`` not enabled in ``state``: what keeps it disabled (see models/footprints.py)."""
        return self._footprints().disabled_by(state, event)  # type: ignore[no-any-return]

    def por_unsupported(self) -> str | None:
        """What of this network partial-order reduction does not support yet, or None."""
        return self._footprints().unsupported()  # type: ignore[no-any-return]

    def apply(self, state: tuple[int, ...], event: Event) -> tuple[int, ...]:
        """The state after ``event``; ``state`` is not changed."""
        if self.incremental:
            new, written = self._apply_pairs(state, event)
            self._last = (new, state, written)
            return new
        memo = self.memo
        if memo is not None:
            writes = memo.lookup(state, event)
            if writes is None:
                return self._apply_and_store(state, event)[0]
            after = list(state)
            for slot, value in writes:
                after[slot] = value
            return tuple(after)
        tx = Tx(self, state)
        self._handlers[type(event)](tx, event)
        return tuple(tx.s)

    def apply_uncached(self, state: tuple[int, ...], event: Event) -> tuple[int, ...]:
        """``apply`` that runs every handler of ``event``, the memo neither read nor filled:
        what replaying a trace needs (:meth:`nice_attendre.trace.Trace.replay`), so that an
        app that is not a function of its arguments is seen (a memoised transition would
        repeat what the search recorded)."""
        handler = self._handlers.get(type(event))
        if handler is None:
            raise ModelError(f"not an event of this network: {event!r}")
        tx = Tx(self, state)
        with self._app_unmemoised():
            handler(tx, event)
        return self._make_state(tx.s)

    @contextmanager
    def _app_unmemoised(self) -> Iterator[None]:
        """While replaying a trace: an app that remembers its own handler calls (an adapted
        Ryu app's ``memoize``) runs them again, as the network's memo is bypassed."""
        app = self.app
        if not getattr(app, "memoize", False):
            yield
            return
        own = app.__dict__.get("memoize", _NOTHING)
        app.memoize = False
        try:
            yield
        finally:
            if own is _NOTHING:
                del app.memoize
            else:
                app.memoize = own

    def event_types(self) -> tuple[type, ...]:
        """Every event class this network handles (its own, the faults' when budgeted, and
        the protocol variant's), in a stable order (by name): what a saved trace may name."""
        return tuple(sorted(self._handlers, key=lambda cls: cls.__name__))

    def narrate_initial(self) -> tuple[tuple[int, ...], list[str]]:
        """The initial state and what happened while it was built (the switches join: the
        app's ``on_switch_join`` calls and the commands they sent), for traces; no lines when
        the app neither sent anything nor changed its state at join."""
        notes = list(self._initial_notes)  # said once, when the network was built: an app
        # adapted from Ryu keeps its attributes on its instance, so it is not run again here
        if all(".on_switch_join handles switch s" in note for note in notes):
            notes = []  # the app did nothing at join: nothing worth a step 0
        return self._initial, notes

    def _apply_tracked(self, state: tuple[int, ...], event: Event) -> tuple[tuple[int, ...], Any]:
        """``apply`` without the memo, and the slots written (every slot where the new state
        differs). (With the memo on, ``apply_fingerprinted`` is the memo's peek and a large
        network's transitions go through :meth:`_apply_pairs`.)"""
        tx = TrackingTx(self, state)
        self._handlers[type(event)](tx, event)
        if self.incremental:
            values = tx.s
            return state.updated([(slot, values[slot]) for slot in tx.dirty]), tx.dirty
        return tuple(tx.s), tx.dirty

    def _apply_pairs(self, state: ChunkedState, event: Event) -> tuple[ChunkedState, Any]:
        """A large network's ``apply``, and the ``(slot, id)`` pairs written (a replayed
        transition's are the memo's own)."""
        memo = self.memo
        if memo is not None:
            writes = memo.lookup(state, event)
            if writes is not None:
                return state.updated(writes), writes
            new, written = self._apply_and_store(state, event)
        else:
            new, written = self._apply_tracked(state, event)
        return new, [(slot, new[slot]) for slot in written]

    def _apply_and_store(self, state: tuple[int, ...], event: Event,
                         fingerprint: int | None = None) -> tuple[tuple[int, ...], Any]:
        """Run ``event``'s handlers, tracking reads and writes, and store the transition in the
        memo unless it may not be replayed (see :mod:`nice_attendre.models.memo`); return the
        new state and the slots written, or with ``fingerprint`` (``state``'s) the new
        state's fingerprint instead of the slots (the transition is then stored with its
        fingerprint delta where that is the same in every state it is replayed in)."""
        tx = MemoTx(self, state)
        self._handlers[type(event)](tx, event)
        tracked = tx.s
        if tracked.opaque:  # written through a slice, say: every slot is taken
            new = self._make_state(_list_items(tracked, _EVERY))  # a C-level copy, not the tracking iterator
        elif self.incremental:  # the chunks written are copied (their slots read untracked)
            current = tracked.current
            new = state.updated([(slot, current(slot)) for slot in tracked.written])
        else:
            new = tuple(_list_items(tracked, _EVERY))  # a C-level copy, not the tracking iterator
        if tracked.opaque:  # written through a slice, say: compare every slot
            written: Any = self._fingerprints.changed_slots(state, new)
            if fingerprint is None:
                return new, written
            return new, self._fingerprints.update(fingerprint, state, new, written)
        written = tracked.written
        appends = tracked.appends
        plain = [slot for slot in written if slot not in appends] if appends else written
        updated = delta = None
        if fingerprint is not None:
            update = self._fingerprints.update
            updated = update(fingerprint, state, new, written)
            reads = tracked.reads
            if all(slot in reads for slot in plain):  # what the writes add is then constant
                delta = ((update(fingerprint, state, new, plain) if appends else updated)
                         - fingerprint) & 0xFFFFFFFFFFFFFFFF
        if self.slot_alerts not in written:
            self.memo.store(event, tracked.reads,  # type: ignore[union-attr]
                            tuple((slot, new[slot]) for slot in plain), delta, tuple(appends.items()))
        return new, (written if fingerprint is None else updated)

    def narrate(self, state: tuple[int, ...], event: Event) -> tuple[tuple[int, ...], list[str]]:
        """Apply ``event`` and say what happened, one line per step (for traces)."""
        notes: list[str] = []
        tx = Tx(self, state, notes)
        handler = self._handlers.get(type(event))
        if handler is None:
            raise ModelError(f"not an event of this network: {event!r}")
        with self._app_unmemoised():  # a narrated step is checked against the recorded one
            handler(tx, event)
        return self._make_state(tx.s), notes

    def time_limited_step(self, state: tuple[int, ...], event: Event, recorded: tuple[int, ...],
                          replayed: tuple[int, ...], notes: list[str]) -> list[str] | None:
        """The lines for a replayed step (``event`` from ``state``) that gave ``replayed``
        where the search recorded ``recorded`` only because a call into the app hit the
        handler time limit in one run and not in the other: a deterministic handler whose
        call takes about the limit, on a machine whose speed varies, is not the app's
        nondeterminism (see :func:`nice_attendre.trace.narrate_trace`). ``None`` when the
        difference is something else. ``notes`` are what the replay said.

        Likewise a step the search found to be the app's nondeterminism (the alert
        ``app-nondeterminism``, always the last step of its trace): called again for the
        report, a nondeterministic handler may well do something else (its two calls agree
        this time, or differ otherwise); the step is told as the search found it, with what
        the replay saw."""
        found = self._nondeterministic_step(state, recorded, replayed)
        if found is not None:
            return found

        def limited(after: tuple[int, ...]) -> list[str]:
            new = set(self.alerts(after)) - set(self.alerts(state))
            return sorted(detail for kind, detail in new if kind == "app-exception" and TIME_LIMIT_FAILURE in detail)

        in_search, in_replay = limited(recorded), limited(replayed)
        if in_search and not in_replay:
            return [f"ALERT app-exception: {detail}" for detail in in_search] + [
                "(when the trace was replayed, this call returned within the time limit: it takes about "
                "--max-handler-seconds, and the machine's speed varies; the search's call did not)"]
        if in_replay and not in_search:
            return [f"(not told: when the trace was replayed, {detail.split(' (handling ')[0]}, though the "
                    "search's call returned in time: it takes about --max-handler-seconds, and the machine's speed "
                    "varies; the trace goes on as the search found it)" for detail in in_replay]
        return None

    def _nondeterministic_step(self, state: tuple[int, ...], recorded: tuple[int, ...],
                               replayed: tuple[int, ...]) -> list[str] | None:
        """The lines of a step whose recorded outcome is an ``app-nondeterminism`` alert
        and whose replay gave another state (see :meth:`time_limited_step`)."""
        def new_alerts(after: tuple[int, ...]) -> list[str]:
            fresh = set(self.alerts(after)) - set(self.alerts(state))
            return sorted(detail for kind, detail in fresh if kind == "app-nondeterminism")

        in_search = new_alerts(recorded)
        if not in_search:
            return None
        in_replay = new_alerts(replayed)
        lines = [f"ALERT app-nondeterminism: {detail}" for detail in in_search]
        if in_replay:
            lines.extend(f"(replayed for this report: {detail})" for detail in in_replay if detail not in in_search)
        else:
            lines.append("(replayed for this report, the handler's two calls happened to agree: what it does "
                         "depends on the run)")
        return lines

    # ---- stable fingerprints (models/fingerprints.py) and shipping (models/shipping.py) --

    def fingerprint(self, state: tuple[int, ...]) -> int:
        """The stable 64-bit fingerprint of ``state``: the same in every process and run."""
        return self._fingerprints.of(state)

    def apply_fingerprinted(self, state: tuple[int, ...], fingerprint: int,
                            event: Event) -> tuple[tuple[int, ...], int]:
        """``apply`` and the new state's fingerprint, updated from the slots written only."""
        new, dirty = self._apply_tracked(state, event)
        if self.incremental:
            self._last = (new, state, [(slot, new[slot]) for slot in dirty])
        weights = self._fingerprints.weights
        updated = fingerprint
        try:
            for slot in dirty:
                table = weights[slot]
                updated += table[new[slot]] - table[state[slot]]
        except KeyError:  # a component not yet met in that slot: the slow path
            return new, self._fingerprints.update(fingerprint, state, new, dirty)
        return new, updated & 0xFFFFFFFFFFFFFFFF

    def peek_fingerprinted(self, state: tuple[int, ...], fingerprint: int, event: Event) -> tuple[int, Any]:
        """The successor's fingerprint and a handle that builds it (see
        :class:`nice_attendre.system.Fingerprinted`); with the memo on, replayed transitions
        give their writes and the successor is built only if the search keeps it."""
        new, updated = self.apply_fingerprinted(state, fingerprint, event)
        return updated, Computed(new)

    def state_parts(self) -> dict[str, tuple[int, ...]]:
        """The slots grouped by kind (a slot name's text before its first colon: ``host``,
        ``table``, ``port``, ``app``...), in layout order: the parts by which a partitioned
        search may give states owners (see :class:`nice_attendre.system.Partitionable`)."""
        parts: dict[str, list[int]] = {}
        for index, name in enumerate(self.slot_names):
            parts.setdefault(name.split(":", 1)[0], []).append(index)
        return {kind: tuple(slots) for kind, slots in parts.items()}

    def part_hash(self, state: tuple[int, ...], part: tuple[int, ...]) -> int:
        """A stable 64-bit hash of the components of ``state`` in the slots ``part``."""
        return self._fingerprints.part_hash(state, part)

    # ---- keys of large states (this process only) --------------------------------------

    def state_key(self, state: tuple[int, ...]) -> int:
        """A 64-bit hash of ``state`` for this process's search (equal states, equal keys):
        ``sum(k_i * id_i) mod 2**64`` over the slots' component ids, so a transition updates
        it from the slots it wrote, with no component ever hashed (see :attr:`large_states`)."""
        return sum(map(mul, self._key_multipliers, state)) & 0xFFFFFFFFFFFFFFFF

    def apply_keyed(self, state: tuple[int, ...], key: int, event: Event) -> tuple[tuple[int, ...], int]:
        """``apply`` and the new state's :meth:`state_key`, updated from the slots written."""
        new, written = self._apply_pairs(state, event)
        self._last = (new, state, written)
        multipliers = self._key_multipliers
        for slot, value in written:
            key += multipliers[slot] * (value - state[slot])
        return new, key & 0xFFFFFFFFFFFFFFFF

    def state_codec(self) -> Any:
        """A codec that moves this network's states between processes (hashes, and only
        the components a peer has not been sent yet)."""
        from nice_attendre.models.shipping import NetworkCodec

        return NetworkCodec(self._fingerprints, self._make_state)

    # ---- command channels --------------------------------------------------------------

    # send_commands(tx, dpid, messages), take_command(tx, dpid, batch=0, pick=0),
    # to_controller(tx, dpid, message) and from_switch(tx, dpid, pick=0) are the channels'
    # functions (see models/channels.py), bound in _layout: one call, not two, per message.

    # ---- helpers for the protocol variants ---------------------------------------------

    def deliver(self, tx: Tx, dpid: int, port: int, packet: Packet, unicast: bool = False) -> bool:
        """Put ``packet`` on the link out of ``dpid``:``port``; False if nothing is attached.

        ``unicast``: the switch sent the packet out of this port only; handing such a frame
        to a host it is not addressed to is a misdelivery (the ``delivery`` monitor's alert).
        """
        if self.faults is not None and self.faults.down(tx, dpid, port):
            tx.note(lambda: f"s{dpid} sends {packet} out of port {port}, whose link is down: it is lost")
            return False
        host = None
        for mobile, slot in self.slot_where.items():
            if tx.get(slot) == (dpid, port):
                host = mobile
                break
        peer = self.topology.links.get((dpid, port))
        if host is None:
            if peer is None or (peer.is_host and peer.node in self.mobile):  # nothing, or it moved away
                return False
            if not peer.is_host:
                tx.note(lambda: f"s{dpid} sends {packet} out of port {port} to s{peer.node}:{peer.port}")
                tx.push(self.slot_port[(peer.node, peer.port)], packet)
                return True
            host = peer.node
        tx.note(lambda: f"s{dpid} sends {packet} out of port {port} to {host}")
        if unicast and packet.hdr.eth_dst not in (host, BROADCAST) and "delivery" in self.options.monitors:
            tx.alert("delivery", f"s{dpid} sent {packet.label()} [{packet.hdr}], addressed to {packet.hdr.eth_dst}, "
                     f"to {host}")
        tx.push(self.slot_inbox[host], packet)
        return True

    def attached(self, state: Sequence[int], dpid: int, port: int) -> Any:
        """What is at ``dpid``:``port`` in ``state``: a host name, a switch :class:`Peer`, or None
        (also when the link there is down)."""
        if self.faults is not None:
            faults = self._values[self.slot_faults][state[self.slot_faults]]
            if faults.down:
                peer = self.topology.links.get((dpid, port))
                ends = {(dpid, port)} | ({(peer.node, peer.port)} if peer is not None and not peer.is_host else set())
                if ends & set(faults.down):
                    return None
        for host, slot in self.slot_where.items():
            if self._values[slot][state[slot]] == (dpid, port):
                return host
        peer = self.topology.links.get((dpid, port))
        if peer is None or (peer.is_host and peer.node in self.mobile):
            return None
        return peer.node if peer.is_host else peer

    # ---- state access (reports, properties, tests) -------------------------------------

    def value(self, state: Sequence[int], name: str) -> Any:
        """The value of slot ``name`` in ``state``; queues as tuples of items."""
        slot = self.slot_index[name]
        value = self._values[slot][state[slot]]
        if self._slot_interners[slot] is self._queues:
            if name.startswith("cmdq:"):
                return self.channels.decode_commands(value)
            return tuple(self._items.values[i] for i in value)
        return value

    def decode(self, state: Sequence[int]) -> dict[str, Any]:
        """Every slot of ``state`` by name (queues as tuples of items)."""
        return {name: self.value(state, name) for name in self.slot_names}

    def encode(self, values: Mapping[str, Any], base: Sequence[int] | None = None) -> tuple[int, ...]:
        """A state with the named slots set to ``values`` (queues given as tuples of items;
        batched command channels as tuples of batches of items), the others taken from
        ``base`` (default: the initial state)."""
        state = list(self._initial if base is None else base)
        for name, value in values.items():
            if name not in self.slot_index:
                raise KeyError(f"no slot {name!r}")
            slot = self.slot_index[name]
            if name.startswith("cmdq:"):
                value = self.channels.encode_commands(value)
            elif name.startswith("ctrlq:"):
                value = self.channels.encode_messages(value)
            elif self._slot_interners[slot] is self._queues:
                value = tuple(self._items.intern(item) for item in value)
            state[slot] = self._intern[slot](value)
        return self._make_state(state)

    def buffered_packets(self, state: Sequence[int]) -> list[tuple[int, Packet]]:
        """Every packet a switch holds in ``state`` (packet buffer and variant buffers), by
        switch in topology order. A large network looks only at the switches with a buffer
        in a chunk ``state`` does not share with the initial state, where none holds any."""
        held: list[tuple[int, Packet]] = []
        switches: Sequence[int] = self.topology.switches
        if state.__class__ is ChunkedState and self._holding is not None:
            holding = self._holding
            changed = {holding[slot] for slot in state.slots_not_shared(self._initial)  # type: ignore[attr-defined]
                       if slot in holding}
            switches = sorted(changed, key=self._switch_order.__getitem__)
        for dpid in switches:
            for _bid, _port, packet in self._values[self.slot_buffer[dpid]][state[self.slot_buffer[dpid]]]:
                held.append((dpid, packet))
            ext = self._values[self.slot_ext[dpid]][state[self.slot_ext[dpid]]]
            held.extend((dpid, packet) for packet in self.protocol.held_packets(ext))
        return held

    def interned(self, slot: int) -> list[Any]:
        """The values of ``slot``'s interner, indexed by id (``state[slot]`` is such an id).

        For predicates that cache their verdict per component id.
        """
        return self._values[slot]

    def alerts(self, state: Sequence[int]) -> tuple[tuple[str, str], ...]:
        """The alerts recorded in ``state``."""
        return self._values[self.slot_alerts][state[self.slot_alerts]]

    def received(self, state: Sequence[int], host: str) -> tuple[Any, ...]:
        """What ``host`` received, in order, as (header, origin, seq)."""
        return self._values[self.slot_host[host]][state[self.slot_host[host]]].received

    def describe(self) -> str:
        """One line: app, protocol, topology."""
        return f"{self.app.describe()} under {self.protocol.label()} on {self.topology.describe()}"

    def stored_values(self) -> int:
        """How many distinct component values are interned (a memory measure)."""
        return sum(len(i) for i in {id(i): i for i in self._slot_interners}.values()) + len(self._items)
