"""Flow tables as OpenFlow defines them (issue 29, section 1): where the specification
leaves a choice to the switch the checker explores every choice, where it defines the
outcome the model follows it, and where a switch refuses a request the app hears of it.

* Overlapping entries of equal priority: OpenFlow lets the switch take any of them. Ties
  were broken by the canonical order of the table, so the verdict depended on how the
  match fields were named (tests/data/apps/equal_priority.py: MirrorEth passed, the same
  entries named the other way round, MirrorIp, failed delivery). Every choice is now
  explored (models/protocols/ties.py): both fail, with the same counts.
* A MODIFY flow-mod with a buffer id applies to the buffered packet as an add does (OpenFlow
  1.0: "buffered packet to apply to"; 1.3: the flow-mod then a packet-out to TABLE); only
  deletes ignore the buffer id. The packet stayed buffered: false no-forgotten-packets and
  delivery for an app answering a repeated packet-in with a modify, under every variant.
* ``Output(TABLE)`` in a flow entry: OpenFlow allows OFPP_TABLE only in packet-outs; a
  switch answers such a flow-mod with an error, so the request is the app's finding
  (app-exception naming the call), never a crash of the checker (it recursed until exit 70).
"""
from __future__ import annotations

import pytest

from typing import Any

from nice_attendre import Trace, verify
from nice_attendre.frontend.api import build
from nice_attendre.models import flowtable
from nice_attendre.models.app import App, BadRequest, Hop, Out
from nice_attendre.models.events import HostSend, SwitchProcessCommand, SwitchProcessPacket
from nice_attendre.models.messages import TABLE
from nice_attendre.models.packet import GotoTable, Header, Match, Output, Packet, SetField, ToController
from nice_attendre.models.protocols.ties import SwitchChoosesEntry
from nice_attendre.models.topology import load_topology
from tests_data_apps import path

PROTOCOLS = ("openflow", "openflow-b", "attendre")


# ---- Output(TABLE) in a flow entry ------------------------------------------------------------

@pytest.mark.parametrize("valid", [None, set()])
@pytest.mark.parametrize("call", [
    lambda o: o.flow_mod(1, Match.of(eth_dst="h2"), [Output(TABLE)]),
    lambda o: o.flow_mod(1, Match.of(eth_dst="h2"), (Output(2), Output(TABLE)), command="modify"),
    lambda o: o.flow_mod(1, Match.of(eth_dst="h2"), [Output(TABLE)], buffer_id=("h1", 0, 0)),
    lambda o: o.install_path([Hop(1, Match.of(eth_dst="h2"), (Output(TABLE),))]),
    lambda o: o.install_path([Hop(1, Match.of(eth_dst="h2"), (Output(2),)),
                              Hop(2, Match.of(eth_dst="h2"), [Output(TABLE)])]),
], ids=["add", "modify", "with-buffer", "path", "path-hop-2"])
def test_an_entry_never_outputs_to_the_table(call, valid) -> None:
    sink = Out(load_topology("linear:2"), valid)
    if valid is not None:
        valid.add(Match.of(eth_dst="h2"))  # the fast path of a known match checks it too
    with pytest.raises(BadRequest, match=r"Output\(TABLE\) is valid only in a packet-out's actions"):
        call(sink)
    assert sink.requests == []


def test_a_packet_out_and_a_delete_may_name_the_table() -> None:
    sink = Out(load_topology("linear:2"), set())
    sink.packet_out(1, [Output(TABLE)], buffer_id=("h1", 0, 0), in_port=1)
    sink.flow_mod(1, Match.of(eth_dst="h2"), [Output(TABLE)], command="delete")  # actions ignored
    assert len(sink.requests) == 2


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_output_table_in_an_entry_is_the_apps_finding(protocol: str) -> None:
    result = verify(path("resubmit.py", "ResubmitInEntry"), topology="linear:3", packets=2, protocol=protocol)
    assert result.verdict == "violated"
    (found,) = result.discoveries
    assert found.property == "app-exception"
    assert "ResubmitInEntry.on_packet_in made a malformed request: out.flow_mod: Output(TABLE)" in found.reason


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_output_table_in_a_packet_out_is_fine(protocol: str) -> None:
    result = verify(path("resubmit.py", "ResubmitByPacketOut"), topology="linear:3", packets=2, protocol=protocol)
    assert result.ok, result.discoveries


# ---- MODIFY with a buffer id ------------------------------------------------------------------

@pytest.mark.parametrize("protocol, properties", [
    ("openflow", ["no-forgotten-packets", "delivery"]),
    ("openflow-b", ["no-forgotten-packets", "delivery"]),
    ("attendre", ["no-forgotten-packets", "delivery"]),
    ("batch", ["no-forgotten-packets", "delivery"]),
    ("buffer", ["no-forgotten-packets", "delivery"]),
    ("pif", ["no-forgotten-packets"]),  # its rate-limit meter may drop a repeat: delivery fails for any app
])
def test_a_modify_with_a_buffer_id_releases_the_packet(protocol: str, properties: list[str]) -> None:
    result = verify(path("modify_repeat.py", "ModifyRepeat"), topology="linear:3", packets=2, protocol=protocol,
                    properties=properties)
    assert result.ok, result.discoveries


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_modify_with_a_buffer_id_releases_the_packet_through_the_table_in_openflow13(protocol: str) -> None:
    result = verify(path("modify_repeat.py", "ModifyRepeat13"), topology="linear:3", packets=2, protocol=protocol,
                    properties=["no-forgotten-packets"])
    assert result.ok, result.discoveries


@pytest.mark.parametrize("protocol", ("openflow", "openflow-b", "pif", "batch", "buffer"))
def test_a_modify_without_the_buffer_id_forgets_the_packet(protocol: str) -> None:
    result = verify(path("modify_repeat.py", "ModifyForgets"), topology="linear:3", packets=2, protocol=protocol,
                    properties=["no-forgotten-packets"])
    assert result.verdict == "violated"
    assert "s1 still holds data h1#1" in result.discoveries[0].reason


def test_a_ryu_apps_modify_with_a_buffer_id_releases_the_frame() -> None:
    pytest.importorskip("os_ken")
    result = verify(path("ryu_modify.py", "ModifyLearningSwitch10"), topology="linear:2", packets=2)
    assert result.ok, result.discoveries  # it was refused: "a modify flow-mod with a buffer id", exit 2


@pytest.mark.parametrize("version", ["1.0", "1.3"])
@pytest.mark.parametrize("command", ["modify", "modify-or-add", "delete", "delete-strict"])
def test_only_a_delete_ignores_the_buffer_id(command: str, version: str) -> None:
    from nice_attendre.frontend.api import build
    from nice_attendre.models.app import App
    from nice_attendre.models.network import Tx
    from nice_attendre.models.messages import FlowMod
    from nice_attendre.models.packet import Header, Packet

    class Quiet(App[None]):
        openflow_version = version

    net = build(Quiet(), topology="linear:2", properties=[]).network
    state = net.initial_states()[0]
    packet = Packet(Header("h1", "h2", "10.0.0.1", "10.0.0.2"), "h1", 0)
    tx = Tx(net, state)
    protocol = net.protocol
    buffer_id = protocol.buffer_packet(tx, 1, 1, packet)
    if version == "1.3":  # the packet goes through the table: an entry must send it on
        protocol.install(tx, 1, FlowMod(Match.of(), (Output(2),), priority=0))
    protocol.flow_mod(tx, 1, FlowMod(Match.of(eth_dst="h2"), (Output(2),), buffer_id=buffer_id, command=command))
    still_buffered = bool(tx.get(net.slot_buffer[1]))
    assert still_buffered == command.startswith("delete")
    assert bool(tx.get(net.slot_port[(2, 1)])) != still_buffered  # released: on its way to s2


# ---- equal-priority ties ------------------------------------------------------------------------

H1_TO_H2 = Header("h1", "h2", "10.0.0.1", "10.0.0.2")


@pytest.mark.parametrize("protocol", PROTOCOLS + ("batch", "buffer"))
def test_the_equal_priority_pair_fails_whichever_way_its_fields_are_named(protocol: str) -> None:
    runs = {app: verify(path("equal_priority.py", app), packets=2, protocol=protocol, keep_going=True)
            for app in ("MirrorEth", "MirrorIp")}
    for app, result in runs.items():
        assert result.verdict == "violated", app
        reasons = [found.reason for found in result.discoveries if found.property == "delivery"]
        assert any("addressed to h2, to h3" in reason for reason in reasons), (app, reasons)
    eth, ip = runs["MirrorEth"].stats, runs["MirrorIp"].stats
    assert (eth.transitions, eth.unique_states) == (ip.transitions, ip.unique_states)  # the same search


@pytest.mark.parametrize("protocol", PROTOCOLS + ("batch", "buffer"))
def test_entries_of_distinct_priorities_do_not_tie(protocol: str) -> None:
    result = verify(path("equal_priority.py", "MirrorBelow"), packets=2, protocol=protocol)
    assert result.ok, result.discoveries


@pytest.mark.parametrize("options", [{"memo": False}, {"fingerprint": True}, {"command_order": "any"},
                                     {"threaded_controller": True}], ids=str)
def test_ties_are_explored_in_every_search_mode(options: dict[str, Any]) -> None:
    runs = [verify(path("equal_priority.py", app), packets=2, keep_going=True, **options)
            for app in ("MirrorEth", "MirrorIp")]
    assert [run.verdict for run in runs] == ["violated", "violated"]
    assert runs[0].stats.transitions == runs[1].stats.transitions


def test_a_large_network_finds_the_same_ties(monkeypatch: pytest.MonkeyPatch) -> None:
    from nice_attendre.models import network

    small = verify(path("equal_priority.py", "MirrorIp"), packets=2, keep_going=True)
    monkeypatch.setattr(network, "INCREMENTAL_SLOTS", 0)
    large = verify(path("equal_priority.py", "MirrorIp"), packets=2, keep_going=True)
    assert large.system.incremental and not small.system.incremental
    assert large.stats.counts() == small.stats.counts()


def _net(app: App, topology: str = "star:3") -> Any:
    return build(app, topology=topology, packets=1, sender="h1", receiver="h2", properties=["delivery"]).network


class Tables(App[None]):
    """Installs ``entries`` (table, priority, match, actions) at every switch when it joins."""

    def __init__(self, entries: list[tuple[int, int, Match, list[Any]]], version: str = "1.0") -> None:
        self.entries = entries
        self.openflow_version = version  # type: ignore[misc]  # configuration, per instance here

    def on_switch_join(self, state: None, dpid: int, out: Out) -> None:
        for table_id, priority, match, actions in self.entries:
            out.flow_mod(dpid, match, actions, priority=priority, table_id=table_id)
        return state


def _installed(net: Any) -> Any:
    """The state after h1 sent its packet and s1 installed every entry."""
    state = net.initial_states()[0]
    while SwitchProcessCommand(1) in net.enabled(state):
        state = net.apply(state, SwitchProcessCommand(1))
    return net.apply(state, HostSend("h1"))


def _outcomes(net: Any, state: Any) -> dict[Any, set[str]]:
    """For each event processing s1's head packet: where the packet went (the hosts or
    switch ports whose queues it reached, or "buffered")."""
    found = {}
    for event in net.enabled(state):
        if isinstance(event, SwitchProcessPacket) or (isinstance(event, SwitchChoosesEntry)
                                                       and event.base == "SwitchProcessPacket"):
            after = net.apply(state, event)
            found[event] = {name for name in net.slot_names if name.startswith(("inbox:", "port:"))
                            and net.value(after, name) != net.value(state, name)} - {"port:1:1"}
    return found


def test_every_choice_at_a_tie_is_a_transition_and_alike_entries_are_one() -> None:
    entries = [(0, 100, Match.of(eth_dst="h2"), [Output(2)]), (0, 100, Match.of(ip_src="10.0.0.1"), [Output(3)]),
               (0, 100, Match.of(tp_dst=0), [Output(2)])]  # like the first: not a choice of its own
    net = _net(Tables(entries))
    outcomes = _outcomes(net, _installed(net))
    assert sorted(map(sorted, outcomes.values())) == [["inbox:h2"], ["inbox:h3"]]
    assert SwitchChoosesEntry(1, "SwitchProcessPacket", (1,), (1,)) in outcomes


def test_choices_at_successive_tables_are_combined() -> None:
    """A tie in table 0 whose entries go to different tables, one of which ties again: three
    ways, (first, first), (first, second) and (second)."""
    entries = [(0, 10, Match.of(eth_dst="h2"), [GotoTable(1)]), (0, 10, Match.of(ip_src="10.0.0.1"), [GotoTable(2)]),
               (1, 5, Match.of(ip_dst="10.0.0.2"), [Output(2)]), (1, 5, Match.of(eth_src="h1"), [Output(3)]),
               (2, 5, Match.of(), [SetField("eth_dst", "h3"), Output(3)])]
    net = _net(Tables(entries, "1.3"))
    outcomes = _outcomes(net, _installed(net))
    assert {event.choices if isinstance(event, SwitchChoosesEntry) else () for event in outcomes} == {
        (), (0, 1), (1,)}
    assert sorted(map(sorted, outcomes.values())) == [["inbox:h2"], ["inbox:h3"], ["inbox:h3"]]


def test_a_packet_resubmitted_by_a_packet_out_meets_the_tie_too() -> None:
    net = build(path("equal_priority.py", "MirrorEth"), packets=1, properties=["delivery"]).network
    events = [HostSend("h1"), SwitchProcessPacket(1, 1), SwitchProcessCommand(1), SwitchProcessCommand(1),
              SwitchProcessCommand(1)]
    from nice_attendre.models.events import ControllerHandle

    state = Trace.from_events(net, events + [ControllerHandle(1)]).final
    choice = SwitchChoosesEntry(1, "SwitchProcessCommand", (0, 0), (1,))
    assert net.enabled(state) == [SwitchProcessCommand(1), choice]
    assert net.received(net.apply(state, SwitchProcessCommand(1)), "h2") == ()  # on its way: in h2's inbox
    assert net.value(net.apply(state, choice), "inbox:h3") and not net.value(net.apply(state, choice), "inbox:h2")
    _after, lines = net.narrate(state, choice)
    assert ("s1: h1#0 from port 1 matches 2 entries of priority 100 that do different things ([prio 100 "
            "{eth_dst=h2} -> output:2]; [prio 100 {ip_src=10.0.0.1} -> output:3]); OpenFlow leaves the choice to "
            "the switch: it takes the 2nd") in lines


def test_the_tie_event_round_trips_through_a_saved_trace() -> None:
    from nice_attendre.models.event_codec import decode_event, encode_event

    result = verify(path("equal_priority.py", "MirrorEth"), packets=1)
    (found,) = result.discoveries
    steps = [step.event for step in found.trace.steps]
    chosen = [event for event in steps if isinstance(event, SwitchChoosesEntry)]
    assert chosen, steps
    net = result.system
    for event in chosen:
        assert decode_event(encode_event(event), net.event_types()) == event
    assert found.trace.replay(net) == found.trace.final


def test_openflow_10s_exact_match_entry_still_wins() -> None:
    exact = Match.exact(H1_TO_H2, 1)
    table = tuple(sorted([flowtable.make_entry(0, 100, Match.of(eth_dst="h2"), (Output(2),)),
                          flowtable.make_entry(0, 100, Match.of(ip_src="10.0.0.1"), (Output(3),)),
                          flowtable.make_entry(0, 1, exact, (ToController(),))], key=flowtable._order))
    assert table[flowtable.candidates(table, 0, H1_TO_H2, 1, exact_first=True)].match == exact
    tied = flowtable.candidates(table, 0, H1_TO_H2, 1)
    assert isinstance(tied, tuple) and [table[i].priority for i in tied] == [100, 100]
    assert flowtable.candidates(table, 0, H1_TO_H2, 2, exact_first=True) == tied  # the exact one needs port 1
    assert flowtable.candidates(table, 0, Header("h1", "h3", "10.0.0.9", "10.0.0.3"), 2) == -1


@pytest.mark.parametrize("one, other, overlap", [
    (Match.of(eth_dst="h2"), Match.of(ip_src="10.0.0.1"), True),
    (Match.of(eth_dst="h2"), Match.of(eth_dst="h3"), False),
    (Match.of(ip_dst="10.0.0.0/8"), Match.of(ip_dst="10.0.0.2"), True),
    (Match.of(ip_dst="10.0.0.0/24"), Match.of(ip_dst="10.1.0.0/16"), False),
    (Match.of(ip_dst="10.0.0.0/24"), Match.of(ip_dst="10.0.0.0/8"), True),
    (Match.of(in_port=1), Match.of(in_port=2), False),
    (Match.of(in_port=1), Match.of(eth_src="h1"), True),
])
def test_which_matches_overlap(one: Match, other: Match, overlap: bool) -> None:
    assert flowtable.overlap(one, other) is overlap and flowtable.overlap(other, one) is overlap
    entries = [flowtable.make_entry(0, 7, one, (Output(1),)), flowtable.make_entry(0, 7, other, (Output(2),))]
    assert flowtable.may_tie(tuple(sorted(entries, key=flowtable._order))) is overlap
    alike = [flowtable.make_entry(0, 7, one, (Output(1),)), flowtable.make_entry(0, 7, other, (Output(1),))]
    assert not flowtable.may_tie(tuple(sorted(alike, key=flowtable._order)))


@pytest.mark.parametrize("app, topology", [("route-flow", "linear:3"), ("mac-learning", "linear:2"),
                                           ("energy-te", None)])
def test_the_shipped_apps_never_tie(app: str, topology: str | None) -> None:
    result = verify(app, topology=topology, packets=2, max_transitions=20_000)
    ties = result.system.protocol.ties
    assert ties.checked > 0 and not ties.tying


def test_pifs_meter_is_offered_with_the_choices_that_reach_it() -> None:
    """A rate-limit meter may drop a repeated packet where it misses: at a tie whose first
    entry forwards it and whose second sends it to a table that misses, the meter's drop
    comes with the second choice (and only with it)."""
    entries = [(0, 10, Match.of(eth_src="h1"), [Output(2)]), (0, 10, Match.of(ip_dst="10.0.0.2"), [GotoTable(1)])]
    net = build(Tables(entries), topology="star:3", packets=2, sender="h1", receiver="h2", protocol="pif",
                properties=[]).network
    packet = Packet(H1_TO_H2, "h1", 1)
    key = net.protocol.rules[0].key(H1_TO_H2, 1)
    state = net.encode({"port:1:1": (packet,), "ext:1": ((key,),)}, base=_installed(net))
    ways = [event for event in net.enabled(state) if getattr(event, "port", None) == 1 or isinstance(
        event, SwitchChoosesEntry)]
    assert ways == [SwitchProcessPacket(1, 1), SwitchChoosesEntry(1, "SwitchProcessPacket", (1,), (1,)),
                    SwitchChoosesEntry(1, "MeterDropsPacket", (1,), (1,))]
    dropped = net.apply(state, ways[2])
    assert net.value(dropped, "port:1:1") == () and not net.value(dropped, "ctrlq:1")[len(net.value(state, "ctrlq:1")):]
    assert "the rate-limit meter drops it" in " ".join(net.narrate(state, ways[2])[1])


def test_a_meter_reached_by_the_first_choice_only_is_not_offered_with_the_others() -> None:
    entries = [(0, 10, Match.of(eth_dst="h2"), [GotoTable(1)]), (0, 10, Match.of(ip_src="10.0.0.1"), [Output(2)])]
    net = build(Tables(entries), topology="star:3", packets=2, sender="h1", receiver="h2", protocol="pif",
                properties=[]).network
    key = net.protocol.rules[0].key(H1_TO_H2, 1)
    state = net.encode({"port:1:1": (Packet(H1_TO_H2, "h1", 1),), "ext:1": ((key,),)}, base=_installed(net))
    from nice_attendre.models.protocols.pif import MeterDropsPacket

    ways = [event for event in net.enabled(state) if getattr(event, "port", None) == 1 or isinstance(
        event, SwitchChoosesEntry)]
    assert ways == [SwitchProcessPacket(1, 1), SwitchChoosesEntry(1, "SwitchProcessPacket", (1,), (1,)),
                    MeterDropsPacket(1, 1)]


def test_buffers_flow_timeout_is_offered_with_the_choices_that_reach_it() -> None:
    from nice_attendre.models.protocols.buffer import flow_buffer_id

    entries = [(0, 10, Match.of(eth_src="h1"), [Output(2)]), (0, 10, Match.of(ip_dst="10.0.0.2"), [GotoTable(1)])]
    net = build(Tables(entries), topology="star:3", packets=2, sender="h1", receiver="h2",
                protocol="buffer:granularity=flow,timeout=event", properties=[]).network
    first, second = Packet(H1_TO_H2, "h1", 0), Packet(H1_TO_H2, "h1", 1)
    buffers = ((flow_buffer_id(H1_TO_H2), ((1, first),)),)
    state = net.encode({"port:1:1": (second,), "ext:1": buffers}, base=_installed(net))
    ways = [event for event in net.enabled(state) if getattr(event, "port", None) == 1 or isinstance(
        event, SwitchChoosesEntry)]
    assert ways == [SwitchProcessPacket(1, 1), SwitchChoosesEntry(1, "SwitchProcessPacket", (1,), (1,)),
                    SwitchChoosesEntry(1, "FlowBufferTimeout", (1,), (1,))]
    _after, lines = net.narrate(state, ways[2])
    assert any("whose timeout expired: packet-in sent again" in line for line in lines), lines
