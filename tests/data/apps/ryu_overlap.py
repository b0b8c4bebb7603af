"""Ryu apps (OpenFlow 1.3) that add entries with OFPFF_CHECK_OVERLAP.

At switch features ``OverlapAware13`` installs its table-miss entry and a priority-10 entry
sending h1's packets (eth_src h1) to the controller; then, with CHECK_OVERLAP, a priority-10
entry flooding packets to h2 (eth_dst h2), which overlaps the first (h1 -> h2 matches both):
the switch refuses it with an error naming the flow-mod's xid, and the app's
EventOFPErrorMsg handler checks the xid and records the error.
``OverlapUnaware13`` (buggy) asserts that no error ever comes.
"""
from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from ryu.ofproto import ofproto_v1_3


class OverlapAware13(app_manager.RyuApp):
    """Records the flow-mods its switches refused (``self.refused``: (dpid, type, code))."""

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.refused = []
        self.checked = {}

    def add(self, datapath, priority, match, actions, flags=0):
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)]
        mod = parser.OFPFlowMod(datapath=datapath, priority=priority, match=match, instructions=inst, flags=flags)
        datapath.send_msg(mod)
        return mod.xid

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features_handler(self, ev):
        datapath = ev.msg.datapath
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        to_controller = [parser.OFPActionOutput(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)]
        self.add(datapath, 0, parser.OFPMatch(), to_controller)
        self.add(datapath, 10, parser.OFPMatch(eth_src="00:00:00:00:00:01"), to_controller)
        xid = self.add(datapath, 10, parser.OFPMatch(eth_dst="00:00:00:00:00:02"),
                       [parser.OFPActionOutput(ofp.OFPP_FLOOD)], flags=ofp.OFPFF_CHECK_OVERLAP)
        self.checked[datapath.id] = xid  # the xid an error about the checked flow-mod names

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in_handler(self, ev):
        msg = ev.msg
        datapath = msg.datapath
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        datapath.send_msg(parser.OFPPacketOut(datapath=datapath, buffer_id=msg.buffer_id,
                                              in_port=msg.match["in_port"],
                                              actions=[parser.OFPActionOutput(ofp.OFPP_FLOOD)], data=msg.data))

    @set_ev_cls(ofp_event.EventOFPErrorMsg, MAIN_DISPATCHER)
    def error_handler(self, ev):
        msg = ev.msg
        assert msg.xid == self.checked[msg.datapath.id], (msg.xid, self.checked)
        self.refused.append((msg.datapath.id, msg.type, msg.code))


class OverlapUnaware13(OverlapAware13):
    """Assumes its flow-mods are never refused."""

    @set_ev_cls(ofp_event.EventOFPErrorMsg, MAIN_DISPATCHER)
    def error_handler(self, ev):
        raise AssertionError(f"s{ev.msg.datapath.id} refused a flow-mod (type {ev.msg.type}, code {ev.msg.code})")
