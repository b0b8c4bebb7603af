"""Equal-priority ties: every choice OpenFlow leaves to the switch is explored.

When several entries of the highest matching priority match a packet and do different
things, OpenFlow lets the switch use any of them ("free to choose any ordering", 1.0
section 3.4; "explicitly undefined", 1.3 section 5.3), and a switch may choose differently
from one packet to the next. The checker never picks one silently: a switch transition
that meets such a tie (:func:`~nice_attendre.models.flowtable.candidates`) is explored once
per choice. A tie among entries that behave alike is no choice.

How: the ordinary event (a switch processing a packet from a port or a command, a
variant's own switch event) takes the first tied entry, in table order, at every tie it
meets; each other combination of choices is an event of its own, :class:`SwitchChoosesEntry`,
naming the ordinary event and the choices (the index among the tied entries at each tie
the transition meets, in the order met; a choice left out is 0). They are found by running
the ordinary event's transition on a scratch copy of the state and recording the ties it
meets, then again for each other choice (a choice at one tie can lead the packet to other
ties), only at switches whose table has two overlapping entries of one priority that
behave differently (:func:`~nice_attendre.models.flowtable.may_tie`): an app whose tables
never tie costs one comparison per state, and its counts do not change. A variant's
alternative way of processing a packet (pif's meter drop, buffer's flow timeout: the
protocol's ``alternatives()``) comes with the combinations of choices under which the
packet reaches the point where the variant makes that choice (``Ties.reach``).

The ties a transition meets depend only on its switch's own slots (its table, packet
buffer, variant state, input queues and command channel): a packet is matched against the
table of the switch it is at. The alternatives are cached per (switch, those slots' values).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Iterator, Sequence

from nice_attendre.errors import ModelError, UnsupportedFeature
from nice_attendre.models import flowtable
from nice_attendre.models.events import SwitchProcessCommand, SwitchProcessPacket

if TYPE_CHECKING:
    from nice_attendre.models.network import Network, Tx
    from nice_attendre.models.packet import Packet

#: The most combinations of choices one transition may have (beyond: an unsupported model).
MAX_CHOICES = 4096


@dataclass(frozen=True, slots=True)
class SwitchChoosesEntry:
    """Switch ``dpid`` does what its ordinary event ``base`` (the class name; ``args``: its fields but
    ``dpid``, in order) does, taking at the ties its packets meet the tied entries
    ``choices`` (an index among the tied entries, in table order, per tie in the order met;
    0 for a tie beyond ``choices``). The ordinary event takes choice 0 everywhere."""

    dpid: int
    base: str
    args: tuple[Any, ...]
    choices: tuple[int, ...]
    rank: ClassVar[int] = 7

    def __str__(self) -> str:
        taken = ", ".join(_ordinal(choice + 1) for choice in self.choices)
        return f"{_describe(self.base, self.dpid, self.args)}, taking the {taken} of the tied entries it meets"


def ordinary(base: str, dpid: int, args: tuple[Any, ...]) -> Any | None:
    """The network's own event named ``base`` (in :mod:`nice_attendre.models.events`) at
    switch ``dpid`` with the other fields ``args``, or ``None`` when there is no such event
    (a variant's own event, or a malformed one read from a file)."""
    from nice_attendre.models import events

    cls = getattr(events, base, None)
    if isinstance(cls, type) and dataclasses.is_dataclass(cls):
        names = [field.name for field in dataclasses.fields(cls) if field.name != "dpid"]
        if len(names) == len(args):
            try:
                return cls(dpid=dpid, **dict(zip(names, args)))
            except TypeError:  # pragma: no cover - a malformed event read from a file
                pass
    return None


def _describe(base: str, dpid: int, args: tuple[Any, ...]) -> str:
    """The ordinary event named ``base`` with its fields, as it prints itself when it is one
    of the network's own events."""
    found = ordinary(base, dpid, args)
    return str(found) if found is not None else f"{base}(s{dpid}{''.join(f', {arg}' for arg in args)})"


def _ordinal(number: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(number, f"{number}th")


class Ties:
    """A network's exploration of equal-priority ties (one per protocol object).

    During a transition ``plan`` is the choices to take (``()`` outside an event that
    chooses: the first entry at every tie) and ``met`` records the number of tied entries at
    each tie met (None: not recording, the ordinary events' case).
    """

    def __init__(self, net: "Network") -> None:
        self.net = net
        self.plan: tuple[int, ...] = ()
        self.met: list[int] | None = None
        #: The variant's choice points the transition reached (see :meth:`reach`), while recording.
        self.reached: list[Any] = []
        self._alternatives: dict[Any, type] | None = None
        #: How many of the network's table values (``values``) were checked by may_tie, and the
        #: ids of those that may tie (public: the protocol's extra_events reads them inline).
        self.checked = 0
        self.tying: set[int] = set()
        self._events: dict[tuple[int, ...], tuple[SwitchChoosesEntry, ...]] = {}
        self._classes: dict[str, type] | None = None
        #: Every table value the network has built (the interner's list, which only grows).
        self.values: list[Any] = net._slot_interners[next(iter(net.slot_table.values()))].values
        self._slots: dict[int, tuple[int, ...]] = {}

    # ---- during a transition ---------------------------------------------------------

    def choose(self, tx: "Tx", dpid: int, options: tuple[int, ...], packet: "Packet", in_port: int) -> int:
        """The index of the tied entry the switch takes among ``options`` (indices of its table,
        two or more): the plan's choice at this tie, 0 by default."""
        choice = 0
        met = self.met
        if met is not None:
            position = len(met)
            met.append(len(options))
            if position < len(self.plan):
                choice = self.plan[position]
                if choice >= len(options):  # pragma: no cover - events come from enumerate()
                    raise ModelError(f"s{dpid}: choice {choice + 1} among {len(options)} tied entries")
        if tx.notes is not None:
            table = tx.get(self.net.slot_table[dpid])
            entries = "; ".join(f"[{table[index]}]" for index in options)
            tx.note(lambda: f"s{dpid}: {packet.label()} from port {in_port} matches {len(options)} entries of "
                    f"priority {table[options[0]].priority} that do different things ({entries}); OpenFlow leaves "
                    f"the choice to the switch: it takes the {_ordinal(choice + 1)}")
        return options[choice]

    def reach(self, choice: Any) -> None:
        """The transition reached the point where the variant's alternative ``choice`` (a key
        of the protocol's ``alternatives()``) could be made instead: recorded while exploring,
        so that the alternative is offered with the choices at the ties that led here."""
        if self.met is not None:
            self.reached.append(choice)

    def apply(self, tx: "Tx", ev: SwitchChoosesEntry) -> None:
        """Apply ``ev``: its ordinary event, with its choices."""
        base = self.base_event(ev)
        self.plan, self.met, self.reached = ev.choices, [], []
        try:
            self.net._handlers[type(base)](tx, base)
        finally:
            self.plan, self.met, self.reached = (), None, []

    def base_event(self, ev: SwitchChoosesEntry) -> Any:
        """The ordinary event ``ev`` names."""
        if self._classes is None:
            self._classes = {cls.__name__: cls for cls in self.net._handlers if cls is not SwitchChoosesEntry}
        cls = self._classes.get(ev.base)
        names = [field.name for field in dataclasses.fields(cls) if field.name != "dpid"] if cls else []
        if cls is None or len(names) != len(ev.args):
            raise ModelError(f"{ev}: no event {ev.base} with those fields in this network")
        return cls(dpid=ev.dpid, **dict(zip(names, ev.args)))

    # ---- enabled events --------------------------------------------------------------

    def events(self, state: Sequence[int]) -> tuple[SwitchChoosesEntry, ...]:
        """The events taking other choices than the ordinary ones, in ``state`` (by switch,
        in dpid order; per switch, by ordinary event in enabled order, then by choices in
        depth-first order). Empty, at the cost of a comparison, until some table that may
        tie has been built."""
        if self.checked != len(self.values):
            self._check_tables()
        if not self.tying:
            return ()
        net = self.net
        found: list[SwitchChoosesEntry] = []
        tying = self.tying
        for dpid, slot in net.slot_table.items():
            if state[slot] in tying:
                found.extend(self._switch_events(state, dpid))
        return tuple(found)

    def _check_tables(self) -> None:
        """Note the table values built since the last call that may tie."""
        values = self.values
        for value_id in range(self.checked, len(values)):
            if flowtable.may_tie(values[value_id]):
                self.tying.add(value_id)
        self.checked = len(values)

    def _switch_events(self, state: Sequence[int], dpid: int) -> tuple[SwitchChoosesEntry, ...]:
        slots = self._slots.get(dpid)
        net = self.net
        if slots is None:
            slots = self._slots[dpid] = (net.slot_table[dpid], net.slot_buffer[dpid], net.slot_ext[dpid],
                                         net.slot_cmdq[dpid],
                                         *(net.slot_port[(dpid, port)] for port in net.topology.ports[dpid]))
        key = (dpid, *(state[slot] for slot in slots))
        cached = self._events.get(key)
        if cached is None:
            cached = self._events[key] = tuple(self._enumerate(state, dpid))
        return cached

    def _enumerate(self, state: Sequence[int], dpid: int) -> Iterator[SwitchChoosesEntry]:
        """The events of :meth:`_switch_events`. A variant's alternative way of processing a
        packet from a port (``alternatives()``) is offered with each combination of choices
        under which the ordinary processing reaches its choice point; the variant itself
        offers it where the ordinary choices do."""
        if self._alternatives is None:
            self._alternatives = self.net.protocol.alternatives()
        alternatives = self._alternatives
        for base in self._ordinary_events(state, dpid):
            for plan, reached in self._plans(state, base):
                if not plan:
                    continue
                yield SwitchChoosesEntry(dpid, type(base).__name__, _args(base), plan)
                if type(base) is SwitchProcessPacket:
                    for choice in dict.fromkeys(reached):
                        if choice in alternatives:
                            yield SwitchChoosesEntry(dpid, alternatives[choice].__name__, (base.port,), plan)

    def _ordinary_events(self, state: Sequence[int], dpid: int) -> Iterator[Any]:
        """The events of switch ``dpid`` enabled in ``state`` whose transitions may run its
        pipeline: a packet from each port, its commands, the variant's own per-switch events
        but its alternatives (see :meth:`_enumerate`)."""
        net = self.net
        if self._alternatives is None:
            self._alternatives = net.protocol.alternatives()
        skipped = tuple(self._alternatives.values())
        for port in net.topology.ports[dpid]:
            if state[net.slot_port[(dpid, port)]]:
                yield SwitchProcessPacket(dpid, port)
        commands = state[net.slot_cmdq[dpid]]
        if commands:
            if net.fifo_commands:
                yield SwitchProcessCommand(dpid)
            else:
                yield from net.channels.command_events(dpid, commands)
        for kind in net._switch_kinds:
            for event in kind.events(state, dpid):
                if type(event) not in skipped:
                    yield event

    def _plans(self, state: Sequence[int], base: Any) -> list[tuple[tuple[int, ...], list[Any]]]:
        """Every combination of choices for ``base`` in ``state``, the ordinary one (``()``)
        first, each as short as it can be (trailing zeros dropped), in depth-first order;
        with each, the variant's choice points its transition reaches."""
        plans: list[tuple[tuple[int, ...], list[Any]]] = []

        def explore(prefix: tuple[int, ...]) -> None:
            met, reached = self._dry_run(state, base, prefix)
            plans.append((prefix, reached))
            for position in range(len(prefix), len(met)):
                for choice in range(1, met[position]):
                    plan = prefix + (0,) * (position - len(prefix)) + (choice,)
                    if len(plans) > MAX_CHOICES:
                        raise UnsupportedFeature(
                            f"s{base.dpid}: more than {MAX_CHOICES} combinations of equal-priority entries for one "
                            f"event ({base}); give the overlapping entries different priorities")
                    explore(plan)

        explore(())
        return plans

    def _dry_run(self, state: Sequence[int], base: Any, plan: tuple[int, ...]) -> tuple[list[int], list[Any]]:
        """The number of tied entries at each tie ``base``'s transition meets in ``state``
        with ``plan``, and the variant's choice points it reaches (run on a scratch copy:
        nothing is stored)."""
        from nice_attendre.models.network import Tx

        net = self.net
        tx = Tx(net, state)
        self.plan, self.met, self.reached = plan, [], []
        try:
            net._handlers[type(base)](tx, base)
            return self.met, self.reached
        finally:
            self.plan, self.met, self.reached = (), None, []


def _args(event: Any) -> tuple[Any, ...]:
    """``event``'s fields but ``dpid``, in order."""
    return tuple(getattr(event, field.name) for field in dataclasses.fields(event) if field.name != "dpid")

