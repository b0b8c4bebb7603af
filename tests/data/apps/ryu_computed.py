"""Ryu apps (OpenFlow 1.3) that compute, at run time, a value the model does not run: the
load-time scan cannot see it, so the search meets it, stops there and reports what it
explored, naming the feature.

``ComputedMask13`` is a learning switch that installs, once it knows a destination, an entry
matching the destination's vendor part: ``eth_dst`` with a mask it computes in its
constructor (``ff:ff:ff:00:00:00``). The model's matches compare Ethernet addresses whole,
so the first such flow-mod is refused, in the middle of the search.

``CountingComputedMask13`` also raises in its packet-in handler at the second packet-in
switch 1 sends it (a bug the search finds before it meets the mask).
"""
from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from ryu.lib.packet import ethernet, packet
from ryu.ofproto import ofproto_v1_3


class ComputedMask13(app_manager.RyuApp):
    """Learning switch whose entries match a computed Ethernet mask."""

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.mac_to_port = {}
        self.mask = ":".join(["ff"] * 3 + ["00"] * 3)

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features_handler(self, ev):
        datapath = ev.msg.datapath
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        actions = [parser.OFPActionOutput(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)]
        inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)]
        datapath.send_msg(parser.OFPFlowMod(datapath=datapath, priority=0, match=parser.OFPMatch(),
                                            instructions=inst))

    def check(self, datapath, known):
        """Nothing to check."""

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in_handler(self, ev):
        msg = ev.msg
        datapath = msg.datapath
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        in_port = msg.match["in_port"]
        eth = packet.Packet(msg.data).get_protocol(ethernet.ethernet)
        known = self.mac_to_port.setdefault(datapath.id, {})
        self.check(datapath, known)
        known[eth.src] = in_port
        out_port = known.get(eth.dst, ofp.OFPP_FLOOD)
        actions = [parser.OFPActionOutput(out_port)]
        if out_port != ofp.OFPP_FLOOD:
            inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)]
            datapath.send_msg(parser.OFPFlowMod(datapath=datapath, priority=1, instructions=inst,
                                                match=parser.OFPMatch(eth_dst=(eth.dst, self.mask))))
        datapath.send_msg(parser.OFPPacketOut(datapath=datapath, buffer_id=ofp.OFP_NO_BUFFER, in_port=in_port,
                                              actions=actions, data=msg.data))


class CountingComputedMask13(ComputedMask13):
    """Raises at the second packet-in of switch 1."""

    def check(self, datapath, known):
        if known and datapath.id == 1:
            raise RuntimeError(f"s{datapath.id} sent a second packet-in")
