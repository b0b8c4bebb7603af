"""Energy-efficient TE (REsPoNse): pinned counts, path choice from statistics, its bugs."""
from __future__ import annotations

import pytest

from nice_attendre import verify
from nice_attendre.apps.energy_te import EnergyTE
from nice_attendre.checker import dfs
from nice_attendre.models.topology import load_topology
from nice_attendre.property import Property

PINNED = {
    ("openflow", "paths:2,3", 1): (156, 99, 58, 24),
    ("openflow", "paths:2,3", 2): (37192, 12011, 25182, 51),
    ("openflow", "paths:3,4", 1): (756, 362, 395, 31),
    ("openflow-b", "paths:2,3", 1): (77, 60, 18, 26),
    ("openflow-b", "paths:2,3", 2): (7958, 2883, 5076, 52),
    ("openflow-b", "paths:3,4", 1): (363, 184, 180, 34),
    ("attendre", "paths:2,3", 1): (73, 50, 24, 18),
    ("attendre", "paths:2,3", 2): (5400, 1881, 3520, 36),
    ("attendre", "paths:3,4", 1): (185, 98, 88, 22),
}


@pytest.mark.parametrize("protocol,topology,flows", sorted(PINNED))
def test_pinned_counts_and_the_fixed_app_passes(protocol: str, topology: str, flows: int) -> None:
    result = verify("energy-te", topology=topology, packets=flows, protocol=protocol)
    assert result.ok and result.complete
    assert result.stats.counts() == PINNED[(protocol, topology, flows)]


def test_paths_are_always_on_and_on_demand() -> None:
    assert EnergyTE.paths(load_topology("paths:2,3"), "h1", "h2") == ((1, 2), (1, 3, 2))
    assert EnergyTE.paths(load_topology("paths:3,4"), "h1", "h2") == ((1, 3, 2), (1, 4, 5, 2))


def test_both_paths_are_taken_depending_on_the_load_class() -> None:
    """Over all executions the SYN and its SYN-ACK arrive over alwaysOn (low load) or onDemand
    (high load), and never any other way."""
    from nice_attendre.frontend.api import build

    run = build("energy-te", topology="paths:3,4", packets=1, properties=[])
    net = run.network
    seen: set[tuple[str, tuple[int, ...]]] = set()

    def record(state: tuple[int, ...]) -> bool:
        for _hdr, path, kind in net.value(state, "app").chosen:
            seen.add((kind, path))
        return True

    assert dfs(net, [Property.at_quiescence("paths", record)]).complete
    assert seen == {("alwaysOn", (1, 3, 2)), ("onDemand", (1, 4, 5, 2))}


def test_statistics_by_round_trip_explore_more() -> None:
    instant = verify("energy-te", topology="paths:2,3", packets=1)
    round_trip = verify(EnergyTE(instant_stats=False), topology="paths:2,3", packets=1)
    assert round_trip.ok and round_trip.stats.transitions > instant.stats.transitions


def test_first_packet_dropped() -> None:
    result = verify("energy-te", topology="paths:2,3", packets=1, app_options={"bug": "drop-first-packet"})
    forgotten, lost = result.discoveries  # both judged in the same quiescent state
    assert forgotten.property == "no-forgotten-packets"
    assert forgotten.reason == "s1 still holds syn h1#0 [h1->h2:1000->80]"
    assert lost.property == "delivery" and lost.reason == "h1#0 never reached h2"


@pytest.mark.parametrize("protocol", ["openflow", "openflow-b", "attendre"])
def test_first_hop_on_the_wrong_path(protocol: str) -> None:
    result = verify("energy-te", topology="paths:3,4", packets=1, protocol=protocol,
                    app_options={"bug": "first-hop-always-on"})
    (found,) = result.discoveries
    assert found.property == "intended-paths"
    assert found.reason == "h1#0 [h1->h2:1000->80] crossed s1 s3 but the app chose s1 s4 s5 s2"
    found.trace.replay(result.system)


def test_intended_paths_needs_an_app_that_says_its_paths() -> None:
    from nice_attendre.errors import InputError

    with pytest.raises(InputError, match="intended-paths needs an app with an intended_path"):
        verify("route-flow", properties=["intended-paths"])
