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
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable

from nice_attendre.lasso import eventually_reason, fair_lasso, termination_reason
from nice_attendre.property import EXECUTION_EXPECTATIONS, Expectation, Property
from nice_attendre.result import Discovery
from nice_attendre.trace import Trace


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


def cycle_discovery(system: Any, properties: Iterable[Property], discovery: Discovery) -> Discovery:
    """``discovery`` (of a ``termination`` or ``eventually`` property) with its lasso made as
    fair as it can be and its reason written as the depth-first search writes it; a
    discovery of any other property unchanged. The steps a lasso may gain violate no
    ``always`` property and no property of transitions among ``properties`` (for an
    eventually-property, it does not hold after them either)."""
    if discovery.expectation not in EXECUTION_EXPECTATIONS or discovery.trace is None:
        return discovery
    props = tuple(properties)
    always = tuple(p for p in props if p.expectation is Expectation.ALWAYS)
    on_step = tuple(p for p in props if p.expectation is Expectation.TRANSITION)
    enabled, apply = system.enabled, system.apply

    def fine(before: Any, event: Any, after: Any) -> bool:
        return all(p.holds(after) for p in always) and all(p.holds(before, event, after) for p in on_step)

    trace = discovery.trace
    if discovery.expectation is Expectation.TERMINATION:
        trace = fair_lasso(trace, enabled, apply, fine)
        reason = termination_reason(trace, enabled)
    else:
        prop = next(p for p in props if p.name == discovery.property)
        if trace.is_lasso:
            trace = fair_lasso(trace, enabled, apply,
                               lambda before, event, after: fine(before, event, after) and not prop.holds(after))
        reason = eventually_reason(prop.name, trace, enabled, prop.why(trace.final))
    return replace(discovery, trace=trace, reason=reason)
