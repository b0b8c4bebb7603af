"""`dfs` on random finite graphs, against two oracles written here.

A graph is a :class:`System` whose states are the ints ``0..n-1`` and whose events are
its edges ``(label, index)``; it has self-loops, multi-edges, unreachable nodes and
several (possibly repeated) initial states. The oracles are

* a breadth-first search, for what does not depend on the exploration order (reachable
  states, the number of transitions, revisits, bounds on the depth);
* a recursive depth-first search that logs every store, transition and depth cut in the
  order the checker must perform them, for what does (the depth reached, the trace of a
  discovery, the counts at the moment a limit stops the search).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from hypothesis import example, given, settings
from hypothesis import strategies as st

from nice_attendre import Expectation, Limits, Metric, Property, Step, Trace, dfs

SETTINGS = settings(max_examples=150, deadline=None)


@dataclass(frozen=True)
class Graph:
    """A finite transition system: states ``0..n-1``, events are edges ``(label, index)``."""

    n: int
    edges: tuple[tuple[int, str, int], ...]
    initials: tuple[int, ...]
    out: dict = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        out: dict[int, list[tuple[str, int]]] = {state: [] for state in range(self.n)}
        for index, (src, label, _dst) in enumerate(self.edges):
            out[src].append((label, index))
        object.__setattr__(self, "out", {state: tuple(events) for state, events in out.items()})

    def initial_states(self) -> tuple[int, ...]:
        return self.initials

    def enabled(self, state: int) -> tuple[tuple[str, int], ...]:
        return self.out[state]

    def apply(self, state: int, event: tuple[str, int]) -> int:
        src, label, dst = self.edges[event[1]]
        assert (src, label) == (state, event[0]), f"apply({state}, {event}) with a foreign event"
        return dst


class Checked:
    """Wraps a graph; fails the test if the checker calls ``apply`` with a non-enabled event."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.applied = 0

    def initial_states(self) -> tuple[int, ...]:
        return self.graph.initial_states()

    def enabled(self, state: int) -> tuple[tuple[str, int], ...]:
        return self.graph.enabled(state)

    def apply(self, state: int, event: tuple[str, int]) -> int:
        assert event in self.graph.enabled(state)
        self.applied += 1
        return self.graph.apply(state, event)


@st.composite
def graphs(draw: st.DrawFn, max_nodes: int = 9, max_edges: int = 24) -> Graph:
    n = draw(st.integers(1, max_nodes))
    node = st.integers(0, n - 1)
    edges = draw(st.lists(st.tuples(node, st.sampled_from("abc"), node), max_size=max_edges))
    initials = draw(st.lists(node, min_size=1, max_size=4))
    return Graph(n, tuple(edges), tuple(initials))


# One graph with every feature at once, always tried first: self-loops (on 0 and 3),
# multi-edges (0->1 twice, 1->2 twice), a cycle 1->2->1, unreachable nodes (5, 6), a
# quiescent node (4), initial states repeated (0), reachable from an earlier one (1, 3),
# and a second root (7).
RICH = Graph(8, ((0, "a", 1), (0, "b", 1), (0, "c", 0), (1, "a", 2), (1, "b", 2), (2, "a", 1),
                 (2, "b", 3), (3, "a", 3), (3, "b", 4), (5, "a", 6), (6, "a", 0), (7, "a", 4)),
             (0, 0, 1, 7, 3))


# ---------------------------------------------------------------- oracles


def bfs_distances(graph: Graph, starts, blocked=frozenset()) -> dict[int, int]:
    """Distance from ``starts`` of every reachable state; states in ``blocked`` are reached
    but not expanded."""
    dist: dict[int, int] = {}
    queue: deque[int] = deque()
    for state in starts:
        if state not in dist:
            dist[state] = 0
            queue.append(state)
    while queue:
        state = queue.popleft()
        if state in blocked:
            continue
        for event in graph.enabled(state):
            target = graph.apply(state, event)
            if target not in dist:
                dist[target] = dist[state] + 1
                queue.append(target)
    return dist


def roots(graph: Graph) -> list[int]:
    """Initial states from which the search starts: those not reachable from earlier ones."""
    return [state for i, state in enumerate(graph.initials)
            if state not in bfs_distances(graph, graph.initials[:i])]


@dataclass(frozen=True)
class Rec:
    """One step of the reference search: ``kind`` is root, new, revisit or cut."""

    kind: str
    state: int
    depth: int = 0
    trace: Trace | None = None


def reference_dfs(graph: Graph, blocked=frozenset(), depth_limit: int | None = None) -> list[Rec]:
    """The log of a recursive depth-first search with a visited set, in the checker's order.

    States in ``blocked`` (violating states) are stored but not expanded; states with
    events at depth ``depth_limit`` are stored and logged as cut.
    """
    log: list[Rec] = []
    visited: set[int] = set()

    def expand(state: int, depth: int, root: int, steps: tuple) -> None:
        if state in blocked or not graph.enabled(state):
            return
        if depth_limit is not None and depth >= depth_limit:
            log.append(Rec("cut", state, depth))
            return
        for event in graph.enabled(state):
            target = graph.apply(state, event)
            if target in visited:
                log.append(Rec("revisit", target))
                continue
            visited.add(target)
            path = steps + (Step(event, target),)
            log.append(Rec("new", target, depth + 1, Trace(root, path)))
            expand(target, depth + 1, root, path)

    for initial in graph.initials:
        if initial in visited:
            continue
        visited.add(initial)
        log.append(Rec("root", initial, 0, Trace(initial, ())))
        expand(initial, 0, initial, ())
    return log


def counts(log: list[Rec]) -> tuple[int, int, int, int]:
    """(transitions, unique_states, revisits, max_depth) of a reference log (or a prefix)."""
    transitions = sum(rec.kind in ("new", "revisit") for rec in log)
    stored = [rec for rec in log if rec.kind in ("root", "new")]
    revisits = sum(rec.kind == "revisit" for rec in log)
    return transitions, len(stored), revisits, max((rec.depth for rec in stored), default=0)


def assert_trace_valid(graph: Graph, trace: Trace) -> None:
    assert trace.initial in graph.initial_states()
    states = list(trace.states())
    for before, step in zip(states, trace.steps):
        assert step.event in graph.enabled(before)
    assert trace.replay(graph) == trace.final


# ---------------------------------------------------------------- exploration


@SETTINGS
@given(graphs())
@example(RICH)
def test_visits_exactly_the_reachable_states(graph: Graph) -> None:
    system = Checked(graph)
    result = dfs(system)
    reach = bfs_distances(graph, graph.initials)
    n_roots = len(roots(graph))
    stats = result.stats
    assert stats.unique_states == len(reach)
    assert stats.transitions == sum(len(graph.enabled(state)) for state in reach)
    assert stats.transitions == system.applied
    assert stats.revisits == stats.transitions - (stats.unique_states - n_roots)
    # Each state is first stored at the end of a path from a root, never shorter than its
    # BFS distance; the stack is a simple path that holds one root only.
    assert max(reach.values()) <= stats.max_depth <= stats.unique_states - n_roots
    assert result.complete and result.stop_reason is None
    assert result.discoveries == () and result.ok
    assert result.metrics == {}


@SETTINGS
@given(graphs())
@example(RICH)
def test_counts_match_the_reference_dfs(graph: Graph) -> None:
    assert dfs(graph).stats.counts() == counts(reference_dfs(graph))


def test_rich_graph_pinned() -> None:
    result = dfs(RICH)
    # Reachable: 0..4 and 7 (5, 6 are not); 10 edges leave them; the roots are 0 and 7
    # (the second 0 is a duplicate, 1 and 3 are reached from 0 first); the deepest path
    # is 0-1-2-3-4; revisits 2->1, 3->3, 1->2, 0->1, 0->0, 7->4.
    assert result.stats.counts() == (10, 6, 6, 4)
    assert roots(RICH) == [0, 7]


def test_rich_graph_always_violation_trace_pinned() -> None:
    result = dfs(RICH, [Property.always("not-4", lambda s: s != 4)])
    assert (result.complete, result.stop_reason) == (False, "violation")
    (found,) = result.discoveries
    assert found.trace.initial == 0
    assert found.trace.events == (("a", 0), ("a", 3), ("b", 6), ("b", 8))
    assert list(found.trace.states()) == [0, 1, 2, 3, 4]
    # Transitions up to the violation: 0-a->1 new, 1-a->2 new, 2-a->1 revisit, 2-b->3 new,
    # 3-a->3 revisit, 3-b->4 new.
    assert result.stats.counts() == (6, 5, 2, 4)


@SETTINGS
@given(graphs())
def test_fingerprint_gives_the_same_counts(graph: Graph) -> None:
    assert dfs(graph, fingerprint=True).stats.counts() == dfs(graph).stats.counts()


@SETTINGS
@given(graphs(), st.data())
def test_two_runs_are_identical(graph: Graph, data: st.DataObject) -> None:
    bad = data.draw(st.frozensets(st.integers(0, graph.n - 1)))
    props = [Property.always("good", lambda s: s not in bad),
             Property.at_quiescence("even-end", lambda s: s % 2 == 0)]
    for keep_going in (False, True):
        first = dfs(graph, props, keep_going=keep_going)
        second = dfs(graph, props, keep_going=keep_going)
        assert first.stats.counts() == second.stats.counts()
        assert first.discoveries == second.discoveries
        assert (first.complete, first.stop_reason) == (second.complete, second.stop_reason)
        fingerprinted = dfs(graph, props, keep_going=keep_going, fingerprint=True)
        assert fingerprinted.stats.counts() == first.stats.counts()
        assert fingerprinted.discoveries == first.discoveries


# ---------------------------------------------------------------- discoveries


@SETTINGS
@given(graphs(), st.data())
@example(RICH, None)
def test_always_stops_at_the_first_violation(graph: Graph, data: st.DataObject | None) -> None:
    log = reference_dfs(graph)
    stored = [rec for rec in log if rec.kind in ("root", "new")]
    k = 4 if data is None else data.draw(st.sampled_from([rec.state for rec in stored]))
    seen: list[int] = []

    def holds(state: int) -> bool:
        seen.append(state)
        return state != k

    result = dfs(graph, [Property.always("not-k", holds)])
    assert (result.complete, result.stop_reason, result.ok) == (False, "violation", False)
    (found,) = result.discoveries
    assert (found.property, found.expectation) == ("not-k", Expectation.ALWAYS)
    assert found.trace.final == k
    assert_trace_valid(graph, found.trace)
    # The search is the reference search up to the store of k: same trace, same counts,
    # and the predicate saw each stored state once, in order.
    at = next(i for i, rec in enumerate(log) if rec.kind in ("root", "new") and rec.state == k)
    assert found.trace == log[at].trace
    assert result.stats.counts() == counts(log[:at + 1])
    assert seen == [rec.state for rec in log[:at + 1] if rec.kind in ("root", "new")]


@SETTINGS
@given(graphs(), st.data())
@example(RICH, None)
def test_keep_going_reports_every_violating_state_once(graph: Graph,
                                                       data: st.DataObject | None) -> None:
    bad = frozenset({1, 4}) if data is None else data.draw(st.frozensets(st.integers(0, graph.n - 1)))
    result = dfs(graph, [Property.always("good", lambda s: s not in bad,
                                         explain=lambda s: f"{s} is bad")], keep_going=True)
    # Violating states are stored but not expanded: the oracle does not walk through them.
    reach = bfs_distances(graph, graph.initials, blocked=bad)
    assert result.complete and result.stop_reason is None
    assert result.stats.unique_states == len(reach)
    assert result.stats.transitions == sum(len(graph.enabled(s)) for s in reach if s not in bad)
    finals = [found.trace.final for found in result.discoveries]
    assert sorted(finals) == sorted(set(reach) & bad)
    assert result.ok == (not set(reach) & bad)
    for found in result.discoveries:
        assert found.reason == f"{found.trace.final} is bad"
        assert_trace_valid(graph, found.trace)
        # Only the last state of a trace violates: the search stops a path there.
        assert not any(state in bad for state in list(found.trace.states())[:-1])
    assert result.stats.counts() == counts(reference_dfs(graph, blocked=bad))
    if data is None:
        # 0-a->1 (bad, not expanded), 0-b->1, 0-c->0 revisits; root 7-a->4 (bad, new); root 3
        # (not reached through 1): 3-a->3 and 3-b->4 revisits.
        assert finals == [1, 4]
        assert result.stats.counts() == (6, 5, 4, 1)


@SETTINGS
@given(graphs())
def test_always_is_checked_once_per_new_state(graph: Graph) -> None:
    seen: list[int] = []
    dfs(graph, [Property.always("true", lambda s: seen.append(s) is None)])
    assert seen == [rec.state for rec in reference_dfs(graph) if rec.kind in ("root", "new")]


@SETTINGS
@given(graphs(), st.data())
def test_at_quiescence_only_where_nothing_is_enabled(graph: Graph, data: st.DataObject) -> None:
    bad = data.draw(st.frozensets(st.integers(0, graph.n - 1)))
    seen: list[int] = []

    def holds(state: int) -> bool:
        seen.append(state)
        return state not in bad

    prop = Property.at_quiescence("good-end", holds)
    reach = bfs_distances(graph, graph.initials)
    quiescent = {s for s in reach if not graph.enabled(s)}
    result = dfs(graph, [prop], keep_going=True)
    assert sorted(seen) == sorted(quiescent)
    assert result.complete
    finals = [found.trace.final for found in result.discoveries]
    assert sorted(finals) == sorted(quiescent & bad)
    for found in result.discoveries:
        assert found.expectation is Expectation.AT_QUIESCENCE
        assert_trace_valid(graph, found.trace)
    # Quiescent states are not expanded anyway, so keep_going does not change the counts.
    assert result.stats.counts() == dfs(graph).stats.counts()

    first = dfs(graph, [prop])
    if quiescent & bad:
        (found,) = first.discoveries
        assert (first.complete, first.stop_reason) == (False, "violation")
        log = reference_dfs(graph)
        at = next(i for i, rec in enumerate(log)
                  if rec.kind in ("root", "new") and rec.state in quiescent & bad)
        assert found.trace == log[at].trace
        assert first.stats.counts() == counts(log[:at + 1])
    else:
        assert first.ok and first.complete


@SETTINGS
@given(graphs(), st.integers(0, 10))
def test_sometimes_reported_only_when_never_satisfied(graph: Graph, k: int) -> None:
    prop = Property.sometimes("reach-k", lambda s: s == k)
    result = dfs(graph, [prop])
    assert result.complete
    if k in bfs_distances(graph, graph.initials):
        assert result.ok
    else:
        (found,) = result.discoveries
        assert (found.property, found.expectation, found.trace) == (
            "reach-k", Expectation.SOMETIMES, None)
        assert found.reason == "no reachable state satisfies it"
    assert result.stats.counts() == dfs(graph).stats.counts()


@SETTINGS
@given(graphs())
def test_sometimes_not_reported_when_the_search_was_cut(graph: Graph) -> None:
    never = Property.sometimes("never", lambda s: False)
    full = reference_dfs(graph)
    transitions = counts(full)[0]
    for limits in (Limits(max_transitions=0), Limits(max_depth=0), Limits(max_states=1)):
        result = dfs(graph, [never], limits=limits)
        if result.complete:
            assert [d.property for d in result.discoveries] == ["never"]
        else:
            assert result.discoveries == () and result.verdict == "incomplete", (limits, result)
    # The depth and transition limits cut this search exactly when a root has an event.
    cut = transitions > 0
    assert dfs(graph, [never], limits=Limits(max_depth=0)).complete == (not cut)
    assert dfs(graph, [never], limits=Limits(max_transitions=0)).complete == (not cut)


@SETTINGS
@given(graphs(), st.data())
def test_metrics_range_over_quiescent_states(graph: Graph, data: st.DataObject) -> None:
    weights = data.draw(st.lists(st.integers(-5, 5), min_size=graph.n, max_size=graph.n))
    result = dfs(graph, metrics=[Metric("weight", lambda s: weights[s]),
                                 Metric("id", lambda s: s)])
    quiescent = [s for s in bfs_distances(graph, graph.initials) if not graph.enabled(s)]
    if quiescent:
        assert result.metrics == {
            "weight": (min(weights[s] for s in quiescent), max(weights[s] for s in quiescent)),
            "id": (min(quiescent), max(quiescent))}
    else:
        assert result.metrics == {}


# ---------------------------------------------------------------- limits


@SETTINGS
@given(graphs(), st.integers(0, 40))
def test_max_transitions_stops_exactly(graph: Graph, limit: int) -> None:
    log = reference_dfs(graph)
    total = counts(log)[0]
    result = dfs(graph, limits=Limits(max_transitions=limit))
    if limit < total:
        assert (result.complete, result.stop_reason) == (False, "max-transitions")
        assert result.stats.transitions == limit
        # The search stops before the (limit+1)-th apply.
        cut = [i for i, rec in enumerate(log) if rec.kind in ("new", "revisit")][limit]
        assert result.stats.counts() == counts(log[:cut])
    else:
        assert result.complete and result.stop_reason is None
        assert result.stats.counts() == counts(log)


@SETTINGS
@given(graphs(), st.integers(0, 12))
def test_max_states_stops_once_that_many_are_stored(graph: Graph, limit: int) -> None:
    log = reference_dfs(graph)
    total = counts(log)[1]
    result = dfs(graph, limits=Limits(max_states=limit))
    if limit <= total:
        assert (result.complete, result.stop_reason) == (False, "max-states")
        assert result.stats.unique_states == max(limit, 1)
        stores = [i for i, rec in enumerate(log) if rec.kind in ("root", "new")]
        assert result.stats.counts() == counts(log[:stores[max(limit, 1) - 1] + 1])
    else:
        assert result.complete and result.stop_reason is None
        assert result.stats.counts() == counts(log)


@SETTINGS
@given(graphs(), st.integers(0, 9))
@example(RICH, 2)
def test_max_depth_does_not_expand_states_at_that_depth(graph: Graph, limit: int) -> None:
    log = reference_dfs(graph, depth_limit=limit)
    result = dfs(graph, limits=Limits(max_depth=limit))
    assert result.stats.counts() == counts(log)
    assert result.stats.max_depth <= limit
    cut = any(rec.kind == "cut" for rec in log)
    assert result.complete == (not cut)
    assert result.stop_reason == ("max-depth" if cut else None)
    if not cut:
        assert result.stats.counts() == dfs(graph).stats.counts()


@SETTINGS
@given(graphs())
def test_a_depth_limit_beyond_the_search_cuts_nothing(graph: Graph) -> None:
    full = dfs(graph)
    for limit in (full.stats.max_depth + 1, full.stats.max_depth + 5):
        bounded = dfs(graph, limits=Limits(max_depth=limit))
        assert bounded.complete and bounded.stop_reason is None
        assert bounded.stats.counts() == full.stats.counts()


@SETTINGS
@given(graphs(), st.data())
def test_ctrl_c_returns_the_partial_result(graph: Graph, data: st.DataObject) -> None:
    log = reference_dfs(graph)
    total = counts(log)[0]
    if total == 0:
        return
    k = data.draw(st.integers(1, total))

    class Interrupted(Checked):
        def apply(self, state: int, event: tuple[str, int]) -> int:
            if self.applied + 1 == k:
                raise KeyboardInterrupt
            return super().apply(state, event)

    result = dfs(Interrupted(graph), [Property.sometimes("never", lambda s: False)])
    assert (result.complete, result.stop_reason) == (False, "interrupted")
    assert result.stats.transitions == k - 1
    # A cut search does not claim that "never" never holds, and is not ok either.
    assert result.discoveries == () and (result.verdict, result.ok) == ("interrupted", False)
    cut = [i for i, rec in enumerate(log) if rec.kind in ("new", "revisit")][k - 1]
    assert result.stats.counts() == counts(log[:cut])
