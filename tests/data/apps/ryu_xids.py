"""A Ryu app (OpenFlow 1.3) that tells its barrier replies apart by transaction id, as apps
keyed on ``msg.xid`` do: after each packet-out it sends a barrier request and remembers its
xid until the reply comes. os-ken numbers each datapath's messages 1, 2, 3, ...: two
requests outstanding at once never share an id, which the app asserts; and a reply must
answer a request it is waiting for.
"""
from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from ryu.ofproto import ofproto_v1_3


class BarrierKeyedSwitch13(app_manager.RyuApp):
    """Floods every packet; one barrier per packet-in, waited for by xid."""

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.waiting = {}  # dpid -> {xid of an unanswered barrier request}
        self.last_xid = {}  # dpid -> the last xid the datapath gave

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features_handler(self, ev):
        datapath = ev.msg.datapath
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        actions = [parser.OFPActionOutput(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)]
        inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)]
        self.send(datapath, parser.OFPFlowMod(datapath=datapath, priority=0, match=parser.OFPMatch(),
                                              instructions=inst))

    def send(self, datapath, msg):
        datapath.send_msg(msg)
        assert msg.xid > self.last_xid.get(datapath.id, 0), (msg.xid, self.last_xid)
        self.last_xid[datapath.id] = msg.xid
        return msg.xid

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in_handler(self, ev):
        msg = ev.msg
        datapath = msg.datapath
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        self.send(datapath, parser.OFPPacketOut(datapath=datapath, buffer_id=msg.buffer_id,
                                                in_port=msg.match["in_port"],
                                                actions=[parser.OFPActionOutput(ofp.OFPP_FLOOD)], data=msg.data))
        xid = self.send(datapath, parser.OFPBarrierRequest(datapath))
        waiting = self.waiting.setdefault(datapath.id, set())
        assert xid not in waiting
        waiting.add(xid)

    @set_ev_cls(ofp_event.EventOFPBarrierReply, MAIN_DISPATCHER)
    def barrier_reply_handler(self, ev):
        self.waiting[ev.msg.datapath.id].remove(ev.msg.xid)


class SharedXidSwitch13(BarrierKeyedSwitch13):
    """Buggy: waits for its barriers in one set for every switch, though xids are only unique
    per datapath (s1's and s2's first barrier may share an id)."""

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in_handler(self, ev):
        super().packet_in_handler(ev)
        xid = self.last_xid[ev.msg.datapath.id]
        shared = self.waiting.setdefault("all", set())
        assert xid not in shared, f"xid {xid} is already awaited"
        shared.add(xid)
