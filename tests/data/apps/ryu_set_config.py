"""Ryu apps (OpenFlow 1.3) that configure their switches with OFPSetConfig at switch features.

``ConfiguredSwitch13`` asks for IP fragments to be reassembled (OFPC_FRAG_REASM: the model's
packets are never fragments, so it has no effect) and packet-ins of up to 128 bytes (the
model's frames are 60 bytes: they come whole), then learns MAC addresses and floods like
Ryu's simple_switch_13 (without entries). Its packet-in handler checks that the frames come
whole.

``ShortMissSwitch13`` asks for packet-ins of 40 bytes, a literal in its code: the model does
not truncate frames, so it is refused when loaded. ``ComputedMissSwitch13`` computes the
same length at run time (from the switch's dpid), which only the search meets: the run
stops there and reports what it explored.
"""
from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from ryu.lib.packet import ethernet, packet
from ryu.ofproto import ofproto_v1_3


class ConfiguredSwitch13(app_manager.RyuApp):
    """Learning switch (no entries) that configures fragment handling and miss_send_len."""

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.mac_to_port = {}

    def configure(self, datapath):
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        datapath.send_msg(parser.OFPSetConfig(datapath, ofp.OFPC_FRAG_REASM, 128))

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features_handler(self, ev):
        datapath = ev.msg.datapath
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        self.configure(datapath)
        actions = [parser.OFPActionOutput(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)]
        inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)]
        datapath.send_msg(parser.OFPFlowMod(datapath=datapath, priority=0, match=parser.OFPMatch(),
                                            instructions=inst))

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in_handler(self, ev):
        msg = ev.msg
        datapath = msg.datapath
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        assert msg.total_len == len(msg.data)  # (whole frames)
        in_port = msg.match["in_port"]
        eth = packet.Packet(msg.data).get_protocol(ethernet.ethernet)
        known = self.mac_to_port.setdefault(datapath.id, {})
        known[eth.src] = in_port
        out_port = known.get(eth.dst, ofp.OFPP_FLOOD)
        datapath.send_msg(parser.OFPPacketOut(datapath=datapath, buffer_id=ofp.OFP_NO_BUFFER, in_port=in_port,
                                              actions=[parser.OFPActionOutput(out_port)], data=msg.data))


class ShortMissSwitch13(ConfiguredSwitch13):
    """Asks for packet-ins of 40 bytes (a literal)."""

    def configure(self, datapath):
        datapath.send_msg(datapath.ofproto_parser.OFPSetConfig(datapath, 0, 40))


class ComputedMissSwitch13(ConfiguredSwitch13):
    """Asks switch 2 for packet-ins of 40 bytes (computed at run time)."""

    def configure(self, datapath):
        length = 128 if datapath.id == 1 else 20 * datapath.id
        datapath.send_msg(datapath.ofproto_parser.OFPSetConfig(datapath, 0, length))
