"""Traffic scenarios: flows with header fields and answers, several at once, broadcasts, TOML files."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from nice_attendre import InputError, verify
from nice_attendre.frontend.api import build
from nice_attendre.frontend.cli import main
from nice_attendre.models.events import HostSend
from nice_attendre.models.flows import Flow, load_file, parse_flow
from nice_attendre.models.packet import BROADCAST
from nice_attendre.models.scenario import Scenario
from nice_attendre.models.topology import load_topology
from nice_attendre.models.view import View
from nice_attendre.properties.custom import at_quiescence
from tests_data_apps import path

SCENARIOS = Path(__file__).resolve().parents[1] / "data" / "scenarios"
LINEAR_2 = load_topology("linear:2")


# ---- flows from strings -------------------------------------------------------------------------

def test_a_flow_string_gives_every_field() -> None:
    flow = parse_flow("h1->h2:packets=2,proto=tcp,sport=1000,dport=80,reply=tcp")
    assert flow == Flow("h1", "h2", 2, "tcp", 1000, 80, reply="tcp")
    hdr = flow.header()
    assert (hdr.tp_src, hdr.tp_dst, hdr.ip_proto) == (1000, 80, 6)
    assert [kind for _hdr, kind in flow.script()] == ["syn", "data"]
    assert str(flow) == "h1->h2:packets=2,proto=tcp,sport=1000,dport=80,reply=tcp"
    assert parse_flow(str(flow)) == flow


@pytest.mark.parametrize("spec,message", [
    ("h1-h2", "expected SRC->DST"),
    ("h1->h2:packets", "expected key=value"),
    ("h1->h2:colour=blue", "unknown flow option 'colour'"),
    ("h1->h2:packets=two", "packets must be a whole number"),
    ("h1->h9", "unknown destination 'h9'"),
    ("h7->h2", "unknown sender 'h7'"),
    ("h1->h1", "a host cannot send to itself"),
    ("h1->h2:packets=0", "packets must be a whole number from 1 to 1000"),
    ("h1->h2:dport=70000", "dport must be a port number"),
    ("h1->h2:proto=sctp", "proto must be one of tcp, udp"),
    ("h1->h2:reply=maybe", "reply must be one of none, echo, tcp"),
    ("h1->h2:proto=udp,reply=tcp", "a TCP handshake needs proto=tcp"),
    ("h1->broadcast:reply=tcp", "a broadcast cannot open a TCP connection"),
    ("h1->h2:target=h2", "target is for broadcast flows only"),
])
def test_bad_flows_are_input_errors(spec: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        Scenario.from_flows(LINEAR_2, [spec])


# ---- scenarios ---------------------------------------------------------------------------------

def test_a_hosts_flows_interleave_in_every_order() -> None:
    run = build("route-flow", topology="linear:2", flows=["h1->h2", "h1->h2:dport=22"], properties=[])
    net = run.network
    initial = net.initial_states()[0]
    assert [e for e in net.enabled(initial) if isinstance(e, HostSend)] == [HostSend("h1", 0), HostSend("h1", 1)]
    second_first = net.apply(initial, HostSend("h1", 1))
    (packet,) = net.value(second_first, "port:1:1")
    assert (packet.seq, packet.hdr.tp_dst) == (1, 22)  # its seq is its place in h1's script


def everything(view: View) -> bool:
    """Every packet sent to a host reached it."""
    got = {h: {(r.origin, r.seq) for r in v.received} for h, v in view.hosts.items()}
    return all((name, s.seq) in got[s.header.eth_dst] for name, v in view.hosts.items() for s in v.sent
               if s.header.eth_dst != BROADCAST)


@pytest.mark.parametrize("protocol", ["openflow", "openflow-b", "attendre"])
def test_a_tcp_handshake_and_two_senders_at_once(protocol: str) -> None:
    kinds: set[tuple[str, ...]] = set()

    def handshake(view: View) -> bool:
        kinds.add(tuple(sorted(s.kind for v in view.hosts.values() for s in v.sent)))
        return everything(view)

    result = verify("route-flow", topology="linear:2", protocol=protocol,
                    flows=["h1->h2:proto=tcp,sport=1000,dport=80,reply=tcp", "h2->h1:proto=udp,dport=53,reply=none"],
                    properties=["delivery", at_quiescence("handshake", handshake)])
    assert result.ok and result.complete
    # SYN, SYN-ACK, ACK and the one-way UDP packet, in every execution.
    assert kinds == {("ack", "oneway", "syn", "syn-ack")}


def test_an_arp_like_broadcast_is_answered_by_its_target_only() -> None:
    def answered(view: View) -> bool:
        return [r.origin for r in view.hosts["h1"].received] == ["h2"] and view.hosts["h3"].sent == ()

    import networkx as nx

    star = nx.Graph()
    star.add_edges_from(("s1", h) for h in ("h1", "h2", "h3"))
    result = verify("mac-learning", topology=star, flows=["h1->broadcast:target=h2"],
                    properties=["no-forgotten-packets", at_quiescence("answered", answered)])
    assert result.ok and result.complete


def test_the_scenario_file_gives_flows_and_moves() -> None:
    flows, moves = load_file(SCENARIOS / "web_and_dns.toml")
    assert flows == (Flow("h1", "h2", 2, "tcp", 1000, 80, reply="tcp"), Flow("h2", "h1", 1, "udp", 5353, 53))
    assert moves == (("h2", "s2"),)
    run = build("mac-learning", topology="linear:2", scenario=str(SCENARIOS / "web_and_dns.toml"), properties=[])
    spec = run.network.scenario.spec("h2")
    assert spec.moves == ((2, 3),)
    assert run.network.scenario.describe() == (
        "h1 sends 2 tcp packets to h2 (1000->80; handshake); h2 sends 1 udp packet to h1 (5353->53; each "
        "answered); h2 may move to s2:3")


@pytest.mark.parametrize("file,message", [
    ("malformed.toml", "is not valid TOML"),
    ("unknown_host.toml", "unknown destination 'h9'"),
    ("unknown_key.toml", "unknown flow option 'colour'"),
    ("missing.toml", "not found"),
])
def test_bad_scenario_files_are_one_line_errors(file: str, message: str) -> None:
    result = CliRunner().invoke(main, ["verify", "route-flow", "--scenario", str(SCENARIOS / file)])
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith("Error: ") and message in line


@pytest.mark.parametrize("args,message", [
    (["--flow", "h1->h2", "--packets", "3"], "--packets is for the app's own traffic"),
    (["--flow", "h1->h2", "--sender", "h1"], "give them or flows, not both"),
    (["--flow", "h1->h2", "--scenario", "x.toml"], "give --flow or --scenario, not both"),
    (["--flow", "h1->h1"], "a host cannot send to itself"),
])
def test_conflicting_traffic_options_are_one_line_errors(args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ["verify", "route-flow", *args])
    assert result.exit_code == 2, result.output
    assert message in result.stderr


def test_flows_from_the_command_line() -> None:
    result = CliRunner().invoke(main, ["verify", path("learning_switch.py", "LearningSwitch"), "-t", "linear:2",
                                       "--flow", "h1->h2:packets=2", "--flow", "h2->h1:proto=udp,reply=none",
                                       "-p", "delivery", "-p", "no-forgotten-packets"])
    assert result.exit_code == 0, result.output
    assert ("  traffic        h1 sends 2 packets to h2 (each answered); h2 sends 1 udp packet to h1 (no answers)"
            in result.stdout.splitlines())


def test_flow_objects_from_the_library() -> None:
    result = verify(path("learning_switch.py", "LearningSwitch"), topology="linear:2",
                    flows=[Flow("h1", "h2", packets=2), Flow("h2", "h1", proto="udp", reply="none")],
                    properties=["delivery"])
    assert result.ok and result.complete


def test_a_single_flow_string_is_one_flow() -> None:
    assert verify("route-flow", topology="linear:1", flows="h1->h2", properties=["delivery"]).ok
