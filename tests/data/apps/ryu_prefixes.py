"""Ryu apps that route IPv4 by prefix (masked matches), proactively, on linear:2.

At switch features each switch gets a table-miss entry and one entry per host with the
same priority: ``ipv4_dst`` masked to a /31 (h1 is 10.0.0.1, in 10.0.0.0/31; h2 is
10.0.0.2, in 10.0.0.2/31), output towards that host (port 1 leads to h1 on both switches
of linear:2, port 2 to h2).

``PrefixRouter13`` is correct. ``WidePrefixRouter13`` (buggy) writes h2's mask as
255.255.255.0: its entry (10.0.0.0/24) overlaps h1's at the same priority, so a packet for
h1 may take either (OpenFlow leaves the choice to the switch): h2's answer to h1 goes back
out of the port it came in on (no-black-holes). ``PrefixRouter10`` is the correct router in OpenFlow 1.0
(``nw_dst`` with ``nw_dst_mask``, the prefix length).
"""
from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import CONFIG_DISPATCHER, set_ev_cls
from ryu.ofproto import ofproto_v1_0, ofproto_v1_3

#: (address, mask, port) of each host's route.
ROUTES = (("10.0.0.0", "255.255.255.254", 1), ("10.0.0.2", "255.255.255.254", 2))


class PrefixRouter13(app_manager.RyuApp):
    """Routes 10.0.0.0/31 to port 1 and 10.0.0.2/31 to port 2 on every switch."""

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]
    ROUTES = ROUTES

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features_handler(self, ev):
        datapath = ev.msg.datapath
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        self.add(datapath, 0, parser.OFPMatch(), parser.OFPActionOutput(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER))
        for address, mask, port in self.ROUTES:
            self.add(datapath, 10, parser.OFPMatch(eth_type=0x0800, ipv4_dst=(address, mask)),
                     parser.OFPActionOutput(port))

    def add(self, datapath, priority, match, action):
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, [action])]
        datapath.send_msg(parser.OFPFlowMod(datapath=datapath, priority=priority, match=match, instructions=inst))


class WidePrefixRouter13(PrefixRouter13):
    """Routes 10.0.0.0/24 (meant: 10.0.0.2/31) to port 2, overlapping h1's route."""

    ROUTES = (ROUTES[0], ("10.0.0.2", "255.255.255.0", 2))


class PrefixRouter10(app_manager.RyuApp):
    """The correct router in OpenFlow 1.0 (a miss is a packet-in, which it ignores)."""

    OFP_VERSIONS = [ofproto_v1_0.OFP_VERSION]

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features_handler(self, ev):
        datapath = ev.msg.datapath
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        for address, _mask, port in ROUTES:
            match = parser.OFPMatch(dl_type=0x0800, nw_dst=address, nw_dst_mask=31)
            datapath.send_msg(parser.OFPFlowMod(datapath=datapath, match=match, cookie=0, command=ofp.OFPFC_ADD,
                                                priority=10, actions=[parser.OFPActionOutput(port)]))
