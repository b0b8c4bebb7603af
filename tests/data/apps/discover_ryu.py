"""A Ryu-API app (OpenFlow 1.0) for the discovery tests: telnet (TCP port 23) is dropped;
frames that came in on port 1 are flooded; the others are sent out of port 1.

What discovery finds for it: the in-port branch (the sender's switch port is symbolic until
the adapter encodes the packet-in), not the telnet branch (the header fields become bytes
for os-ken's parser, which makes them concrete; see docs/discovery.md).
"""
from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import MAIN_DISPATCHER, set_ev_cls
from os_ken.lib.packet import packet, tcp
from os_ken.ofproto import ofproto_v1_0

TELNET = 23


class DiscoverRyuHub(app_manager.OSKenApp):
    """Drop telnet; flood what came in on port 1, send the rest to port 1."""

    OFP_VERSIONS = [ofproto_v1_0.OFP_VERSION]

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def handle_packet_in(self, ev):
        msg = ev.msg
        switch = msg.datapath
        ofp, parser = switch.ofproto, switch.ofproto_parser
        segment = packet.Packet(msg.data).get_protocol(tcp.tcp)
        if segment is not None and segment.dst_port == TELNET:
            actions = []
        elif msg.in_port == 1:
            actions = [parser.OFPActionOutput(ofp.OFPP_FLOOD)]
        else:
            actions = [parser.OFPActionOutput(1)]
        data = msg.data if msg.buffer_id == ofp.OFP_NO_BUFFER else None
        switch.send_msg(parser.OFPPacketOut(datapath=switch, buffer_id=msg.buffer_id, in_port=msg.in_port,
                                            actions=actions, data=data))
