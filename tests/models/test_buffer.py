"""Switch buffers (papers/003, Li et al.), branch by branch: a finite packet buffer (full: the
packet-in carries the whole packet, no buffer id), flow-granularity buffering (one packet-in
per flow, release in order), its timeout, and which apps cope with unbuffered packet-ins."""
from __future__ import annotations

from typing import Any

import pytest

from nice_attendre import verify
from nice_attendre.apps.route_flow import RouteFlow
from nice_attendre.errors import InputError
from nice_attendre.models.app import App, Hop, Out
from nice_attendre.models.events import ControllerHandle, HostSend, SwitchProcessCommand, SwitchProcessPacket
from nice_attendre.models.messages import FlowMod, PacketIn, PacketOut
from nice_attendre.models.network import Network
from nice_attendre.models.packet import Match, Output, Packet
from nice_attendre.models.protocols.buffer import FlowBufferTimeout, flow_buffer_id
from nice_attendre.models.scenario import Scenario, host_header
from nice_attendre.models.topology import load_topology
from nice_attendre.trace import Trace

HDR = host_header("h1", "h2")
FLOW = flow_buffer_id(HDR)


def network(protocol: str, packets: int = 2, topology: str = "linear:2", app: App[Any] | None = None) -> Network:
    return Network(Scenario.ping(load_topology(topology), packets), app or RouteFlow(), protocol)


def run(net: Network, *events: object) -> tuple[int, ...]:
    return Trace.from_events(net, list(events)).final


def packet(seq: int) -> Packet:
    return Packet(HDR, "h1", seq, trail=((1, 1),))


TWO_MISSES = (HostSend("h1"), HostSend("h1"), SwitchProcessPacket(1, 1), SwitchProcessPacket(1, 1))


class Careful(RouteFlow):
    """Route-flow that handles packet-ins without buffer id itself: it installs the path and
    sends the packet back in a packet-out of its own (not through ``install_path``)."""

    name = ""

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        path = out.topology.path(ev.dpid, ev.packet.hdr.eth_dst)
        buffered = ev.buffer_id is not None
        out.install_path([Hop(d, Match.exact(ev.packet.hdr), (Output(p),)) for d, p in path],
                         packet_in=ev if buffered else None)
        if not buffered:
            out.packet_out(ev.dpid, [Output(path[0][1])], in_port=ev.in_port, packet=ev.packet)
        return state


# ---- packet granularity ----------------------------------------------------------------------

def test_a_free_unit_buffers_the_packet_and_the_packet_in_carries_its_id() -> None:
    net = network("buffer:capacity=2")
    state = run(net, *TWO_MISSES)
    assert [bid for bid, _port, _p in net.value(state, "buffer:1")] == [("h1", 0, 0), ("h1", 1, 0)]
    assert [m.buffer_id for m in net.value(state, "ctrlq:1")] == [("h1", 0, 0), ("h1", 1, 0)]


def test_a_full_buffer_sends_the_whole_packet_without_buffer_id() -> None:
    net = network("buffer:capacity=1")
    state = run(net, *TWO_MISSES[:3])
    after = net.apply(state, SwitchProcessPacket(1, 1))
    assert [bid for bid, _port, _p in net.value(after, "buffer:1")] == [("h1", 0, 0)]  # still one
    first, second = net.value(after, "ctrlq:1")
    assert first.buffer_id == ("h1", 0, 0)
    assert second == PacketIn(1, 1, None, Packet(HDR, "h1", 1, trail=((1, 1),)))
    assert net.narrate(state, SwitchProcessPacket(1, 1))[1][0] == (
        "s1: table miss for data h1#1 [h1->h2] from port 1; no free buffer unit (capacity 1): the packet-in "
        "carries the whole packet")


def test_capacity_zero_is_no_buffer() -> None:
    net = network("buffer:capacity=0")
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1))
    assert net.value(state, "buffer:1") == ()
    (msg,) = net.value(state, "ctrlq:1")
    assert msg.buffer_id is None and msg.packet.uid == ("h1", 0)


def test_a_released_unit_is_free_again() -> None:
    net = network("buffer:capacity=1", app=Careful())
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1), SwitchProcessCommand(1))
    assert net.value(state, "buffer:1") == ()
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1), SwitchProcessCommand(1),
                SwitchProcessPacket(2, 1))
    assert [bid for bid, _port, _p in net.value(state, "buffer:2")] == [("h1", 0, 0)]  # s2's own unit


def test_default_capacity_is_the_papers_buffer_16_and_behaves_as_openflow() -> None:
    plain = verify("route-flow", topology="linear:3", packets=2, protocol="openflow", properties=[])
    buffered = verify("route-flow", topology="linear:3", packets=2, protocol="buffer", properties=[])
    assert buffered.stats.counts() == plain.stats.counts() == (13107, 4934, 8174, 40)


# ---- apps and a packet-in without buffer id ------------------------------------------------------
# (Found with this variant: the shipped apps used to lose the packet or raise. install_path now
# sends the packet a packet-in carried along the first hop, and MAC learning sends it on.)

@pytest.mark.parametrize("app,options", [
    ("route-flow", {"topology": "linear:3", "packets": 2, "properties": ["delivery", "no-forgotten-packets"]}),
    ("mac-learning", {"topology": "linear:1", "packets": 2, "app_options": {"mobile": False},
                      "properties": ["delivery", "no-forgotten-packets", "strict-direct-paths"]}),
    ("energy-te", {"packets": 1, "properties": ["delivery", "no-forgotten-packets", "intended-paths"]}),
])
@pytest.mark.parametrize("capacity", [0, 1])
def test_the_shipped_apps_deliver_packets_that_come_without_a_buffer_id(app: str, options: dict,
                                                                         capacity: int) -> None:
    result = verify(app, protocol=f"buffer:capacity={capacity}", **options)
    assert result.ok and result.complete


def test_an_app_that_sends_the_packet_back_delivers_it() -> None:
    for capacity in (0, 1):
        result = verify(Careful(), topology="linear:3", packets=2, protocol=f"buffer:capacity={capacity}",
                        properties=["delivery", "no-forgotten-packets"])
        assert result.ok and result.complete


# ---- flow granularity (Algorithm 1) ----------------------------------------------------------

def test_first_packet_of_a_flow_is_buffered_under_the_flows_id() -> None:
    net = network("buffer:granularity=flow")
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1))
    assert FLOW == ("flow", "10.0.0.1", 0, "10.0.0.2", 0, 0)
    assert net.value(state, "ext:1") == ((FLOW, ((1, packet(0)),)),)
    assert net.value(state, "buffer:1") == ()
    assert net.value(state, "ctrlq:1") == (PacketIn(1, 1, FLOW, packet(0)),)


def test_a_later_packet_of_a_buffered_flow_is_queued_without_packet_in() -> None:
    net = network("buffer:granularity=flow")
    state = run(net, *TWO_MISSES)
    assert net.value(state, "ext:1") == ((FLOW, ((1, packet(0)), (1, packet(1)))),)
    assert len(net.value(state, "ctrlq:1")) == 1
    assert net.buffered_packets(state) == [(1, packet(0)), (1, packet(1))]


def test_another_flow_gets_its_own_buffer_and_packet_in() -> None:
    from nice_attendre.apps.energy_te import EnergyTE

    app = EnergyTE()
    topology = load_topology("paths:2,3")
    net = Network(app.scenario(topology, 2), app, "buffer:granularity=flow")
    dpid, port = topology.host_port["h1"]
    state = run(net, HostSend("h1"), HostSend("h1"), SwitchProcessPacket(dpid, port), SwitchProcessPacket(dpid, port))
    assert [bid for bid, _queue in net.value(state, f"ext:{dpid}")] == [("flow", "10.0.0.1", 1000, "10.0.0.2", 80, 0),
                                                                        ("flow", "10.0.0.1", 1001, "10.0.0.2", 80, 0)]
    assert len(net.value(state, f"ctrlq:{dpid}")) == 2


def test_the_flow_mod_packet_out_releases_every_packet_of_the_flow_in_order() -> None:
    net = network("buffer:granularity=flow")
    state = run(net, *TWO_MISSES, ControllerHandle(1))
    (cmd,) = net.value(state, "cmdq:1")
    assert isinstance(cmd, FlowMod) and cmd.buffer_id == FLOW
    after = net.apply(state, SwitchProcessCommand(1))
    assert net.value(after, "ext:1") == ()
    assert [p.uid for p in net.value(after, "port:2:1")] == [("h1", 0), ("h1", 1)]
    assert net.narrate(state, SwitchProcessCommand(1))[1][1] == (
        "s1 releases the 2 packets of flow buffer 10.0.0.1:0->10.0.0.2:0 with output:2")


def test_a_packet_out_releases_the_flow_too_and_an_empty_flow_buffer_releases_nothing() -> None:
    net = network("buffer:granularity=flow")
    queued = ((FLOW, ((1, packet(0)), (1, packet(1)))),)
    state = net.encode({"ext:1": queued, "cmdq:1": (PacketOut((Output(2),), FLOW, 1),) * 2})
    once = net.apply(state, SwitchProcessCommand(1))
    assert [p.uid for p in net.value(once, "port:2:1")] == [("h1", 0), ("h1", 1)]
    twice = net.apply(once, SwitchProcessCommand(1))
    assert net.value(twice, "port:2:1") == net.value(once, "port:2:1")
    assert net.narrate(once, SwitchProcessCommand(1))[1][-1] == (
        "s1: flow buffer 10.0.0.1:0->10.0.0.2:0 is empty; nothing to release")


def test_a_full_flow_buffer_sends_the_whole_packet() -> None:
    net = network("buffer:granularity=flow,capacity=1")
    state = run(net, *TWO_MISSES)
    assert net.value(state, "ext:1") == ((FLOW, ((1, packet(0)),)),)
    first, second = net.value(state, "ctrlq:1")
    assert (first.buffer_id, second.buffer_id, second.packet.uid) == (FLOW, None, ("h1", 1))


def test_flow_granularity_answers_one_packet_in_per_flow_at_the_first_switch() -> None:
    result = verify("route-flow", topology="linear:1", packets=3, protocol="buffer:granularity=flow",
                    properties=["one-packet-in-per-flow", "delivery", "no-reordering"])
    assert result.ok and result.complete


# ---- the timeout (Algorithm 1 lines 12-13) ---------------------------------------------------

def test_the_timeout_event_queues_the_packet_and_sends_the_packet_in_again() -> None:
    net = network("buffer:granularity=flow,timeout=event")
    state = run(net, *TWO_MISSES[:3])
    assert FlowBufferTimeout(1, 1) in net.enabled(state)
    after = net.apply(state, FlowBufferTimeout(1, 1))
    assert net.value(after, "ext:1") == ((FLOW, ((1, packet(0)), (1, packet(1)))),)
    assert [m.buffer_id for m in net.value(after, "ctrlq:1")] == [FLOW, FLOW]
    assert net.narrate(state, FlowBufferTimeout(1, 1))[1][0].endswith("whose timeout expired: packet-in sent again")


def test_the_timeout_needs_a_buffered_flow_at_the_head() -> None:
    net = network("buffer:granularity=flow,timeout=event")
    assert not [e for e in net.enabled(run(net, HostSend("h1"))) if isinstance(e, FlowBufferTimeout)]
    never = network("buffer:granularity=flow")
    assert not [e for e in never.enabled(run(never, *TWO_MISSES[:3])) if isinstance(e, FlowBufferTimeout)]
    full = network("buffer:granularity=flow,timeout=event,capacity=1")  # no room: no queueing, no choice
    assert not [e for e in full.enabled(run(full, *TWO_MISSES[:3])) if isinstance(e, FlowBufferTimeout)]


# ---- refusals --------------------------------------------------------------------------------

def test_timeout_needs_flow_granularity() -> None:
    with pytest.raises(InputError, match="timeout=event needs granularity=flow"):
        network("buffer:timeout=event")


def test_flow_granularity_refuses_openflow_13_apps() -> None:
    class Thirteen(RouteFlow):
        openflow_version = "1.3"

    with pytest.raises(InputError, match="granularity=flow models OpenFlow 1.0 switches"):
        network("buffer:granularity=flow", app=Thirteen())
    network("buffer:capacity=1", app=Thirteen())  # packet granularity speaks both


def test_openflow_13_output_to_the_controller_obeys_the_capacity() -> None:
    from nice_attendre.models.packet import ToController

    class Miss13(App[None]):
        openflow_version = "1.3"

        def on_switch_join(self, state: None, dpid: int, out: Out) -> None:
            out.flow_mod(dpid, Match.of(), [ToController(buffered=True)], priority=0)
            return state

    for capacity, buffered in ((0, False), (1, True)):
        net = network(f"buffer:capacity={capacity}", packets=1, topology="linear:1", app=Miss13())
        state = run(net, SwitchProcessCommand(1), HostSend("h1"), SwitchProcessPacket(1, 1))
        (msg,) = net.value(state, "ctrlq:1")
        assert (msg.buffer_id is not None, len(net.value(state, "buffer:1"))) == (buffered, int(buffered))
