"""Ryu apps (OpenFlow 1.3) that tag their entries with flow cookies.

``CookieSwitch13`` is a learning switch whose learnt entries (match: the destination MAC)
carry the cookie ``LEARNT | out_port``, an idle timeout and OFPFF_SEND_FLOW_REM; its
table-miss entry has cookie 0. When a learnt entry expires, the flow-removed names it by
its cookie (the app checks the tag), and the app forgets everything it learnt at that
switch: it deletes the entries whose cookie has the ``LEARNT`` tag (``cookie_mask``
``TAG_MASK``), which leaves the table-miss entry in place.

``CookieMaskless13`` (buggy) deletes with ``cookie_mask=0``: every entry, the table-miss
entry too, so later packets are dropped at that switch (no-black-holes).
"""
from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from ryu.lib.packet import ethernet, packet
from ryu.ofproto import ofproto_v1_3

LEARNT = 0x5A00
TAG_MASK = 0xFF00


class CookieSwitch13(app_manager.RyuApp):
    """Learning switch whose learnt entries are tagged by their cookie (see the module docstring)."""

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]
    #: The cookie mask of the delete that forgets the learnt entries.
    MASK = TAG_MASK

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
                                                cookie=LEARNT | out_port, instructions=inst, idle_timeout=5,
                                                flags=ofp.OFPFF_SEND_FLOW_REM))
        data = msg.data if msg.buffer_id == ofp.OFP_NO_BUFFER else None
        datapath.send_msg(parser.OFPPacketOut(datapath=datapath, buffer_id=msg.buffer_id, in_port=in_port,
                                              actions=actions, data=data))

    @set_ev_cls(ofp_event.EventOFPFlowRemoved, MAIN_DISPATCHER)
    def flow_removed_handler(self, ev):
        msg = ev.msg
        datapath = msg.datapath
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        if msg.cookie & TAG_MASK != LEARNT:
            raise ValueError(f"flow-removed of an entry the app did not tag: cookie {msg.cookie:#x}")
        if msg.reason != ofp.OFPRR_IDLE_TIMEOUT:
            return  # (the delete below)
        self.mac_to_port.pop(datapath.id, None)
        datapath.send_msg(parser.OFPFlowMod(datapath=datapath, command=ofp.OFPFC_DELETE, cookie=LEARNT,
                                            cookie_mask=self.MASK, out_port=ofp.OFPP_ANY, out_group=ofp.OFPG_ANY,
                                            match=parser.OFPMatch()))


class CookieMaskless13(CookieSwitch13):
    """Deletes with cookie_mask 0: every entry, its table-miss entry too."""

    MASK = 0
