"""A learning switch written against the Ryu API (OpenFlow 1.3) whose entries time out.

Each entry it installs (match: the destination MAC) has ``idle_timeout=5`` and
``OFPFF_SEND_FLOW_REM``; when the switch reports the entry removed (EventOFPFlowRemoved), the
app forgets where that destination is, so the next packet to it is flooded and learnt again.

``ForgetfulByTheWrongField13`` (buggy) reads the removed entry's match by the wrong field
(``eth_src``: its entries match on ``eth_dst`` only), so its flow-removed handler raises
KeyError the first time an entry expires.
"""
from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from ryu.lib.packet import ethernet, packet
from ryu.ofproto import ofproto_v1_3


class ExpiringSwitch13(app_manager.RyuApp):
    """Learning switch whose entries expire (idle 5 s) and are forgotten when they do."""

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]
    #: The match field naming the destination of a removed entry.
    FIELD = "eth_dst"

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
            inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)]
            datapath.send_msg(parser.OFPFlowMod(datapath=datapath, priority=1, match=parser.OFPMatch(eth_dst=eth.dst),
                                                instructions=inst, idle_timeout=5, flags=ofp.OFPFF_SEND_FLOW_REM))
        data = msg.data if msg.buffer_id == ofp.OFP_NO_BUFFER else None
        datapath.send_msg(parser.OFPPacketOut(datapath=datapath, buffer_id=msg.buffer_id, in_port=in_port,
                                              actions=actions, data=data))

    @set_ev_cls(ofp_event.EventOFPFlowRemoved, MAIN_DISPATCHER)
    def flow_removed_handler(self, ev):
        msg = ev.msg
        assert msg.reason == msg.datapath.ofproto.OFPRR_IDLE_TIMEOUT and msg.idle_timeout == 5
        self.mac_to_port.get(msg.datapath.id, {}).pop(msg.match[self.FIELD], None)


class ForgetfulByTheWrongField13(ExpiringSwitch13):
    """Reads the removed entry's destination from ``eth_src``, a field its entries do not match."""

    FIELD = "eth_src"
