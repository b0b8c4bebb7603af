"""Partial-order reduction in the partitioned search (--workers, --engine ray): the shards
explore stubborn sets with the breadth-first proviso carried across shards (the owner of a
successor says whether it stores it already; the shard that made it then expands the state
fully in the same level). On random slotted systems with cycles and on the pinned network
scenarios: the quiescent states and verdicts of the full search, the counts of the
one-process ``bfs(por=True)`` for any number of shards, and traces that replay."""
from __future__ import annotations

from array import array
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings

from nice_attendre.breadth_first import bfs
from nice_attendre.checker import dfs
from nice_attendre.frontend.api import build, verify
from nice_attendre.fingerprint import stable_hash
from nice_attendre.parallel import InProcessCluster, ProcessCluster, search
from nice_attendre.partition import BY_FINGERPRINT, partition_named
from nice_attendre.property import EXECUTION_EXPECTATIONS, Expectation, Property
from nice_attendre.shard import Shard
from pinned import load_test_module
from test_por import RandomSystem, _graph, systems


class Parted:
    """A random system whose states are owned by their first process's slot (a part): its
    states share few owners, and a successor's owner is known only from its state."""

    def __init__(self, system: RandomSystem) -> None:
        self.system = system

    def __getattr__(self, name: str) -> Any:
        return getattr(self.system, name)

    def state_parts(self) -> dict[str, tuple[int, ...]]:
        return {"first": (0,)}

    def part_hash(self, state: Any, part: tuple[int, ...]) -> int:
        return stable_hash(tuple(state[slot] for slot in part))


def _partitioned(system: Any, properties: list[Property], shards: int, processes: bool = False,
                 by_part: bool = False, **options: Any) -> Any:
    partition = partition_named(system, "first") if by_part else BY_FINGERPRINT
    cluster = (ProcessCluster if processes else InProcessCluster)(lambda: (system, properties, ()), shards, por=True,
                                                                  partition=partition)
    return search(cluster, system, properties, **options)


def _counts(result: Any) -> tuple[int, int, int, int]:
    stats = result.stats
    return stats.transitions, stats.unique_states, stats.revisits, stats.max_depth


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(systems())
def test_random_systems_reach_the_quiescent_states_and_violations_on_any_number_of_shards(system: Any) -> None:
    """Random systems with cycles and FIFO channels: on 1, 2 and 3 shards, owned by
    fingerprint or by a part, the reduced partitioned search reaches exactly the quiescent
    states (the full search's), with the counts of ``bfs(por=True)``, and finds the stable
    violation whenever one is reachable."""
    reachable, quiet = _graph(system)
    assume(len(reachable) <= 1500)
    found: set[Any] = set()
    collect = Property.at_quiescence("collect", lambda state: found.add(state) is None)
    one = bfs(system, [collect], por=True)
    parted = Parted(system)
    for shards, by_part in ((1, False), (2, False), (3, False), (2, True), (3, True)):
        found.clear()
        result = _partitioned(parted, [collect], shards, by_part=by_part)
        assert result.complete and found == quiet
        assert _counts(result) == _counts(one)
    flag = system.flag
    never = Property("no-alarm", Expectation.ALWAYS, lambda state: state[flag] == 0, stable=True)
    for shards, by_part in ((2, False), (3, False), (2, True)):
        outcome = _partitioned(parted, [never], shards, by_part=by_part, keep_going=True)
        assert bool(outcome.discoveries) == any(state[flag] for state in reachable)
        for discovery in outcome.discoveries:
            assert discovery.trace.replay(system)[flag] == 1


def _without_cross_shard_proviso(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the shards ignore what the owners say about the states they store (the answers
    keep only the states asked for): the proviso then holds within a shard only."""
    widen = Shard.widen

    def blind(self: Shard, budget: Any, seconds: Any, answers: Any) -> Any:
        kept = []
        for answer in answers:
            if answer:
                both = array("L")
                both.frombytes(answer)
                answer = both[:1 + both[0]].tobytes()
            kept.append(answer)
        return widen(self, budget, seconds, kept)

    monkeypatch.setattr(Shard, "widen", blind)


def _looper() -> tuple[Any, Property]:
    """A process looping for ever (load, jump back) beside one that sets a variable, then
    raises the alarm: in every state the stubborn set is the looping process's next step
    alone (both processes' sets hold one event; the looper's is tried first), so a reduced
    search that closes the loop without expanding a state of it fully never raises it."""
    system = RandomSystem(((("load", 0, 0), ("jump", 0, 0)), (("set", 1, 1), ("alarm", 0, 0))), 2, 0)
    never = Property("no-alarm", Expectation.ALWAYS, lambda state: state[system.flag] == 0, stable=True)
    return system, never


def test_the_proviso_across_shards_finds_the_violation_a_cycle_would_ignore(monkeypatch: pytest.MonkeyPatch) -> None:
    system, never = _looper()
    shards = (1, 2, 3, 4, 5)
    assert all(_partitioned(system, [never], n).discoveries for n in shards)
    assert all(_partitioned(Parted(system), [never], n, by_part=True).discoveries for n in shards)
    with monkeypatch.context() as patched:
        _without_cross_shard_proviso(patched)
        blind = {n: bool(_partitioned(system, [never], n).discoveries) for n in shards}
    assert blind[1]  # one shard: the proviso is all local
    assert not all(blind.values()), "no shard count puts the loop's closing edge across shards"


def test_the_proviso_across_worker_processes() -> None:
    system, never = _looper()
    for shards in (2, 3):
        result = _partitioned(system, [never], shards, processes=True)
        assert result.discoveries and result.discoveries[0].property == "no-alarm"
        assert result.discoveries[0].trace.replay(system)[system.flag] == 1


# ---- the network --------------------------------------------------------------------------

#: The scenario options the default run takes to worker processes: the others (faults,
#: command orders, threads, --joins-first) are swept in one process by the default run and on
#: workers by ``-m slow`` (the proviso across shards does not depend on them)
_BASIC = {"properties", "app_options", "keep_going", "count_load"}


def _scenarios() -> list[Any]:
    """The por sweep's scenarios (tests/models/test_por_sweep.py: the pinned ones --por
    supports; large ones, those with other options and all but each app's first per protocol
    slow)."""
    found = []
    first: set[tuple[str, str]] = set()  # (app, protocol) pairs the default run has
    for param in load_test_module("models/test_por_sweep.py")._supported():
        marks = list(param.marks)
        pair = (str(param.values[0]), str(param.values[3]))
        if not marks and (set(param.values[4]) - _BASIC or pair in first):
            marks.append(pytest.mark.slow)  # the default run: each app's first scenario per protocol
        if not marks:
            first.add(pair)
        found.append(pytest.param(*param.values, id=param.id, marks=marks))
    return found


_QUIESCENT = "quiescent"


@pytest.mark.parametrize("app,topology,packets,protocol,extra", _scenarios())
def test_workers_reduce_the_pinned_scenarios_soundly(app: str, topology: str, packets: int, protocol: str,
                                                      extra: dict[str, Any]) -> None:
    """--workers 2 and 3 with --por: the verdicts and quiescent states (by fingerprint) of
    the full search, the counts of --shortest --por, traces that replay. Each quiescent
    state is reported by a property that fails in every quiescent state (the workers run
    the properties; a reported state comes back with its trace)."""
    sweep = load_test_module("models/test_por_sweep.py")
    options = {key: value for key, value in extra.items() if key != "keep_going"}
    options["protocol"] = protocol
    options["properties"] = sweep._checkable(app, topology, packets, options)
    run = build(app, topology=topology, packets=packets, **options)
    net = run.network
    properties = tuple(p for p in run.properties if p.expectation not in EXECUTION_EXPECTATIONS)
    full_quiet: set[int] = set()
    collect = Property.at_quiescence("collect", lambda state: full_quiet.add(net.fingerprint(state)) is None)
    full = dfs(net, properties + (collect,), keep_going=True)
    assert full.complete
    verdicts = {d.property for d in full.discoveries}
    one = bfs(net, properties, keep_going=True, por=True)
    report = Property.at_quiescence(_QUIESCENT, lambda state: False)
    for shards in (2, 3):
        built = (net, properties + (report,), run.metrics)
        result = search(ProcessCluster(lambda: built, shards, por=True), net, built[1], keep_going=True)
        assert result.complete
        quiet = set()
        for found in result.discoveries:
            final = found.trace.replay(net)
            if found.property == _QUIESCENT:
                quiet.add(net.fingerprint(final))
        assert quiet == full_quiet
        assert {d.property for d in result.discoveries} - {_QUIESCENT} == verdicts
        # the quiescence reports stop no expansion: the counts are --shortest --por's
        assert _counts(result) == _counts(one)


def test_verify_with_workers_and_por_prints_the_reduction() -> None:
    properties = ["no-forwarding-loops", "no-black-holes", "no-forgotten-packets", "delivery"]
    shortest = verify("mac-learning", topology="linear:2", packets=2, properties=properties, por=True,
                      shortest=True, keep_going=True)
    for options in ({"workers": 2}, {"workers": 3, "fingerprint": True}, {"workers": 2, "partition": "host"}):
        result = verify("mac-learning", topology="linear:2", packets=2, properties=properties, por=True,
                        keep_going=True, **options)
        assert result.reduction == "partial-order" and result.verdict == "violated"
        assert result.stats.counts()[:4] == shortest.stats.counts()[:4]
        assert [d.property for d in result.discoveries] == [d.property for d in shortest.discoveries]
        for found in result.discoveries:
            found.trace.replay(result.system)
    full = verify("mac-learning", topology="linear:2", packets=2, properties=properties, workers=2,
                  keep_going=True)
    assert shortest.stats.unique_states < full.stats.unique_states


def test_command_line_with_workers() -> None:
    from pathlib import Path

    from children import console

    here = Path(__file__).resolve().parent
    done = console("verify", "route-flow", "-t", "linear:3", "-n", "2", "--por", "--workers", "2",
                   "--fingerprint", cwd=here)
    assert done.returncode == 0, done.stderr
    assert "reduction      partial-order" in done.stdout
    shortest = console("verify", "route-flow", "-t", "linear:3", "-n", "2", "--por", "--shortest", cwd=here)
    assert shortest.returncode == 0, shortest.stderr

    def counts(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.strip().startswith(("transitions", "unique states"))]

    assert counts(done.stdout) and counts(done.stdout) == counts(shortest.stdout)


def test_the_counts_do_not_depend_on_the_hash_seed(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole report (counts, violations, traces) but the times, under two hash seeds."""
    from children import console

    def summary(seed: str) -> list[str]:
        monkeypatch.setenv("PYTHONHASHSEED", seed)
        done = console("verify", "mac-learning", "-t", "linear:2", "-n", "2", "--por", "--workers", "3",
                       "-p", "no-black-holes", "-p", "delivery", "--keep-going", cwd=tmp_path)
        assert done.returncode == 1, done.stderr
        return [line for line in done.stdout.splitlines() if not line.strip().startswith(("time", "balance"))]

    assert summary("0") == summary("4242")


@pytest.mark.slow  # Ray's start-up: tests/test_ray_engine.py runs Ray by default
def test_ray_actors_with_por() -> None:
    """(Last in the module: Ray's threads run in this process from here on, and the tests
    above fork worker processes.) The search on Ray actors gives the counts and verdict of
    the worker processes."""
    import ray

    properties = ["no-forwarding-loops", "no-black-holes", "no-forgotten-packets", "delivery"]
    options = dict(topology="linear:2", packets=2, properties=properties, por=True, keep_going=True)
    workers = verify("mac-learning", workers=2, **options)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        on_ray = verify("mac-learning", workers=2, engine="ray", **options)
    finally:
        ray.shutdown()
    assert on_ray.reduction == "partial-order" and on_ray.complete
    assert on_ray.stats.counts()[:4] == workers.stats.counts()[:4]
    assert [d.property for d in on_ray.discoveries] == [d.property for d in workers.discoveries]
    on_ray.discoveries[0].trace.replay(on_ray.system)
