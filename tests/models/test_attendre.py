"""Attendre (paper IV.C, Figs. 5-7), branch by branch, and its platform."""
from __future__ import annotations

from nice_attendre.apps.route_flow import RouteFlow
from nice_attendre.models.app import App, Out
from nice_attendre.models.events import (ControllerHandle, HostSend, SwitchProcessCommand,
                                         SwitchProcessPacket)
from nice_attendre.models.flowtable import make_entry
from nice_attendre.models.messages import (BUFFER_PRIORITY, DEFAULT_PRIORITY, FlowMod, MessageSet,
                                           PacketIn, PacketOut)
from nice_attendre.models.network import Network
from nice_attendre.models.packet import AttendreCommand, Match, Output, Packet
from nice_attendre.models.protocols.attendre import AttendreState, SetProgress
from nice_attendre.models.scenario import Scenario, host_header
from nice_attendre.models.topology import load_topology
from nice_attendre.trace import Trace

HDR = host_header("h1", "h2")
M = Match.exact(HDR)
V = (1, ("h1", 0, 0))  # the version of the set answering s1's packet-in for h1#0
KEY = (0, DEFAULT_PRIORITY, M)


def network(topology: str = "linear:3", packets: int = 1, app: App | None = None) -> Network:
    return Network(Scenario.ping(load_topology(topology), packets), app or RouteFlow(), "attendre")


def run(net: Network, *events: object) -> tuple[int, ...]:
    return Trace.from_events(net, list(events)).final


def ac_for(dpid: int, version: tuple = V, size: int = 1) -> AttendreCommand:
    return AttendreCommand(dpid, M, DEFAULT_PRIORITY, 0, version, size)


def packet(seq: int = 0, ac: AttendreCommand | None = None, trail: tuple = ((1, 1),)) -> Packet:
    return Packet(HDR, "h1", seq, trail=trail, ac=ac)


def arrive_at_s2(net: Network, **slots: object) -> tuple[int, ...]:
    """s2 processes h1#0 carrying the AC for s2, in a state with the given slots."""
    state = net.encode({"port:2:1": (packet(ac=ac_for(2)),), **slots})
    return net.apply(state, SwitchProcessPacket(2, 1))


# ---- Fig. 5: a packet carrying an Attendre Command --------------------------------------

def test_fig5_line12_unknown_set_adds_a_buffer_entry_and_buffers_the_packet() -> None:
    net = network()
    state = arrive_at_s2(net)
    assert net.value(state, "table:2") == (make_entry(0, DEFAULT_PRIORITY, M, None, buffer=V, version=V),)
    ext = net.value(state, "ext:2")
    assert ext.sets == (SetProgress(V, 1, 0, 0),)
    assert ext.waits == ((KEY, ((1, packet(trail=((1, 1), (2, 1)))),)),)
    assert net.value(state, "ctrlq:2") == ()  # no packet-in: the type-2 race is gone


def test_fig5_lines6_7_older_entry_has_its_actions_replaced_by_buffer() -> None:
    net = network()
    old = make_entry(0, DEFAULT_PRIORITY, M, (Output(2),))
    state = arrive_at_s2(net, **{"table:2": (old,)})
    assert net.value(state, "table:2") == (old._replace(actions=None, buffer=V, version=V),)
    assert net.value(state, "port:3:1") == ()
    assert len(net.value(state, "ext:2").waits) == 1


def test_fig5_lines8_9_same_version_unfinished_set_appends_buffer() -> None:
    net = network()
    same = make_entry(0, DEFAULT_PRIORITY, M, (Output(2),), version=V)
    ext = AttendreState(sets=(SetProgress(V, 2, 1, 1),))
    state = arrive_at_s2(net, **{"table:2": (same,), "ext:2": ext})
    assert net.value(state, "table:2") == (same._replace(buffer=V),)
    assert net.value(state, "ext:2").sets == (SetProgress(V, 2, 1, 0),)
    assert net.value(state, "port:3:1") == ()


def test_fig5_newer_entry_ignores_an_older_command() -> None:
    net = network()
    newer = (2, ("h1", 5, 0))
    entry = make_entry(0, DEFAULT_PRIORITY, M, (Output(2),), version=newer)
    state = arrive_at_s2(net, **{"table:2": (entry,)})
    assert net.value(state, "table:2") == (entry,)
    (forwarded,) = net.value(state, "port:3:1")
    assert forwarded.uid == ("h1", 0) and forwarded.ac is None


def test_fig5_line4_finished_set_ignores_the_command_and_forgets_the_set() -> None:
    net = network()
    entry = make_entry(0, DEFAULT_PRIORITY, M, (Output(2),))
    ext = AttendreState(sets=(SetProgress(V, 1, 1, 1),))
    state = arrive_at_s2(net, **{"table:2": (entry,), "ext:2": ext})
    assert net.value(state, "ext:2") == AttendreState()
    assert net.value(state, "table:2") == (entry,)
    (forwarded,) = net.value(state, "port:3:1")
    assert forwarded.ac is None


def test_fig5_a_command_for_another_switch_is_stripped() -> None:
    net = network()
    state = net.encode({"port:2:1": (packet(ac=ac_for(3)),)})
    state = net.apply(state, SwitchProcessPacket(2, 1))
    assert net.value(state, "ext:2") == AttendreState()
    (msg,) = net.value(state, "ctrlq:2")
    assert msg.packet.ac is None


def test_fig5_lines21_24_miss_adds_a_highest_priority_buffer_entry() -> None:
    net = network(packets=2)
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1))
    (entry,) = net.value(state, "table:1")
    assert entry == make_entry(0, BUFFER_PRIORITY, Match.exact(HDR, 1), None, buffer=V, version=V)
    assert len(net.value(state, "ctrlq:1")) == 1
    # The second packet of the flow waits at the buffer entry instead of a second packet-in.
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1), HostSend("h1"), SwitchProcessPacket(1, 1))
    assert len(net.value(state, "ctrlq:1")) == 1
    ((key, waiting),) = net.value(state, "ext:1").waits
    assert key == entry.key and [p.uid for _port, p in waiting] == [("h1", 1)]


# ---- the platform ---------------------------------------------------------------------

def test_platform_assigns_version_size_and_chains_commands_along_the_path() -> None:
    net = network()
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1))
    (fm1,) = net.value(state, "cmdq:1")
    (fm2,) = net.value(state, "cmdq:2")
    (fm3,) = net.value(state, "cmdq:3")
    assert fm1.buffer_id == ("h1", 0, 0) and fm1.ms == MessageSet(V, 1, 0) and fm1.ac == ac_for(2)
    assert fm2.buffer_id is None and fm2.ms == MessageSet(V, 1, 1) and fm2.ac == ac_for(3)
    assert fm3.ms == MessageSet(V, 1, 1) and fm3.ac is None


# ---- Figs. 6 and 7: commands ----------------------------------------------------------

def test_fig6_flow_mod_packet_out_encapsulates_and_releases_waiting_packets_in_order() -> None:
    net = network(packets=3)
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1), HostSend("h1"), SwitchProcessPacket(1, 1),
                HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1), SwitchProcessCommand(1))
    sent = net.value(state, "port:2:1")
    assert [p.uid for p in sent] == [("h1", 0), ("h1", 1), ("h1", 2)]
    assert [p.ac for p in sent] == [ac_for(2), None, None]  # the AC rides on the first packet only
    (entry,) = net.value(state, "table:1")  # the buffer entry is gone, the version forgotten
    assert entry == make_entry(0, DEFAULT_PRIORITY, M, (Output(2),))
    assert net.value(state, "ext:1") == AttendreState()
    assert net.value(state, "buffer:1") == ()


def test_fig6_flow_mod_adds_an_encap_action_used_once() -> None:
    net = network(packets=2)
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1), SwitchProcessCommand(2))
    (entry,) = net.value(state, "table:2")
    assert entry.encap == ac_for(3) and entry.actions == (Output(2),) and entry.buffer is None
    assert net.value(state, "ext:2").sets == (SetProgress(V, 1, 1, 1),)  # finished, AC still to come
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1), SwitchProcessCommand(2),
                SwitchProcessCommand(1), SwitchProcessPacket(2, 1))
    (first,) = net.value(state, "port:3:1")
    assert first.ac == ac_for(3)
    (entry,) = net.value(state, "table:2")
    assert entry.encap is None
    assert net.value(state, "ext:2") == AttendreState()  # the AC came: the set is forgotten


def test_fig6_both_orders_at_a_following_switch_reach_the_same_state() -> None:
    net = network()
    prefix = [HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1), SwitchProcessCommand(1)]
    command_first = run(net, *prefix, SwitchProcessCommand(2), SwitchProcessPacket(2, 1))
    packet_first = run(net, *prefix, SwitchProcessPacket(2, 1), SwitchProcessCommand(2))
    assert command_first == packet_first
    (forwarded,) = net.value(packet_first, "port:3:1")
    assert forwarded.ac == ac_for(3)


class TwoMessages(App[None]):
    """Answers a packet-in with a flow-mod and then a packet-out: a message set of size 2."""

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        port = out.topology.next_port(ev.dpid, ev.packet.hdr.eth_dst)
        out.flow_mod(ev.dpid, Match.exact(ev.packet.hdr), [Output(port)])
        out.packet_out(ev.dpid, [Output(port)], buffer_id=ev.buffer_id, in_port=ev.in_port)
        return state


def test_fig6_7_buffer_stays_until_the_last_message_of_the_set() -> None:
    net = network(topology="linear:1", packets=2, app=TwoMessages())
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1), HostSend("h1"), SwitchProcessPacket(1, 1),
                ControllerHandle(1))
    fm, po = net.value(state, "cmdq:1")
    assert isinstance(fm, FlowMod) and isinstance(po, PacketOut)
    assert fm.ms == po.ms == MessageSet(V, 2, 0)
    state = net.apply(state, SwitchProcessCommand(1))  # the flow-mod: 1 of 2
    assert net.value(state, "inbox:h2") == ()
    assert net.value(state, "ext:1").sets == (SetProgress(V, 2, 1, 0),)
    assert any(e.buffer == V for e in net.value(state, "table:1"))
    state = net.apply(state, SwitchProcessCommand(1))  # the packet-out: the set is finished
    assert [p.uid for p in net.value(state, "inbox:h2")] == [("h1", 0), ("h1", 1)]
    assert net.value(state, "ext:1") == AttendreState()
    assert all(e.buffer is None for e in net.value(state, "table:1"))


def test_fig7_packet_out_with_a_command_encapsulates_it() -> None:
    net = network()
    held = packet()
    state = net.encode({
        "buffer:1": ((("h1", 0, 0), 1, held),),
        "table:1": (make_entry(0, BUFFER_PRIORITY, Match.exact(HDR, 1), None, buffer=V, version=V),),
        "cmdq:1": (PacketOut((Output(2),), ("h1", 0, 0), 1, None, MessageSet(V, 1, 0), ac_for(2)),),
    })
    state = net.apply(state, SwitchProcessCommand(1))
    (sent,) = net.value(state, "port:2:1")
    assert sent.ac == ac_for(2)
    assert net.value(state, "table:1") == ()  # Fig. 7 line 7: the buffer entry is removed


# ---- several paths through one switch in one message set ----------------------------------

def both_ways() -> App:
    from tests_data_apps import load

    return load("both_ways.py", "BothWays")()


def test_two_paths_through_a_switch_plan_two_acs_for_it() -> None:
    net = network(app=both_ways())
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1))
    sets = {dpid: {m.ms for m in net.value(state, f"cmdq:{dpid}")} for dpid in (1, 2, 3)}
    # s2 lies on both paths after another hop: two ACs of the set reach it; s1 and s3 one each.
    assert sets == {1: {MessageSet(V, 2, 1)}, 2: {MessageSet(V, 2, 2)}, 3: {MessageSet(V, 2, 1)}}


def test_a_finished_set_is_kept_until_its_last_ac() -> None:
    net = network()
    installed = (make_entry(0, DEFAULT_PRIORITY, M, (Output(2),)),)
    ext = AttendreState(sets=(SetProgress(V, 1, 1, 2),))  # finished, two ACs still due
    state = arrive_at_s2(net, **{"ext:2": ext, "table:2": installed})
    assert net.value(state, "ext:2").sets == (SetProgress(V, 1, 1, 1),)  # one AC still due
    assert net.value(state, "table:2") == installed  # the stale AC adds no buffer action
    assert [p.uid for p in net.value(state, "port:3:1")] == [("h1", 0)]
    state = net.apply(net.encode({"port:2:1": (packet(seq=1, ac=ac_for(2)),)}, state), SwitchProcessPacket(2, 1))
    assert net.value(state, "ext:2") == AttendreState()  # the last AC came: forgotten
    assert net.value(state, "table:2") == installed
    assert [p.uid for p in net.value(state, "port:3:1")] == [("h1", 0), ("h1", 1)]


def test_an_early_ac_counts_the_acs_its_set_sends() -> None:
    net = network()
    state = net.encode({"port:2:1": (packet(ac=ac_for(2)._replace(acs=2)),)})
    state = net.apply(state, SwitchProcessPacket(2, 1))
    assert net.value(state, "ext:2").sets == (SetProgress(V, 1, 0, 1),)


def test_both_ways_app_delivers_everything_under_attendre() -> None:
    """Issue 8: the second AC used to open a set that never finished, stranding the reply."""
    from nice_attendre import verify

    result = verify(both_ways(), topology="linear:3", packets=1, protocol="attendre",
                    properties=["no-forgotten-packets", "no-black-holes"])
    assert result.ok and result.complete
