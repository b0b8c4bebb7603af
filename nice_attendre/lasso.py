"""Executions that never end: what a lasso trace says, in words (domain-free).

A search that finds a cycle reports a *lasso* (:class:`~nice_attendre.trace.Trace` with
``cycle_start``): a prefix from an initial state to the cycle's entry state, then the cycle's
steps, which lead back to that state and can repeat for ever. This module writes the reason
of such a discovery: which steps repeat, which events they are, and whether the execution
depends on a scheduler that never takes some event (a fairness assumption).

Fairness. A cycle is an infinite execution whatever the scheduling; but when an event is
enabled on the cycle and never taken on it, that execution exists only if the event can wait
for ever. Events enabled in *every* state of the cycle and never taken are excused by weak
fairness (an event enabled for ever eventually happens); events enabled in *some* of its
states and never taken, by strong fairness (an event enabled again and again eventually
happens); fairness is judged per process, a set of events that are outcomes of one activity
(:mod:`nice_attendre.fair_cycles`). Such an event often changes nothing the cycle depends on
(another switch's entry expiring while a packet loops), or starts a larger loop of the same
events (a second packet caught in the same livelock): :func:`fair_lasso` then lets each of
them happen on the cycle, applies the cycle's events again until a state repeats, and reports
the longer lasso, which needs no unfair scheduler. When a process is still starved,
:func:`settled` decides exactly whether a weakly fair cycle goes through the cycle's entry: a
property that assumes weak fairness (the default) is violated only then, with that cycle; one
with ``fairness="none"`` by every cycle, and the reason names the events the cycle never
takes, so a reader knows when the verdict rests on an unfair scheduler.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from nice_attendre.fair_cycles import Group, Unfair, Undecided, identity, weakly_fair_cycle
from nice_attendre.trace import Step, Trace

#: Events named in full in a reason; more are counted.
SHOWN_EVENTS = 6


def _listing(events: Sequence[Any]) -> str:
    """``events`` as ``a; b; c`` (at most :data:`SHOWN_EVENTS`, then ``and N more``)."""
    shown = [str(event) for event in events[:SHOWN_EVENTS]]
    more = len(events) - len(shown)
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def _distinct(events: Sequence[Any]) -> list[Any]:
    """``events`` without repeats, in order."""
    return list(dict.fromkeys(events))


def fairness(trace: Trace, enabled: Callable[[Any], Sequence[Any]], group: Group = identity
             ) -> tuple[list[Any], list[Any]]:
    """The processes (see :mod:`nice_attendre.fair_cycles`; ``group`` names each event's) a
    lasso's cycle never moves although they are enabled on it: ``(in every state of the
    cycle, in some but not all of them)``, each as its first event enabled on the cycle, in
    the order the cycle's states enable them (first state first). ``enabled`` is the system's."""
    start = trace.cycle_start
    if start is None:
        return [], []
    states = list(trace.states())[start:-1]  # the cycle's states (the last one is the first again)
    taken = set(group(step.event) for step in trace.cycle)
    seen: dict[Any, list[Any]] = {}  # process -> [its first event, how many states enable it]
    for state in states:
        counted: set[Any] = set()
        for event in enabled(state):
            key = group(event)
            if key in taken or key in counted:
                continue
            counted.add(key)
            if key in seen:
                seen[key][1] += 1
            else:
                seen[key] = [event, 1]
    always = [event for event, count in seen.values() if count == len(states)]
    sometimes = [event for event, count in seen.values() if count < len(states)]
    return always, sometimes


#: How many starved events :func:`fair_lasso` lets happen on a cycle, at most.
FAIRNESS_ROUNDS = 16


def fair_lasso(trace: Trace, enabled: Callable[[Any], Sequence[Any]], apply: Callable[[Any, Any], Any],
               acceptable: Callable[[Any, Any, Any], bool], rounds: int = FAIRNESS_ROUNDS,
               group: Group = identity) -> Trace:
    """A lasso like ``trace`` whose cycle leaves fewer events waiting for ever.

    While the cycle never takes some event enabled in every state of it (see
    :func:`fairness`), the first such event (in :func:`fairness`'s order) that can be taken
    without ending the repetition is made to happen at the cycle's entry: from the state it
    leads to, the cycle's events are applied again in order (at most :data:`PUMPS` times over)
    until a state repeats, and the new lasso is the old prefix, that event, and the steps up
    to the repeated state, whose cycle is the steps since its first visit. At most ``rounds``
    times; every step added must be ``acceptable(before, event, after)`` (no property the
    search checks fails there). ``trace`` itself when no event can be added.
    """
    current = trace
    for _ in range(rounds):
        waiting, _sometimes = fairness(current, enabled, group)
        if not waiting:
            return current
        start = current.cycle_start
        assert start is not None
        prefix = current.steps[:start]
        entry = prefix[-1].state if prefix else current.initial
        events = [step.event for step in current.cycle]
        for event in waiting:
            found = _pumped(entry, event, events, enabled, apply, acceptable)
            if found is not None:
                steps, back = found
                current = Trace(current.initial, (*prefix, *steps), cycle_start=start + back)
                break
        else:
            return current
    return current


#: How many times over :func:`fair_lasso` applies a cycle's events after a waiting event.
PUMPS = 4


def _pumped(entry: Any, event: Any, cycle: Sequence[Any], enabled: Callable[[Any], Sequence[Any]],
            apply: Callable[[Any, Any], Any], acceptable: Callable[[Any, Any, Any], bool]
            ) -> tuple[list[Step], int] | None:
    """The steps ``event`` from ``entry``, then the events ``cycle`` again and again (at most
    :data:`PUMPS` times), up to the first state seen twice on the way, and the number of the
    steps before its first visit (so the steps after them lead back to it); None when an event
    is not enabled where it comes, a step is not ``acceptable``, or no state repeats."""
    state = apply(entry, event)
    if not acceptable(entry, event, state):
        return None
    steps = [Step(event, state)]
    seen = {state: 1}
    for _ in range(PUMPS):
        for next_event in cycle:
            if next_event not in enabled(state):
                return None
            before, state = state, apply(state, next_event)
            if not acceptable(before, next_event, state):
                return None
            steps.append(Step(next_event, state))
            back = seen.get(state)
            if back is not None:
                return steps, back
            seen[state] = len(steps)
    return None


def cycle_text(trace: Trace) -> str:
    """Where a lasso's cycle is: ``from the state after step 4, steps 5-8 lead back to it``."""
    start = trace.cycle_start
    assert start is not None
    last = len(trace.steps)
    where = "the initial state" if start == 0 else f"the state after step {start}"
    steps = f"step {last} leads" if start + 1 == last else f"steps {start + 1}-{last} lead"
    return f"from {where}, {steps} back to it"


def fairness_text(trace: Trace, enabled: Callable[[Any], Sequence[Any]], group: Group = identity) -> str:
    """The sentence that says what scheduling a lasso's execution needs (see the module
    docstring): the processes it never moves though enabled on it, if any."""
    always, sometimes = fairness(trace, enabled, group)
    if always:
        return (f"It repeats only while these events, enabled in every state of the cycle, never happen: "
                f"{_listing(always)}; after any of them the cycle's events, repeated {PUMPS} times, come back to "
                "no state (this execution needs a scheduler that lets them wait for ever: no weak fairness).")
    if sometimes:
        return (f"These events are enabled again and again on the cycle but never happen: {_listing(sometimes)} "
                "(a strongly fair scheduler would take them; a weakly fair one may not).")
    if group is not identity and any(fairness(trace, enabled)):
        return ("Every event enabled on the cycle is one of its steps or another outcome of a process that moves on "
                "it (such as another command the same switch may take first): it needs no unfair scheduler.")
    return "Every event enabled on the cycle is one of its steps: it needs no unfair scheduler."


def settled(trace: Trace, enabled: Callable[[Any], Sequence[Any]], apply: Callable[[Any, Any], Any],
            acceptable: Callable[[Any, Any, Any], bool], group: Group, weak: bool,
            stop: Callable[[], bool] | None = None) -> tuple[Trace, str] | Unfair:
    """What a search reports for the lasso ``trace`` it found: ``(lasso, note)``, or
    :class:`~nice_attendre.fair_cycles.Unfair` when ``weak`` (the property assumes weak
    fairness) and no weakly fair cycle goes through the cycle's entry state, so that neither
    this cycle nor any other in its strongly connected component is a violation.

    The lasso is first made as fair as :func:`fair_lasso` can; if it still starves a process
    and ``weak``, :func:`~nice_attendre.fair_cycles.weakly_fair_cycle` decides, over the steps
    ``acceptable(before, event, after)``: a fair cycle found replaces the reported one; an
    undecided question keeps it, with a ``note`` that says so (a possible violation is never
    dropped)."""
    trace = fair_lasso(trace, enabled, apply, acceptable, group=group)
    waiting, _ = fairness(trace, enabled, group)
    if not waiting or not weak:
        return trace, ""
    start = trace.cycle_start
    assert start is not None
    entry = trace.steps[start - 1].state if start else trace.initial
    found = weakly_fair_cycle(entry, enabled, apply, group, acceptable, stop=stop)
    if isinstance(found, Unfair):
        return found
    if isinstance(found, Undecided):
        why = ("the search was stopped" if found.stopped
               else f"more than {found.explored:,} states are reachable from the cycle's entry")
        return trace, (f" Whether a weakly fair execution from here never ends was not decided ({why}): "
                       "reported, as it may be one.")
    return Trace(trace.initial, (*trace.steps[:start], *found), cycle_start=start), ""


def termination_reason(trace: Trace, enabled: Callable[[Any], Sequence[Any]], group: Group = identity,
                       note: str = "") -> str:
    """The reason of a ``termination`` discovery whose trace is the lasso ``trace``."""
    repeated = _distinct([step.event for step in trace.cycle])
    return (f"an execution that never ends: {cycle_text(trace)}, and can repeat for ever "
            f"(repeating: {_listing(repeated)}). {fairness_text(trace, enabled, group)}{note}")


def eventually_reason(name: str, trace: Trace, enabled: Callable[[Any], Sequence[Any]], why: str = "",
                      group: Group = identity, note: str = "") -> str:
    """The reason of an ``eventually`` discovery: ``trace`` ends in a quiescent state or is
    a lasso, and property ``name`` holds in none of its states; ``why`` is the property's own
    explanation of the last state (may be empty)."""
    own = f" ({why})" if why else ""
    if trace.cycle_start is None:
        return f"the execution ends (nothing is enabled) and {name} never held on it{own}"
    repeated = _distinct([step.event for step in trace.cycle])
    return (f"an execution that never ends and where {name} never holds{own}: {cycle_text(trace)}, "
            f"and can repeat for ever (repeating: {_listing(repeated)}). {fairness_text(trace, enabled, group)}"
            f"{note}")
