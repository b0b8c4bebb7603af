"""`strict-no-stale-routes`: a table miss is judged by what the controller then does (issue 29,
section 4).

`no-stale-routes` follows a flow through the tables and accepts a table miss (the controller
decides). A router whose entries time out holds no entry at all when nothing more can happen,
so one that routes into a dead link passed it. The strict check sends one more packet of each
flow and follows it through the network, the app answering its packet-ins.
"""
from __future__ import annotations

import networkx as nx
import pytest

from nice_attendre import verify
from nice_attendre.frontend.api import build
from nice_attendre.models.scenario import host_header
from nice_attendre.properties.routes import probe
from tests_data_apps import path

IDLE = path("idle_router.py", "IdleRouter")
REROUTING = path("rerouting.py", "Rerouting")
PROTOCOLS = ["openflow", "openflow-b", "attendre"]


def square() -> nx.Graph:
    """h1 - s1, two paths s1 - s2 - s4 and s1 - s3 - s4, s4 - h2."""
    graph = nx.Graph()
    graph.add_edges_from([("h1", "s1"), ("s1", "s2"), ("s2", "s4"), ("s1", "s3"), ("s3", "s4"), ("s4", "h2")])
    return graph


def test_a_router_whose_entries_time_out_hides_a_dead_route_from_no_stale_routes_only() -> None:
    """IdleRouter never looks at link failures: when nothing more can happen its entries have
    expired, so the tables only miss; the controller then routes into the dead link."""
    options = dict(topology=square(), packets=1, faults={"link": 1})
    assert verify(IDLE, properties=["no-stale-routes"], **options).ok
    result = verify(IDLE, properties=["strict-no-stale-routes"], **options)
    (found,) = result.discoveries
    assert found.property == "strict-no-stale-routes"
    assert "sent by h1 now would not reach h2" in found.reason
    assert "controller: IdleRouter.on_packet_in handles packet-in(s1, port 1, the probe)" in found.reason
    assert "whose link is down: it is lost" in found.reason
    assert any(str(event).startswith("FAULT: the link at") for event in found.trace.events)


def test_a_router_that_flushes_its_entries_but_routes_around_nothing_is_seen_at_the_first_end() -> None:
    """FlushingRouter deletes its entries on a port-status and routes the next packets along
    the dead link: no-stale-routes sees it only where a packet-in came after the failure (an
    entry into the dead link); the strict check at the first end after the failure."""
    options = dict(topology=square(), packets=1, faults={"link": 1})
    loose = verify(path("flushing_router.py", "FlushingRouter"), properties=["no-stale-routes"], **options)
    strict = verify(path("flushing_router.py", "FlushingRouter"), properties=["strict-no-stale-routes"], **options)
    assert not loose.ok and not strict.ok
    assert "whose link is down: it is lost" in strict.discoveries[0].reason
    assert strict.stats.transitions < loose.stats.transitions


@pytest.mark.parametrize("protocol", ["openflow", "attendre"])
def test_a_router_that_reroutes_passes_the_strict_check(protocol: str) -> None:
    result = verify(REROUTING, topology=square(), packets=1, faults={"link": 1}, protocol=protocol,
                    properties=["strict-no-stale-routes"])
    assert result.ok and result.complete


def test_the_strict_check_fails_wherever_no_stale_routes_fails() -> None:
    result = verify(REROUTING, app_options={"bug": "ignore-failures"}, topology=square(), packets=1,
                    faults={"link": 1}, properties=["strict-no-stale-routes"])
    (found,) = result.discoveries
    assert "whose link is down" in found.reason or "nothing is attached" in found.reason


@pytest.mark.parametrize("protocol", [*PROTOCOLS, "pif", "batch", "buffer"])
def test_no_false_alarm_where_the_tables_miss_at_the_end(protocol: str) -> None:
    """With no answers, the way back is never installed: the probe asks the controller."""
    result = verify("route-flow", topology="linear:3", flows=["h1->h2:packets=2,reply=none"], protocol=protocol,
                    properties=["strict-no-stale-routes"])
    assert result.ok and result.complete


@pytest.mark.parametrize("app, topology", [("mac-learning", "linear:2"), ("examples/learning_switch.py:LearningSwitch",
                                                                         "linear:2"), ("energy-te", "paths:2,3")])
def test_no_false_alarm_on_the_shipped_apps(app: str, topology: str) -> None:
    result = verify(app, topology=topology, packets=2, properties=["strict-no-stale-routes"])
    assert result.ok and result.complete


def test_a_probe_follows_the_packet_through_the_controller() -> None:
    """route-flow, h1->h2 without answers, run to its end: the way back was never installed,
    so a packet from h2 misses at s2, the app installs the path, and it reaches h1."""
    net = build("route-flow", topology="linear:2", flows=["h1->h2:reply=none"], properties=[]).network
    state = net.initial_states()[0]
    while net.enabled(state):
        state = net.apply(state, net.enabled(state)[0])
    reached, lines = probe(net, state, "h2", host_header("h2", "h1"), narrate=True)
    assert reached
    assert lines[0] == "s2: table miss for the probe [h2->h1] from port 2; buffered, packet-in sent"
    assert any(line.startswith("controller: RouteFlow.on_packet_in handles packet-in(s2") for line in lines)
    assert lines[-1] == "h1 receives the probe [h2->h1]"
    assert net.received(state, "h1") == ()  # the state probed is a value: unchanged
