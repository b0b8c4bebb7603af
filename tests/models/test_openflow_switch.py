"""The plain OpenFlow switch and platform, event by event."""
from __future__ import annotations

import networkx as nx

from nice_attendre.apps.route_flow import RouteFlow
from nice_attendre.checker import dfs
from nice_attendre.models.app import App, Out
from nice_attendre.models.events import (ControllerHandle, HostReceive, HostSend, SwitchProcessCommand,
                                         SwitchProcessPacket)
from nice_attendre.models.messages import BarrierReply, BarrierRequest, FlowMod, PacketIn, PacketOut
from nice_attendre.models.network import Network, Options
from nice_attendre.models.packet import Flood, Match, Output, Packet
from nice_attendre.models.scenario import Scenario, host_header
from nice_attendre.models.topology import load_topology
from nice_attendre.property import Property
from nice_attendre.trace import Trace


def network(app: App, topology: str = "linear:1", packets: int = 1, protocol: str = "openflow",
            monitors: frozenset[str] = frozenset()) -> Network:
    return Network(Scenario.ping(load_topology(topology), packets), app, protocol, Options(monitors=monitors))


def run(net: Network, *events: object) -> tuple[int, ...]:
    return Trace.from_events(net, list(events)).final


def test_table_miss_buffers_the_packet_and_sends_a_packet_in() -> None:
    net = network(RouteFlow())
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1))
    (buffered,) = net.value(state, "buffer:1")
    buffer_id, in_port, packet = buffered
    assert buffer_id == ("h1", 0, 0) and in_port == 1
    assert packet.trail == ((1, 1),)
    (msg,) = net.value(state, "ctrlq:1")
    assert msg == PacketIn(1, 1, ("h1", 0, 0), packet, 0, "no-match")
    assert net.value(state, "table:1") == ()


def test_flow_mod_packet_out_installs_and_releases_the_buffered_packet() -> None:
    net = network(RouteFlow())
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1))
    (cmd,) = net.value(state, "cmdq:1")
    assert isinstance(cmd, FlowMod) and cmd.buffer_id == ("h1", 0, 0) and cmd.actions == (Output(2),)
    state = net.apply(state, SwitchProcessCommand(1))
    (entry,) = net.value(state, "table:1")
    assert entry.match == Match.exact(host_header("h1", "h2")) and entry.actions == (Output(2),)
    assert net.value(state, "buffer:1") == ()
    (delivered,) = net.value(state, "inbox:h2")
    assert delivered.uid == ("h1", 0)


def test_replier_answers_and_the_reply_takes_its_own_packet_in() -> None:
    net = network(RouteFlow())
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1), SwitchProcessCommand(1),
                HostReceive("h2"))
    (reply,) = net.value(state, "port:1:2")
    assert reply.kind == "reply" and reply.hdr == host_header("h2", "h1") and reply.uid == ("h2", 0)
    assert net.received(state, "h2") == ((host_header("h1", "h2"), "h1", 0),)
    state = net.apply(state, SwitchProcessPacket(1, 2))
    (msg,) = net.value(state, "ctrlq:1")
    assert msg.packet.uid == ("h2", 0) and msg.in_port == 2


def test_second_packet_matches_the_installed_entry_without_a_packet_in() -> None:
    net = network(RouteFlow(), packets=2)
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1), SwitchProcessCommand(1),
                HostSend("h1"), SwitchProcessPacket(1, 1))
    assert net.value(state, "ctrlq:1") == ()
    assert [p.uid for p in net.value(state, "inbox:h2")] == [("h1", 0), ("h1", 1)]


def test_type_1_race_two_packet_ins_at_the_first_switch() -> None:
    """Type 1 (III.A): the second packet is processed before the flow-mod: a second packet-in."""
    net = network(RouteFlow(), packets=2)
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1), HostSend("h1"), SwitchProcessPacket(1, 1))
    assert [m.packet.uid for m in net.value(state, "ctrlq:1")] == [("h1", 0), ("h1", 1)]
    assert len(net.value(state, "buffer:1")) == 2


def test_type_2_race_packet_in_at_the_following_switch() -> None:
    """Type 2 (III.A): the packet reaches s2 before s2's flow-mod: s2 sends a packet-in."""
    net = network(RouteFlow(), topology="linear:2")
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1), SwitchProcessCommand(1),
                SwitchProcessPacket(2, 1))
    (msg,) = net.value(state, "ctrlq:2")
    assert msg.dpid == 2 and msg.packet.uid == ("h1", 0)
    (pending,) = net.value(state, "cmdq:2")
    assert isinstance(pending, FlowMod) and pending.buffer_id is None


class FloodApp(App[None]):
    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        out.packet_out(ev.dpid, [Flood()], buffer_id=ev.buffer_id, in_port=ev.in_port)
        return state


def test_packet_out_flood_sends_out_of_every_other_port() -> None:
    graph = nx.Graph()
    graph.add_edges_from([("h1", "s1"), ("s1", "h2"), ("s1", "h3")])
    scenario = Scenario.ping(load_topology(graph), 1, "h1", "h2")
    net = Network(scenario, FloodApp())
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1))
    (cmd,) = net.value(state, "cmdq:1")
    assert isinstance(cmd, PacketOut) and cmd.buffer_id == ("h1", 0, 0)
    state = net.apply(state, SwitchProcessCommand(1))
    assert [p.uid for p in net.value(state, "inbox:h2")] == [("h1", 0)]
    assert [p.uid for p in net.value(state, "inbox:h3")] == [("h1", 0)]
    assert net.value(state, "inbox:h1") == ()
    # h3 is not the destination: it ignores the copy (no reply, nothing received).
    state = net.apply(state, HostReceive("h3"))
    assert net.received(state, "h3") == () and net.value(state, "port:1:3") == ()


class DropApp(App[None]):
    """Releases the packet with no actions: a deliberate drop."""

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        out.packet_out(ev.dpid, [], buffer_id=ev.buffer_id)
        return state


class DeadPortApp(App[None]):
    """Sends the packet out of a port with nothing attached (the topology has a spare port 3)."""

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        out.packet_out(ev.dpid, [Output(3)], buffer_id=ev.buffer_id)
        return state


def test_a_deliberate_drop_is_no_black_hole() -> None:
    events = (HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1), SwitchProcessCommand(1))
    net = network(DropApp(), monitors=frozenset({"no-black-holes"}))
    state = run(net, *events)
    assert net.alerts(state) == ()
    assert net.narrate(Trace.from_events(net, list(events[:-1])).final, events[-1])[1][-1] == (
        "s1 drops data h1#0 [h1->h2] (its actions send it nowhere)")


def test_a_dead_port_is_a_black_hole_only_when_monitored() -> None:
    events = (HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1), SwitchProcessCommand(1))
    scenario = Scenario.ping(load_topology("linear:2").with_spare_port(1), 1)
    quiet = Network(scenario, DeadPortApp())
    assert quiet.alerts(run(quiet, *events)) == ()
    net = Network(scenario, DeadPortApp(), options=Options(monitors=frozenset({"no-black-holes"})))
    state = run(net, *events)
    ((kind, detail),) = net.alerts(state)
    assert kind == "no-black-holes" and detail.endswith("s1 dropped h1#0 [h1->h2] on its way to h2: "
                                                      "nothing is attached to port 3")


class NoSuchPortApp(App[None]):
    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        out.packet_out(ev.dpid, [Output(9)], buffer_id=ev.buffer_id)
        return state


def test_an_output_to_a_port_that_does_not_exist_is_an_app_error() -> None:
    net = network(NoSuchPortApp())
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1))
    ((kind, detail),) = net.alerts(state)
    assert kind == "app-exception"
    assert detail == "NoSuchPortApp sent packet-out -> output:9 to s1, which has no port 9 (ports: 1, 2)"


class BackToInPort(App[None]):
    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        out.packet_out(ev.dpid, [Output(ev.in_port)], buffer_id=ev.buffer_id, in_port=ev.in_port)
        return state


def test_output_to_the_in_port_is_not_sent() -> None:
    net = network(BackToInPort(), monitors=frozenset({"no-black-holes"}))
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1), SwitchProcessCommand(1))
    assert net.value(state, "inbox:h1") == ()
    assert [a[0] for a in net.alerts(state)] == ["no-black-holes"]


def test_a_packet_coming_back_to_a_port_is_a_loop() -> None:
    net = network(RouteFlow(), monitors=frozenset({"no-forwarding-loops"}))
    looping = Packet(host_header("h1", "h2"), "h1", 0, trail=((1, 1),))
    state = net.encode({"port:1:1": (looping,)})
    state = net.apply(state, SwitchProcessPacket(1, 1))
    ((kind, detail),) = net.alerts(state)
    assert kind == "no-forwarding-loops" and "s1:1" in detail
    assert net.value(state, "ctrlq:1") == () and net.value(state, "buffer:1") == ()


def test_barrier_request_is_answered_in_order() -> None:
    net = network(RouteFlow())
    fm = FlowMod(Match.of(eth_dst="h2"), (Output(2),))
    state = net.encode({"cmdq:1": (fm, BarrierRequest(("x",)))})
    state = net.apply(state, SwitchProcessCommand(1))
    assert net.value(state, "ctrlq:1") == ()
    state = net.apply(state, SwitchProcessCommand(1))
    assert net.value(state, "ctrlq:1") == (BarrierReply(1, ("x",)),)
    assert len(net.value(state, "table:1")) == 1


class Raiser(App[None]):
    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        raise KeyError("no route")


def test_an_app_exception_is_an_alert_not_a_crash() -> None:
    net = network(Raiser())
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1))
    ((kind, detail),) = net.alerts(state)
    assert kind == "app-exception"
    assert "Raiser.on_packet_in raised KeyError: 'no route'" in detail
    assert net.value(state, "cmdq:1") == ()


def test_enabled_order_is_by_kind_then_fields() -> None:
    net = network(RouteFlow(), topology="linear:2", packets=2)
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1))
    assert net.enabled(state) == [HostSend("h1"), ControllerHandle(1)]
    state = run(net, HostSend("h1"), HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1))
    assert net.enabled(state) == [SwitchProcessPacket(1, 1), SwitchProcessCommand(1), SwitchProcessCommand(2)]


def test_route_flow_delivers_everything_in_every_complete_execution() -> None:
    """At every quiescent state of linear:3 with 2 packets, h2 got both and h1 both replies."""
    net = network(RouteFlow(), topology="linear:3", packets=2)
    def delivered(state: tuple[int, ...]) -> bool:
        return (sorted(o for _h, o, _s in net.received(state, "h2")) == ["h1", "h1"]
                and sorted(o for _h, o, _s in net.received(state, "h1")) == ["h2", "h2"])

    result = dfs(net, [Property.at_quiescence("delivered", delivered)])
    assert result.ok and result.complete
