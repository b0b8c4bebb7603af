"""OpenFlow 1.3 switch semantics (an app's ``openflow_version``), OpenFlow 1.0's modify, and
barrier requests from apps, event by event with native apps."""
from __future__ import annotations

from typing import Any, Sequence

from nice_attendre.models.app import App, Out
from nice_attendre.models.events import ControllerHandle, HostSend, SwitchProcessCommand, SwitchProcessPacket
from nice_attendre.models.messages import BarrierReply, PacketIn
from nice_attendre.models.network import Network, Options
from nice_attendre.models.packet import Action, GotoTable, Match, Output, ToController
from nice_attendre.models.scenario import Scenario
from nice_attendre.models.topology import load_topology
from nice_attendre.trace import Trace

#: (table, priority, match, actions, command) of the flow-mods an app sends when a switch joins.
Entries = Sequence[tuple[int, int, Match, Sequence[Action], str]]
EVERYTHING = Match.of()


class Scripted(App[tuple[Any, ...]]):
    """Sends ``entries`` when a switch joins; on a packet-in, records it and releases the packet
    with a flow-mod to output 2 (buffered) or a packet-out (unbuffered), then a barrier."""

    def __init__(self, version: str, entries: Entries = ()) -> None:
        self.openflow_version = version  # type: ignore[misc]  # configuration, per instance here
        self.entries = entries

    def initial_state(self) -> tuple[Any, ...]:
        return ()

    def on_switch_join(self, state: tuple[Any, ...], dpid: int, out: Out) -> tuple[Any, ...]:
        for table_id, priority, match, actions, command in self.entries:
            out.flow_mod(dpid, match, actions, priority=priority, table_id=table_id, command=command)
        return state

    def on_packet_in(self, state: tuple[Any, ...], ev: PacketIn, out: Out) -> tuple[Any, ...]:
        if ev.buffer_id is not None:
            out.flow_mod(ev.dpid, Match.of(eth_dst="h2"), [Output(2)], priority=5, buffer_id=ev.buffer_id)
        else:
            out.packet_out(ev.dpid, [Output(2)], in_port=ev.in_port, packet=ev.packet)
        out.barrier(ev.dpid, ("reply to", ev.packet.label()))
        return state + ((ev.reason, ev.table_id, ev.buffer_id),)

    def on_barrier_reply(self, state: tuple[Any, ...], ev: BarrierReply, out: Out) -> tuple[Any, ...]:
        return state + (("barrier", ev.xid),)


def network(app: App[Any]) -> Network:
    return Network(Scenario.ping(load_topology("linear:1"), 1), app, "openflow", Options())


def run(net: Network, *events: object) -> tuple[int, ...]:
    return Trace.from_events(net, list(events)).final


def commands(count: int) -> list[SwitchProcessCommand]:
    return [SwitchProcessCommand(1)] * count


def test_a_miss_without_a_table_miss_entry_drops_the_packet_in_1_3() -> None:
    net = network(Scripted("1.3"))
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1))
    assert net.value(state, "buffer:1") == () and net.value(state, "ctrlq:1") == ()
    assert net.enabled(state) == []


def test_the_same_miss_buffers_and_sends_a_packet_in_in_1_0() -> None:
    net = network(Scripted("1.0"))
    state = run(net, HostSend("h1"), SwitchProcessPacket(1, 1))
    assert len(net.value(state, "buffer:1")) == 1
    (msg,) = net.value(state, "ctrlq:1")
    assert (msg.reason, msg.buffer_id) == ("no-match", ("h1", 0, 0))


def test_the_table_miss_entry_sends_the_whole_packet_with_reason_no_match() -> None:
    net = network(Scripted("1.3", [(0, 0, EVERYTHING, [ToController()], "add")]))
    state = run(net, *commands(1), HostSend("h1"), SwitchProcessPacket(1, 1))
    assert net.value(state, "buffer:1") == ()
    (msg,) = net.value(state, "ctrlq:1")
    assert (msg.reason, msg.table_id, msg.buffer_id, msg.packet.uid) == ("no-match", 0, None, ("h1", 0))
    state = run(net, *commands(1), HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1), *commands(2),
                ControllerHandle(1))
    assert net.value(state, "inbox:h2")[0].uid == ("h1", 0)  # the packet-out carried it
    assert net.value(state, "app") == (("no-match", 0, None), ("barrier", ("reply to", "h1#0")))


def test_a_buffered_output_to_the_controller_keeps_the_packet_and_its_flow_mod_sends_it_through_the_pipeline() -> None:
    entries = [(0, 0, EVERYTHING, [ToController(buffered=True)], "add")]
    net = network(Scripted("1.3", entries))
    state = run(net, *commands(1), HostSend("h1"), SwitchProcessPacket(1, 1))
    assert [bid for bid, _port, _packet in net.value(state, "buffer:1")] == [("h1", 0, 0)]
    (msg,) = net.value(state, "ctrlq:1")
    assert (msg.reason, msg.buffer_id) == ("no-match", ("h1", 0, 0))
    _final, notes = net.narrate(run(net, *commands(1), HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1)),
                                SwitchProcessCommand(1))
    assert notes[1:] == ["s1 applies output:table to buffered data h1#0 [h1->h2]",
                         "s1: h1#0 from port 1 matches [prio 5 {eth_dst=h2} -> output:2]",
                         "s1 sends data h1#0 [h1->h2] out of port 2 to h2"]


def test_goto_table_continues_in_the_next_table_and_a_second_table_miss_entry_names_its_table() -> None:
    entries = [(0, 0, EVERYTHING, [GotoTable(1)], "add"), (1, 0, EVERYTHING, [ToController()], "add")]
    net = network(Scripted("1.3", entries))
    state = run(net, *commands(2), HostSend("h1"), SwitchProcessPacket(1, 1))
    (msg,) = net.value(state, "ctrlq:1")
    assert (msg.reason, msg.table_id) == ("no-match", 1)
    # With only table 0's entry in place the packet misses in table 1 and is dropped.
    state = run(net, *commands(1), HostSend("h1"), SwitchProcessPacket(1, 1))
    assert net.value(state, "ctrlq:1") == () and net.enabled(state) == [SwitchProcessCommand(1)]


def test_an_output_to_the_controller_of_another_entry_has_reason_action() -> None:
    entries = [(0, 0, EVERYTHING, [ToController()], "add"), (0, 7, Match.of(eth_src="h1"), [ToController()], "add")]
    net = network(Scripted("1.3", entries))
    state = run(net, *commands(2), HostSend("h1"), SwitchProcessPacket(1, 1))
    (msg,) = net.value(state, "ctrlq:1")
    assert (msg.reason, msg.table_id) == ("action", 0)


def test_modify_or_add_adds_when_nothing_is_covered_and_modify_does_not() -> None:
    match = Match.of(eth_dst="h2")
    for command, expected in (("modify-or-add", ((Output(2),),)), ("modify", ())):
        net = network(Scripted("1.0", [(0, 9, match, [Output(2)], command)]))
        table = net.value(run(net, *commands(1)), "table:1")
        assert tuple(entry.actions for entry in table) == expected
    net = network(Scripted("1.0", [(0, 9, match, [Output(2)], "add"), (0, 3, EVERYTHING, [Output(1)], "modify-or-add")]))
    (entry,) = net.value(run(net, *commands(2)), "table:1")
    assert (entry.priority, entry.actions) == (9, (Output(1),))  # covered: modified, nothing added


def test_under_attendre_the_table_miss_entry_is_the_papers_table_miss() -> None:
    """The hit adds a buffer entry; the flow's next packet waits instead of causing a packet-in,
    and is matched again once the switch has processed the answer (its message set)."""
    app = Scripted("1.3", [(0, 0, EVERYTHING, [ToController()], "add")])
    net = Network(Scenario.ping(load_topology("linear:1"), 2), app, "attendre", Options())
    state = run(net, *commands(1), HostSend("h1"), HostSend("h1"), SwitchProcessPacket(1, 1), SwitchProcessPacket(1, 1))
    (msg,) = net.value(state, "ctrlq:1")  # one packet-in: h1#1 waits
    assert (msg.reason, msg.buffer_id, msg.packet.uid) == ("no-match", None, ("h1", 0))
    buffer_entry = net.value(state, "table:1")[0]
    assert buffer_entry.buffer == (1, ("h1", 0, -1)) and buffer_entry.match.in_port == 1
    state = net.apply(state, ControllerHandle(1))
    packet_out, _barrier = net.value(state, "cmdq:1")
    assert packet_out.ms is not None and packet_out.ms.version == (1, ("h1", 0, -1)) and packet_out.ms.size == 1
    _state, notes = net.narrate(state, SwitchProcessCommand(1))
    assert notes == ["s1 applies output:2 to data h1#0 [h1->h2] (carried by the packet-out)",
                     "s1 sends data h1#0 [h1->h2] out of port 2 to h2",
                     "s1 finished message set s1/h1#0@port1; buffer actions removed",
                     "s1 re-matches waiting data h1#1 [h1->h2]",
                     "s1: h1#1 from port 1 matches [prio 0 {*} -> controller]",
                     "s1 sends h1#1 to the controller (table-miss entry); buffer entry added"]
