"""Executions that never end, found by a random walk or kept by shrinking: the lasso's
reason, made as the depth-first search makes it.

A walk that enters a state it has already been in has found a cycle: its events are a lasso
(the steps up to the state's first visit, then the steps back to it), which violates
``termination`` and every ``eventually`` property that held nowhere on the walk; a walk that
ends quiescent where an ``eventually`` property never held violates it too. The checker
(:func:`nice_attendre.checker.dfs`) reports such a discovery after making the lasso as fair
as it can be (:func:`~nice_attendre.lasso.fair_lasso`: an event waiting on the whole cycle
happens on it, if the cycle goes on) and explains it with
:func:`~nice_attendre.lasso.termination_reason` or
:func:`~nice_attendre.lasso.eventually_reason`, which name the events the cycle never takes
(the fairness note); :func:`cycle_discovery` does the same for walks and shrunk traces, so
a simulation's lasso reads as the search's.

Weak fairness (main's default for both properties): a cycle counts only if a weakly fair
scheduler can repeat it (as :func:`~nice_attendre.lasso.settled` decides, asking
:func:`~nice_attendre.fair_cycles.weakly_fair_cycle` about the cycle's entry state when the
lasso still starves a process). :class:`Fairness` gives the walks and the shrinking the same
judgement, remembering the answers about entries (a component found unfair: no cycle through
it counts), so a walk whose cycle only an unfair scheduler repeats ends ``cycle``, no violation,
the same in every worker.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable, Sequence

from nice_attendre.fair_cycles import Undecided, Unfair, group_of, weakly_fair_cycle
from nice_attendre.lasso import eventually_reason, fair_lasso, fairness, termination_reason
from nice_attendre.property import EXECUTION_EXPECTATIONS, Expectation, Property
from nice_attendre.result import Discovery
from nice_attendre.trace import Step, Trace


def closed(trace: Trace) -> Trace:
    """``trace`` as a lasso when its last state is one of its earlier states (the first of
    them: ``cycle_start``), else ``trace`` unchanged (a trace that ends)."""
    final = trace.final
    for index, state in enumerate(trace.states()):
        if index == len(trace.steps):
            break
        if state == final:
            return Trace(trace.initial, trace.steps, cycle_start=index)
    return trace


class Fairness:
    """The judgement of lassos for the cycle properties among ``properties`` on ``system``, as
    the depth-first search makes it (see the module docstring)."""

    def __init__(self, system: Any, properties: Iterable[Property]) -> None:
        props = tuple(properties)
        self.system = system
        self.by_name = {p.name: p for p in props}
        self.always = tuple(p for p in props if p.expectation is Expectation.ALWAYS)
        self.on_step = tuple(p for p in props if p.expectation is Expectation.TRANSITION)
        self.group = group_of(system)
        #: per property, weakly_fair_cycle's answers: entry -> whether a fair cycle goes
        #: through it (False also for every state of a component found unfair)
        self.verdicts: dict[str, dict[Any, bool]] = {}

    def _fine(self, before: Any, event: Any, after: Any) -> bool:
        return all(p.holds(after) for p in self.always) and all(p.holds(before, event, after) for p in self.on_step)

    def acceptable(self, prop: Property) -> Any:
        """The steps a lasso of ``prop`` may take (as the search's ``fine``)."""
        if prop.expectation is Expectation.TERMINATION:
            return self._fine
        return lambda before, event, after: self._fine(before, event, after) and not prop.holds(after)

    def settle(self, prop: Property, trace: Trace, need_trace: bool = True) -> tuple[Trace, str] | None:
        """The lasso ``trace`` as reported for ``prop`` with its note (what
        :func:`~nice_attendre.lasso.settled` gives), or None when ``prop`` assumes weak
        fairness and no weakly fair scheduler repeats a cycle through the entry of the lasso
        made fair. What is remembered is exact: :func:`weakly_fair_cycle`'s answer for an entry
        (a function of the entry alone; an unfair answer holds for its whole component), asked
        only after :func:`fair_lasso`, so a walk's verdict does not depend on the walks its
        worker ran before. Without ``need_trace`` a remembered fair entry is not explored
        again (the trace returned is then the lasso made fair)."""
        enabled, apply = self.system.enabled, self.system.apply
        acceptable = self.acceptable(prop)
        trace = fair_lasso(trace, enabled, apply, acceptable, group=self.group)
        waiting, _sometimes = fairness(trace, enabled, self.group)
        if not waiting or prop.fairness != "weak":
            return trace, ""
        start = trace.cycle_start
        assert start is not None
        entry = trace.steps[start - 1].state if start else trace.initial
        verdicts = self.verdicts.setdefault(prop.name, {})
        known = verdicts.get(entry)
        if known is False:
            return None
        if known is True and not need_trace:
            return trace, ""
        found = weakly_fair_cycle(entry, enabled, apply, self.group, acceptable)
        if isinstance(found, Unfair):
            for state in found.states:
                verdicts[state] = False
            verdicts[entry] = False
            return None
        verdicts[entry] = True
        if isinstance(found, Undecided):
            return trace, (f" Whether a weakly fair execution from here never ends was not decided (more than "
                           f"{found.explored:,} states are reachable from the cycle's entry): reported, as it may "
                           "be one.")
        return Trace(trace.initial, (*trace.steps[:start], *found), cycle_start=start), ""

    def counts(self, prop: Property, initial: Any, events: Sequence[Any], loop_start: int) -> bool:
        """Whether the walk that took ``events`` from ``initial`` and came back to the state
        after ``events[:loop_start]`` violates ``prop`` (a cycle property)."""
        if prop.fairness != "weak":
            return True
        state, steps = initial, []
        for event in events:
            state = self.system.apply(state, event)
            steps.append(Step(event, state))
        return self.settle(prop, Trace(initial, tuple(steps), cycle_start=loop_start), need_trace=False) is not None


def cycle_discovery(system: Any, properties: Iterable[Property], discovery: Discovery,
                    fairness: Fairness | None = None) -> Discovery:
    """``discovery`` (of a ``termination`` or ``eventually`` property) with its lasso made as
    fair as it can be (:func:`~nice_attendre.lasso.settled`) and its reason written as the
    depth-first search writes it; a discovery of any other property unchanged. The steps a
    lasso may gain violate no ``always`` property and no property of transitions among
    ``properties`` (for an eventually-property, it does not hold after them either)."""
    if discovery.expectation not in EXECUTION_EXPECTATIONS or discovery.trace is None:
        return discovery
    judge = fairness if fairness is not None else Fairness(system, properties)
    prop = judge.by_name[discovery.property]
    trace, note = discovery.trace, ""
    if trace.is_lasso:
        found = judge.settle(prop, trace)
        if found is not None:  # (None: the walk was judged fair; kept as found)
            trace, note = found
    enabled = system.enabled
    if discovery.expectation is Expectation.TERMINATION:
        reason = termination_reason(trace, enabled, judge.group, note)
    else:
        reason = eventually_reason(prop.name, trace, enabled, prop.why(trace.final), judge.group, note)
    return replace(discovery, trace=trace, reason=reason)
