"""A Ryu-API hub (OpenFlow 1.0) for the coverage tests: every packet-in is flooded, but for
IPv6 frames, which it drops (the checker's hosts never send IPv6: that branch is never
taken). Its port-status handler is never called: the run injects no link fault, so no port-status.
"""
from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import MAIN_DISPATCHER, set_ev_cls
from os_ken.lib.packet import ethernet, packet
from os_ken.ofproto import ofproto_v1_0

IPV6 = 0x86DD


class CoverageHub(app_manager.OSKenApp):
    """Flood every frame but IPv6."""

    OFP_VERSIONS = [ofproto_v1_0.OFP_VERSION]

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def handle_packet_in(self, ev):
        msg = ev.msg
        switch = msg.datapath
        ofp, parser = switch.ofproto, switch.ofproto_parser
        eth = packet.Packet(msg.data).get_protocol(ethernet.ethernet)
        if eth.ethertype == IPV6:
            return
        actions = [parser.OFPActionOutput(ofp.OFPP_FLOOD)]
        data = msg.data if msg.buffer_id == ofp.OFP_NO_BUFFER else None
        switch.send_msg(parser.OFPPacketOut(datapath=switch, buffer_id=msg.buffer_id, in_port=msg.in_port,
                                            actions=actions, data=data))

    @set_ev_cls(ofp_event.EventOFPPortStatus, MAIN_DISPATCHER)
    def handle_port_status(self, ev):
        self.logger.info("port %s changed", ev.msg.desc.port_no)
