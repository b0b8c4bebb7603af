"""Ryu apps using what the checker's model lacks, only in a packet-in handler (so the search
would meet it only after transitions): each must be refused when it is loaded."""
from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import MAIN_DISPATCHER, set_ev_cls
from ryu.lib import hub
from ryu.ofproto import ofproto_v1_3


class SpawnsOnPacketIn(app_manager.RyuApp):
    """Starts a thread for each packet-in."""

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in_handler(self, ev):
        hub.spawn(self.later, ev.msg.datapath)

    def later(self, datapath):
        pass


class GroupsOnPacketIn(SpawnsOnPacketIn):
    """Adds a group on a packet-in."""

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in_handler(self, ev):
        datapath = ev.msg.datapath
        datapath.send_msg(datapath.ofproto_parser.OFPGroupMod(datapath))


class MetersOnPacketIn(SpawnsOnPacketIn):
    """Adds a meter on a packet-in (in a helper method)."""

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in_handler(self, ev):
        self.meter(ev.msg.datapath)

    def meter(self, datapath):
        datapath.send_msg(datapath.ofproto_parser.OFPMeterMod(datapath))


class RewritesOnPacketIn(SpawnsOnPacketIn):
    """Rewrites the destination address of a packet it sends out."""

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in_handler(self, ev):
        datapath = ev.msg.datapath
        parser = datapath.ofproto_parser
        actions = [parser.OFPActionSetField(eth_dst="00:00:00:00:00:02"), parser.OFPActionOutput(1)]
        datapath.send_msg(parser.OFPPacketOut(datapath=datapath, buffer_id=ev.msg.buffer_id, in_port=2,
                                              actions=actions, data=None))
