"""The Ryu adapter piece by piece: what apps receive (genuine wire fields), their attributes as
state, deterministic time and randomness, and every refusal naming its feature."""
from __future__ import annotations

import random
import re
import time
from collections import defaultdict
from typing import Any, Callable

import pytest
from click.testing import CliRunner
from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from os_ken.lib import hub
from os_ken.lib.packet import ethernet, ipv4, packet, tcp
from os_ken.ofproto import ofproto_v1_0, ofproto_v1_3

from nice_attendre import AppLoadError, verify
from nice_attendre.frontend.api import build
from nice_attendre.checker import dfs
from nice_attendre.frontend.cli import main
from nice_attendre.errors import UnsupportedFeature
from nice_attendre.models.network import Network
from nice_attendre.models.ryu import adapt, is_ryu_app_class
from nice_attendre.models.ryu.codec import Codec
from nice_attendre.models.ryu.env import FIXED_TIME
from nice_attendre.models.ryu.state import freeze, thaw
from nice_attendre.models.topology import load_topology

V10, V13 = [ofproto_v1_0.OFP_VERSION], [ofproto_v1_3.OFP_VERSION]


class Recorder(app_manager.OSKenApp):
    """Records what it receives; ``join(dp)`` and ``packet_in(msg)`` are hooks for the tests."""

    OFP_VERSIONS = V10

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen: list[Any] = []

    def join(self, dp: Any) -> None:
        pass

    def packet_in(self, msg: Any) -> None:
        pass

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def features(self, ev: Any) -> None:
        msg = ev.msg
        self.seen.append(("features", msg.datapath_id, msg.n_buffers, msg.n_tables, msg.msg_len))
        self.join(msg.datapath)

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def handle(self, ev: Any) -> None:
        self.packet_in(ev.msg)


def states_of(app: Any, **options: Any) -> list[Any]:
    """Every app state reachable (the frozen attributes), in exploration order."""
    run = build(app, properties=[], **{"topology": "linear:1", **options})
    net: Network = run.network
    seen: list[Any] = []

    def record(state: Any) -> bool:
        value = net.value(state, "app")
        if value not in seen:
            seen.append(value)
        return True

    from nice_attendre.property import Property

    result = dfs(net, [Property.always("record", record)])
    assert result.ok and result.complete, result.discoveries
    return seen


def seen_values(app: Any, **options: Any) -> set[Any]:
    """Everything the app appended to ``self.seen`` in any state (thawed)."""
    values = set()
    for state in states_of(app, **options):
        for name, frozen in state:
            if name == "seen":
                values.update(thaw(frozen, lambda dpid: dpid))
    return values


# ---- what the app receives ------------------------------------------------------------------

class PacketIn10(Recorder):
    def packet_in(self, msg: Any) -> None:
        frame = packet.Packet(msg.data)
        eth, ip, seg = frame.get_protocol(ethernet.ethernet), frame.get_protocol(ipv4.ipv4), frame.get_protocol(tcp.tcp)
        self.seen.append(("packet-in", msg.msg_len, msg.total_len, msg.buffer_id, msg.in_port, msg.reason,
                          eth.src, eth.dst, ip.src, ip.dst, ip.proto, seg.bits))
        dp = msg.datapath
        dp.send_msg(dp.ofproto_parser.OFPPacketOut(dp, msg.buffer_id, msg.in_port,
                                                  [dp.ofproto_parser.OFPActionOutput(dp.ofproto.OFPP_FLOOD)], None))


def test_an_openflow_1_0_packet_in_is_genuine() -> None:
    seen = seen_values(PacketIn10)
    assert ("features", 1, 256, 1, 32 + 48 * 2) in seen  # two ports, 48 bytes each
    h1 = ("packet-in", 18 + 60, 60, 1 << 24, 1, ofproto_v1_0.OFPR_NO_MATCH, "00:00:00:00:00:01",
          "00:00:00:00:00:02", "10.0.0.1", "10.0.0.2", 6, tcp.TCP_ACK)
    h2 = ("packet-in", 18 + 60, 60, 2 << 24, 2, ofproto_v1_0.OFPR_NO_MATCH, "00:00:00:00:00:02",
          "00:00:00:00:00:01", "10.0.0.2", "10.0.0.1", 6, tcp.TCP_ACK)
    assert {h1, h2} <= seen


class PacketIn13(Recorder):
    OFP_VERSIONS = V13

    def join(self, dp: Any) -> None:
        ofp, parser = dp.ofproto, dp.ofproto_parser
        self.seen.append(("ports", tuple(sorted((p.port_no, p.name.decode()) for p in dp.ports.values()))))
        actions = [parser.OFPActionOutput(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)]
        dp.send_msg(parser.OFPFlowMod(dp, priority=0, match=parser.OFPMatch(),
                                      instructions=[parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)]))

    def packet_in(self, msg: Any) -> None:
        self.seen.append(("packet-in", msg.msg_len, msg.total_len, msg.buffer_id, msg.match["in_port"], msg.reason,
                          msg.table_id, msg.cookie, len(msg.data)))
        dp = msg.datapath
        dp.send_msg(dp.ofproto_parser.OFPPacketOut(dp, msg.buffer_id, msg.match["in_port"],
                                                  [dp.ofproto_parser.OFPActionOutput(dp.ofproto.OFPP_FLOOD)],
                                                  msg.data))


def test_an_openflow_1_3_packet_in_from_the_table_miss_entry_is_genuine() -> None:
    seen = seen_values(PacketIn13, packets=1)
    assert ("ports", ((1, "s1-eth1"), (2, "s1-eth2"))) in seen
    # header 8 + fixed part 16 + match (in_port: 12, padded to 16) + 2 pad + 60-byte frame
    assert ("packet-in", 102, 60, ofproto_v1_3.OFP_NO_BUFFER, 1, ofproto_v1_3.OFPR_NO_MATCH, 0, 0, 60) in seen


def test_codec_addresses_frames_and_buffer_ids_round_trip() -> None:
    codec = Codec(load_topology("linear:2"))
    assert (codec.mac("h1"), codec.ip("10.0.0.2")) == ("00:00:00:00:00:01", "10.0.0.2")
    assert codec.host_of_mac("00:00:00:00:00:02") == "h2" and codec.host_of_ip("10.0.0.1") == "10.0.0.1"
    named = Codec(load_topology("linear:2").with_spare_port(1))
    assert named.ip("ff:ff:ff:ff:ff:ff") == "255.255.255.255"
    assert codec.host_of_mac("0A:00:00:00:00:09") == "0a:00:00:00:00:09"  # no host: matches no packet
    for buffer_id in (("h1", 0, 0), ("h2", 65535, 255), ("h1", 3, 1)):
        value = codec.buffer_int(buffer_id)
        assert value != ofproto_v1_3.OFP_NO_BUFFER and codec.buffer_key(value) == buffer_id
    assert codec.buffer_key(7) is None and codec.buffer_key(ofproto_v1_0.OFP_NO_BUFFER) is None
    with pytest.raises(UnsupportedFeature, match="does not fit 32 bits"):
        codec.buffer_int(("h1", 70000, 0))


# ---- attributes are state --------------------------------------------------------------------

def test_freeze_is_canonical_and_thaw_restores() -> None:
    value = {"b": [1, 2.5, True, b"x", None], "a": {3, 1, 2}, ("k", 1): (frozenset({"y"}),)}
    frozen = freeze(value, "self.v")
    assert frozen == freeze(dict(reversed(list(value.items()))), "self.v")  # dict order does not matter
    assert hash(frozen) == hash(freeze(value, "self.v"))
    thawed = thaw(frozen, lambda dpid: dpid)
    assert thawed == value and list(thawed) == ["a", "b", ("k", 1)]  # restored in sorted order
    assert freeze([1], "x") != freeze([True], "x") != freeze([1.0], "x")
    counts = defaultdict(int, {"h1": 2})
    restored = thaw(freeze(counts, "self.counts"), lambda dpid: dpid)
    restored["h9"] += 1
    assert isinstance(restored, defaultdict) and restored == {"h1": 2, "h9": 1}


def test_an_attribute_that_cannot_be_state_is_named() -> None:
    with pytest.raises(UnsupportedFeature, match=r"self\.table\[1\]\['h1'\] holds a builtins.object"):
        freeze({1: {"h1": object()}}, "self.table")
    with pytest.raises(UnsupportedFeature, match="defaultdict whose factory"):
        freeze(defaultdict(lambda: 0), "self.d")


class KeepsMessage(Recorder):
    def packet_in(self, msg: Any) -> None:
        self.last = msg


def test_keeping_a_message_object_is_refused_naming_the_attribute() -> None:
    """(Met in the middle of the search: it stops there, naming it; never ok.)"""
    result = verify(KeepsMessage)
    assert not result.ok and result.stop_reason == "unsupported-feature"
    assert re.search(r"self\.last holds a os_ken.ofproto.ofproto_v1_0_parser.OFPPacketIn", result.stop_detail)


class KeepsDatapaths(app_manager.OSKenApp):
    OFP_VERSIONS = V13

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.datapaths: dict[int, Any] = {}
        self.replies: list[Any] = []

    @set_ev_cls(ofp_event.EventOFPStateChange, [MAIN_DISPATCHER])
    def state_change(self, ev: Any) -> None:
        self.datapaths[ev.datapath.id] = ev.datapath

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def features(self, ev: Any) -> None:
        dp = ev.msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        actions = [parser.OFPActionOutput(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)]
        dp.send_msg(parser.OFPFlowMod(dp, priority=0, match=parser.OFPMatch(),
                                      instructions=[parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)]))

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in(self, ev: Any) -> None:
        dp = self.datapaths[ev.msg.datapath.id]  # a datapath kept in the state
        dp.send_msg(dp.ofproto_parser.OFPPortStatsRequest(dp, 0, dp.ofproto.OFPP_ANY))
        dp.send_barrier()
        data = ev.msg.data
        dp.send_msg(dp.ofproto_parser.OFPPacketOut(dp, dp.ofproto.OFP_NO_BUFFER, ev.msg.match["in_port"],
                                                  [dp.ofproto_parser.OFPActionOutput(dp.ofproto.OFPP_FLOOD)], data))

    @set_ev_cls(ofp_event.EventOFPPortStatsReply, MAIN_DISPATCHER)
    def stats(self, ev: Any) -> None:
        self.replies.append(("stats", tuple((s.port_no, s.tx_bytes, s.duration_sec) for s in ev.msg.body)))

    @set_ev_cls(ofp_event.EventOFPBarrierReply, MAIN_DISPATCHER)
    def barrier(self, ev: Any) -> None:
        self.replies.append(("barrier", ev.msg.xid))


def test_datapaths_in_state_port_statistics_per_load_class_and_barriers() -> None:
    replies = set()
    for state in states_of(KeepsDatapaths, packets=1):
        for name, frozen in state:
            if name == "replies":
                replies.update(thaw(frozen, lambda dpid: dpid))
            if name == "datapaths" and frozen[1]:
                assert frozen == ("dict", ((1, ("datapath", 1)),))
    assert ("stats", ((1, 1_000_000, 10), (2, 1_000_000, 10))) in replies  # low load
    assert ("stats", ((1, 1_000_000_000, 10), (2, 1_000_000_000, 10))) in replies  # high load
    # The datapath's third message (after the table-miss entry and the stats request); 6 after
    # a second packet-in: os-ken's xids grow per datapath over the run.
    assert {reply for reply in replies if reply[0] == "barrier"} == {("barrier", 3), ("barrier", 6)}


# ---- deterministic time and randomness --------------------------------------------------------

class Clocked(Recorder):
    def packet_in(self, msg: Any) -> None:
        self.seen.append(("clock", time.time(), time.monotonic()))
        dp = msg.datapath
        dp.send_msg(dp.ofproto_parser.OFPPacketOut(dp, msg.buffer_id, msg.in_port,
                                                  [dp.ofproto_parser.OFPActionOutput(dp.ofproto.OFPP_FLOOD)], None))


def test_time_is_the_same_in_every_handler_call() -> None:
    """(Randomness is no longer seeded: tests/models/ryu/test_ryu_features.py.)"""
    random.seed(99)
    expected_next = random.Random(99).random()
    clocks = {value for value in seen_values(Clocked) if value[0] == "clock"}
    assert len(clocks) == 1
    (clock,) = clocks
    assert clock[1] == clock[2] == FIXED_TIME
    assert random.random() == expected_next  # the caller's generator is untouched
    assert time.time() > FIXED_TIME + 10**8


# ---- refusals ---------------------------------------------------------------------------------

def sends_in_join(make: Callable[[Any], Any], versions: list[int] = V13) -> type:
    class Sender(Recorder):
        OFP_VERSIONS = versions

        def join(self, dp: Any) -> None:
            dp.send_msg(make(dp))

    return Sender


def flow_mod_13(**kwargs: Any) -> Callable[[Any], Any]:
    def make(dp: Any) -> Any:
        parser, ofp = dp.ofproto_parser, dp.ofproto
        arguments = {"match": parser.OFPMatch(), "instructions": [], **kwargs}
        for key, value in arguments.items():
            if callable(value):
                arguments[key] = value(parser, ofp)
        return parser.OFPFlowMod(dp, **arguments)
    return make


REFUSED: list[tuple[str, Callable[[Any], Any], str]] = [
    ("groups", lambda dp: dp.ofproto_parser.OFPGroupMod(dp), r"groups \(OFPGroupMod\)"),
    ("meters", lambda dp: dp.ofproto_parser.OFPMeterMod(dp), r"meters \(OFPMeterMod\)"),
    ("flow stats", lambda dp: dp.ofproto_parser.OFPFlowStatsRequest(dp), "OFPFlowStatsRequest messages"),
    ("strict", flow_mod_13(command=lambda p, o: o.OFPFC_DELETE_STRICT), "OFPFC_DELETE_STRICT"),
    ("all tables", flow_mod_13(command=lambda p, o: o.OFPFC_DELETE, table_id=lambda p, o: o.OFPTT_ALL,
                               out_port=lambda p, o: o.OFPP_ANY, out_group=lambda p, o: o.OFPG_ANY), "OFPTT_ALL"),
    ("delete by port", flow_mod_13(command=lambda p, o: o.OFPFC_DELETE), r"out_port=0x0"),
    ("masks", flow_mod_13(match=lambda p, o: p.OFPMatch(eth_dst=("00:00:00:00:00:01", "ff:ff:ff:00:00:00"))),
     "masked match fields"),
    ("arp", flow_mod_13(match=lambda p, o: p.OFPMatch(eth_type=0x0806)), r"eth_type=2054 \(every packet"),
    ("udp", flow_mod_13(match=lambda p, o: p.OFPMatch(eth_type=0x0800, ip_proto=17, udp_dst=53)), "ip_proto=17"),
    ("set-field", flow_mod_13(instructions=lambda p, o: [p.OFPInstructionActions(
        o.OFPIT_APPLY_ACTIONS, [p.OFPActionSetField(eth_dst="00:00:00:00:00:09")])]), "OFPActionSetField"),
    ("group action", flow_mod_13(instructions=lambda p, o: [p.OFPInstructionActions(
        o.OFPIT_APPLY_ACTIONS, [p.OFPActionGroup(1)])]), r"groups \(OFPActionGroup\)"),
    ("write-actions", flow_mod_13(instructions=lambda p, o: [p.OFPInstructionActions(
        o.OFPIT_WRITE_ACTIONS, [p.OFPActionOutput(1)])]), "write-actions instruction"),
    ("meter instruction", flow_mod_13(instructions=lambda p, o: [p.OFPInstructionMeter(1)]), "OFPInstructionMeter"),
    ("goto backwards", flow_mod_13(table_id=2, instructions=lambda p, o: [p.OFPInstructionGotoTable(1)]),
     "goto-table 1 from table 2"),
    ("normal", flow_mod_13(instructions=lambda p, o: [p.OFPInstructionActions(
        o.OFPIT_APPLY_ACTIONS, [p.OFPActionOutput(o.OFPP_NORMAL)])]), "output to OFPP_NORMAL"),
    ("truncated", flow_mod_13(instructions=lambda p, o: [p.OFPInstructionActions(
        o.OFPIT_APPLY_ACTIONS, [p.OFPActionOutput(o.OFPP_CONTROLLER, 0)])]), "max_len=0"),
    ("built frame", lambda dp: dp.ofproto_parser.OFPPacketOut(dp, dp.ofproto.OFP_NO_BUFFER, dp.ofproto.OFPP_CONTROLLER,
                                                            [], b"\x00" * 60), "a frame outside a packet-in handler"),
]


@pytest.mark.parametrize("make,expected", [(make, expected) for _name, make, expected in REFUSED],
                         ids=[name for name, _make, _expected in REFUSED])
def test_unsupported_messages_are_refused_naming_the_feature(make: Callable[[Any], Any], expected: str) -> None:
    with pytest.raises(UnsupportedFeature, match=expected):
        verify(sends_in_join(make))


def test_openflow_1_0_refusals() -> None:
    def flow_mod_10(dp: Any, match: Any, command: int = 0, out_port: int | None = None) -> Any:
        ofp = dp.ofproto
        return dp.ofproto_parser.OFPFlowMod(dp, match, 0, command, 0, 0, 1, ofp.OFP_NO_BUFFER,
                                            ofp.OFPP_NONE if out_port is None else out_port, 0, [])
    cases = [
        (lambda dp: flow_mod_10(dp, dp.ofproto_parser.OFPMatch(dl_type=0x86dd)), "dl_type=34525"),
        (lambda dp: flow_mod_10(dp, dp.ofproto_parser.OFPMatch(), dp.ofproto.OFPFC_MODIFY_STRICT), "MODIFY_STRICT"),
        (lambda dp: flow_mod_10(dp, dp.ofproto_parser.OFPMatch(), dp.ofproto.OFPFC_DELETE, 3), "out_port=0x3"),
        (lambda dp: dp.ofproto_parser.OFPPortStatsRequest(dp, 0, 1), r"port statistics of one port \(port_no=1\)"),
        (lambda dp: dp.ofproto_parser.OFPSetConfig(dp, 0, 40), "miss_send_len=40"),
    ]
    for make, expected in cases:
        with pytest.raises(UnsupportedFeature, match=expected):
            verify(sends_in_join(make, V10))
    # Matches on what every packet has are kept as "always true".
    ok = sends_in_join(lambda dp: flow_mod_10(dp, dp.ofproto_parser.OFPMatch(dl_type=0x0800, nw_proto=6, nw_tos=0,
                                                                            dl_dst="00:00:00:00:00:02")), V10)
    result = verify(ok, properties=[])
    assert result.complete


class Spawns(Recorder):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.thread = hub.spawn(lambda: None)


class SpawnsInStart(Recorder):
    def start(self) -> Any:
        super().start()
        return hub.spawn(lambda: None)


class StartsCleanly(Recorder):
    def start(self) -> Any:
        self.started = True
        return super().start()


class Threads(Recorder):
    def join(self, dp: Any) -> None:
        import threading

        threading.Thread(target=print).start()


class Sleeps(Recorder):
    def join(self, dp: Any) -> None:
        hub.sleep(1)


class Requests(Recorder):
    def join(self, dp: Any) -> None:
        self.send_request(object())


class WithContexts(Recorder):
    _CONTEXTS = {"dpset": object}


class Version11(Recorder):
    OFP_VERSIONS = [0x02]


@pytest.mark.parametrize("app,expected", [
    (Spawns, r"^Ryu apps: starting threads \(hub.spawn, in Spawns.__init__\)"),
    (SpawnsInStart, r"starting threads \(hub.spawn, in SpawnsInStart.start\)"),
    (Sleeps, r"blocking \(hub.sleep, time.sleep, in Sleeps.join\)"),
    (Threads, r"starting threads \(threading.Thread.start, in Threads.join\)"),
    (Requests, r"blocking requests \(send_request"),
    (WithContexts, r"contexts \(_CONTEXTS: dpset, in WithContexts\)"),
    (Version11, r"OFP_VERSIONS \[0x2\] names no OpenFlow version the checker.s switches speak"),
])
def test_what_the_model_cannot_run_is_refused(app: type, expected: str) -> None:
    with pytest.raises((UnsupportedFeature, AppLoadError), match=expected):
        verify(app)


def test_an_overridden_start_runs_once_without_threads() -> None:
    values = states_of(StartsCleanly)
    assert all(("started", ("bool", True)) in state for state in values)


def test_a_refusal_is_one_line_and_exit_code_2_on_the_cli(tmp_path: Any) -> None:
    app = tmp_path / "grouping.py"
    app.write_text(
        "from ryu.base import app_manager\n"
        "from ryu.controller import ofp_event\n"
        "from ryu.controller.handler import CONFIG_DISPATCHER, set_ev_cls\n"
        "from ryu.ofproto import ofproto_v1_3\n\n"
        "class Grouping(app_manager.RyuApp):\n"
        "    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]\n\n"
        "    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)\n"
        "    def features(self, ev):\n"
        "        dp = ev.msg.datapath\n"
        "        dp.send_msg(dp.ofproto_parser.OFPGroupMod(dp))\n")
    result = CliRunner().invoke(main, ["verify", f"{app}:Grouping"])
    assert result.exit_code == 2
    assert result.stderr == ("Error: Ryu apps: groups (OFPGroupMod, in Grouping.features) is not supported by the checker's model\n")


def test_detection_and_adapter_identity() -> None:
    assert is_ryu_app_class(Recorder) and not is_ryu_app_class(app_manager.OSKenApp)
    assert not is_ryu_app_class(dict) and not is_ryu_app_class(Recorder())
    adapted = adapt(PacketIn13)
    assert adapted is adapt(PacketIn13) and adapted.__name__ == "PacketIn13"
    assert adapted.openflow_version == "1.3" and adapt(PacketIn10).openflow_version == "1.0"
    assert adapted().describe() == "PacketIn13 (Ryu app, OpenFlow 1.3)"
    assert adapted().handled_events() == ("EventOFPSwitchFeatures", "EventOFPPacketIn")


@pytest.mark.parametrize("value", [
    {3: "a", 1: "b", 2: "c"},
    {"h2": 1, "h10": 2, "h1": 3},
    {(1, "x"): 1, (1, "a"): 2, (0, "z"): 3},
    {1: 0, "a": 0, None: 0, (1,): 0, 2.5: 0, True: 0, b"x": 0},
    {frozenset({1, 2}), frozenset({"a"}), frozenset()},
])
def test_sorting_is_the_same_whichever_way_it_is_done(value: Any) -> None:
    from nice_attendre.models.ryu.state import order

    frozen = freeze(value, "self.v")
    assert list(frozen[1]) == sorted(frozen[1], key=order)


def flow_mods_at_join(versions: list[int], commands: list[str]) -> type:
    """A Ryu app that sends flow-mods with these OFPFC_ commands (match eth_dst h2, output 2)."""
    class FlowMods(Recorder):
        OFP_VERSIONS = versions

        def join(self, dp: Any) -> None:
            ofp, parser = dp.ofproto, dp.ofproto_parser
            for name in commands:
                command = getattr(ofp, f"OFPFC_{name}")
                if ofp.OFP_VERSION == 0x01:
                    match = parser.OFPMatch(dl_dst="00:00:00:00:00:02")
                    dp.send_msg(parser.OFPFlowMod(dp, match, 0, command, 0, 0, 7, ofp.OFP_NO_BUFFER, ofp.OFPP_NONE, 0,
                                                  [parser.OFPActionOutput(2)]))
                else:
                    instructions = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, [parser.OFPActionOutput(2)])]
                    match = parser.OFPMatch(eth_dst="00:00:00:00:00:02")
                    dp.send_msg(parser.OFPFlowMod(dp, command=command, priority=7, out_port=ofp.OFPP_ANY,
                                                  out_group=ofp.OFPG_ANY, match=match, instructions=instructions))

    return FlowMods


@pytest.mark.parametrize("versions,commands,entries", [
    (V10, ["MODIFY"], 1),  # OpenFlow 1.0: a modify that finds nothing adds
    (V13, ["MODIFY"], 0),  # 1.3: it does nothing
    (V10, ["ADD", "DELETE"], 0),
    (V13, ["ADD", "DELETE"], 0),
    (V13, ["ADD", "MODIFY"], 1),
])
def test_flow_mod_commands(versions: list[int], commands: list[str], entries: int) -> None:
    from nice_attendre.models.events import SwitchProcessCommand
    from nice_attendre.trace import Trace

    net = build(flow_mods_at_join(versions, commands), topology="linear:1", packets=0, properties=[]).network
    state = Trace.from_events(net, [SwitchProcessCommand(1)] * len(commands)).final
    table = net.value(state, "table:1")
    assert len(table) == entries
    if entries:
        assert (table[0].priority, str(table[0].match), table[0].actions[0].port) == (7, "{eth_dst=h2}", 2)
