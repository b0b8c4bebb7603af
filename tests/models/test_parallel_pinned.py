"""--workers on every pinned scenario: the same transitions, unique states and revisits as
the sequential search, the same verdicts, and violations with valid, replayable traces.

The pinned tables are read from the tests that pin them, so a new pinned scenario is
checked here too. Scenarios of more than 3,000 transitions run with ``-m slow``.
"""
from __future__ import annotations

import pytest

from nice_attendre import verify
from pinned import pinned_table

FAST = 3_000


def scenarios() -> list:
    cases = []
    for (protocol, switches, packets), counts in pinned_table("apps/test_route_flow.py", "PINNED").items():
        cases.append((("route-flow", f"linear:{switches}", packets, protocol, {}), counts[0]))
    for (protocol, switches, packets), counts in pinned_table("apps/test_mac_learning.py", "PINNED").items():
        cases.append((("mac-learning", f"linear:{switches}", packets, protocol, {}), counts[0]))
    for (protocol, topology, flows), counts in pinned_table("apps/test_energy_te.py", "PINNED").items():
        cases.append((("energy-te", topology, flows, protocol, {}), counts[0]))
    for (protocol, switches, packets), counts in pinned_table("models/test_controller_threads.py", "THREADED").items():
        cases.append((("route-flow", f"linear:{switches}", packets, protocol, {"threaded_controller": True}), counts[0]))
    for (switches, packets), transitions in pinned_table("apps/test_route_flow_grid.py", "ATTENDRE").items():
        cases.append((("route-flow", f"linear:{switches}", packets, "attendre", {"properties": []}), transitions))
    return [pytest.param(*case, id=f"{case[0]}-{case[1]}-{case[2]}-{case[3]}-{'-'.join(map(str, case[4].values()))}",
                         marks=[pytest.mark.slow] if transitions > FAST else [])
            for case, transitions in cases]


@pytest.mark.parametrize("app,topology,packets,protocol,extra", scenarios())
def test_two_workers_give_the_sequential_counts(app: str, topology: str, packets: int, protocol: str,
                                                extra: dict) -> None:
    sequential = verify(app, topology=topology, packets=packets, protocol=protocol, **extra)
    parallel = verify(app, topology=topology, packets=packets, protocol=protocol, workers=2, **extra)
    assert parallel.complete and sequential.complete
    assert parallel.stats.counts()[:3] == sequential.stats.counts()[:3]
    assert parallel.ok == sequential.ok
    assert parallel.stats.max_depth <= sequential.stats.max_depth
    assert parallel.collision_probability is not None and parallel.collision_probability < 1e-6


def test_three_workers_and_load_metrics() -> None:
    options = dict(topology="linear:2", packets=2, protocol="openflow-b", count_load=True)
    sequential = verify("route-flow", **options)
    parallel = verify("route-flow", workers=3, **options)
    assert parallel.stats.counts()[:3] == sequential.stats.counts()[:3]
    assert parallel.metrics == sequential.metrics and parallel.metrics


BUGS = [("route-flow", "linear:2", 1, "forget-last-hop"), ("mac-learning", "linear:1", 2, "host-unreachable"),
        ("mac-learning", "linear:1", 2, "delayed-direct-path"), ("energy-te", "paths:2,3", 1, "drop-first-packet")]


@pytest.mark.parametrize("app,topology,packets,bug", BUGS)
def test_bugs_are_found_with_replayable_traces(app: str, topology: str, packets: int, bug: str) -> None:
    options = dict(topology=topology, packets=packets, app_options={"bug": bug})
    sequential = verify(app, **options)
    parallel = verify(app, workers=2, **options)
    assert not sequential.ok and not parallel.ok
    assert not parallel.complete and parallel.stop_reason == "violation"
    found = parallel.discoveries[0]
    final = found.trace.replay(parallel.system)
    every = verify(app, keep_going=True, **options)  # every violating state, sequentially
    violating = {(d.property, every.system.fingerprint(d.trace.final)) for d in every.discoveries}
    assert (found.property, parallel.system.fingerprint(final)) in violating


@pytest.mark.parametrize("app,topology,packets,bug", BUGS[:2])
def test_keep_going_finds_every_violating_state_with_any_number_of_workers(app: str, topology: str, packets: int,
                                                                          bug: str) -> None:
    options = dict(topology=topology, packets=packets, app_options={"bug": bug}, keep_going=True)
    sequential = verify(app, **options)
    two = verify(app, workers=2, **options)
    three = verify(app, workers=3, **options)
    assert two.stats.counts()[:3] == sequential.stats.counts()[:3] == three.stats.counts()[:3]
    assert sorted(d.property for d in two.discoveries) == sorted(d.property for d in sequential.discoveries)
    assert sorted((d.property, two.system.fingerprint(d.trace.final)) for d in two.discoveries) == \
        sorted((d.property, sequential.system.fingerprint(d.trace.final)) for d in sequential.discoveries)
    assert [d.trace.events for d in two.discoveries] == [d.trace.events for d in three.discoveries]
    for found in two.discoveries:
        found.trace.replay(two.system)


def test_limits_end_a_parallel_search_incomplete() -> None:
    capped = verify("route-flow", topology="linear:3", packets=2, workers=2, max_transitions=1000)
    assert not capped.complete and capped.stop_reason == "max-transitions" and capped.stats.transitions <= 1000
    shallow = verify("route-flow", topology="linear:3", packets=2, workers=2, max_depth=5)
    assert not shallow.complete and shallow.stop_reason == "max-depth" and shallow.stats.max_depth == 5
    few = verify("route-flow", topology="linear:3", packets=2, workers=2, max_states=100)
    assert not few.complete and few.stop_reason == "max-states" and few.stats.unique_states >= 100


@pytest.mark.parametrize("app", ["timeout_routing.py:TimeoutRouting", "idle_router.py:IdleRouter"])
@pytest.mark.parametrize("workers", [2, 3])
def test_workers_see_the_expiry_of_entries_other_shards_installed(app: str, workers: int) -> None:
    # A network looks for expiry events only once an entry that expires entered its tables.
    # A shard that received such states from another shard, without installing a timed entry
    # itself, never looked: timeout_routing linear:1, 2 packets, counted 1,946 transitions
    # with two workers against 1,952 in one process (and missed the expiries).
    from tests_data_apps import path

    target = path(*app.split(":"))
    sequential = verify(target, topology="linear:1", packets=2)
    parallel = verify(target, topology="linear:1", packets=2, workers=workers)
    assert sequential.complete and parallel.complete
    assert parallel.stats.counts()[:3] == sequential.stats.counts()[:3]
