"""A learning switch written against the Ryu API (OpenFlow 1.0) that installs its entries with
OFPFC_MODIFY carrying the packet-in's buffer id: OpenFlow applies the flow-mod's actions to
the buffered frame, as for an add (1.0's modify adds the entry when none is covered)."""
from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import MAIN_DISPATCHER, set_ev_cls
from ryu.lib.packet import ethernet, packet
from ryu.ofproto import ofproto_v1_0


class ModifyLearningSwitch10(app_manager.RyuApp):
    """Learns the port of each source; a known destination gets a MODIFY flow-mod with the buffer id."""

    OFP_VERSIONS = [ofproto_v1_0.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.port_of = {}  # dpid -> {MAC address: port}

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def handle_packet_in(self, ev):
        msg = ev.msg
        switch = msg.datapath
        ofp, parser = switch.ofproto, switch.ofproto_parser
        eth = packet.Packet(msg.data).get_protocol(ethernet.ethernet)
        known = self.port_of.setdefault(switch.id, {})
        known[eth.src] = msg.in_port
        if eth.dst in known and msg.buffer_id != ofp.OFP_NO_BUFFER:
            switch.send_msg(parser.OFPFlowMod(
                switch, match=parser.OFPMatch(dl_dst=eth.dst), cookie=0, command=ofp.OFPFC_MODIFY, idle_timeout=0,
                hard_timeout=0, priority=ofp.OFP_DEFAULT_PRIORITY, buffer_id=msg.buffer_id, out_port=ofp.OFPP_NONE,
                flags=0, actions=[parser.OFPActionOutput(known[eth.dst])]))
            return
        data = msg.data if msg.buffer_id == ofp.OFP_NO_BUFFER else None
        switch.send_msg(parser.OFPPacketOut(switch, buffer_id=msg.buffer_id, in_port=msg.in_port,
                                            actions=[parser.OFPActionOutput(ofp.OFPP_FLOOD)], data=data))
