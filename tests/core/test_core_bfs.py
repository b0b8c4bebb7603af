"""The breadth-first search (``--shortest``): the same counts as the depth-first search
when complete, shortest counterexamples, and the limits."""
from __future__ import annotations

import pytest

from nice_attendre.breadth_first import bfs
from nice_attendre.checker import Limits, dfs
from nice_attendre.property import Property


class Graph:
    """A small explicit graph: ``edges`` maps a node to its successors (events = targets)."""

    def __init__(self, edges: dict[int, tuple[int, ...]], initial: int = 0) -> None:
        self.edges = edges
        self.initial = initial

    def initial_states(self) -> tuple[int, ...]:
        return (self.initial,)

    def enabled(self, state: int) -> tuple[int, ...]:
        return self.edges.get(state, ())

    def apply(self, state: int, event: int) -> int:
        return event


# 0 -> 1 -> 2 -> 3 -> 9 (a long way first, in enabled() order), and 0 -> 9 directly (last).
LONG_FIRST = Graph({0: (1, 9), 1: (2,), 2: (3,), 3: (9,), 9: ()})


def test_complete_search_counts_equal_dfs() -> None:
    graph = Graph({0: (1, 2), 1: (2, 3), 2: (3, 0), 3: (4,), 4: (1,)})
    deep, wide = dfs(graph), bfs(graph)
    assert wide.complete and deep.complete
    assert (wide.stats.transitions, wide.stats.unique_states, wide.stats.revisits) == \
        (deep.stats.transitions, deep.stats.unique_states, deep.stats.revisits)


def test_bfs_trace_is_shortest_where_dfs_is_not() -> None:
    never_9 = Property.always("never-9", lambda s: s != 9)
    deep, wide = dfs(LONG_FIRST, [never_9]), bfs(LONG_FIRST, [never_9])
    assert deep.discoveries[0].trace.events == (1, 2, 3, 9)
    assert wide.discoveries[0].trace.events == (9,)
    assert wide.discoveries[0].trace.replay(LONG_FIRST) == 9


def test_max_depth_is_deepest_level() -> None:
    assert bfs(LONG_FIRST).stats.max_depth == 3  # node 3; node 9 is at level 1
    assert bfs(Graph({0: (1, 2), 1: (2,), 2: ()})).stats.max_depth == 1


def test_at_quiescence_and_transition_properties() -> None:
    end = Property.at_quiescence("ends-at-3", lambda s: s == 3)
    result = bfs(LONG_FIRST, [end])
    assert result.discoveries[0].property == "ends-at-3"
    assert result.discoveries[0].trace.events == (9,)
    step = Property.on_transition("no-jump", lambda before, event, after: after - before == 1)
    found = bfs(LONG_FIRST, [step]).discoveries[0]
    assert found.trace.events == (9,)


def test_limits_stop_cleanly() -> None:
    cut = bfs(LONG_FIRST, limits=Limits(max_transitions=2))
    assert not cut.complete and cut.stop_reason == "max-transitions" and cut.stats.transitions == 2
    shallow = bfs(LONG_FIRST, limits=Limits(max_depth=1))
    assert not shallow.complete and shallow.stop_reason == "max-depth"


def test_keep_going_reports_every_violating_state_shortest_first() -> None:
    odd = Property.always("even", lambda s: s % 2 == 0)
    found = bfs(Graph({0: (1, 2), 2: (3,), 1: (), 3: ()}), [odd], keep_going=True).discoveries
    assert [d.trace.events for d in found] == [(1,), (2, 3)]


@pytest.mark.parametrize("fingerprint", [False, True])
def test_network_counts_equal_dfs(fingerprint: bool) -> None:
    from nice_attendre import verify

    deep = verify("route-flow", topology="linear:2", packets=2, fingerprint=fingerprint)
    wide = verify("route-flow", topology="linear:2", packets=2, fingerprint=fingerprint, shortest=True)
    assert wide.ok and deep.ok
    assert wide.stats.counts()[:3] == deep.stats.counts()[:3] == (1026, 506, 521)
