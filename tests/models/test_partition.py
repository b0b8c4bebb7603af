"""--partition: the partitioned search with states owned by a part of the state (a kind of
slot) instead of the whole fingerprint. Which shard owns what may change the speed, never a
result: counts, verdicts and traces are those of the fingerprint partition (and the counts
those of the sequential search), for any number of shards, in processes or in this one."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from nice_attendre import verify
from nice_attendre.errors import InputError
from nice_attendre.frontend.api import build
from nice_attendre.frontend.cli import main
from nice_attendre.parallel import InProcessCluster, ProcessCluster, search
from nice_attendre.partition import BY_FINGERPRINT, Partition, owner_function, partition_named, partitions

SCENARIOS = [  # (app, options): small, each with several values in most slot kinds
    ("mac-learning", dict(topology="linear:2", packets=2, protocol="openflow")),
    ("route-flow", dict(topology="linear:3", packets=2, protocol="openflow-b")),
    ("route-flow", dict(topology="linear:3", packets=3, protocol="attendre")),
    ("energy-te", dict(topology="paths:2,3", packets=1, protocol="openflow")),
]


def partitioned(app: str, shards: int, partition: str, processes: bool = False, **options: object):
    run = build(app, **options)  # type: ignore[arg-type]
    built = (run.network, run.properties, run.metrics)
    cluster_class = ProcessCluster if processes else InProcessCluster
    cluster = cluster_class(lambda: built, shards, partition=partition_named(run.network, partition))
    return search(cluster, run.network, run.properties), run


@pytest.mark.parametrize("app,options", SCENARIOS, ids=[f"{a}-{o['protocol']}" for a, o in SCENARIOS])
def test_every_part_gives_the_sequential_counts(app: str, options: dict) -> None:
    sequential = verify(app, **options)
    names = list(partitions(build(app, **options).network))
    assert {"fingerprint", "app", "host", "table", "port", "cmdq"} <= set(names)
    for name in names:
        for shards in (2, 3):
            result, _run = partitioned(app, shards, name, **options)
            assert result.complete, (name, shards)
            assert result.stats.counts()[:3] == sequential.stats.counts()[:3], (name, shards)
            assert result.ok == sequential.ok


def test_a_part_spreads_the_states_and_keeps_more_successors_home_than_the_fingerprint() -> None:
    """The point of a part: the shards still share the states, and fewer successors change
    shard (measured here on the whole state space: owned by 'app', MAC learning's
    successors mostly keep their controller state)."""
    run = build("mac-learning", topology="linear:2", packets=2)
    net = run.network
    states, edges = [], []
    seen = {net.initial_states()[0]: 0}
    states.append(net.initial_states()[0])
    for state in states:
        for event in net.enabled(state):
            successor = net.apply(state, event)
            if successor not in seen:
                seen[successor] = len(states)
                states.append(successor)
            edges.append((state, successor))

    def figures(partition: Partition) -> tuple[list[int], float]:
        owner = owner_function(net, partition, 2)
        owners = {state: owner(state, net.fingerprint(state)) for state in states}
        shares = [sum(1 for o in owners.values() if o == shard) for shard in range(2)]
        return shares, sum(owners[a] != owners[b] for a, b in edges) / len(edges)

    by_fingerprint, by_app = figures(BY_FINGERPRINT), figures(partition_named(net, "app"))
    assert min(by_app[0]) > len(states) // 5  # both shards own a real share
    assert by_app[1] < by_fingerprint[1] / 3
    assert by_fingerprint[1] > 0.3


def test_a_violation_has_the_same_trace_whatever_owns_the_states() -> None:
    options = dict(topology="linear:2", packets=1, app_options={"bug": "forget-last-hop"})
    by_fingerprint, _run = partitioned("route-flow", 2, "fingerprint", **options)
    assert not by_fingerprint.ok
    for name in ("app", "host", "port", "table"):
        other, run = partitioned("route-flow", 3, name, **options)
        assert [d.property for d in other.discoveries] == [d.property for d in by_fingerprint.discoveries]
        assert other.discoveries[0].trace.events == by_fingerprint.discoveries[0].trace.events
        other.discoveries[0].trace.replay(run.network)


def test_worker_processes_with_a_part_give_the_sequential_counts_and_report_it() -> None:
    options = dict(topology="linear:2", packets=3, protocol="openflow")
    sequential = verify("mac-learning", **options)
    parallel = verify("mac-learning", workers=2, partition="app", **options)
    assert parallel.complete and parallel.stats.counts()[:3] == sequential.stats.counts()[:3]
    assert parallel.partition == "states owned by their 'app' part"
    in_processes, _run = partitioned("mac-learning", 2, "host", processes=True, **options)
    assert in_processes.stats.counts() == parallel.stats.counts()  # max depth too: the same levels


def test_a_part_hash_is_its_share_of_the_fingerprint_and_the_same_in_every_process() -> None:
    net = build("mac-learning", topology="linear:2", packets=2).network
    state = net.initial_states()[0]
    every_slot = tuple(range(len(net.slot_names)))
    assert net.part_hash(state, every_slot) == net.fingerprint(state)
    parts = net.state_parts()
    assert sorted(slot for part in parts.values() for slot in part) == list(every_slot)
    hashes = {name: net.part_hash(state, part) for name, part in parts.items()}
    code = ("from nice_attendre.frontend.api import build\n"
            "net = build('mac-learning', topology='linear:2', packets=2).network\n"
            "s = net.initial_states()[0]\n"
            "print({n: net.part_hash(s, p) for n, p in net.state_parts().items()})\n")
    for seed in ("0", "12345"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": seed})
        assert out.stdout.strip() == repr(hashes)


def test_unknown_or_misplaced_partitions_are_clear_errors() -> None:
    net = build("route-flow", topology="linear:2").network
    with pytest.raises(InputError, match=r"unknown partition 'nope' \(known: fingerprint, host, "):
        partition_named(net, "nope")
    with pytest.raises(InputError, match=r"use it with --workers N \(N >= 2; one worker is the sequential search\) "
                       "or --engine ray"):
        verify("route-flow", topology="linear:2", partition="app")
    runner = CliRunner()
    alone = runner.invoke(main, ["verify", "route-flow", "-t", "linear:2", "--partition", "app"])
    assert alone.exit_code == 2 and "use it with --workers N (N >= 2" in alone.output
    one = runner.invoke(main, ["verify", "route-flow", "-t", "linear:2", "-w", "1", "--partition", "app"])
    assert one.exit_code == 2 and "one worker is the sequential search" in one.output
    unknown = runner.invoke(main, ["verify", "route-flow", "-t", "linear:2", "-w", "2", "--partition", "nope"])
    assert unknown.exit_code == 2 and "unknown partition 'nope'" in unknown.output
    good = runner.invoke(main, ["verify", "route-flow", "-t", "linear:2", "-n", "2", "-w", "2", "--partition", "port"])
    assert good.exit_code == 0, good.output
    assert "states owned by their 'port' part" in good.output and "1,026" in good.output


@pytest.mark.parametrize("app,options", SCENARIOS, ids=[f"{a}-{o['protocol']}" for a, o in SCENARIOS])
def test_joined_parts_give_the_sequential_counts(app: str, options: dict) -> None:
    sequential = verify(app, **options)
    for name in ("host,ctrlq", "app,host,table"):
        result, run = partitioned(app, 2, name, **options)
        assert result.complete and result.stats.counts()[:3] == sequential.stats.counts()[:3], name
        assert result.ok == sequential.ok


def test_joined_parts_are_owned_by_the_hash_of_all_their_slots() -> None:
    net = build("route-flow", topology="linear:3", packets=2).network
    host, ctrlq = partition_named(net, "host"), partition_named(net, "ctrlq")
    joined = partition_named(net, "host,ctrlq")
    assert joined.part == host.part + ctrlq.part and joined.describe() == "states owned by their 'host,ctrlq' parts"
    state = net.initial_states()[0]
    assert net.part_hash(state, joined.part) == (net.part_hash(state, host.part)
                                                 + net.part_hash(state, ctrlq.part)) % 2 ** 64
    for bad, named in (("host,host", "names a part twice"), ("host,nope", "unknown partition 'nope'"),
                       ("fingerprint,host", "unknown partition 'fingerprint'")):
        with pytest.raises(InputError, match=named):
            partition_named(net, bad)
    good = CliRunner().invoke(main, ["verify", "route-flow", "-t", "linear:2", "-n", "2", "-w", "2",
                                     "--partition", "host,ctrlq"])
    assert good.exit_code == 0, good.output
    assert "states owned by their 'host,ctrlq' parts" in good.output and "1,026" in good.output


def test_a_system_without_parts_has_only_the_fingerprint_partition() -> None:
    class Plain:
        def initial_states(self):  # pragma: no cover - never searched here
            return (0,)

    assert list(partitions(Plain())) == ["fingerprint"]


@pytest.mark.parametrize("app,options", SCENARIOS[:3], ids=[f"{a}-{o['protocol']}" for a, o in SCENARIOS[:3]])
def test_owned_by_fingerprint_every_state_is_built_once(app: str, options: dict) -> None:
    """A successor another shard owns is offered by its fingerprint and built only if that
    owner asks for it (most are revisits there): so across the shards each stored state is
    built exactly once, by the shard that keeps or ships it; a part partition builds the
    successors it offers (it needs them to name their owner), so it builds more."""
    builds = {}
    for name in ("fingerprint", "host"):
        run = build(app, **options)  # type: ignore[arg-type]
        counted = [0]
        own_build = run.network.build_successor

        def counting(state: object, handle: object, build_successor=own_build) -> object:
            counted[0] += 1
            return build_successor(state, handle)

        run.network.build_successor = counting  # read by each shard when it is made
        cluster = InProcessCluster(lambda: (run.network, run.properties, run.metrics), 2,
                                   partition=partition_named(run.network, name))
        result = search(cluster, run.network, run.properties)
        assert result.complete
        builds[name] = (counted[0], result.stats.unique_states - len(run.network.initial_states()))
    assert builds["fingerprint"][0] == builds["fingerprint"][1]
    assert builds["host"][0] > builds["host"][1] == builds["fingerprint"][1]
