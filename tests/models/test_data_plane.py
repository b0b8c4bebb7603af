"""The richer data plane: IPv4 prefixes, OpenFlow 1.0 exact-match precedence, header rewriting
(set-field), flow timeouts with flow-removed; each as an app uses it."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from nice_attendre import verify
from nice_attendre.frontend.api import build
from nice_attendre.models.events import ControllerHandle, HostSend, SwitchEntryExpires, SwitchProcessPacket
from nice_attendre.models.flowtable import covers, lookup, make_entry
from nice_attendre.models.messages import FlowRemoved, Timeouts
from nice_attendre.models.packet import Match, Output, SetField
from nice_attendre.models.scenario import host_header
from nice_attendre.models.view import View
from nice_attendre.properties.custom import always, sometimes
from nice_attendre.trace import Trace
from tests_data_apps import path

PROTOCOLS = ["openflow", "openflow-b", "attendre"]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
H12 = host_header("h1", "h2")


def star(*hosts: str) -> nx.Graph:
    graph = nx.Graph()
    graph.add_edges_from(("s1", host) for host in hosts)
    return graph


# ---- prefixes ---------------------------------------------------------------------------------

def test_hosts_have_ipv4_addresses() -> None:
    assert (H12.ip_src, H12.ip_dst) == ("10.0.0.1", "10.0.0.2")
    assert host_header("h300", "h1").ip_src == "10.0.1.44"


def test_prefix_matches() -> None:
    lab = Match.of(ip_src="10.0.0.3/31")
    assert lab == Match.of(ip_src="10.0.0.2/31")  # normalised
    assert lab.matches(host_header("h2", "h1"), 1) and lab.matches(host_header("h3", "h1"), 1)
    assert not lab.matches(host_header("h4", "h1"), 1) and not lab.matches(host_header("h1", "h2"), 1)
    assert covers(Match.of(ip_src="10.0.0.0/24"), lab) and not covers(lab, Match.of(ip_src="10.0.0.0/24"))
    assert covers(lab, Match.exact(host_header("h3", "h1")))
    with pytest.raises(ValueError, match="bad IPv4 prefix"):
        Match.of(ip_dst="10.0.0.0/33")
    with pytest.raises(ValueError, match="only ip_src and ip_dst take a prefix"):
        Match.of(eth_dst="10.0.0.0/8")


def test_openflow_1_0_exact_entries_win_over_wildcards() -> None:
    wildcard = make_entry(0, 50_000, Match.of(eth_dst="h2"), (Output(3),))
    exact = make_entry(0, 1, Match.exact(H12, in_port=1), (Output(2),))
    table = tuple(sorted((wildcard, exact), key=lambda e: (e.table_id, e.neg_priority)))
    assert table[lookup(table, 0, H12, 1)] is wildcard  # by priority (OpenFlow 1.3)
    assert table[lookup(table, 0, H12, 1, exact_first=True)] is exact  # OpenFlow 1.0
    assert table[lookup(table, 0, H12, 2, exact_first=True)] is wildcard  # the exact one needs in_port 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_subnet_firewall_with_intended_drops(protocol: str) -> None:
    def lab_only_web(view: View) -> bool:
        return all(r.header.tp_dst == 80 for r in view.hosts["h1"].received if r.origin in ("h2", "h3"))

    policy = always("lab-only-web", lab_only_web, "the lab reaches the server on port 80 only")
    flows = ["h2->h1:proto=tcp,sport=1000,dport=80", "h3->h1:proto=tcp,sport=1001,dport=22",
             "h4->h1:proto=tcp,sport=1002,dport=22"]
    app = path("prefix_firewall.py", "PrefixFirewall")
    topology = star("h1", "h2", "h3", "h4")
    correct = verify(app, topology=topology, protocol=protocol, flows=flows,
                     properties=["no-black-holes", "no-forgotten-packets", "no-forwarding-loops", policy])
    assert correct.ok and correct.complete
    narrow = verify(app, topology=topology, protocol=protocol, flows=flows, app_options={"bug": "narrow-prefix"},
                    properties=["no-black-holes", policy])
    assert [d.property for d in narrow.discoveries] == ["lab-only-web"]


# ---- set-field: a virtual-IP load balancer ------------------------------------------------------

def affinity(view: View) -> bool:
    """Packets of one connection (client, source port) all reach the same replica."""
    reached: dict[tuple[str, int], set[str]] = {}
    for host in ("h2", "h3"):
        for r in view.hosts[host].received:
            reached.setdefault((r.origin, r.header.tp_src), set()).add(host)
    return all(len(replicas) == 1 for replicas in reached.values())


AFFINITY = always("flow-affinity", affinity, "packets of one connection all reach the same replica")
LB_FLOWS = ["h1->10.0.0.100:packets=2,proto=tcp,sport=1000,dport=80"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_load_balancer_keeps_connections_on_one_replica(protocol: str) -> None:
    def answered(view: View) -> bool:
        return any(r.header.ip_src == "10.0.0.100" for r in view.hosts["h1"].received)

    result = verify(f"{EXAMPLES / 'load_balancer.py'}:LoadBalancer", topology=star("h1", "h2", "h3"), protocol=protocol,
                    flows=LB_FLOWS, properties=["no-black-holes", "no-forgotten-packets", AFFINITY,
                                                sometimes("answered-by-the-vip", answered)])
    assert result.ok and result.complete


def test_round_robin_breaks_affinity_under_openflow_only() -> None:
    """A new replica per packet-in: under OpenFlow, two packets of one connection can both reach
    the controller (a type-1 race); under Attendre a flow causes one packet-in."""
    app = f"{EXAMPLES / 'load_balancer.py'}:LoadBalancer"
    openflow = verify(app, topology=star("h1", "h2", "h3"), flows=LB_FLOWS, app_options={"bug": "round-robin"},
                      properties=[AFFINITY])
    (found,) = openflow.discoveries
    assert found.property == "flow-affinity"
    assert [str(e) for e in found.trace.events].count("controller handles a message from s1") == 2
    attendre = verify(app, topology=star("h1", "h2", "h3"), flows=LB_FLOWS, protocol="attendre",
                      app_options={"bug": "round-robin"}, properties=[AFFINITY])
    assert attendre.ok and attendre.complete


def test_set_field_rewrites_before_later_actions() -> None:
    run = build(f"{EXAMPLES / 'load_balancer.py'}:LoadBalancer", topology=star("h1", "h2", "h3"), flows=LB_FLOWS,
                properties=[])
    net = run.network
    state = Trace.from_events(net, [HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1)]).final
    state = net.apply(state, next(e for e in net.enabled(state) if str(e) == "s1 processes a command"))
    state = net.apply(state, next(e for e in net.enabled(state) if str(e) == "s1 processes a command"))
    (delivered,) = net.value(state, "inbox:h2")
    assert (delivered.hdr.eth_dst, delivered.hdr.ip_dst) == ("h2", "10.0.0.2")
    assert delivered.uid == ("h1", 0)


def test_set_field_refuses_unknown_fields_and_prefixes() -> None:
    with pytest.raises(ValueError, match="unknown header field 'vlan'"):
        SetField("vlan", 3)
    with pytest.raises(ValueError, match="takes an address, not a prefix"):
        SetField("ip_dst", "10.0.0.0/8")
    assert str(SetField("eth_dst", "h3")) == "set:eth_dst=h3"


# ---- timeouts -------------------------------------------------------------------------------

def test_an_entry_with_a_timeout_may_expire_and_the_flow_goes_to_the_controller_again() -> None:
    """Under Attendre a flow causes one packet-in, unless its entry expires in between."""
    packet_ins: set[int] = set()

    def count(view: View) -> bool:
        packet_ins.add(view.app[0])
        return True

    result = verify(path("timeout_routing.py", "TimeoutRouting"), topology="linear:1", packets=2,
                    protocol="attendre", properties=["no-forgotten-packets", "delivery",
                                                     always("count", count)])
    assert result.ok and result.complete
    # The ping's two directions, and again for each after an expiry: up to 4 per execution.
    assert max(packet_ins) == 4
    without = verify("route-flow", topology="linear:1", packets=2, protocol="attendre", properties=[])
    assert result.stats.transitions > without.stats.transitions


def test_expiry_is_an_event_and_the_app_is_told() -> None:
    run = build(path("timeout_routing.py", "TimeoutRouting"), topology="linear:1", packets=1, properties=[])
    net = run.network
    state = Trace.from_events(net, [HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1)]).final
    state = net.apply(state, next(e for e in net.enabled(state) if str(e) == "s1 processes a command"))
    (entry,) = net.value(state, "table:1")
    assert entry.timeouts == Timeouts(idle=10, notify=True)
    (expiry,) = [e for e in net.enabled(state) if isinstance(e, SwitchEntryExpires)]
    assert expiry == SwitchEntryExpires(1, 0, "idle")
    state, notes = net.narrate(state, expiry)
    assert net.value(state, "table:1") == ()
    assert net.value(state, "ctrlq:1") == (FlowRemoved(1, entry.match, entry.priority, "idle", 0, entry.timeouts),)
    assert notes[0].startswith("s1: [prio 32768 {exact h1->h2} -> output:2 (idle 10s, notify)] expires")
    state = net.apply(state, ControllerHandle(1))
    assert net.value(state, "app") == (1, 1)


def test_bad_timeouts_are_app_errors() -> None:
    from nice_attendre.models.app import App, Out
    from nice_attendre.models.messages import PacketIn

    class Negative(App[None]):
        def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
            out.flow_mod(ev.dpid, Match.exact(ev.packet.hdr), [Output(2)], idle_timeout=-1)
            return state

    result = verify(Negative(), topology="linear:1")
    (found,) = result.discoveries
    assert found.property == "app-exception" and "out.flow_mod: idle_timeout must be an int from 0 to 65535, got int -1" in found.reason


def test_a_deleted_entry_that_asked_is_reported() -> None:
    from nice_attendre.models.app import App, Out
    from nice_attendre.models.messages import PacketIn

    removed: list[Any] = []

    class Cleaner(App[None]):
        def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
            match = Match.exact(ev.packet.hdr)
            out.flow_mod(ev.dpid, match, [Output(2)], buffer_id=ev.buffer_id, notify_removed=True)
            out.flow_mod(ev.dpid, match, [], command="delete")
            return state

        def on_flow_removed(self, state: None, ev: FlowRemoved, out: Out) -> None:
            removed.append(ev)
            return state

    assert verify(Cleaner(), topology="linear:1", properties=[]).complete
    assert removed and {ev.reason for ev in removed} == {"delete"}


def test_timeouts_print_notify_once() -> None:
    """An entry that only asks to be told when it goes printed ``( (notify))``."""
    from nice_attendre.models.messages import Timeouts

    assert str(Timeouts(notify=True)) == "notify"
    assert str(Timeouts(idle=10, hard=30, notify=True)) == "idle 10s, hard 30s, notify"
    assert str(Timeouts(idle=10)) == "idle 10s"
