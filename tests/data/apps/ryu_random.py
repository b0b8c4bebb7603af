"""Ryu apps (OpenFlow 1.0) that choose at random: ``RandomFlooder10`` floods or drops each
packet-in's packet at random (from the random module's shared generator: nondeterministic,
its verdict would depend on luck); ``SeededFlooder10`` makes the same choice with a generator
it seeds in the handler (deterministic: the same every time)."""
import random

from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import MAIN_DISPATCHER, set_ev_cls
from ryu.ofproto import ofproto_v1_0


class RandomFlooder10(app_manager.RyuApp):
    """Floods a packet-in's packet, or drops it, at random."""

    OFP_VERSIONS = [ofproto_v1_0.OFP_VERSION]

    def choose(self, msg):
        return random.random() < 0.5

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in_handler(self, ev):
        msg = ev.msg
        datapath = msg.datapath
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        actions = [parser.OFPActionOutput(ofp.OFPP_FLOOD)] if self.choose(msg) else []
        datapath.send_msg(parser.OFPPacketOut(datapath=datapath, buffer_id=msg.buffer_id, in_port=msg.in_port,
                                              actions=actions, data=None))


class SeededFlooder10(RandomFlooder10):
    """The same choice from a generator seeded with the packet's buffer id."""

    def choose(self, msg):
        return random.Random(msg.buffer_id).random() < 0.5
