"""Shrinking counterexamples (:mod:`nice_attendre.shrink`): on random graphs against a
breadth-first oracle, and on small systems where the shortest trace is known."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_core_dfs_graphs import Graph, bfs_distances, graphs
from test_simulate import Grid

from nice_attendre import Expectation, Property, Trace, dfs
from nice_attendre.result import Discovery
from nice_attendre.shrink import shrink_discoveries, shrink_trace


@given(graphs(), st.sets(st.integers(0, 8), min_size=1, max_size=3), st.booleans())
@settings(max_examples=150, deadline=None)
def test_a_shrunk_trace_replays_to_the_same_violation_and_is_no_longer(graph: Graph, bad: set[int],
                                                                       at_end: bool) -> None:
    if at_end:
        prop = Property.at_quiescence("bad", lambda s: s not in bad)
    else:
        prop = Property.always("bad", lambda s: s not in bad)
    found = dfs(graph, [prop]).discoveries
    if not found or found[0].trace is None:
        return
    trace = found[0].trace
    shrunk = shrink_trace(graph, prop, trace)
    assert shrunk.before == len(trace)
    assert len(shrunk.trace) <= len(trace)
    assert shrunk.trace.replay(graph) == shrunk.trace.final  # every event enabled where taken
    assert shrunk.trace.initial == trace.initial
    final = shrunk.trace.final
    assert final in bad
    if at_end:
        assert not graph.enabled(final)
    else:  # cut at the first violation: no state before the last is bad
        assert not any(state in bad for state in list(shrunk.trace.states())[:-1])
        # never shorter than the shortest path to a bad state (the oracle)
        distances = bfs_distances(graph, [trace.initial])
        assert len(shrunk.trace) >= min(distances[s] for s in bad if s in distances)
    assert shrink_trace(graph, prop, trace) == shrunk  # deterministic


def test_events_that_do_not_matter_are_dropped() -> None:
    prop = Property.always("x-below-3", lambda s: s[0] < 3, explain=lambda s: f"x is {s[0]}")
    trace = Trace.from_events(Grid(), ["y", "x", "y", "x", "y", "x"])
    shrunk = shrink_trace(Grid(), prop, trace)
    assert shrunk.trace.events == ("x", "x", "x") and shrunk.reason == "x is 3"
    assert shrunk.minimal and shrunk.before == 6 and shrunk.tried > 0


def test_an_at_quiescence_trace_keeps_what_quiescence_needs() -> None:
    prop = Property.at_quiescence("never-ends", lambda s: False)
    trace = Trace.from_events(Grid(), ["y", "x", "y", "x", "y", "x"])
    assert len(shrink_trace(Grid(), prop, trace).trace) == 6


def test_a_transition_property_is_cut_at_its_step() -> None:
    prop = Property.on_transition("no-x-at-1", lambda before, event, after: not (event == "x" and before[1] == 1))
    trace = Trace.from_events(Grid(), ["x", "y", "y", "x", "x"])
    shrunk = shrink_trace(Grid(), prop, trace)
    assert shrunk.trace.events == ("y", "x")


def test_the_budget_keeps_the_best_found_so_far() -> None:
    prop = Property.always("x-below-3", lambda s: s[0] < 3)
    trace = Trace.from_events(Grid(9), ["y"] * 9 + ["x"] * 3)
    cut = shrink_trace(Grid(9), prop, trace, budget=5)
    assert not cut.minimal and cut.transitions == 5
    assert cut.trace.final[0] == 3


class Interrupting(Grid):
    """A Grid whose ``apply`` gets a Ctrl-C at its ``after``-th call."""

    def __init__(self, after: int) -> None:
        super().__init__(9)
        object.__setattr__(self, "calls", [0, after])

    def apply(self, state, event):
        self.calls[0] += 1
        if self.calls[0] == self.calls[1]:
            raise KeyboardInterrupt
        return super().apply(state, event)


def test_ctrl_c_keeps_the_best_found_so_far() -> None:
    prop = Property.always("x-below-3", lambda s: s[0] < 3)
    trace = Trace.from_events(Grid(9), ["y"] * 9 + ["x"] * 3)
    shrunk = shrink_trace(Interrupting(10), prop, trace)
    assert shrunk.signal == 2 and not shrunk.minimal
    assert shrunk.trace.final[0] == 3 and len(shrunk.trace) <= 12


def test_discoveries_get_their_length_before_shrinking() -> None:
    prop = Property.always("x-below-3", lambda s: s[0] < 3)
    trace = Trace.from_events(Grid(), ["y", "x", "y", "x", "x"])
    sometimes = Discovery("seen", Expectation.SOMETIMES, None, "never")
    done, signum = shrink_discoveries(Grid(), [prop], [Discovery("x-below-3", Expectation.ALWAYS, trace, "old"),
                                                       sometimes])
    assert signum is None
    assert done[0].trace.events == ("x", "x", "x") and done[0].unshrunk_length == 5
    assert done[1] is sometimes
