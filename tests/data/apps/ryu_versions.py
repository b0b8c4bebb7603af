"""Learning switches written against the Ryu API for OpenFlow 1.2, 1.4 and 1.5, and a 1.0 one
whose entries ask to be reported removed (OFPFF_SEND_FLOW_REM) and which logs port changes.

OpenFlow 1.2's switches send a packet-in on a table miss (no table-miss entry); 1.4 and 1.5
need one, installed at switch features. OpenFlow 1.5's packet-out carries its in-port in a
match. ``WrongReason14`` (buggy) compares the packet-in's reason with 1.3's name
``OFPR_NO_MATCH``, which OpenFlow 1.4 renamed ``OFPR_TABLE_MISS``: AttributeError.
"""
from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from ryu.lib.packet import ethernet, packet
from ryu.ofproto import ofproto_v1_0, ofproto_v1_2, ofproto_v1_4, ofproto_v1_5


class LearningSwitch12(app_manager.RyuApp):
    """Learns the port of each source; entries match (in_port, eth_dst)."""

    OFP_VERSIONS = [ofproto_v1_2.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.mac_to_port = {}

    def add_flow(self, datapath, priority, match, actions, buffer_id=None):
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)]
        datapath.send_msg(parser.OFPFlowMod(datapath=datapath, priority=priority, match=match, instructions=inst,
                                            buffer_id=ofp.OFP_NO_BUFFER if buffer_id is None else buffer_id))

    def packet_out(self, datapath, msg, in_port, actions):
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        data = msg.data if msg.buffer_id == ofp.OFP_NO_BUFFER else None
        datapath.send_msg(parser.OFPPacketOut(datapath=datapath, buffer_id=msg.buffer_id, in_port=in_port,
                                              actions=actions, data=data))

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in_handler(self, ev):
        msg = ev.msg
        datapath = msg.datapath
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        in_port = msg.match["in_port"]
        eth = packet.Packet(msg.data).get_protocols(ethernet.ethernet)[0]
        known = self.mac_to_port.setdefault(datapath.id, {})
        known[eth.src] = in_port
        out_port = known.get(eth.dst, ofp.OFPP_FLOOD)
        actions = [parser.OFPActionOutput(out_port)]
        if out_port != ofp.OFPP_FLOOD:
            match = parser.OFPMatch(in_port=in_port, eth_dst=eth.dst)
            if msg.buffer_id != ofp.OFP_NO_BUFFER:
                self.add_flow(datapath, 1, match, actions, msg.buffer_id)
                return
            self.add_flow(datapath, 1, match, actions)
        self.packet_out(datapath, msg, in_port, actions)


class LearningSwitch14(LearningSwitch12):
    """The same for OpenFlow 1.4, with a table-miss entry."""

    OFP_VERSIONS = [ofproto_v1_4.OFP_VERSION]

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features_handler(self, ev):
        datapath = ev.msg.datapath
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        self.add_flow(datapath, 0, parser.OFPMatch(),
                      [parser.OFPActionOutput(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)])


class WrongReason14(LearningSwitch14):
    """Tests the packet-in's reason with OpenFlow 1.3's name of it."""

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in_handler(self, ev):
        if ev.msg.reason == ev.msg.datapath.ofproto.OFPR_NO_MATCH:
            super().packet_in_handler(ev)


class LearningSwitch15(LearningSwitch14):
    """The same for OpenFlow 1.5 (the packet-out's in-port is in its match)."""

    OFP_VERSIONS = [ofproto_v1_5.OFP_VERSION]

    def packet_out(self, datapath, msg, in_port, actions):
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        data = msg.data if msg.buffer_id == ofp.OFP_NO_BUFFER else None
        datapath.send_msg(parser.OFPPacketOut(datapath=datapath, buffer_id=msg.buffer_id,
                                              match=parser.OFPMatch(in_port=in_port), actions=actions, data=data))


class NotifiedSwitch10(app_manager.RyuApp):
    """OpenFlow 1.0: entries with OFPFF_SEND_FLOW_REM (reported when deleted); every port
    change is remembered (``self.down``: the (dpid, port) pairs whose link is down)."""

    OFP_VERSIONS = [ofproto_v1_0.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.mac_to_port = {}
        self.down = set()

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in_handler(self, ev):
        msg = ev.msg
        datapath = msg.datapath
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        eth = packet.Packet(msg.data).get_protocol(ethernet.ethernet)
        known = self.mac_to_port.setdefault(datapath.id, {})
        known[eth.src] = msg.in_port
        out_port = known.get(eth.dst, ofp.OFPP_FLOOD)
        actions = [parser.OFPActionOutput(out_port)]
        if out_port != ofp.OFPP_FLOOD:
            datapath.send_msg(parser.OFPFlowMod(
                datapath=datapath, match=parser.OFPMatch(in_port=msg.in_port, dl_dst=eth.dst), cookie=0,
                command=ofp.OFPFC_ADD, idle_timeout=0, hard_timeout=0, priority=ofp.OFP_DEFAULT_PRIORITY,
                flags=ofp.OFPFF_SEND_FLOW_REM, actions=actions))
        data = msg.data if msg.buffer_id == ofp.OFP_NO_BUFFER else None
        datapath.send_msg(parser.OFPPacketOut(datapath=datapath, buffer_id=msg.buffer_id, in_port=msg.in_port,
                                              actions=actions, data=data))

    @set_ev_cls(ofp_event.EventOFPPortStatus, MAIN_DISPATCHER)
    def port_status_handler(self, ev):
        msg = ev.msg
        ofp = msg.datapath.ofproto
        assert msg.reason == ofp.OFPPR_MODIFY
        key = (msg.datapath.id, msg.desc.port_no)
        if msg.desc.state & ofp.OFPPS_LINK_DOWN:
            self.down.add(key)
        else:
            self.down.discard(key)


class Monitoring14(LearningSwitch14):
    """Asks for port statistics on each packet-in (OpenFlow 1.4: not modelled)."""

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in_handler(self, ev):
        datapath = ev.msg.datapath
        datapath.send_msg(datapath.ofproto_parser.OFPPortStatsRequest(datapath, 0, datapath.ofproto.OFPP_ANY))
        super().packet_in_handler(ev)
