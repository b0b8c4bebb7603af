"""``termination`` under partial-order reduction (the depth-first search): a reduced graph has
a cycle whenever the full one has (stubborn sets preserve infinite executions), so a reduced
search that closes none proves termination; a cycle it closes is real and reported when a
weakly fair scheduler can take it; when it closes only unfair cycles, termination is left
undecided (``result.unchecked``), never reported to hold. Random systems (hypothesis) and
hand-made ones; the network's livelocking router."""
from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from nice_attendre import verify
from nice_attendre.checker import dfs
from nice_attendre.por import TERMINATION_CHECKPOINTED, TERMINATION_UNDECIDED, refusal
from nice_attendre.property import Property
from test_por import RandomSystem, _graph, systems
from tests_data_apps import path

ROUTER = path("resubmitting_router.py", "ResubmittingRouter")


def _has_cycle(system: RandomSystem) -> bool:
    """Whether the full graph has a cycle (an independent three-colour depth-first walk)."""
    colour: dict[Any, int] = {}
    for start in system.initial_states():
        stack = [(start, iter(system.enabled(start)))]
        colour[start] = 1
        while stack:
            state, events = stack[-1]
            event = next(events, None)
            if event is None:
                colour[state] = 2
                stack.pop()
                continue
            after = system.apply(state, event)
            seen = colour.get(after, 0)
            if seen == 1:
                return True
            if seen == 0:
                colour[after] = 1
                stack.append((after, iter(system.enabled(after))))
    return False


_EXAMPLES = settings(max_examples=120, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@_EXAMPLES
@given(systems(), st.sampled_from(["none", "weak"]))
def test_reduced_termination_agrees_with_the_full_search(system: RandomSystem, fairness: str) -> None:
    reachable, _quiet = _graph(system)
    assume(len(reachable) <= 1500)
    prop = Property.termination(fairness=fairness)
    full = dfs(system, [prop], keep_going=True)
    reduced = dfs(system, [prop], por=True, keep_going=True)
    assert full.complete and reduced.complete
    full_fails = full.discovery("termination") is not None
    reduced_fails = reduced.discovery("termination") is not None
    undecided = [why for name, why in reduced.unchecked if name == "termination"]
    assert full_fails == _has_cycle(system) or fairness == "weak"
    if fairness == "none":
        # a cycle anywhere is a violation, and the reduced graph has one iff the full has
        assert reduced_fails == full_fails and not undecided
    else:
        # never a pass where the full search fails; never a failure where it passes
        assert not full_fails or reduced_fails or undecided == [TERMINATION_UNDECIDED]
        assert full_fails or not reduced_fails
    if not _has_cycle(system):
        assert not reduced_fails and not undecided  # proved: every execution ends
    if reduced_fails:
        trace = reduced.discovery("termination").trace
        assert trace.is_lasso
        state = trace.initial
        for step in trace.steps:  # a real execution of the full system
            assert step.event in system.enabled(state)
            state = system.apply(state, step.event)
            assert state == step.state
        assert state == (trace.steps[trace.cycle_start - 1].state if trace.cycle_start else trace.initial)


# process 0 spins at pc 0 while V0 == 0 (its register is 0); process 1 sets V0 = 1 once, which
# lets process 0 leave the loop: the spin is a cycle only an unfair scheduler repeats
SPIN = RandomSystem(((("jump", 0, 0), ("set", 1, 1)), (("set", 0, 1),)), variables=2, channels=0)


def test_an_unfair_cycle_leaves_termination_undecided_not_proved() -> None:
    prop = Property.termination()
    full = dfs(SPIN, [prop])
    assert full.discovery("termination") is None and not full.unchecked  # holds under weak fairness
    reduced = dfs(SPIN, [prop], por=True)
    assert reduced.discovery("termination") is None
    assert reduced.unchecked == (("termination", TERMINATION_UNDECIDED),)
    # without fairness the spin is a violation, reduced or not
    none = Property.termination(fairness="none")
    assert dfs(SPIN, [none], por=True).discovery("termination") is not None


def test_a_checkpointed_reduced_search_does_not_decide_termination() -> None:
    saved: list[Any] = []
    result = dfs(SPIN, [Property.termination()], por=True, checkpoint=saved.append, checkpoint_interval=3600)
    assert result.unchecked == (("termination", TERMINATION_CHECKPOINTED),)


def test_only_the_depth_first_search_is_asked_for_termination() -> None:
    assert refusal([Property.termination()], cycles=True) is None
    assert refusal([Property.termination()]) is not None  # breadth-first and partitioned searches
    assert refusal([Property.eventually("e", bool)], cycles=True) is not None


@pytest.mark.parametrize("por", [False, True])
def test_the_livelocking_router_fails_termination_with_and_without_por(por: bool) -> None:
    result = verify(ROUTER, topology="linear:2", packets=1, properties=["termination"], por=por)
    found = result.discovery("termination")
    assert found is not None and found.trace.is_lasso
    found.trace.replay(result.system)
    assert found.reason.endswith("it needs no unfair scheduler.")


def test_defaults_under_por_check_termination_and_the_fixed_router_passes() -> None:
    result = verify(ROUTER, topology="linear:2", packets=1, app_options={"forget_expired": True}, por=True)
    assert result.ok and result.complete
    assert not result.unchecked
    # a shortest (breadth-first) reduced search still leaves it out, and says so
    shortest = verify(ROUTER, topology="linear:2", packets=1, app_options={"forget_expired": True}, por=True,
                      shortest=True)
    assert [name for name, _why in shortest.unchecked] == ["termination"]

