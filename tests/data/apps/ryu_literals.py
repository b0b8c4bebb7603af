"""Ryu apps whose code builds, with constant arguments, a message the model does not run:
each is refused when loaded (before the first transition), naming the feature and the line.

Each class installs one thing at switch features (``send``, line numbers named in
tests/models/ryu/test_ryu_refusals.py); ``Plain13`` sends what the model runs.
"""
from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import CONFIG_DISPATCHER, set_ev_cls
from ryu.lib.packet import ether_types
from ryu.ofproto import ofproto_v1_0, ofproto_v1_3, ofproto_v1_5


class Plain13(app_manager.RyuApp):
    """A table-miss entry to the controller, unbuffered."""

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features_handler(self, ev):
        self.send(ev.msg.datapath, ev.msg.datapath.ofproto, ev.msg.datapath.ofproto_parser)

    def send(self, dp, ofp, parser):
        self.add(dp, parser.OFPMatch(eth_type=ether_types.ETH_TYPE_IP),
                 parser.OFPActionOutput(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER))

    def add(self, dp, match, action, **fields):
        inst = [dp.ofproto_parser.OFPInstructionActions(dp.ofproto.OFPIT_APPLY_ACTIONS, [action])]
        dp.send_msg(dp.ofproto_parser.OFPFlowMod(datapath=dp, priority=0, match=match, instructions=inst, **fields))


class Truncating13(Plain13):
    def send(self, dp, ofp, parser):
        self.add(dp, parser.OFPMatch(), parser.OFPActionOutput(ofp.OFPP_CONTROLLER, 0))


class EthernetMask13(Plain13):
    def send(self, dp, ofp, parser):
        self.add(dp, parser.OFPMatch(eth_dst=("00:00:00:00:00:01", "ff:ff:ff:00:00:00")),
                 parser.OFPActionOutput(1))


class ArpMatch13(Plain13):
    def send(self, dp, ofp, parser):
        self.add(dp, parser.OFPMatch(eth_type=ether_types.ETH_TYPE_ARP), parser.OFPActionOutput(1))


class UdpMatch13(Plain13):
    def send(self, dp, ofp, parser):
        self.add(dp, parser.OFPMatch(eth_type=0x0800, ip_proto=17, udp_dst=53), parser.OFPActionOutput(1))


class DeleteByPort13(Plain13):
    def send(self, dp, ofp, parser):
        dp.send_msg(parser.OFPFlowMod(datapath=dp, command=ofp.OFPFC_DELETE, out_port=2, out_group=ofp.OFPG_ANY,
                                      match=parser.OFPMatch()))


class DeleteEveryTable13(Plain13):
    def send(self, dp, ofp, parser):
        dp.send_msg(parser.OFPFlowMod(datapath=dp, command=ofp.OFPFC_DELETE, table_id=ofp.OFPTT_ALL,
                                      out_port=ofp.OFPP_ANY, out_group=ofp.OFPG_ANY, match=parser.OFPMatch()))


class OnePortStats13(Plain13):
    def send(self, dp, ofp, parser):
        dp.send_msg(parser.OFPPortStatsRequest(dp, 0, 1))


class PacketOutMatch15(Plain13):
    OFP_VERSIONS = [ofproto_v1_5.OFP_VERSION]

    def send(self, dp, ofp, parser):
        dp.send_msg(parser.OFPPacketOut(dp, ofp.OFP_NO_BUFFER, match=parser.OFPMatch(in_port=1, eth_type=0x0800),
                                        actions=[parser.OFPActionOutput(1)], data=b""))


class VlanMatch13(Plain13):
    def send(self, dp, ofp, parser):
        self.add(dp, parser.OFPMatch(vlan_vid=(ofp.OFPVID_PRESENT | 10)), parser.OFPActionOutput(1))


class TwoVersions(Plain13):
    """Speaks 1.0 and 1.3 (the switches speak 1.3); its 1.0 code passes OFPFlowMod's arguments
    by 1.0's positions (an add with an idle timeout of 3 s), which are not 1.3's."""

    OFP_VERSIONS = [ofproto_v1_0.OFP_VERSION, ofproto_v1_3.OFP_VERSION]

    def send(self, dp, ofp, parser):
        if ofp.OFP_VERSION == ofproto_v1_0.OFP_VERSION:
            dp.send_msg(parser.OFPFlowMod(dp, parser.OFPMatch(), 0, ofp.OFPFC_ADD, 3, 0, 1, ofp.OFP_NO_BUFFER, 0, 0,
                                          []))
        else:
            super().send(dp, ofp, parser)
