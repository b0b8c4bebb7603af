"""Partial-order reduction: stubborn sets over footprints, domain-free.

Most interleavings a search explores are the same execution in another order. In each state
the reduced search explores only a *stubborn set* of the enabled events, computed from what
each event may read and write (its :class:`Footprint`), over a *slotted system*: states are
sequences of slots, and a system that implements :class:`Slotted` says, per event, which
slots it may touch.

The contract (:class:`Slotted`):

* ``footprint(state, event)`` over-approximates what ``event`` may do in ``state`` **and in
  every state reachable from it** where it is enabled: the slots whose values it may read
  (``reads``: what it does, and whether it is enabled, may depend on them), overwrite
  (``writes``), append to without looking at them (``appends``, a FIFO) and take the head of
  (``pops``, a FIFO it reads only the head of), and add to (``adds``: a slot holding a set
  or counters, updated commutatively, by a union or increments, and not otherwise looked
  at: two adds in either order give the same value);
  ``guard`` (by default ``reads | pops``) the slots whose values decide whether it is
  enabled;
* ``dormant(state, enabled)`` lists, in a defined order, stand-ins for every event that is
  not enabled in ``state`` (``enabled``: its enabled events) but may be in a state reachable from it (an event, or a value standing
  for a family of them), each with a footprint (through ``footprint``) covering theirs;
* optionally ``occurrence(state, event)``, for an enabled event: the footprint of its one
  transition from ``state`` (what that transition reads: it would do the same in any state
  that agrees on those slots and on the heads of the queues it pops; what it writes, appends
  to, pops and adds to), or None (its ``footprint`` then); a subset of its footprint;
* optionally ``bounded(state, event)``: ``(footprint, feeders)``, a footprint covering every
  transition of ``event`` on every path from ``state`` on which none of the ``feeders``
  (events, enabled or dormant in ``state``) happens (a FIFO's consumer: its queue's items now,
  the producers of the queue as feeders), or None;
* optionally ``enablers(state, event)``, for a dormant event: :class:`Alternatives`, each
  such a sequence of events (the closure takes the one that brings the fewest enabled events
  not yet members), or the events (enabled or
  dormant in ``state``) one of which must happen before it can be enabled, or None (its
  guard's writers then);
* optionally ``disabled_by(state, event)``, for a dormant event: slots such that it (every event
  it stands for) stays disabled until one of them changes (a necessary enabling condition:
  the slots of one condition false in ``state``); by default its footprint's ``guard``.

Two events are *dependent* when a write of one meets anything the other touches, an append
meets a read or an append, a pop meets a read or a pop, or an add meets anything but an add.
An append to a FIFO and a pop from it are independent: a pop happens only while the queue
holds an item, and then it takes the head whatever is appended behind it.

The stubborn set of a state (:func:`stubborn_set`) starts from one enabled event and closes:
an enabled member brings every event whose footprint is dependent on its occurrence's (only
that transition of a member is moved before the others: Valmari's D1), enabled or dormant,
a disabled member every event that may enable it (writes, appends to or pops from a slot of
its guard). An event with a bounded footprint whose feeders are all members already is
brought only if its bounded footprint is: no feeder happens before a member does, so its
transitions until then are bounded. Each enabled event is tried as the seed (those with the fewest
neighbours first, then in ``enabled`` order); the set with the fewest enabled events wins
(the first tried on a tie), so the result depends on the state only. Such a set satisfies
Valmari's conditions D0, D1 and D2 for every enabled member (all are key events), which
preserve every reachable quiescent state (deadlock) and the existence of an infinite
execution.

Termination. A graph reduced by stubborn sets that satisfy D1 and D2 for every enabled member
has an infinite execution from a state whenever the full graph has one (Valmari: take the
first member an infinite execution holds, moved to its front by D1; or, when it holds none,
a key member, enabled all along it by D2, in front of each of its prefixes, and an infinite
execution by Konig's lemma); in a finite graph, a cycle. So a complete reduced search that
closes no cycle proves that every execution ends, whatever the fairness; a cycle it closes is
a real one, and it is a violation when a weakly fair cycle goes through its entry (decided on
the full system, :func:`nice_attendre.lasso.settled`). When every cycle it closes is unfair,
a weakly fair cycle may still exist among the interleavings it left out: termination is then
not decided, and the report says so (:data:`TERMINATION_UNDECIDED`), never that it holds.

Stable properties (:func:`refusal` says which properties a reduced search can check): a
reachable violation of an ``always`` property that, once violated, stays violated is reached
too when every cycle of the reduced graph holds a fully expanded state: the depth-first
search ensures it with the stack proviso (a state with a reduced successor on the search's
stack is expanded fully: :func:`nice_attendre.checker.dfs` with ``por=True``). The same holds
for a ``sometimes`` property that, once true, stays true. Properties of transitions and of
whole executions are refused for now.
"""
from __future__ import annotations

from collections.abc import Sequence as SequenceABC
from dataclasses import dataclass, replace
from typing import Any, Hashable, Iterable, Protocol, Sequence

from nice_attendre.property import Expectation, Property


@dataclass(frozen=True, slots=True)
class Footprint:
    """What an event may do to the slots of a state (slot indices; see the module docstring).

    ``guard`` defaults to ``reads | pops``; it must be a subset of them."""

    reads: frozenset[int] = frozenset()
    writes: frozenset[int] = frozenset()
    appends: frozenset[int] = frozenset()
    pops: frozenset[int] = frozenset()
    guard: frozenset[int] | None = None
    adds: frozenset[int] = frozenset()

    def __post_init__(self) -> None:
        if self.guard is not None and not self.guard <= self.reads | self.pops:
            raise ValueError(f"a footprint's guard {sorted(self.guard)} must be among its reads and pops")

    @property
    def guarded(self) -> frozenset[int]:
        """The slots deciding whether the event is enabled."""
        return self.reads | self.pops if self.guard is None else self.guard

    @property
    def touched(self) -> frozenset[int]:
        """Every slot the event may touch."""
        return self.reads | self.writes | self.appends | self.pops | self.adds


class Alternatives(tuple):  # type: ignore[type-arg]
    """Several sets of enablers of one dormant event, each sufficient: one event of any of
    them must happen before the event can be enabled (see :meth:`Slotted.enablers`)."""

    __slots__ = ()


def dependent(a: Footprint, b: Footprint) -> bool:
    """Whether events with footprints ``a`` and ``b`` may not commute (see the module
    docstring: an append and a pop on one FIFO commute)."""
    if a.writes & b.touched or b.writes & a.touched:
        return True
    if a.adds & (b.touched - b.adds) or b.adds & (a.touched - a.adds):
        return True
    if a.appends & (b.reads | b.appends) or b.appends & a.reads:
        return True
    return bool(a.pops & (b.reads | b.pops) or b.pops & a.reads)


class Slotted(Protocol):
    """A system whose events declare footprints (see the module docstring)."""

    def enabled(self, state: Any) -> Sequence[Hashable]:
        ...

    def footprint(self, state: Any, event: Hashable) -> Footprint:
        """What ``event`` may do in ``state`` and in every state reachable from it."""
        ...

    def dormant(self, state: Any, enabled: Sequence[Hashable]) -> Sequence[Hashable]:
        """Stand-ins for the events not enabled in ``state`` (its enabled events: ``enabled``)
        that may become enabled later."""
        ...


def _pulls(fp: Footprint, other: Footprint, enabled: bool) -> bool:
    """Whether a member with footprint ``fp`` (its occurrence's when ``enabled``, else its
    guard matters) must bring an event with footprint ``other``."""
    if enabled:
        return dependent(fp, other)
    return bool(fp.guarded & (other.writes | other.appends | other.pops | other.adds))


def slot_index(footprints: Sequence[Footprint]) -> tuple[dict[int, list[int]], ...]:
    """Per kind of access (reads, writes, appends, pops, adds), each slot's events (indices
    into ``footprints``)."""
    tables: tuple[dict[int, list[int]], ...] = ({}, {}, {}, {}, {})
    for position, fp in enumerate(footprints):
        for table, slots in zip(tables, (fp.reads, fp.writes, fp.appends, fp.pops, fp.adds)):
            for slot in slots:
                table.setdefault(slot, []).append(position)
    return tables


def stubborn_set(enabled: Sequence[Hashable], dormant: Sequence[Hashable],
                 footprints: Sequence[Footprint], current: Sequence[Footprint] | None = None,
                 bounded: Sequence[tuple[Footprint, Sequence[int]] | None] | None = None,
                 enablers: Sequence[Sequence[int] | None] | None = None,
                 tables: tuple[dict[int, list[int]], ...] | None = None) -> list[int]:
    """The indices, ascending, of the enabled events of the smallest stubborn set (see the
    module docstring); ``footprints`` are those of ``enabled`` then ``dormant``, ``current``
    those of the enabled events' occurrences (default: their footprints), ``bounded`` each
    event's bounded footprint and its feeders' indices, or None; ``enablers`` the dormant
    events' explicit enablers (by index, in ``dormant`` order), or None; ``tables`` the
    :func:`slot_index` of ``footprints``, when known."""
    count = len(enabled)
    if count <= 1:
        return list(range(count))
    readers, writers, appenders, poppers, adders = slot_index(footprints) if tables is None else tables
    neighbours: dict[int, set[int]] = {}

    def around(index: int) -> set[int]:
        found = neighbours.get(index)
        if found is not None:
            return found
        fp = footprints[index] if current is None or index >= count else current[index]
        found = set()
        if index < count:  # enabled: every event that may be dependent on its occurrence
            for slot in fp.writes:
                for table in (readers, writers, appenders, poppers, adders):
                    found.update(table.get(slot, ()))
            for slot in fp.appends:
                for table in (readers, writers, appenders, adders):
                    found.update(table.get(slot, ()))
            for slot in fp.pops:
                for table in (readers, writers, poppers, adders):
                    found.update(table.get(slot, ()))
            for slot in fp.reads:
                for table in (writers, appenders, poppers, adders):
                    found.update(table.get(slot, ()))
            for slot in fp.adds:
                for table in (readers, writers, appenders, poppers):
                    found.update(table.get(slot, ()))
        elif enablers is not None and enablers[index - count] is not None:  # disabled: its own enablers
            named = enablers[index - count]
            if type(named) is Alternatives:
                return None  # type: ignore[return-value]  # chosen as the set grows
            found.update(named)  # type: ignore[arg-type]
        else:  # disabled: every event that may enable it
            for slot in fp.guarded:
                for table in (writers, appenders, poppers, adders):
                    found.update(table.get(slot, ()))
        found.discard(index)
        neighbours[index] = found
        return found

    best: set[int] | None = None
    best_count = count
    # seeds with the fewest neighbours first: a set of one is found, and the search stops,
    # sooner (the order depends on the state only)
    for seed in sorted(range(count), key=lambda index: (len(around(index)), index)):
        members = {seed}
        work = [seed]
        members_enabled = 1
        # events a member brings by their footprint but not by their bounded one: left out
        # while their feeders are all members (checked again once the work is done, as the
        # set grows), brought otherwise
        pending: set[int] = set()
        while members_enabled < best_count:
            while work and members_enabled < best_count:
                member = work.pop()
                near = around(member)
                if near is None:  # a dormant member with alternative enablers: the cheapest now
                    options = enablers[member - count]  # type: ignore[index]
                    near = min(options, key=lambda option: (
                        sum(1 for other in option if other < count and other not in members),
                        sum(1 for other in option if other not in members)))
                # a dormant member's named enablers are brought whatever their footprints
                named = member >= count and enablers is not None and enablers[member - count] is not None
                for other in near:
                    if other == member:
                        continue
                    if other in members:
                        continue
                    if bounded is not None and bounded[other] is not None and not named:
                        own = footprints[member] if current is None or member >= count else current[member]
                        if not _pulls(own, bounded[other][0], member < count):  # type: ignore[index]
                            pending.add(other)
                            continue
                    members.add(other)
                    work.append(other)
                    if other < count:
                        members_enabled += 1
            if members_enabled >= best_count:
                break  # no better than the best: given up
            brought = sorted(other for other in pending if other not in members
                             and not all(feeder in members for feeder in bounded[other][1]))  # type: ignore[index]
            if not brought:
                break
            for other in brought:
                members.add(other)
                work.append(other)
                if other < count:
                    members_enabled += 1
        if members_enabled < best_count:
            best, best_count = members, members_enabled
            if best_count == 1:
                break
    if best is None:
        return list(range(count))
    return sorted(index for index in best if index < count)


class Reducer:
    """``reducer(state)``: the enabled events of ``system`` in a stubborn set of ``state``
    (in ``enabled`` order); ``reducer.full(state)``: every enabled event."""

    def __init__(self, system: Slotted) -> None:
        self.full = system.enabled
        # a system may keep its footprints in an object of their own (``por_model()``)
        model = system.por_model() if callable(getattr(system, "por_model", None)) else system  # type: ignore[attr-defined]
        self._footprint = model.footprint
        self._dormant = model.dormant
        self._guard = getattr(model, "disabled_by", None)
        self._occurrence = getattr(model, "occurrence", None)
        self._bounded = getattr(model, "bounded", None)
        self._enablers = getattr(model, "enablers", None)
        #: States whose set left out at least one enabled event (for reports and tests).
        self.reduced_states = 0
        #: With footprints that are the same in every state (``static_footprints``), the
        #: index of the footprints of each list of events met (see :func:`slot_index`).
        self._tables: dict[tuple[Hashable, ...], tuple[dict[int, list[int]], ...]] | None = (
            {} if getattr(system, "static_footprints", False) is True else None)
        self._guarded: dict[tuple[Hashable, frozenset[int]], Footprint] = {}

    def __call__(self, state: Any) -> Sequence[Hashable]:
        events = self.full(state)
        if len(events) <= 1:
            return events
        dormant = self._dormant(state, events)
        footprint = self._footprint
        count = len(events)
        every = (*events, *dormant)
        raw = [footprint(state, event) for event in every]
        guard = self._guard
        explicit = self._enablers
        where = {event: index for index, event in enumerate(every)}
        position = where.__getitem__

        # what the closure asks about a dormant event (its enablers, its guard) or about an
        # event's bounded footprint or occurrence is worked out when it asks (most are not)
        def enablers_of(index: int) -> Any:
            found = explicit(state, every[count + index])  # type: ignore[misc]
            if found is None:
                return None
            if type(found) is Alternatives:
                return Alternatives(list(map(position, option)) for option in found)
            return list(map(position, found))

        enablers = None if explicit is None else _Lazy(len(dormant), enablers_of)

        def footprint_of(index: int) -> Footprint:
            found = raw[index]
            if index < count or guard is None or (enablers is not None and enablers[index - count] is not None):
                return found
            key = (every[index], guard(state, every[index]))
            narrowed = self._guarded.get(key)
            if narrowed is None:
                narrowed = self._guarded[key] = replace(found, guard=key[1] & (found.reads | found.pops))
            return narrowed

        footprints = _Lazy(len(every), footprint_of)
        current = None
        occurrence = self._occurrence
        if occurrence is not None:
            def occurrence_of(index: int) -> Footprint:
                found = occurrence(state, events[index])  # type: ignore[misc]
                return raw[index] if found is None else found
            current = _Lazy(count, occurrence_of)
        bounded = None
        if self._bounded is not None:
            def bounded_of(index: int) -> Any:
                found = self._bounded(state, every[index])  # type: ignore[misc]
                return None if found is None else (found[0], list(map(position, found[1])))
            bounded = _Lazy(len(every), bounded_of)
        if self._tables is not None:
            key = (*events, None, *dormant)
            tables = self._tables.get(key)
            if tables is None:
                if len(self._tables) >= 4096:
                    self._tables.clear()
                tables = self._tables[key] = slot_index(raw)
        else:
            tables = slot_index(raw)
        chosen = stubborn_set(events, dormant, footprints, current, bounded, enablers, tables)
        if len(chosen) == len(events):
            return events
        self.reduced_states += 1
        return [events[index] for index in chosen]


class _Lazy(SequenceABC):  # type: ignore[type-arg]
    """A sequence whose items are computed (once) when first asked for."""

    __slots__ = ("_length", "_compute", "_items")
    _UNSET = object()

    def __init__(self, length: int, compute: Any) -> None:
        self._length = length
        self._compute = compute
        self._items: list[Any] = [_Lazy._UNSET] * length

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: Any) -> Any:
        found = self._items[index]
        if found is _Lazy._UNSET:
            found = self._items[index] = self._compute(index)
        return found


#: Why a reduced search leaves ``termination`` undecided: it closed only cycles that no weakly
#: fair scheduler takes, and a fair one may be among the interleavings it left out.
TERMINATION_UNDECIDED = ("--por closed only cycles that no weakly fair scheduler takes; a fair one may be among "
                         "the interleavings it left out (run without --por to decide)")
#: Why a reduced search that is checkpointed or resumed leaves ``termination`` undecided.
TERMINATION_CHECKPOINTED = ("--por does not decide termination across checkpoints (the cycles a run closed before "
                            "its checkpoint are not recorded in it)")


def refusal(properties: Iterable[Property], cycles: bool = False) -> str | None:
    """Why a reduced search cannot check ``properties``, or None: it checks properties at
    quiescence, and ``always`` and ``sometimes`` properties marked ``stable``; with ``cycles``
    (a search that finds every cycle of the graph it explores: the depth-first one) also
    ``termination`` (see :data:`TERMINATION_UNDECIDED`); properties of transitions and
    ``eventually`` need provisos not built yet."""
    for prop in properties:
        kind = prop.expectation
        if kind is Expectation.TERMINATION and cycles:
            continue
        if kind in (Expectation.TERMINATION, Expectation.EVENTUALLY):
            return (f"--por does not support property {prop.name!r} yet (a property of whole executions: "
                    "termination and eventually need a reduction that keeps cycles and their fairness)")
        if kind is Expectation.TRANSITION:
            return f"--por does not support property {prop.name!r} yet (a property of transitions)"
        if kind in (Expectation.ALWAYS, Expectation.SOMETIMES) and not prop.stable:
            return (f"--por does not support property {prop.name!r}: it is not known to be stable "
                    f"(an {kind.value} property must keep its verdict once decided in every later state)")
    return None


def unsupported(system: Any) -> str | None:
    """Why ``system`` cannot be reduced, or None: it must implement :class:`Slotted` (and may
    say itself what it does not support, by ``por_unsupported()``)."""
    for name in ("footprint", "dormant"):
        if not callable(getattr(system, name, None)):
            return f"--por needs a system that declares footprints (no {name}() on {type(system).__name__})"
    own = getattr(system, "por_unsupported", None)
    return own() if callable(own) else None
