"""Cycles met by random walks (:mod:`nice_attendre.simulate`) and shrunk lassos
(:mod:`nice_attendre.shrink`): a walk that comes back to a state of its own is a lasso, which
violates ``termination`` and the ``eventually`` properties that held nowhere on it, reported
as the depth-first search reports it (a fair lasso when it can be made one, the same reason
and fairness note); a walk that ends where an eventually-property never held violates it."""
from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st
from test_core_dfs_graphs import Graph, graphs
from test_simulate import Grid, Ring, Scrambled, outcome

from nice_attendre import Expectation, Property, Trace, dfs
from nice_attendre.lasso import termination_reason
from nice_attendre.result import Discovery
from nice_attendre.shrink import shrink_discoveries, shrink_trace
from nice_attendre.simulate import CYCLE, QUIESCENT, Walker, WalkOptions, simulate

TERMINATION = Property.termination()


@dataclass(frozen=True)
class Flag:
    """States (position, flag): "tick" moves round a ring of ``n`` positions for ever; "set"
    raises the flag once (enabled in every state where it is down, never needed by the ring:
    a cycle without it leaves it waiting for ever)."""

    n: int = 2

    def initial_states(self) -> tuple[tuple[int, bool], ...]:
        return ((0, False),)

    def enabled(self, state: tuple[int, bool]) -> tuple[str, ...]:
        return ("tick",) if state[1] else ("tick", "set")

    def apply(self, state: tuple[int, bool], event: str) -> tuple[int, bool]:
        position, flag = state
        return ((position + 1) % self.n, flag) if event == "tick" else (position, True)


@dataclass(frozen=True)
class Detour:
    """A ring 0 -> 1 -> 2 -> 0 ("next"), from which "side" leads at any point to a dead end
    (state 10 + position, quiescent)."""

    def initial_states(self) -> tuple[int, ...]:
        return (0,)

    def enabled(self, state: int) -> tuple[str, ...]:
        return () if state >= 10 else ("next", "side")

    def apply(self, state: int, event: str) -> int:
        return (state + 1) % 3 if event == "next" else 10 + state


def test_a_walk_back_to_its_own_state_violates_termination_with_a_lasso() -> None:
    result = simulate(Ring(4), [TERMINATION], options=WalkOptions(seed=3), walks=10)
    assert not result.complete and result.stop_reason == "violation"
    (found,) = result.discoveries
    assert found.property == "termination" and found.expectation is Expectation.TERMINATION
    trace = found.trace
    assert trace.is_lasso and trace.cycle_start == 0 and trace.events == ("next",) * 4
    trace.replay(Ring(4))  # every event enabled where taken, and the cycle closes
    assert found.reason == termination_reason(trace, Ring(4).enabled)
    assert found.reason.startswith("an execution that never ends: from the initial state, steps 1-4 lead back")
    assert result.simulation.ends == {"violation": 1} and result.simulation.violating_walk == {"termination": 0}
    assert "termination" in result.simulation.checked and "termination" not in result.simulation.not_checked


def test_the_reported_lasso_is_made_fair_as_the_search_makes_it() -> None:
    """A walk that ticks round the ring leaves "set" waiting; the report lets it happen on the
    cycle (as the depth-first search's fair_lasso does), so the execution needs no unfair
    scheduler, and says so."""
    searched = dfs(Flag(), [TERMINATION]).discoveries[0]
    for seed in range(6):
        result = simulate(Flag(), [TERMINATION], options=WalkOptions(seed=seed), walks=1, shrink=seed % 2 == 0)
        (found,) = result.discoveries
        assert "set" in found.trace.events, (seed, found.trace.events)
        assert found.trace.replay(Flag()) == found.trace.final
        assert found.reason.endswith("Every event enabled on the cycle is one of its steps: it needs no unfair "
                                     "scheduler.")
        assert found.reason.split(":")[0] == searched.reason.split(":")[0]


def test_a_cycle_without_termination_checked_is_only_counted() -> None:
    result = simulate(Ring(4), [], options=WalkOptions(seed=0), walks=5)
    assert result.discoveries == () and result.simulation.ends == {CYCLE: 5}


def test_eventually_is_violated_by_a_walk_that_ends_or_cycles_where_it_never_held() -> None:
    at_two = Property.eventually("reaches-2", lambda s: s == 2, explain=lambda s: f"at {s}")
    walker = Walker(Detour(), [at_two], [], WalkOptions(seed=0))
    seen = {}
    for index in range(60):
        walk = walker.walk(index)
        events = walk.events or ()
        seen.setdefault((walk.end, walk.loop_start is not None, bool(walk.violations)), events)
        if walk.violations:  # 2 was never entered: the walk ended or came back to 0 or 1 without it
            assert walk.violations == (("reaches-2", "eventually", ""),)
        else:
            assert walk.end in (QUIESCENT, CYCLE)
    # walks through 2 violate nothing, whether they end (12) or cycle; walks ending at 10 or 11
    # violate it, and none can cycle without entering 2
    assert ("violation", False, True) in seen and (QUIESCENT, False, False) in seen and (CYCLE, True, False) in seen
    result = simulate(Detour(), [at_two], options=WalkOptions(seed=0), walks=60, keep_going=True)
    (found,) = result.discoveries
    assert found.expectation is Expectation.EVENTUALLY and not found.trace.is_lasso
    assert found.trace.final in (10, 11) and 2 not in set(found.trace.states())
    assert found.reason == f"the execution ends (nothing is enabled) and reaches-2 never held on it (at {found.trace.final})"


def test_eventually_on_a_ring_where_it_never_holds_is_a_lasso() -> None:
    never = Property.eventually("never", lambda s: False)
    (found,) = simulate(Ring(3), [never], options=WalkOptions(seed=0), walks=2).discoveries
    assert found.trace.is_lasso and found.trace.events == ("next",) * 3
    assert found.reason.startswith("an execution that never ends and where never never holds: from the initial state")
    held = Property.eventually("at-1", lambda s: s == 1)  # held on the way: the ring is no violation of it
    assert simulate(Ring(3), [held], options=WalkOptions(seed=0), walks=5).discoveries == ()


def test_a_lasso_shrinks_to_its_cycle_and_replays() -> None:
    trace = Trace.from_events(Flag(4), ["tick", "tick", "tick", "tick"])
    lasso = Trace(trace.initial, trace.steps, cycle_start=0)
    shrunk = shrink_trace(Flag(4), TERMINATION, lasso)
    assert shrunk.trace == lasso and shrunk.minimal  # nothing can go: every tick is the cycle
    # a detour before the cycle (the flag raised after the first tick) goes
    long = Trace.from_events(Flag(3), ["tick", "set", "tick", "tick", "tick"])
    assert long.final == long.steps[1].state
    shrunk = shrink_trace(Flag(3), TERMINATION, Trace(long.initial, long.steps, cycle_start=2))
    assert shrunk.trace.events == ("tick",) * 3 and shrunk.trace.cycle_start == 0
    shrunk.trace.replay(Flag(3))
    (done,), _signal = shrink_discoveries(Flag(3), [TERMINATION], [
        Discovery("termination", Expectation.TERMINATION, Trace(long.initial, long.steps, cycle_start=2), "")])
    assert done.unshrunk_length == 5 and done.trace.is_lasso
    assert "set" in done.trace.events  # made fair again after shrinking
    done.trace.replay(Flag(3))


@given(graphs(), st.integers(0, 2 ** 32))
@settings(max_examples=150, deadline=None)
def test_walks_report_a_cycle_only_where_the_search_finds_one(graph: Graph, seed: int) -> None:
    """Against the depth-first search (the oracle: a cycle is reachable or not): every lasso a
    walk reports replays and closes, its shrunk form too, and an acyclic graph gives none."""
    cyclic = bool(dfs(graph, [TERMINATION]).discoveries)
    for shrink in (False, True):
        result = simulate(graph, [TERMINATION], options=WalkOptions(seed=seed), walks=20, shrink=shrink)
        if not cyclic:
            assert result.discoveries == ()
            continue
        for found in result.discoveries:
            assert found.trace.is_lasso
            found.trace.replay(graph)
            assert found.reason == termination_reason(found.trace, graph.enabled)


@dataclass(frozen=True)
class Exit:
    """A ring 0 -> 1 -> 0 ("next") from which "exit" (enabled in both) leads to the quiescent
    state 9: the ring repeats only while "exit" waits for ever, which no weakly fair scheduler
    allows."""

    def initial_states(self) -> tuple[int, ...]:
        return (0,)

    def enabled(self, state: int) -> tuple[str, ...]:
        return () if state == 9 else ("next", "exit")

    def apply(self, state: int, event: str) -> int:
        return 9 if event == "exit" else 1 - state


def test_a_cycle_only_an_unfair_scheduler_repeats_is_no_violation_of_weak_termination() -> None:
    """As the depth-first search judges it (main's weak fairness): termination assumes a
    weakly fair scheduler; termination with fairness 'none' counts every cycle."""
    any_scheduler = Property.termination("termination-any-scheduler", fairness="none")
    assert dfs(Exit(), [TERMINATION]).discoveries == ()
    assert dfs(Exit(), [any_scheduler]).discoveries
    fair = simulate(Exit(), [TERMINATION], options=WalkOptions(seed=1), walks=40)
    assert fair.discoveries == () and fair.simulation.ends.get(CYCLE, 0) > 0  # walks went round the ring
    unfair = simulate(Exit(), [any_scheduler], options=WalkOptions(seed=1), walks=40)
    (found,) = unfair.discoveries
    assert found.trace.is_lasso and "exit" not in found.trace.events
    assert "no weak fairness" in found.reason
    # shrinking keeps the judgement: a lasso of the ring is no violation of weak termination
    lasso = Trace(0, Trace.from_events(Exit(), ["next", "next"], 0).steps, cycle_start=0)
    assert shrink_trace(Exit(), any_scheduler, lasso).trace == lasso
    (kept,), _signal = shrink_discoveries(Exit(), [TERMINATION], [
        Discovery("termination", Expectation.TERMINATION, lasso, "")])
    assert kept.trace == lasso


@given(graphs(), st.integers(0, 2 ** 32), st.sampled_from([2, 3]))
@settings(max_examples=60, deadline=None)
def test_the_fairness_judgement_does_not_depend_on_the_workers(graph: Graph, seed: int, workers: int) -> None:
    """Every worker remembers its own answers about cycles; the verdicts, counts and lassos
    are those of one process (keep-going: every walk's verdict is counted)."""
    props = [TERMINATION, Property.eventually("at-0", lambda s: s == 0)]
    options = WalkOptions(seed=seed)
    one = simulate(graph, props, options=options, walks=30, keep_going=True)
    many = simulate(graph, props, options=options, walks=30, keep_going=True,
                    cluster=lambda stop_at: Scrambled(lambda: Walker(graph, props, [], options, stop_at=stop_at),
                                                      workers))
    assert outcome(one) == outcome(many)
