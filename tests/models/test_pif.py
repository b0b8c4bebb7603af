"""Packet-in filtering (papers/002, Kotani and Okabe), branch by branch: the pending flow rules
and tables at a table miss, the predefined actions, the meter's choice, expiry, removal by
the controller's flow-mod, and the default clone fields per app."""
from __future__ import annotations

from typing import Any

import pytest

from nice_attendre.apps.energy_te import EnergyTE
from nice_attendre.apps.mac_learning import MacLearning
from nice_attendre.apps.route_flow import RouteFlow
from nice_attendre.errors import InputError
from nice_attendre.models.app import App, Out
from nice_attendre.models.events import ControllerHandle, HostSend, SwitchProcessCommand, SwitchProcessPacket
from nice_attendre.models.flowtable import make_entry
from nice_attendre.models.messages import DEFAULT_PRIORITY, FlowMod, PacketIn, PacketOut
from nice_attendre.models.network import Network
from nice_attendre.models.packet import HEADER_FIELDS, GotoTable, Match, Output, Packet
from nice_attendre.models.protocols.lookahead import head_miss
from nice_attendre.models.protocols.params import MATCH_FIELDS
from nice_attendre.models.protocols.pif import MeterDropsPacket, PendingEntryExpires
from nice_attendre.models.scenario import Scenario, host_header
from nice_attendre.models.topology import load_topology
from nice_attendre.trace import Trace

HDR = host_header("h1", "h2")
KEY = tuple(HDR)  # route-flow's clone fields are the header fields: the key is the header's values


def network(protocol: str = "pif", topology: str = "linear:2", packets: int = 2, app: App[Any] | None = None) -> Network:
    return Network(Scenario.ping(load_topology(topology), packets), app or RouteFlow(), protocol)


def run(net: Network, *events: object) -> tuple[int, ...]:
    return Trace.from_events(net, list(events)).final


def narrate(net: Network, state: tuple[int, ...], event: object) -> list[str]:
    return net.narrate(state, event)[1]


FIRST = (HostSend("h1"), HostSend("h1"), SwitchProcessPacket(1, 1))  # h1#0 missed at s1, h1#1 waiting behind it


# ---- a table miss -----------------------------------------------------------------------

def test_no_pending_rule_matches_the_packet_drops_it() -> None:
    net = network("pif:match=in_port:2")  # the rule takes packets from port 2 only; h1's come in on 1
    state = run(net, HostSend("h1"))
    after = net.apply(state, SwitchProcessPacket(1, 1))
    assert net.value(after, "ctrlq:1") == () and net.value(after, "buffer:1") == ()
    assert net.value(after, "ext:1") == ((),) and net.value(after, "port:2:1") == ()
    assert narrate(net, state, SwitchProcessPacket(1, 1))[0] == (
        "s1: table miss for data h1#0 [h1->h2] from port 1; no pending flow rule matches it")


def test_a_matching_rule_takes_the_packet() -> None:
    net = network("pif:match=in_port:1,eth_dst:h2")
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1))
    assert len(net.value(state, "ctrlq:1")) == 1


def test_pending_table_miss_adds_an_entry_buffers_and_sends_a_packet_in() -> None:
    net = network()
    state = run(net, *FIRST)
    assert net.value(state, "ext:1") == ((KEY,),)
    ((buffer_id, in_port, packet),) = net.value(state, "buffer:1")
    assert (buffer_id, in_port) == (("h1", 0, 0), 1)
    assert net.value(state, "ctrlq:1") == (PacketIn(1, 1, ("h1", 0, 0), packet),)
    assert narrate(net, run(net, *FIRST[:2]), FIRST[2])[0] == (
        "s1: table miss for data h1#0 [h1->h2] from port 1; pending entry {eth_src=h1, eth_dst=h2, ip_src=10.0.0.1, "
        "ip_dst=10.0.0.2, tp_src=0, tp_dst=0, ip_proto=0} added, buffered, packet-in sent")


def test_pending_hit_with_drop_drops_the_packet_and_adds_nothing() -> None:
    net = network("pif:action=drop")
    state = run(net, *FIRST)
    after = net.apply(state, SwitchProcessPacket(1, 1))
    assert len(net.value(after, "ctrlq:1")) == 1 and len(net.value(after, "buffer:1")) == 1
    assert net.value(after, "ext:1") == ((KEY,),)
    assert net.value(after, "port:2:1") == ()
    assert "dropped (predefined action)" in narrate(net, state, SwitchProcessPacket(1, 1))[0]
    assert MeterDropsPacket(1, 1) not in net.enabled(state)  # no choice to make


def test_pending_hit_with_flood_floods_the_packet() -> None:
    net = network("pif:action=flood")
    state = run(net, *FIRST)
    after = net.apply(state, SwitchProcessPacket(1, 1))
    (flooded,) = net.value(after, "port:2:1")
    assert flooded.uid == ("h1", 1) and flooded.trail == ((1, 1),)
    assert len(net.value(after, "ctrlq:1")) == 1 and net.value(after, "ext:1") == ((KEY,),)


def test_pending_hit_with_rate_limit_is_a_choice_between_a_packet_in_and_a_drop() -> None:
    net = network("pif:action=rate-limit")
    state = run(net, *FIRST)
    assert MeterDropsPacket(1, 1) in net.enabled(state)
    # the meter lets it through: a second packet-in, no second entry
    passed = net.apply(state, SwitchProcessPacket(1, 1))
    assert [m.packet.uid for m in net.value(passed, "ctrlq:1")] == [("h1", 0), ("h1", 1)]
    assert net.value(passed, "ext:1") == ((KEY,),) and len(net.value(passed, "buffer:1")) == 2
    # the meter drops it
    dropped = net.apply(state, MeterDropsPacket(1, 1))
    assert len(net.value(dropped, "ctrlq:1")) == 1 and len(net.value(dropped, "buffer:1")) == 1
    assert net.value(dropped, "port:1:1") == () and net.value(dropped, "ext:1") == ((KEY,),)
    assert narrate(net, state, MeterDropsPacket(1, 1))[0].endswith("the rate-limit meter drops it")
    assert str(MeterDropsPacket(1, 1)) == "s1's packet-in meter drops the packet from port 1"


def test_the_meter_event_needs_a_pending_repeat_at_the_head() -> None:
    net = network("pif:action=rate-limit")
    state = run(net, HostSend("h1"))
    assert not [e for e in net.enabled(state) if isinstance(e, MeterDropsPacket)]  # nothing pending yet
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1), SwitchProcessCommand(1),
                HostSend("h1"))
    # s1 now has the flow's entry: h1#1 hits it, no table miss, no meter
    assert not [e for e in net.enabled(state) if isinstance(e, MeterDropsPacket)]


def test_the_meter_sees_misses_behind_goto_tables() -> None:
    class GotoFirst(RouteFlow):
        def on_switch_join(self, state: None, dpid: int, out: Out) -> None:
            out.flow_mod(dpid, Match.of(), [GotoTable(1)], priority=1)
            return state

    net = network("pif", app=GotoFirst())
    state = run(net, SwitchProcessCommand(1), *FIRST)
    (msg,) = net.value(state, "ctrlq:1")
    assert msg.table_id == 1  # the miss is in table 1
    missed = head_miss(net, state, 1, 1)
    assert missed is not None and missed[1] == 1 and missed[0].uid == ("h1", 1)
    assert MeterDropsPacket(1, 1) in net.enabled(state)


# ---- expiry --------------------------------------------------------------------------------

def test_pending_entries_expire_by_an_event() -> None:
    net = network()
    state = run(net, *FIRST)
    expiry = PendingEntryExpires(1, 0, KEY)
    assert expiry in net.enabled(state)
    expired = net.apply(state, expiry)
    assert net.value(expired, "ext:1") == ((),)
    assert expiry not in net.enabled(expired)
    # the next packet of the flow is a first one again: a packet-in and a new entry
    again = net.apply(expired, SwitchProcessPacket(1, 1))
    assert len(net.value(again, "ctrlq:1")) == 2 and net.value(again, "ext:1") == ((KEY,),)
    assert narrate(net, state, expiry) == [
        "s1: pending entry {eth_src=h1, eth_dst=h2, ip_src=10.0.0.1, ip_dst=10.0.0.2, tp_src=0, tp_dst=0, ip_proto=0} expires"]


def test_pending_entries_never_expire_with_expire_never() -> None:
    net = network("pif:expire=never")
    state = run(net, *FIRST)
    assert not [e for e in net.enabled(state) if isinstance(e, PendingEntryExpires)]


# ---- the controller's flow-mod -----------------------------------------------------------------

def _answered(protocol: str) -> tuple[Network, tuple[int, ...]]:
    net = network(protocol)
    return net, run(net, *FIRST, ControllerHandle(1), SwitchProcessCommand(1))


def test_the_flow_mod_for_the_flow_removes_its_pending_entry() -> None:
    net, state = _answered("pif")
    assert net.value(state, "ext:1") == ((),)
    assert net.value(state, "buffer:1") == ()  # and the flow-mod/packet-out released the packet


def test_remove_never_keeps_the_pending_entry() -> None:
    net, state = _answered("pif:remove=never")
    assert net.value(state, "ext:1") == ((KEY,),)


@pytest.mark.parametrize(("match", "command", "removed"), [
    (Match.exact(HDR), "add", True),
    (Match.of(eth_dst="h2"), "add", True),              # covers the flow: overlaps
    (Match.of(in_port=1, eth_dst="h2", tp_dst=0), "add", True),  # the values agree where both name them
    (Match.of(eth_dst="h2", tp_dst=80), "add", False),  # another port: another flow
    (Match.exact(HDR.reversed()), "add", False),        # the answer's flow: eth_src differs
    (Match.of(in_port=2), "add", True),                 # in_port is not a clone field of route-flow's
    (Match.exact(HDR), "modify", False),                # adds nothing
    (Match.exact(HDR), "modify-or-add", True),          # OpenFlow 1.0's modify: adds when nothing is covered
    (Match.exact(HDR), "delete", False),
])
def test_which_flow_mods_remove_a_pending_entry(match: Match, command: str, removed: bool) -> None:
    net = network()
    mod = FlowMod(match, (Output(2),), command=command)
    state = net.encode({"ext:1": ((KEY,),), "cmdq:1": (mod,)})
    after = net.apply(state, SwitchProcessCommand(1))
    assert net.value(after, "ext:1") == (((),) if removed else ((KEY,),))


def test_a_modify_that_finds_its_entry_adds_nothing_and_keeps_the_pending_entry() -> None:
    net = network()
    existing = (make_entry(0, DEFAULT_PRIORITY, Match.exact(HDR), (Output(1),)),)
    mod = FlowMod(Match.exact(HDR), (Output(2),), command="modify-or-add")
    state = net.encode({"ext:1": ((KEY,),), "table:1": existing, "cmdq:1": (mod,)})
    after = net.apply(state, SwitchProcessCommand(1))
    assert net.value(after, "table:1")[0].actions == (Output(2),)
    assert net.value(after, "ext:1") == ((KEY,),)


def test_in_port_clone_field_is_compared_with_the_flow_mods_in_port() -> None:
    net = network("pif:clone=in_port,eth_dst")
    key = (1, "h2")
    for in_port, removed in ((None, True), (1, True), (2, False)):
        mod = FlowMod(Match.of(in_port=in_port, eth_dst="h2"), (Output(2),))
        state = net.encode({"ext:1": ((key,),), "cmdq:1": (mod,)})
        assert net.value(net.apply(state, SwitchProcessCommand(1)), "ext:1") == (((),) if removed else ((key,),))


# ---- clone fields ------------------------------------------------------------------------------

def test_clone_fields_by_default_follow_the_papers_table_2_by_app() -> None:
    class Mine(App[None]):
        pass

    assert network(app=MacLearning(), topology="linear:1").protocol.settings["clone"] == ("in_port", "eth_src",
                                                                                          "eth_dst")
    assert network().protocol.settings["clone"] == HEADER_FIELDS
    mine = network(app=Mine())
    assert mine.protocol.settings["clone"] == MATCH_FIELDS
    assert mine.protocol.label() == ("pif:clone=in_port,eth_src,eth_dst,ip_src,ip_dst,tp_src,tp_dst,ip_proto,match=any,"
                                     "action=rate-limit,expire=event,remove=flow-mod,rules=none,limit=none")
    assert network("pif:clone=eth_dst").protocol.settings["clone"] == ("eth_dst",)


def test_coarse_clone_fields_filter_a_different_flow_with_the_same_values() -> None:
    app = EnergyTE()
    topology = load_topology("paths:2,3")
    net = Network(app.scenario(topology, 2), app, "pif:clone=eth_src,eth_dst,action=drop")
    dpid, port = topology.host_port["h1"]
    state = run(net, HostSend("h1"), HostSend("h1"), SwitchProcessPacket(dpid, port), SwitchProcessPacket(dpid, port))
    (msg,) = net.value(state, f"ctrlq:{dpid}")  # the second SYN (another flow: other ports) is dropped
    assert msg.packet.hdr.tp_src == 1000
    assert net.value(state, f"ext:{dpid}") == ((("h1", "h2"),),)


def test_openflow_13_apps_are_refused() -> None:
    class Thirteen(RouteFlow):
        openflow_version = "1.3"

    with pytest.raises(InputError, match="protocol pif models OpenFlow 1.0 switches"):
        network(app=Thirteen())


def test_packets_from_the_controller_are_not_filtered() -> None:
    net = network("pif:action=drop")
    packet = Packet(HDR, "h1", 0, trail=((1, 1),))
    state = net.encode({"ext:1": ((KEY,),), "cmdq:1": (PacketOut((Output(2),), None, 1, packet),)})
    after = net.apply(state, SwitchProcessCommand(1))
    assert [p.uid for p in net.value(after, "port:2:1")] == [("h1", 0)]
