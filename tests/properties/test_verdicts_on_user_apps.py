"""Verdicts a user can trust: apps nobody here shipped, correct and buggy, under every protocol.

Each correct app passes the properties meant for its kind; each buggy one fails with the
property that should catch it (issue 8: no false alarms, and misrouting no longer passes).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from nice_attendre import verify
from nice_attendre.frontend.api import build
from nice_attendre.checker import dfs
from nice_attendre.models.network import Network, Options
from nice_attendre.models.scenario import HostSpec, Scenario, host_header
from nice_attendre.models.topology import load_topology
from nice_attendre.property import Property
from tests_data_apps import load, path

PROTOCOLS = ["openflow", "openflow-b", "attendre"]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def star(*hosts: str) -> nx.Graph:
    """One switch with the given hosts."""
    graph = nx.Graph()
    graph.add_edges_from(("s1", host) for host in hosts)
    return graph


def triangle() -> nx.Graph:
    graph = nx.Graph()
    graph.add_edges_from([("h1", "s1"), ("s1", "s2"), ("s2", "s3"), ("s3", "s1"), ("s3", "h2")])
    return graph


# ---- delivery: misrouting is caught --------------------------------------------------------

@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_misrouting_passes_the_other_properties_and_fails_delivery(protocol: str) -> None:
    app = path("misrouting.py", "Misrouting")
    others = ["no-forwarding-loops", "no-black-holes", "no-forgotten-packets", "direct-paths",
              "strict-direct-paths", "no-reordering", "no-duplicates"]
    assert verify(app, topology=star("h1", "h2", "h3"), packets=2, protocol=protocol, receiver="h2", properties=others).ok
    caught = verify(app, topology=star("h1", "h2", "h3"), packets=2, protocol=protocol, receiver="h2",
                    properties=["delivery"])
    (found,) = caught.discoveries
    assert found.property == "delivery"
    assert "s1 sent h1#0 [h1->h2], addressed to h2, to h3" in found.reason
    assert "h1#0 never reached h2" in found.reason


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_route_flow_delivers_everything(protocol: str) -> None:
    result = verify("route-flow", topology="linear:3", packets=2, protocol=protocol, properties=["delivery"])
    assert result.ok and result.complete


# ---- direct paths: what a learning switch can and cannot promise ----------------------------

@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("packets", [2, 3])
def test_correct_learning_switch_passes_its_properties(protocol: str, packets: int) -> None:
    result = verify(path("learning_switch.py", "LearningSwitch"), topology="linear:2", packets=packets,
                    protocol=protocol)
    assert [p for p in ("strict-direct-paths", "no-black-holes") if p not in result.system.options.monitors] == []
    assert result.ok and result.complete


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_one_way_learning_switch_breaks_strict_direct_paths(protocol: str) -> None:
    result = verify(path("learning_switch.py", "LearningSwitch"), topology="linear:2", packets=2,
                    protocol=protocol, app_options={"bug": "one-way"})
    (found,) = result.discoveries
    assert found.property == "strict-direct-paths"


def test_direct_paths_says_why_a_learning_switch_fails_it() -> None:
    """direct-paths fits apps that know where hosts are; a learning switch must first hear from
    the destination, so a packet sent after the first delivery may still reach the controller."""
    result = verify(path("learning_switch.py", "LearningSwitch"), topology="linear:1", packets=2,
                    properties=["direct-paths"])
    (found,) = result.discoveries
    assert "sent after an earlier packet of the flow had reached h2" in found.reason
    assert "use strict-direct-paths for apps that learn where hosts are" in found.reason


def test_a_packet_in_flight_before_the_first_delivery_is_no_direct_paths_violation() -> None:
    """The old monitor raised a false alarm when h1#1, sent before h1#0 reached h2, missed at s1."""
    from nice_attendre.models.events import ControllerHandle, HostReceive, HostSend, SwitchProcessCommand
    from nice_attendre.models.events import SwitchProcessPacket as Packet_
    from nice_attendre.trace import Trace

    run = build(path("learning_switch.py", "LearningSwitch"), topology="linear:1", packets=2,
                properties=["direct-paths"])
    net = run.network
    events = [HostSend("h1"), HostSend("h1"), Packet_(1, 1), ControllerHandle(1), SwitchProcessCommand(1),
              HostReceive("h2"), Packet_(1, 1)]
    state = Trace.from_events(net, events).final
    assert [m.packet.uid for m in net.value(state, "ctrlq:1")] == [("h1", 1)]  # h1#1 went to the controller
    (prop,) = [p for p in run.properties if p.name == "direct-paths"]
    assert prop.holds(state)  # but it was sent before h1#0 arrived


# ---- no-black-holes: floods with nowhere to go and intended drops are not black holes --------

@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_mac_learning_on_a_cycle_has_no_black_hole(protocol: str) -> None:
    result = verify("mac-learning", topology=triangle(), packets=1, protocol=protocol,
                    properties=["no-black-holes", "no-forwarding-loops"])
    assert result.ok and result.complete


def firewall_run(protocol: str, bug: str | None, properties: list[str]) -> Any:
    """The client h2 opens port 80 (allowed) and port 22 (denied) on the server h1."""
    app = load("firewall.py", "Firewall")(bug)
    topology = load_topology("linear:2")
    client = (host_header("h2", "h1", 1000, 80), "data"), (host_header("h2", "h1", 1001, 22), "data")
    scenario = Scenario(topology, (HostSpec("h1", replies=True), HostSpec("h2", client, replies=False)))
    from nice_attendre import properties as registry

    net = Network(scenario, app, protocol, Options(monitors=registry.monitors_for(properties)))

    def only_port_80(state: Any) -> bool:
        return all(hdr.tp_dst == 80 for hdr, origin, _seq in net.received(state, "h1") if origin == "h2")

    checked = (*registry.build(net, properties),
               Property.always("only-port-80", only_port_80, "the server gets only port-80 traffic from h2"))
    return dfs(net, checked, keep_going=True)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_firewall_drops_are_intended(protocol: str) -> None:
    result = firewall_run(protocol, None, ["no-black-holes", "no-forgotten-packets", "no-forwarding-loops"])
    assert result.ok and result.complete


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("bug", ["open", "early-packets"])
def test_buggy_firewalls_are_caught(protocol: str, bug: str) -> None:
    result = firewall_run(protocol, bug, ["no-black-holes", "no-forgotten-packets"])
    assert {d.property for d in result.discoveries} == {"only-port-80"}


# ---- no-duplicates vs no-reordering ----------------------------------------------------------

def test_duplicates_are_not_reordering() -> None:
    from nice_attendre.models.app import App, Out
    from nice_attendre.models.messages import PacketIn
    from nice_attendre.models.packet import Match, Output

    class Twice(App[None]):
        def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
            port = out.topology.next_port(ev.dpid, ev.packet.hdr.eth_dst)
            out.flow_mod(ev.dpid, Match.exact(ev.packet.hdr), [Output(port), Output(port)], buffer_id=ev.buffer_id)
            return state

    result = verify(Twice(), topology="linear:1", packets=1, properties=["no-reordering", "no-duplicates"],
                    keep_going=True)
    assert {d.property for d in result.discoveries} == {"no-duplicates"}


# ---- hosts: sending and answering, moving between receiving and answering -------------------

def both_ping(packets: int) -> Scenario:
    """h1 and h2 both send ``packets`` packets to each other and answer each other's."""
    topology = load_topology("linear:1")
    return Scenario(topology, tuple(
        HostSpec(h, ((host_header(h, other, 0, 0), "data"),) * packets, replies=True)
        for h, other in (("h1", "h2"), ("h2", "h1"))))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_host_that_sends_and_answers_skips_none_of_its_packets(protocol: str) -> None:
    """Issue 8: the script index doubled as the answer counter, so a host that answered before
    sending skipped packets of its script on some interleavings."""
    from nice_attendre import properties as registry
    from nice_attendre.apps.route_flow import RouteFlow

    net = Network(both_ping(2), RouteFlow(), protocol, Options(monitors=registry.monitors_for(["delivery"])))
    outcomes = set()

    def everything_arrived(state: Any) -> bool:
        got = {h: sorted((origin, seq) for _hdr, origin, seq in net.received(state, h)) for h in ("h1", "h2")}
        outcomes.add(tuple(sorted((h, tuple(v)) for h, v in got.items())))
        # Each host gets the other's two scripted packets (seqs 0, 1) and its two answers (2, 3).
        return got == {"h1": [("h2", s) for s in range(4)], "h2": [("h1", s) for s in range(4)]}

    result = dfs(net, [*registry.build(net, ["delivery", "no-forgotten-packets"]),
                       Property.at_quiescence("everything arrived", everything_arrived)])
    assert result.ok and result.complete
    assert len(outcomes) == 1


def test_a_mobile_host_may_move_between_receiving_and_answering() -> None:
    run = build("mac-learning", packets=1, properties=[])
    net = run.network

    def answered_from_the_new_port(state: Any) -> bool:
        h2 = net.value(state, "host:h2")
        moved = h2.location != net.topology.host_port["h2"]
        received_before = any(origin == "h1" for _hdr, origin, _seq in h2.received)
        # h2's answer left from its new port: the switch saw it come in there.
        return moved and received_before and any(
            p.origin == "h2" and p.kind == "reply" for p in net.value(state, f"port:1:{h2.location[1]}"))

    result = dfs(net, [Property.sometimes("answer from the new port", answered_from_the_new_port)])
    assert result.ok and result.complete


# ---- IV.D is one-way: a pass under Attendre says nothing about OpenFlow ---------------------

def test_an_app_that_ignores_following_switches_fails_only_under_openflow() -> None:
    app = path("first_hop_only.py", "FirstHopOnly")
    openflow = verify(app, topology="linear:3", packets=1, protocol="openflow")
    attendre = verify(app, topology="linear:3", packets=1, protocol="attendre")
    assert "no-forgotten-packets" in {d.property for d in openflow.discoveries}
    assert attendre.ok and attendre.complete


# ---- verdicts that do not depend on command order --------------------------------------------

@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("app,options", [
    ("energy-te", {"topology": "paths:2,3", "packets": 1}),
    (path("both_ways.py", "BothWays"), {"topology": "linear:3", "packets": 1}),
    ("route-flow", {"topology": "linear:3", "packets": 2}),
])
def test_correct_apps_pass_under_any_command_order(protocol: str, app: str, options: dict) -> None:
    result = verify(app, protocol=protocol, command_order="any", **options)
    assert result.ok and result.complete


def test_proactive_routing_keeps_direct_paths_only_under_fifo() -> None:
    """Its packet-outs can overtake the rules it sent at switch join when commands reorder."""
    app = f"{EXAMPLES / 'proactive.py'}:ProactiveRouting"
    checked = ["no-forwarding-loops", "no-black-holes", "no-forgotten-packets", "direct-paths", "delivery"]
    assert verify(app, topology="linear:3", packets=2, properties=checked).ok
    unordered = verify(app, topology="linear:3", packets=2, command_order="any", properties=checked)
    assert [d.property for d in unordered.discoveries] == ["direct-paths"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_learning_switch_needs_a_barrier_between_its_two_entries(protocol: str) -> None:
    app = path("learning_switch.py", "LearningSwitch")
    fifo = verify(app, topology="linear:2", packets=2, protocol=protocol)
    unfenced = verify(app, topology="linear:2", packets=2, protocol=protocol, command_order="any")
    fenced = verify(app, topology="linear:2", packets=2, protocol=protocol, command_order="any",
                    app_options={"barriers": True})
    assert fifo.ok and fenced.ok and fenced.complete
    assert [d.property for d in unfenced.discoveries] == ["strict-direct-paths"]
