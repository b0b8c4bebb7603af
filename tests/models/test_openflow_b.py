"""OpenFlow-B (paper III.C): barriers to the following switches, the first switch waits."""
from __future__ import annotations

from nice_attendre.apps.route_flow import RouteFlow
from nice_attendre.models.events import (ControllerHandle, HostSend, SwitchProcessCommand,
                                         SwitchProcessPacket)
from nice_attendre.models.messages import BarrierReply, BarrierRequest, FlowMod, PacketIn
from nice_attendre.models.network import Network
from nice_attendre.models.scenario import Scenario
from nice_attendre.models.topology import load_topology
from nice_attendre.trace import Trace

XID = (1, ("buffer", "h1", 0, 0))  # the path install of buffered packet h1#0 at s1


def network(topology: str = "linear:3", packets: int = 1) -> Network:
    return Network(Scenario.ping(load_topology(topology), packets), RouteFlow(), "openflow-b")


def run(net: Network, *events: object) -> tuple[int, ...]:
    return Trace.from_events(net, list(events)).final


def test_following_switches_get_flow_mod_then_barrier_and_the_first_switch_waits() -> None:
    net = network()
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1))
    assert net.value(state, "cmdq:1") == ()
    for dpid in (2, 3):
        fm, barrier = net.value(state, f"cmdq:{dpid}")
        assert isinstance(fm, FlowMod) and barrier == BarrierRequest(XID)
    ((xid, waiting, dpid, messages),) = net.value(state, "platform").held
    assert (xid, waiting, dpid) == (XID, (2, 3), 1)
    assert messages[0].buffer_id == ("h1", 0, 0)


def test_held_flow_mod_packet_out_is_released_after_the_last_barrier_reply() -> None:
    net = network()
    prefix = [HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1)]
    state = run(net, *prefix, SwitchProcessCommand(3), SwitchProcessCommand(3))
    assert net.value(state, "ctrlq:3") == (BarrierReply(3, XID),)
    state = net.apply(state, ControllerHandle(3))
    assert net.value(state, "cmdq:1") == ()
    assert net.value(state, "platform").held[0].waiting == (2,)
    state = run(net, *prefix, SwitchProcessCommand(3), SwitchProcessCommand(3), ControllerHandle(3),
                SwitchProcessCommand(2), SwitchProcessCommand(2), ControllerHandle(2))
    (released,) = net.value(state, "cmdq:1")
    assert released.buffer_id == ("h1", 0, 0)
    assert net.value(state, "platform").held == ()
    # Every following switch has its entry before the packet can leave s1: no type-2 race.
    assert all(net.value(state, f"table:{d}") for d in (2, 3))


def test_no_packet_in_at_following_switches_in_any_execution() -> None:
    from nice_attendre.checker import dfs
    from nice_attendre.property import Property

    net = network(topology="linear:3", packets=2)

    first_switch = {"h1": 1, "h2": 3}

    def only_first_switch_asks(state: tuple[int, ...]) -> bool:
        return all(first_switch[m.packet.origin] == d
                   for d in (1, 2, 3) for m in net.value(state, f"ctrlq:{d}") if isinstance(m, PacketIn))

    result = dfs(net, [Property.always("packet-ins only at the first switch of each flow", only_first_switch_asks)])
    assert result.ok and result.complete
