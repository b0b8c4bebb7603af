"""Ryu apps (OpenFlow 1.3) that send frames they build themselves in their packet-outs.

``FrameBuilder13`` is a learning switch that installs no entries: for every packet-in it
builds a new frame with os-ken's packet library from the headers it parsed (Ethernet,
IPv4, TCP: its own TTL, window and checksums, so the bytes differ from the packet-in's)
and sends it with OFP_NO_BUFFER towards the destination (flooded while unknown).

``MirroringFrameBuilder13`` (buggy) builds the frame with the Ethernet destination set to
the source's address: it comes back to the sender and never reaches the destination, which
the ``delivery`` property reports.
"""
from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from ryu.lib.packet import ethernet, ipv4, packet, tcp
from ryu.ofproto import ofproto_v1_3


class FrameBuilder13(app_manager.RyuApp):
    """Learning switch that forwards every packet as a frame it builds (see the module docstring)."""

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]
    MIRROR = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.mac_to_port = {}

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features_handler(self, ev):
        datapath = ev.msg.datapath
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        actions = [parser.OFPActionOutput(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)]
        inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)]
        datapath.send_msg(parser.OFPFlowMod(datapath=datapath, priority=0, match=parser.OFPMatch(),
                                            instructions=inst))

    def build(self, eth, ip, segment):
        """A new Ethernet/IPv4/TCP frame with the headers of the one received."""
        src, dst = (eth.src, eth.src) if self.MIRROR else (eth.src, eth.dst)
        frame = packet.Packet()
        frame.add_protocol(ethernet.ethernet(dst=dst, src=src, ethertype=eth.ethertype))
        frame.add_protocol(ipv4.ipv4(src=ip.src, dst=ip.dst, proto=ip.proto, ttl=32))
        frame.add_protocol(tcp.tcp(src_port=segment.src_port, dst_port=segment.dst_port, bits=segment.bits,
                                   window_size=1024))
        frame.serialize()
        return frame.data

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in_handler(self, ev):
        msg = ev.msg
        datapath = msg.datapath
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        in_port = msg.match["in_port"]
        received = packet.Packet(msg.data)
        eth = received.get_protocol(ethernet.ethernet)
        known = self.mac_to_port.setdefault(datapath.id, {})
        known[eth.src] = in_port
        out_port = known.get(eth.dst, ofp.OFPP_FLOOD)
        data = self.build(eth, received.get_protocol(ipv4.ipv4), received.get_protocol(tcp.tcp))
        assert data != msg.data  # (a frame of its own)
        datapath.send_msg(parser.OFPPacketOut(datapath=datapath, buffer_id=ofp.OFP_NO_BUFFER, in_port=in_port,
                                              actions=[parser.OFPActionOutput(out_port)], data=data))


class MirroringFrameBuilder13(FrameBuilder13):
    """Builds its frames addressed to their own source."""

    MIRROR = True
