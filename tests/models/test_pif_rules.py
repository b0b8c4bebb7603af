"""Packet-in filtering with several pending flow rules and the global packet-in rate limit
(papers/002, sections 3.3, 4 and 5.1): the paper's IP-routing and NAPT configurations
expressed with ``-P pif:rules=...``, and ``limit=global``. Also: docs/model.md and
docs/results.md say what the code does (issue 29)."""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nice_attendre import InputError, verify
from nice_attendre.apps.route_flow import RouteFlow
from nice_attendre.frontend.cli import main
from nice_attendre.models.events import HostSend, SwitchProcessPacket
from nice_attendre.models.network import Network
from nice_attendre.models.protocols import resolve
from nice_attendre.models.protocols.pif import MeterDropsPacket, PendingEntryExpires
from nice_attendre.models.scenario import Scenario
from nice_attendre.models.topology import load_topology
from nice_attendre.trace import Trace

#: The paper's IP routing (5.1, Table 2: 4 + 1 rules), in the fields the model's packets have:
#: ARP (told by its broadcast destination: its sender's hardware and protocol addresses and
#: the target's protocol address), then IPv4 (Ethernet and IP addresses), above the
#: Ethernet switching rule of match, clone and action.
IP_ROUTING = "eth_dst:ff:ff:ff:ff:ff:ff>eth_src,ip_src,ip_dst;any>eth_src,eth_dst,ip_src,ip_dst"
ETHERNET = {"match": "any", "clone": "in_port,eth_src,eth_dst"}
#: The paper's NAPT: one rule per inside source prefix (transport ports and protocol too)
#: above the IP routing rules.
NAPT = "ip_src:10.0.0.1/32>eth_src,eth_dst,ip_src,ip_dst,tp_src,tp_dst,ip_proto;" + IP_ROUTING
#: Two UDP flows of h1 to h2 at once (no answers): the same addresses, other ports.
TWO_FLOWS = ["h1->h2:proto=udp,sport=1000,dport=53,reply=none", "h1->h2:proto=udp,sport=1001,dport=53,reply=none"]


def network(flows: list[str], **params: Any) -> Network:
    scenario = Scenario.from_flows(load_topology("linear:2"), flows)
    return Network(scenario, RouteFlow(), resolve("pif", {**ETHERNET, "expire": "never", **params}))


def run(net: Network, *events: object) -> tuple[int, ...]:
    return Trace.from_events(net, list(events)).final


# ---- the parameter -------------------------------------------------------------------------------

def test_rules_from_text_and_from_the_library_are_the_same() -> None:
    text = resolve("pif", {"rules": "ip_src:10.0.0.7/24>eth_src,tp_src>drop;any>eth_dst"})
    mapping = resolve("pif", {"rules": [{"match": {"ip_src": "10.0.0.0/24"}, "clone": ["tp_src", "eth_src"],
                                         "action": "drop"}, {"match": {}, "clone": ["eth_dst"]}]})
    assert text == mapping
    assert dict(text.params)["rules"] == (((("ip_src", "10.0.0.0/24"),), ("eth_src", "tp_src"), "drop"),
                                          ((), ("eth_dst",), None))
    label = text.label()
    assert "rules=ip_src:10.0.0.0/24>eth_src,tp_src>drop;any>eth_dst,limit=none" in label
    assert resolve(label) == text  # a report's label parses back to the same configuration
    assert resolve("pif").label().endswith(",remove=flow-mod,rules=none,limit=none")


@pytest.mark.parametrize("rules,message", [
    ("any", "rule 'any' is not MATCH>CLONE or MATCH>CLONE>ACTION"),
    ("any>eth_src>drop>x", "is not MATCH>CLONE or MATCH>CLONE>ACTION"),
    ("any>vlan", "'vlan' is not one of them"),
    ("eth_src:10.0.0.0/8>eth_src", "only ip_src and ip_dst take a prefix"),
    ("ip_src:10.0.0.0/99>eth_src", "bad IPv4 prefix"),
    ("any>eth_src>maybe", "protocol pif: bad value"),
    ("in_port:x>eth_src", "in_port takes a whole number"),
])
def test_bad_rules_are_input_errors(rules: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        resolve("pif", {"rules": rules})


def test_rules_on_the_command_line() -> None:
    result = CliRunner().invoke(main, ["verify", "route-flow", "-t", "linear:2", "-p", "no-forwarding-loops", "-P",
                                       f"pif:rules={NAPT},match=any,clone=in_port,eth_src,eth_dst,limit=global"])
    assert result.exit_code == 0, result.output
    assert (f"  protocol       pif:clone=in_port,eth_src,eth_dst,match=any,action=rate-limit,expire=event,"
            f"remove=flow-mod,rules={NAPT},limit=global") in result.stdout.splitlines()
    bad = CliRunner().invoke(main, ["verify", "route-flow", "-P", "pif:rules=any"])
    assert bad.exit_code == 2 and len(bad.stderr.splitlines()) == 1 and "Traceback" not in bad.output


# ---- several rules: the highest matching one, each with its own pending table --------------------

def test_the_paper_s_ip_routing_rules_record_by_the_rule_a_packet_matches() -> None:
    net = network(["h1->broadcast:target=h2", "h1->h2:reply=none"], rules=IP_ROUTING, action="drop")
    assert [rule.clone for rule in net.protocol.rules] == [
        ("eth_src", "ip_src", "ip_dst"), ("eth_src", "eth_dst", "ip_src", "ip_dst"),
        ("in_port", "eth_src", "eth_dst")]
    state = run(net, HostSend("h1", 0), HostSend("h1", 1), SwitchProcessPacket(1, 1), SwitchProcessPacket(1, 1))
    arp, ipv4, ethernet = net.value(state, "ext:1")
    assert arp == (("h1", "10.0.0.1", "10.0.0.2"),)  # the ARP-like request, by the first rule
    assert ipv4 == (("h1", "h2", "10.0.0.1", "10.0.0.2"),)  # the unicast packet, by the second
    assert ethernet == ()  # every packet of the model is an IPv4 one: the last rule takes none
    assert len(net.value(state, "ctrlq:1")) == 2  # each was the first of its pending table
    expire = net.enabled(state)
    assert PendingEntryExpires(1, 0, arp[0]) not in expire  # expire=never


def test_ip_routing_filters_a_second_flow_napt_keeps_it() -> None:
    """Paper 6.4: with clone fields of Ethernet and IP addresses, the first packet of a second
    flow between the same hosts may be lost (here: dropped as a repeat); NAPT's rule records
    the ports too, so both flows reach the controller."""
    options = dict(topology="linear:2", flows=TWO_FLOWS, properties=["delivery", "no-forgotten-packets"])
    routing = verify("route-flow", protocol="pif", protocol_options={**ETHERNET, "rules": IP_ROUTING,
                                                                     "action": "drop", "expire": "never"}, **options)
    (lost,) = routing.discoveries
    assert lost.property == "delivery" and lost.reason == "h1#1 never reached h2"
    napt = verify("route-flow", protocol="pif", protocol_options={**ETHERNET, "rules": NAPT, "action": "drop",
                                                                  "expire": "never"}, **options)
    assert napt.ok and napt.complete
    net = network(TWO_FLOWS, rules=NAPT, action="drop")
    state = run(net, HostSend("h1", 0), HostSend("h1", 1), SwitchProcessPacket(1, 1), SwitchProcessPacket(1, 1))
    assert [len(keys) for keys in net.value(state, "ext:1")] == [2, 0, 0, 0]
    assert len(net.value(state, "ctrlq:1")) == 2


def test_a_prefix_rule_takes_only_the_addresses_in_it() -> None:
    net = network(["h2->h1:reply=none"], rules="ip_src:10.0.0.1/32>tp_src")
    state = run(net, HostSend("h2"), SwitchProcessPacket(2, 2))
    assert net.value(state, "ext:2") == ((), ((2, "h2", "h1"),))  # h2 (10.0.0.2): the lower rule


# ---- the global packet-in rate limit ----------------------------------------------------------------

def test_the_global_limit_may_drop_a_first_packet_in_and_keeps_its_pending_entry() -> None:
    net = network(["h1->h2:reply=none"], limit="global", action="drop")
    state = run(net, HostSend("h1"))
    assert MeterDropsPacket(1, 1) in net.enabled(state)
    dropped = net.apply(state, MeterDropsPacket(1, 1))
    assert net.value(dropped, "ctrlq:1") == () and net.value(dropped, "buffer:1") == ()
    assert net.value(dropped, "ext:1") == (((1, "h1", "h2"),),)  # the entry was added before the limit
    assert net.narrate(state, MeterDropsPacket(1, 1))[1][0].endswith(
        "pending entry {in_port=1, eth_src=h1, eth_dst=h2} added; the global packet-in rate limit drops it")
    without = network(["h1->h2:reply=none"], action="drop")
    assert MeterDropsPacket(1, 1) not in without.enabled(run(without, HostSend("h1")))


def test_the_global_limit_loses_a_flow_that_no_rule_filters() -> None:
    options = dict(topology="linear:2", packets=1, properties=["delivery"])
    assert verify("route-flow", protocol="pif:expire=never,action=drop", **options).ok
    (lost,) = verify("route-flow", protocol="pif:expire=never,action=drop,limit=global", **options).discoveries
    assert lost.property == "delivery"
    assert any(isinstance(event, MeterDropsPacket) for event in lost.trace.events)


def test_a_flooded_repeat_is_not_metered() -> None:
    """The predefined action flood sends no packet-in: the global limit has nothing to drop."""
    net = network(["h1->h2:packets=2,reply=none"], limit="global", action="flood", rules="any>eth_src,eth_dst")
    state = run(net, HostSend("h1"), HostSend("h1"), SwitchProcessPacket(1, 1))
    assert MeterDropsPacket(1, 1) not in net.enabled(state)


def test_default_counts_do_not_change() -> None:
    """rules=none and limit=none are the variant as it was (tests/models/test_variant_counts.py pins more)."""
    result = verify("route-flow", topology="linear:2", packets=2, protocol="pif:remove=never", properties=[])
    assert result.stats.counts() == (23143, 6239, 16905, 34)


# ---- the docs say what the code does ----------------------------------------------------------------

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_model_md_names_only_fields_the_code_has() -> None:
    from nice_attendre.models import messages

    text = (DOCS / "model.md").read_text()
    named = re.findall(r"`(MessageSet|FlowMod|PacketOut|PacketIn)\.(\w+)`", text)
    assert named  # the Attendre section names the message set's field
    for name, field in named:
        cls = getattr(messages, name)
        fields = cls._fields if hasattr(cls, "_fields") else tuple(f.name for f in dataclasses.fields(cls))
        assert field in fields, f"docs/model.md names {name}.{field}, which the code does not have"
    assert "order of Fig. 6" not in text  # the model installs the entry before it releases the packet
    assert "this is why" not in text and "explains in part" in text  # as results.md measures


def test_results_md_says_remove_never_is_the_prototype_and_names_the_new_rules() -> None:
    text = " ".join((DOCS / "results.md").read_text().split())
    assert "`remove=never` is what the paper's prototype does" in text
    for phrase in ("`limit=global`", "IP routing is `rules=", "Empty flow-mods are dropped",
                   "--threaded-controller any -p"):
        assert phrase in text, phrase


# ---- the parameter as an input boundary ----------------------------------------------------------------

_PIECES = st.sampled_from(["any", "eth_dst:ff:ff:ff:ff:ff:ff", "ip_src:10.0.0.1/32", "ip_src:10.0.0.0/99",
                           "in_port:1", "in_port:x", "tp_src:-1", "vlan:3", "eth_src,ip_src", "tp_src", "x", "",
                           "drop", "flood", "rate-limit", "maybe", "ip_dst:h2", ":", "eth_src:"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=st.lists(st.lists(_PIECES, min_size=0, max_size=4).map(">".join), min_size=0, max_size=3)
       .map(";".join), limit=st.sampled_from(["none", "global", "x"]))
def test_fuzzed_rules_are_runs_or_one_line_errors(rules: str, limit: str) -> None:
    result = CliRunner().invoke(main, ["verify", "route-flow", "-t", "linear:1", "-p", "no-forwarding-loops",
                                       "-P", f"pif:expire=never,limit={limit},rules={rules}"])
    assert result.exit_code in (0, 1, 2, 3, 4), (result.exit_code, result.output)
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    if result.exit_code == 2:
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
