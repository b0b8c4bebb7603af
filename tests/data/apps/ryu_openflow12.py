"""Ryu apps in OpenFlow 1.2 where a higher-priority entry overlaps the one a flow-mod with a
buffer id installs: the case where 1.2 differs from 1.0 (OpenFlow 1.1+ sends the buffered
packet through the flow table, as OFPP_TABLE; 1.0 applies the new entry's actions to it).

Both learn MAC addresses (a miss is a packet-in, 1.2's default table configuration) and
answer each packet-in with a flow-mod/packet-out (priority 1, match: the destination) and a
"quarantine" entry (priority 100, no actions) that drops the later packets of the source at
that switch. ``QuarantineAfter12`` sends the flow-mod/packet-out first: the packet leaves
before the quarantine entry exists. ``QuarantineFirst12`` (buggy) installs the quarantine
entry first: the buffered packet then meets it in the table and is dropped (``delivery``),
which a 1.0 switch would not do.
"""
from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import MAIN_DISPATCHER, set_ev_cls
from ryu.lib.packet import ethernet, packet
from ryu.ofproto import ofproto_v1_2


class QuarantineAfter12(app_manager.RyuApp):
    """Releases each packet, then drops its source's later packets at that switch."""

    OFP_VERSIONS = [ofproto_v1_2.OFP_VERSION]
    FIRST = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.mac_to_port = {}

    def add(self, datapath, priority, match, actions, buffer_id=None):
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)]
        datapath.send_msg(parser.OFPFlowMod(datapath=datapath, priority=priority, match=match, instructions=inst,
                                            buffer_id=ofp.OFP_NO_BUFFER if buffer_id is None else buffer_id,
                                            out_port=ofp.OFPP_ANY, out_group=ofp.OFPG_ANY))

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in_handler(self, ev):
        msg = ev.msg
        datapath = msg.datapath
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        in_port = msg.match["in_port"]
        eth = packet.Packet(msg.data).get_protocol(ethernet.ethernet)
        known = self.mac_to_port.setdefault(datapath.id, {})
        known[eth.src] = in_port
        out_port = known.get(eth.dst, ofp.OFPP_FLOOD)
        quarantine = (datapath, 100, parser.OFPMatch(eth_src=eth.src), [])
        if self.FIRST:
            self.add(*quarantine)
        self.add(datapath, 1, parser.OFPMatch(eth_dst=eth.dst), [parser.OFPActionOutput(out_port)], msg.buffer_id)
        if not self.FIRST:
            self.add(*quarantine)


class QuarantineFirst12(QuarantineAfter12):
    """Installs the quarantine entry before releasing the packet."""

    FIRST = True
