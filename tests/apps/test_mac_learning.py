"""MAC learning (pyswitch) with a mobile replier: pinned counts, its three bugs found."""
from __future__ import annotations

import networkx as nx
import pytest

from nice_attendre import verify
from nice_attendre.apps.mac_learning import MacLearning
from nice_attendre.errors import AppLoadError
from nice_attendre.models.topology import load_topology

# (protocol, switches, packets) -> (transitions, unique states, revisits, max depth), with the
# app's default properties. A change here is a change of semantics: explain it in the commit.
PINNED = {
    ("openflow", 1, 1): (201, 127, 75, 17),
    ("openflow", 1, 2): (2855, 1339, 1517, 28),
    ("openflow", 2, 1): (728, 401, 328, 27),
    ("openflow", 2, 2): (18874, 7449, 11426, 43),
    ("openflow-b", 1, 1): (201, 127, 75, 17),
    ("openflow-b", 1, 2): (2855, 1339, 1517, 28),
    ("openflow-b", 2, 1): (728, 401, 328, 27),
    ("openflow-b", 2, 2): (18874, 7449, 11426, 43),
    ("attendre", 1, 1): (201, 127, 75, 17),
    ("attendre", 1, 2): (2425, 1144, 1282, 28),
    ("attendre", 2, 1): (728, 401, 328, 27),
    ("attendre", 2, 2): (12986, 5254, 7733, 42),
}


@pytest.mark.parametrize("protocol,switches,packets", sorted(PINNED))
def test_pinned_counts_and_the_fixed_app_passes(protocol: str, switches: int, packets: int) -> None:
    result = verify("mac-learning", topology=f"linear:{switches}", packets=packets, protocol=protocol)
    assert result.ok and result.complete
    assert result.stats.counts() == PINNED[(protocol, switches, packets)]


def test_one_packet_has_no_race_and_openflow_b_adds_nothing() -> None:
    """Only type-1 races exist (rules go to the packet-in switch only): with one packet the
    protocols explore the same space, and barriers never apply."""
    for switches in (1, 2):
        counts = {p: PINNED[(p, switches, 1)] for p in ("openflow", "openflow-b", "attendre")}
        assert len(set(counts.values())) == 1
        assert PINNED[("openflow-b", switches, 2)] == PINNED[("openflow", switches, 2)]
        assert PINNED[("attendre", switches, 2)][0] < PINNED[("openflow", switches, 2)][0]


def triangle() -> nx.Graph:
    graph = nx.Graph()
    graph.add_edges_from([("h1", "s1"), ("s1", "s2"), ("s2", "s3"), ("s3", "s1"), ("s3", "h2")])
    return graph


@pytest.mark.parametrize("protocol", ["openflow", "attendre"])
def test_host_unreachable_after_moving(protocol: str) -> None:
    result = verify("mac-learning", topology="linear:1", packets=1, protocol=protocol,
                    app_options={"bug": "host-unreachable"})
    (found,) = result.discoveries
    assert found.property == "no-stale-routes"
    assert found.reason.startswith("s1 sends packets h1->h2 out of port 2, where nothing is attached")
    final = found.trace.replay(result.system)
    assert result.system.value(final, "host:h2").location == (1, 3)
    assert any("h2 moves from s1:2 to s1:3" in line
               for step in zip(found.trace.states(), found.trace.events)
               for line in result.system.narrate(*step)[1])


@pytest.mark.parametrize("protocol", ["openflow", "attendre"])
def test_delayed_direct_path(protocol: str) -> None:
    result = verify("mac-learning", topology="linear:1", packets=2, protocol=protocol,
                    app_options={"bug": "delayed-direct-path"})
    (found,) = result.discoveries
    assert found.property == "strict-direct-paths"
    assert "which h1 sent after h1 and h2 had exchanged packets both ways" in found.reason
    found.trace.replay(result.system)


def test_delayed_direct_path_needs_a_second_packet() -> None:
    assert verify("mac-learning", topology="linear:1", packets=1, app_options={"bug": "delayed-direct-path"}).ok


@pytest.mark.parametrize("protocol", ["openflow", "attendre"])
def test_excess_flooding_loops_on_a_cycle(protocol: str) -> None:
    result = verify("mac-learning", topology=triangle(), packets=1, protocol=protocol,
                    properties=["no-forwarding-loops"], app_options={"bug": "excess-flooding"})
    (found,) = result.discoveries
    assert found.property == "no-forwarding-loops" and "came to s2 port 2 again" in found.reason
    found.trace.replay(result.system)


def test_fixed_app_floods_on_a_spanning_tree_and_passes_on_a_cycle() -> None:
    for protocol in ("openflow", "attendre"):
        result = verify("mac-learning", topology=triangle(), packets=1, protocol=protocol,
                        properties=list(MacLearning.default_properties) + ["no-forwarding-loops"])
        assert result.ok and result.complete
        assert result.stats.counts() == (5427, 2054, 3374, 33)


def test_every_bug_is_caught_by_the_default_properties_somewhere() -> None:
    cases = {"host-unreachable": ("linear:1", 1), "delayed-direct-path": ("linear:1", 2),
             "excess-flooding": (triangle(), 1)}
    for bug, (topology, packets) in cases.items():
        assert not verify("mac-learning", topology=topology, packets=packets, app_options={"bug": bug}).ok, bug


def test_replier_moves_to_a_new_port_and_announces_itself() -> None:
    app = MacLearning()
    scenario = app.scenario(load_topology("linear:2"), 1)
    (spec,) = [s for s in scenario.hosts if s.name == "h2"]
    assert spec.moves == ((2, 3),) and scenario.topology.spare_ports == {2: (3,)}
    fixed = MacLearning(mobile=False).scenario(load_topology("linear:2"), 1)
    assert all(not s.moves for s in fixed.hosts)
    assert verify(MacLearning(mobile=False), topology="linear:2", packets=2).ok


def test_unknown_bug() -> None:
    with pytest.raises(AppLoadError, match="unknown mac-learning bug 'nope'"):
        verify("mac-learning", app_options={"bug": "nope"})


@pytest.mark.parametrize("protocol", ["openflow", "attendre"])
@pytest.mark.parametrize("switches,packets", [(1, 3), (1, 4), (2, 3)])
def test_fixed_app_passes_the_larger_table_ii_cells(protocol: str, switches: int, packets: int) -> None:
    """With several packets in flight, the order of the two entries decides strict-direct-paths:
    the direction not yet let through is installed last, so no exchange completes half-installed."""
    result = verify("mac-learning", topology=f"linear:{switches}", packets=packets, protocol=protocol)
    assert result.ok and result.complete
