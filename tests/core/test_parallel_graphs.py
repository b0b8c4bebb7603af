"""The partitioned search on random finite graphs, against the DFS and a BFS oracle.

Whatever the number of shards: the same transitions, unique states and revisits as the DFS;
``max_depth`` the largest shortest-path distance; with ``keep_going`` the same violating
states; every trace valid, a shortest path, and the same for any number of shards.
"""
from __future__ import annotations

from collections import deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nice_attendre import Limits, Metric, Property, dfs
from nice_attendre.parallel import InProcessCluster, ProcessCluster, search
from test_core_dfs_graphs import Graph, graphs

SETTINGS = settings(max_examples=120, deadline=None)


def distances(graph: Graph, limit: int | None = None, skip=None, stuck=None) -> dict[int, int]:
    """Shortest distance of every reachable state in the round that stores it: one
    breadth-first search per initial state, in order, from those not reached before
    (states at distance ``limit`` and states for which ``stuck(state)`` is true, such as
    those violating an ``always`` property, not expanded; steps for which
    ``skip(state, event, next)`` is true not followed)."""
    dist: dict[int, int] = {}
    for initial in graph.initials:
        if initial in dist:
            continue
        dist[initial] = 0
        queue = deque([initial])
        while queue:
            state = queue.popleft()
            if limit is not None and dist[state] >= limit or stuck is not None and stuck(state):
                continue
            for event in graph.enabled(state):
                nxt = graph.apply(state, event)
                if skip is not None and skip(state, event, nxt):
                    continue
                if nxt not in dist:
                    dist[nxt] = dist[state] + 1
                    queue.append(nxt)
    return dist


def partitioned(graph, shards, properties=(), metrics=(), *, limits=Limits(), keep_going=False, processes=False):
    make = lambda: (graph, tuple(properties), tuple(metrics))  # noqa: E731
    cluster = (ProcessCluster if processes else InProcessCluster)(make, shards, max_depth=limits.max_depth)
    return search(cluster, graph, properties, limits=limits, keep_going=keep_going)


@SETTINGS
@given(graphs(), st.integers(min_value=1, max_value=4))
def test_counts_equal_the_dfs_and_depth_is_the_bfs_eccentricity(graph: Graph, shards: int) -> None:
    expected = dfs(graph)
    result = partitioned(graph, shards)
    assert result.complete and result.ok
    got, want = result.stats, expected.stats
    assert (got.transitions, got.unique_states, got.revisits) == (want.transitions, want.unique_states, want.revisits)
    assert got.max_depth == max(distances(graph).values())
    assert result.collision_probability is not None
    balance = result.balance
    assert balance is not None and len(balance.busy) == shards and min(balance.busy) >= 0
    # each step's busiest shard took at least any one shard's time and at most all of them
    assert max(balance.busy) <= balance.busiest <= sum(balance.busy) * (1 + 1e-9)
    assert 0 < balance.efficiency <= 1.0 + 1e-9


@SETTINGS
@given(graphs(), st.integers(min_value=2, max_value=4))
def test_a_shard_keeps_the_fingerprints_of_its_own_states_only(graph: Graph, shards: int) -> None:
    """Memory: the set a shard checks successors against holds exactly the states it stored,
    none that it offered to another shard (which doubled it), and the counts stay the DFS's."""
    cluster = InProcessCluster(lambda: (graph, (), ()), shards)
    kept = list(cluster._shards)
    result = search(cluster, graph)
    assert result.complete
    assert sum(shard.counts() for shard in kept) == result.stats.unique_states == dfs(graph).stats.unique_states
    for shard in kept:
        assert len(shard.seen) == shard.counts()
        assert all(shard._owner(None, fp) == shard.index for fp in shard.seen)


@SETTINGS
@given(graphs(), st.integers(min_value=0, max_value=9), st.integers(min_value=1, max_value=3))
def test_violations_and_traces(graph: Graph, bad: int, shards: int) -> None:
    prop = Property.always("avoid", lambda s: s % 10 != bad)
    quiet = Property.at_quiescence("ends-even", lambda s: s % 2 == 0)
    expected = dfs(graph, [prop, quiet], keep_going=True)
    result = partitioned(graph, shards, [prop, quiet], keep_going=True)
    one = partitioned(graph, 1, [prop, quiet], keep_going=True)
    assert result.stats.counts()[:3] == expected.stats.counts()[:3]
    assert sorted((d.property, d.trace.final) for d in result.discoveries) == \
        sorted((d.property, d.trace.final) for d in expected.discoveries)
    dist = distances(graph, stuck=lambda s: not prop.holds(s))  # a violating state is not expanded
    for found in result.discoveries:
        found.trace.replay(graph)
        assert len(found.trace) == dist[found.trace.final]
    assert [d.trace for d in result.discoveries] == [d.trace for d in one.discoveries]
    first = partitioned(graph, shards, [prop, quiet])
    assert first.ok == expected.ok
    if not first.ok:
        assert not first.complete and first.stop_reason == "violation"
        assert {d.trace.final for d in first.discoveries} == {first.discoveries[0].trace.final}


@SETTINGS
@given(graphs(), st.integers(min_value=0, max_value=9), st.integers(min_value=1, max_value=3))
def test_violating_steps_and_their_traces(graph: Graph, bad: int, shards: int) -> None:
    """Properties of transitions: the same counts and violating steps as the DFS (a violating
    step is not followed further), each trace ends with its step after a shortest path."""
    def bad_step(before: int, event: object, after: int) -> bool:
        return after % 10 == bad and before % 3 != 0

    step = Property.on_transition("no-bad-step", lambda before, event, after: not bad_step(before, event, after),
                                  explain=lambda after: f"reached {after}")

    def steps(result):  # each violation: (property, state before, event, state after)
        found = []
        for d in result.discoveries:
            before = d.trace.steps[-2].state if len(d.trace.steps) > 1 else d.trace.initial
            found.append((d.property, before, d.trace.steps[-1].event, d.trace.final))
        return sorted(found)

    expected = dfs(graph, [step], keep_going=True)
    result = partitioned(graph, shards, [step], keep_going=True)
    one = partitioned(graph, 1, [step], keep_going=True)
    assert result.stats.counts()[:3] == expected.stats.counts()[:3]
    assert steps(result) == steps(expected)
    dist = distances(graph, skip=bad_step)  # the stored states: violating steps not followed
    assert result.stats.max_depth == max(dist.values())
    for found in result.discoveries:
        assert found.trace.replay(graph) == found.trace.final and found.reason == f"reached {found.trace.final}"
        before = found.trace.steps[-2].state if len(found.trace.steps) > 1 else found.trace.initial
        assert len(found.trace) == dist[before] + 1
    assert [d.trace for d in result.discoveries] == [d.trace for d in one.discoveries]
    first = partitioned(graph, shards, [step])
    assert first.ok == expected.ok
    if not first.ok:
        assert not first.complete and first.stop_reason == "violation" and len(first.discoveries) == 1


@SETTINGS
@given(graphs(), st.integers(min_value=1, max_value=3))
def test_sometimes_and_metrics(graph: Graph, shards: int) -> None:
    some = Property.sometimes("reach-3", lambda s: s == 3)
    metric = Metric("state", lambda s: s)
    expected = dfs(graph, [some], metrics=[metric])
    result = partitioned(graph, shards, [some], [metric])
    assert [d.property for d in result.discoveries] == [d.property for d in expected.discoveries]
    assert result.metrics == expected.metrics


@SETTINGS
@given(graphs(), st.integers(min_value=0, max_value=6), st.integers(min_value=1, max_value=3))
def test_depth_limit_cuts_at_the_bfs_level(graph: Graph, limit: int, shards: int) -> None:
    dist = distances(graph, limit)
    result = partitioned(graph, shards, limits=Limits(max_depth=limit))
    assert result.stats.unique_states == len(dist)
    cut = any(d == limit and graph.enabled(s) for s, d in dist.items())
    assert result.complete == (not cut)
    if cut:
        assert result.stop_reason == "max-depth"


@SETTINGS
@given(graphs(), st.integers(min_value=0, max_value=30), st.integers(min_value=1, max_value=3))
def test_max_transitions_is_never_exceeded(graph: Graph, cap: int, shards: int) -> None:
    full = dfs(graph).stats.transitions
    result = partitioned(graph, shards, limits=Limits(max_transitions=cap))
    assert result.stats.transitions <= cap
    if full <= cap // shards:  # every shard's budget covers everything
        assert result.complete
    if not result.complete:
        assert result.stop_reason == "max-transitions"


def test_worker_processes_give_the_same_counts() -> None:
    graph = Graph(6, ((0, "a", 1), (1, "b", 2), (2, "c", 0), (1, "d", 3), (3, "e", 4), (4, "f", 5), (5, "g", 5)), (0,))
    expected = dfs(graph)
    for shards in (1, 2, 3):
        result = partitioned(graph, shards, processes=True)
        assert result.stats.counts()[:3] == expected.stats.counts()[:3] and result.complete


class Exploding(Graph):
    def apply(self, state: int, event: tuple[str, int]) -> int:
        if state == 2:
            raise RuntimeError("boom in apply")
        return super().apply(state, event)


def test_an_error_in_a_worker_reaches_the_caller() -> None:
    graph = Exploding(4, ((0, "a", 1), (1, "b", 2), (2, "c", 3)), (0,))
    with pytest.raises(RuntimeError, match="boom in apply"):
        partitioned(graph, 2, processes=True)


class Dying(Graph):
    def apply(self, state: int, event: tuple[str, int]) -> int:
        if state == 2:
            import os

            os._exit(3)
        return super().apply(state, event)


def test_a_worker_that_dies_ends_the_search_incomplete() -> None:
    """A worker that exits mid-search is lost: the result is incomplete (never ok), says
    which worker and how it ended, and keeps the counts of the levels completed."""
    graph = Dying(4, ((0, "a", 1), (1, "b", 2), (2, "c", 3)), (0,))
    result = partitioned(graph, 2, processes=True)
    assert (result.complete, result.ok, result.stop_reason) == (False, False, "worker-lost")
    assert result.stop_detail is not None and result.stop_detail.endswith("exited with code 3")
    assert result.stats.transitions == 2  # levels 0 and 1; level 2's expansion killed its worker


class Chain:
    """0 -> 1 -> ... -> length-1, optionally slow."""

    def __init__(self, length: int, sleep: float = 0.0) -> None:
        self.length, self.sleep = length, sleep

    def initial_states(self) -> tuple[int, ...]:
        return (0,)

    def enabled(self, state: int) -> tuple[str, ...]:
        return ("next",) if state < self.length - 1 else ()

    def apply(self, state: int, event: str) -> int:
        if self.sleep:
            import time

            time.sleep(self.sleep)
        return state + 1


def test_ctrl_c_ends_a_parallel_search_cleanly() -> None:
    import multiprocessing

    from nice_attendre.checker import Progress

    def progress(snapshot: Progress) -> None:
        if snapshot.depth >= 5:
            raise KeyboardInterrupt

    chain = Chain(50)
    cluster = ProcessCluster(lambda: (chain, (), ()), 2)
    result = search(cluster, chain, (), progress=progress, progress_interval=0.0)
    assert not result.complete and result.stop_reason == "interrupted"
    assert 5 <= result.stats.transitions < 49
    assert not [p for p in multiprocessing.active_children() if p.name.startswith("nice-attendre-shard")]


_HOARD: list[bytes] = []


class Branching(Chain):
    """A :class:`Chain` whose state 2 also leads to -1, a dead end."""

    def enabled(self, state: int) -> tuple[str, ...]:
        return (*super().enabled(state), "side") if state == 2 else super().enabled(state)

    def apply(self, state: int, event: str) -> int:
        return -1 if event == "side" else super().apply(state, event)


class Hoarding(Chain):
    """A :class:`Chain` whose every transition keeps 64 KiB in the process that makes it."""

    def apply(self, state: int, event: str) -> int:
        _HOARD.append(b"x" * (64 << 10))
        return super().apply(state, event)


def test_a_violation_found_before_ctrl_c_is_reported() -> None:
    """With keep_going the search goes on after a violation; a KeyboardInterrupt later (a
    second Ctrl-C, or a caller without a watchdog) still reports it, without a trace (the
    shards are not asked for parents after an interrupted exchange)."""
    from nice_attendre.checker import Progress

    def progress(snapshot: Progress) -> None:
        if snapshot.depth >= 8:
            raise KeyboardInterrupt

    chain = Branching(50)  # 0 -> 1 -> ... -> 49, and 2 -> -1 (violating, a dead end)
    positive = Property.always("positive", lambda state: state >= 0, explain=lambda state: f"state {state}")
    cluster = ProcessCluster(lambda: (chain, (positive,), ()), 2)
    result = search(cluster, chain, (positive,), keep_going=True, progress=progress, progress_interval=0.0)
    assert (result.verdict, result.stop_reason) == ("violated", "interrupted")
    assert 8 <= result.stats.transitions < 50
    (discovery,) = result.discoveries
    assert (discovery.property, discovery.trace) == ("positive", None)
    assert discovery.reason == "state -1 (the search was interrupted before its trace was rebuilt)"


def test_max_seconds_ends_a_parallel_search() -> None:
    chain = Chain(10_000, sleep=0.001)
    cluster = ProcessCluster(lambda: (chain, (), ()), 2)
    result = search(cluster, chain, (), limits=Limits(max_seconds=0.3))
    assert not result.complete and result.stop_reason == "max-seconds"
    assert 0 < result.stats.transitions < 9_999


class Fan:
    """0 -> 1..width (one level of ``width`` states) -> width+1, each step taking ``sleep``
    seconds: a wide level that takes long to expand."""

    def __init__(self, width: int, sleep: float) -> None:
        self.width, self.sleep = width, sleep

    def initial_states(self) -> tuple[int, ...]:
        return (0,)

    def enabled(self, state: int) -> tuple[int, ...]:
        if state == 0:
            return tuple(range(1, self.width + 1))
        return (self.width + 1,) if state <= self.width else ()

    def apply(self, state: int, event: int) -> int:
        if state:
            import time

            time.sleep(self.sleep)
        return event


@pytest.mark.usefixtures("sigint_default")
def test_a_signal_to_the_watchdog_stops_the_workers_within_a_level() -> None:
    """Ctrl-C (here SIGINT sent by a timer) reaches a search bound to the command's
    watchdog: the workers end the level they are expanding early, and the result has the
    counts up to there and the signal."""
    import os
    import signal
    import threading
    import time

    from nice_attendre.watchdog import Watchdog

    fan = Fan(20_000, sleep=0.0005)  # level 1: 10,000 slow transitions per worker, 5 s or more each
    with Watchdog() as watchdog:
        timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
        started = time.monotonic()
        timer.start()
        try:
            result = search(ProcessCluster(lambda: (fan, (), ()), 2), fan, (), watchdog=watchdog)
        finally:
            timer.cancel()
        elapsed = time.monotonic() - started
    assert (result.stop_reason, result.signal, result.complete) == ("interrupted", signal.SIGINT, False)
    assert 20_000 < result.stats.transitions < 40_000  # level 0 done, level 1 cut short
    assert elapsed < 4.0  # less than one worker's half of level 1


def test_max_memory_counts_the_workers_memory() -> None:
    """The watchdog's memory bound covers the worker processes: workers that grow past it
    stop the search, though this process stays far below it."""
    from nice_attendre.parallel import process_memory
    from nice_attendre.watchdog import Watchdog

    hoard = Hoarding(3_000, sleep=0.002)  # each worker keeps 64 KiB per transition: 96 MiB each in all
    with Watchdog(max_memory=process_memory() + (64 << 20)) as watchdog:
        result = search(ProcessCluster(lambda: (hoard, (), ()), 2), hoard, (), watchdog=watchdog)
    assert (result.stop_reason, result.complete) == ("max-memory", False)
    assert 0 < result.stats.transitions < 2_999


class Scatter:
    """States ``0..n-1``, each with three events leading to scattered states (a few dozen
    breadth-first levels, each wide); the state's one part is the state itself (for
    :mod:`nice_attendre.partition`), and ``part_hash`` is constant when ``lopsided``: every
    state then belongs to one shard."""

    def __init__(self, n: int, lopsided: bool) -> None:
        self.n, self.lopsided = n, lopsided

    def initial_states(self) -> tuple[int, ...]:
        return (0,)

    def enabled(self, state: int) -> tuple[int, ...]:
        return (1, 2, 3)

    def apply(self, state: int, event: int) -> int:
        return (state * 48_271 + event * 7_919) % self.n

    def state_parts(self) -> dict[str, tuple[int, ...]]:
        return {"all": (0,)}

    def part_hash(self, state: int, part: tuple[int, ...]) -> int:
        return 0 if self.lopsided else (state * 0x9E3779B97F4A7C15) % 2 ** 64


def test_balance_reports_work_left_to_one_shard() -> None:
    """The report's balance: with every state owned by one shard, the other has nothing to
    do, so the busiest shard's time is about the whole work and twice the even split; with
    the states spread, the two shares are close (compared within one test: CPU times)."""
    from nice_attendre.partition import partition_named

    efficiency = {}
    for lopsided in (True, False):
        system = Scatter(60_000, lopsided)
        cluster = InProcessCluster(lambda system=system: (system, (), ()), 2,
                                   partition=partition_named(system, "all"))
        result = search(cluster, system)
        assert result.complete and result.stats.counts()[:3] == dfs(system).stats.counts()[:3]
        assert result.stats.unique_states > 20_000 and result.stats.max_depth < 100
        busy = result.balance.busy
        if lopsided:
            assert busy[1] < 0.2 * busy[0]
        efficiency[lopsided] = result.balance.efficiency
    assert efficiency[True] < 0.6
    assert efficiency[False] > efficiency[True] + 0.15
