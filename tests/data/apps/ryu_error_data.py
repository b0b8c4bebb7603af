"""Ryu apps (OpenFlow 1.3) that read the refused request out of an error message's data.

At switch features ``ErrorReader13`` installs its table-miss entry, a priority-10 entry for
h1's packets, and, with OFPFF_CHECK_OVERLAP, a priority-10 entry for packets to h2, which
overlaps it: the switch refuses it with an error whose data are the first 64 bytes of the
flow-mod. The app parses them with os-ken (header, then the flow-mod's priority and its
match, which begins in the first 64 bytes) and records which entry was refused.
``ErrorMisreader13`` (buggy) expects a packet-out in the data.
"""
import struct

from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from ryu.ofproto import ofproto_parser, ofproto_v1_3


class ErrorReader13(app_manager.RyuApp):
    """Records the (dpid, priority, xid) of each refused flow-mod, read from the error's data."""

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]
    EXPECTED = "OFPT_FLOW_MOD"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.refused = []

    def add(self, datapath, priority, match, actions, flags=0):
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)]
        datapath.send_msg(parser.OFPFlowMod(datapath=datapath, priority=priority, match=match, instructions=inst,
                                            flags=flags))

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features_handler(self, ev):
        datapath = ev.msg.datapath
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        to_controller = [parser.OFPActionOutput(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)]
        self.add(datapath, 0, parser.OFPMatch(), to_controller)
        self.add(datapath, 10, parser.OFPMatch(eth_src="00:00:00:00:00:01"), to_controller)
        self.add(datapath, 10, parser.OFPMatch(eth_dst="00:00:00:00:00:02"), [parser.OFPActionOutput(ofp.OFPP_FLOOD)],
                 flags=ofp.OFPFF_CHECK_OVERLAP)

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
        ofp = msg.datapath.ofproto
        assert len(msg.data) >= 64, len(msg.data)
        version, msg_type, _length, xid = ofproto_parser.header(msg.data)
        assert version == ofp.OFP_VERSION and msg_type == getattr(ofp, self.EXPECTED), (version, msg_type)
        assert xid == msg.xid
        # ofp_flow_mod: header, cookie, cookie_mask, table_id, command, idle, hard, priority, ...
        priority = struct.unpack_from("!H", msg.data, 8 + 8 + 8 + 1 + 1 + 2 + 2)[0]
        assert priority == 10, priority  # (the overlapping entry's)
        self.refused.append((msg.datapath.id, priority, xid))


class ErrorMisreader13(ErrorReader13):
    """Expects the refused request to be a packet-out."""

    EXPECTED = "OFPT_PACKET_OUT"
