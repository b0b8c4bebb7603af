"""Shorter counterexamples: delta-debugging over a trace's events (Zeller's ddmin).

A random walk's trace is long, and a depth-first search's follows whatever path it took
first. :func:`shrink_trace` drops events from a trace and keeps a shorter sequence when it
still *replays to a violation of the same property*: from the trace's initial state each
event is enabled where it is taken (``event in enabled(state)``; events are values, so an
event means the same thing wherever it is enabled), and the property fails on the way (an
``always`` property in a state reached, a property of transitions on a step; the sequence
is then cut there) or, for an ``at_quiescence`` one, in the quiescent state it ends in. For
``termination`` the sequence must come back to a state it has been in (a lasso: it is cut
there), for an ``eventually`` property likewise or end quiescent, with the property holding
in none of its states; the shrunk lasso is then made fair and explained as the depth-first
search does (:func:`nice_attendre.walk_cycles.cycle_discovery`).

The search is ddmin over complements: remove one of ``n`` chunks, keep the first removal
that still fails (granularity ``n - 1``), else split finer; it ends when no single event can
be removed (the trace is then *1-minimal*: every event it keeps is needed) or when the
budget of transitions is spent. Replays start from the state before the removed chunk (the
prefix is unchanged), so a test costs the suffix only. Everything is deterministic: the
same trace and budget give the same shrunk trace in every run and process (the budget is
counted in transitions, never in seconds).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Iterable, Sequence

from nice_attendre.property import Expectation, Property
from nice_attendre.result import Discovery
from nice_attendre.trace import Trace

#: Transitions one trace's shrinking may replay (about 10 s at the network's speed).
SHRINK_TRANSITIONS = 1_000_000

#: The expectations whose violations can be shrunk (a ``sometimes`` property has no trace).
SHRINKABLE = (Expectation.ALWAYS, Expectation.AT_QUIESCENCE, Expectation.TRANSITION, Expectation.TERMINATION,
              Expectation.EVENTUALLY)

#: The expectations violated by an execution that ends, or one that never does (a lasso).
ENDINGS = (Expectation.AT_QUIESCENCE, Expectation.EVENTUALLY)


class _Spent(Exception):
    """The budget of transitions is spent."""


@dataclass(frozen=True, slots=True)
class Shrunk:
    """The outcome of :func:`shrink_trace`: the shortest violating ``trace`` found, its
    ``reason`` (the property's explanation of its last state), the events ``before``
    shrinking, the candidates ``tried`` and the ``transitions`` replayed; ``minimal`` is True
    when no single event can be dropped (False: the budget or a signal ended the search
    first; ``signal`` is the signal's number then)."""

    trace: Trace
    reason: str
    before: int
    tried: int
    transitions: int
    minimal: bool
    signal: int | None = None


class _Replay:
    """Replays candidate event sequences against one property, within a budget."""

    def __init__(self, system: Any, prop: Property, budget: int, initial: Any = None, judge: Any = None) -> None:
        self.initial = initial
        #: for a cycle property: a :class:`~nice_attendre.walk_cycles.Fairness` (a candidate's
        #: cycle must be one a weakly fair scheduler repeats, when the property assumes one)
        self.judge = judge
        self.apply = system.apply
        self.enabled = system.enabled
        self.prop = prop
        self.budget = budget
        self.transitions = 0
        self.tried = 0

    def after(self, state: Any, event: Any) -> Any:
        """``apply(state, event)``, counted against the budget."""
        if self.transitions >= self.budget:
            raise _Spent
        self.transitions += 1
        return self.apply(state, event)

    def fails(self, states: "_Prefixes", events: Sequence[Any], start: int, shorter_than: int) -> list[Any] | None:
        """Replay ``events[start:]`` from ``states[start]`` (the state after ``events[:start]``,
        in which the property held), skipping each event that is not enabled where it comes:
        the events taken up to the step where the property fails, if that is fewer than
        ``shorter_than``; else None. For an ``at_quiescence`` or ``eventually`` property, a
        replay whose events run out before quiescence goes on with the first enabled event,
        while it can still end shorter: a dropped event's consequences then run their own
        course. For ``termination`` and ``eventually``, a replay that comes back to one of
        its states (those of the prefix too) fails there (an eventually-property must hold
        in none of them)."""
        self.tried += 1
        prop = self.prop
        kind = prop.expectation
        enabled = self.enabled
        state = states[start]
        taken = list(events[:start])
        cycles = kind is Expectation.TERMINATION or kind is Expectation.EVENTUALLY
        eventually = kind is Expectation.EVENTUALLY
        seen = {states[index]: index for index in range(start + 1)} if cycles else {}

        def closes(after: Any) -> bool | None:
            """True: ``after`` closes a cycle; None: the candidate cannot fail (the
            eventually-property holds); False: go on."""
            back = seen.get(after)
            if back is not None:
                return self.judge is None or self.judge.counts(prop, self.initial, taken, back) or None
            if eventually and prop.holds(after):
                return None
            seen[after] = len(taken)
            return False

        for index in range(start, len(events)):
            if len(taken) >= shorter_than - 1:  # one more event: no shorter
                return None
            event = events[index]
            if event not in enabled(state):
                continue
            after = self.after(state, event)
            taken.append(event)
            if kind is Expectation.TRANSITION and not prop.holds(state, event, after):
                return taken
            state = after
            if kind is Expectation.ALWAYS and not prop.holds(state):
                return taken
            if cycles:
                closed = closes(state)
                if closed is None:
                    return None
                if closed:
                    return taken
        if kind in ENDINGS:
            now = enabled(state)
            while now and len(taken) < shorter_than - 1:
                state = self.after(state, now[0])
                taken.append(now[0])
                if cycles:
                    closed = closes(state)
                    if closed is None:
                        return None
                    if closed:
                        return taken
                now = enabled(state)
            if not now and len(taken) < shorter_than and not prop.holds(state):
                return taken
        return None


class _Prefixes:
    """The states after each prefix of one event sequence, built as far as asked."""

    def __init__(self, replay: _Replay, initial: Any, items: Sequence[Any]) -> None:
        self.replay = replay
        self.items = items
        self.states = [initial]

    def __getitem__(self, length: int) -> Any:
        states = self.states
        while len(states) <= length:
            states.append(self.replay.after(states[-1], self.items[len(states) - 1]))
        return states[length]


def _ddmin(replay: _Replay, initial: Any, items: list[Any]) -> list[Any]:
    """ddmin over complements (see the module docstring) until no single event can go."""
    granularity = 2
    while len(items) >= 2:
        size = math.ceil(len(items) / granularity)
        states = _Prefixes(replay, initial, items)
        for start in range(0, len(items), size):
            failing = replay.fails(states, items[:start] + items[start + size:], start, len(items))
            if failing is not None:
                items = failing
                granularity = max(granularity - 1, 2)
                break
        else:
            if size == 1:
                break
            granularity = min(granularity * 2, len(items))
    return items


def _move_one(replay: _Replay, initial: Any, items: list[Any]) -> list[Any] | None:
    """A shorter failing sequence made by moving one event (the first found: each event in
    order, tried at each earlier place, the earliest first, then at each later place, the
    nearest first), or None. Taken sooner or later, an event can spare others: a flow-mod
    executed before the packet it is for arrives, or a packet processed after it, spares the
    packet-in and all that follows from it (events that are then not enabled are skipped)."""
    states = _Prefixes(replay, initial, items)
    for index, event in enumerate(items):
        for place in range(index):
            if items[place] == event:
                continue
            candidate = items[:place] + [event] + items[place:index] + items[index + 1:]
            failing = replay.fails(states, candidate, place, len(items))
            if failing is not None:
                return failing
        for place in range(index + 1, len(items)):
            if items[place] == event:
                continue
            candidate = items[:index] + items[index + 1:place + 1] + [event] + items[place + 1:]
            failing = replay.fails(states, candidate, index, len(items))
            if failing is not None:
                return failing
    return None


def shrink_trace(system: Any, prop: Property, trace: Trace, *, budget: int = SHRINK_TRANSITIONS,
                 properties: Iterable[Property] | None = None) -> Shrunk:
    """The shortest trace found from ``trace``'s events that still violates ``prop`` (see the
    module docstring): ddmin, then an event moved where that makes the trace shorter,
    and again, until neither shortens it. ``trace`` must violate ``prop`` (its events are
    kept when nothing shorter is found). A Ctrl-C (``KeyboardInterrupt``) ends the search
    with the shortest violating trace found so far (``signal`` set). ``properties`` (the run's)
    say which steps a lasso may take when it is judged for weak fairness (default: ``prop``)."""
    if prop.expectation not in SHRINKABLE:
        raise ValueError(f"property {prop.name!r} ({prop.expectation.value}) has no trace to shrink")
    judge = None
    if prop.expectation in (Expectation.TERMINATION, Expectation.EVENTUALLY):
        from nice_attendre.walk_cycles import Fairness

        judge = Fairness(system, properties if properties is not None else (prop,))
    replay = _Replay(system, prop, budget, trace.initial, judge)
    initial = trace.initial
    best = list(trace.events)
    before = len(best)
    minimal = False
    signum: int | None = None
    try:
        while True:
            best = _ddmin(replay, initial, best)
            moved = _move_one(replay, initial, best)
            if moved is None:
                minimal = True
                break
            best = moved
    except _Spent:
        pass
    except KeyboardInterrupt as exc:
        import signal

        signum = getattr(exc, "signum", None) or int(signal.SIGINT)
    shrunk = Trace.from_events(system, best, initial) if len(best) != before else trace
    if prop.expectation in (Expectation.TERMINATION, Expectation.EVENTUALLY) and shrunk is not trace:
        from nice_attendre.walk_cycles import closed

        shrunk = closed(shrunk)  # a lasso again, if the shorter execution comes back to a state
    return Shrunk(shrunk, prop.why(shrunk.final), before, replay.tried, replay.transitions, minimal, signum)


def shrink_discoveries(system: Any, properties: Iterable[Property], discoveries: Sequence[Discovery], *,
                       budget: int = SHRINK_TRANSITIONS) -> tuple[list[Discovery], int | None]:
    """Each discovery with a trace of a shrinkable property, shrunk (:func:`shrink_trace`),
    with ``unshrunk_length`` set to its length before (a lasso, shrunk or not, then made fair
    and explained: :func:`~nice_attendre.walk_cycles.cycle_discovery`); the others unchanged.
    Returns the
    discoveries and the signal that interrupted the shrinking (None: it was not): the traces
    not shrunk yet are then kept as they are."""
    from nice_attendre.walk_cycles import cycle_discovery

    props = tuple(properties)
    by_name = {p.name: p for p in props}
    done: list[Discovery] = []
    signum: int | None = None
    for discovery in discoveries:
        prop = by_name.get(discovery.property)
        if (signum is not None or discovery.trace is None or prop is None or prop.expectation not in SHRINKABLE
                or not len(discovery.trace)):
            done.append(cycle_discovery(system, props, discovery) if not discovery.reason else discovery)
            continue
        shrunk = shrink_trace(system, prop, discovery.trace, budget=budget, properties=props)
        signum = shrunk.signal
        done.append(cycle_discovery(system, props, replace(discovery, trace=shrunk.trace, reason=shrunk.reason,
                                                           unshrunk_length=len(discovery.trace))))
    return done, signum
