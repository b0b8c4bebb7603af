"""An OpenFlow 1.0 learning switch written against the Ryu API, verified in the checker's tests and README.

Every switch learns the port behind each source MAC address it sees. A frame for an address
it has learned gets an entry (in-port, source, destination -> the learned port) installed
together with the frame itself (a flow-mod that names the frame's buffer); any other frame
is flooded.

``ForgetfulLearningSwitch10`` is a buggy variant: it installs the entry without the buffer id
and sends the frame on only when the switch did not buffer it, so a buffered frame for a
learned address stays in the switch forever.
"""
from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import MAIN_DISPATCHER, set_ev_cls
from ryu.lib.packet import ethernet, packet
from ryu.ofproto import ofproto_v1_0


class LearningSwitch10(app_manager.RyuApp):
    """Learning switch (OpenFlow 1.0): exact entries per learned destination, flooding otherwise."""

    OFP_VERSIONS = [ofproto_v1_0.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.port_of = {}  # dpid -> {MAC address: port}

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def handle_packet_in(self, ev):
        msg = ev.msg
        switch = msg.datapath
        ofp, parser = switch.ofproto, switch.ofproto_parser
        eth = packet.Packet(msg.data).get_protocol(ethernet.ethernet)
        known = self.port_of.setdefault(switch.id, {})
        known[eth.src] = msg.in_port
        if eth.dst in known:
            actions = [parser.OFPActionOutput(known[eth.dst])]
            match = parser.OFPMatch(in_port=msg.in_port, dl_src=eth.src, dl_dst=eth.dst)
            self.forward(switch, match, actions, msg)
        else:
            self.send_out(switch, [parser.OFPActionOutput(ofp.OFPP_FLOOD)], msg)

    def forward(self, switch, match, actions, msg):
        """Install the entry; it also releases the buffered frame."""
        ofp, parser = switch.ofproto, switch.ofproto_parser
        switch.send_msg(parser.OFPFlowMod(switch, match=match, cookie=0, command=ofp.OFPFC_ADD,
                                          idle_timeout=0, hard_timeout=0, priority=ofp.OFP_DEFAULT_PRIORITY,
                                          buffer_id=msg.buffer_id, out_port=ofp.OFPP_NONE, flags=0,
                                          actions=actions))
        if msg.buffer_id == ofp.OFP_NO_BUFFER:
            self.send_out(switch, actions, msg)

    def send_out(self, switch, actions, msg):
        ofp, parser = switch.ofproto, switch.ofproto_parser
        data = msg.data if msg.buffer_id == ofp.OFP_NO_BUFFER else None
        switch.send_msg(parser.OFPPacketOut(switch, buffer_id=msg.buffer_id, in_port=msg.in_port,
                                            actions=actions, data=data))


class ForgetfulLearningSwitch10(LearningSwitch10):
    """Buggy: the entry is installed without the buffer id, so a buffered frame is never sent on."""

    def forward(self, switch, match, actions, msg):
        ofp, parser = switch.ofproto, switch.ofproto_parser
        switch.send_msg(parser.OFPFlowMod(switch, match=match, cookie=0, command=ofp.OFPFC_ADD,
                                          idle_timeout=0, hard_timeout=0, priority=ofp.OFP_DEFAULT_PRIORITY,
                                          buffer_id=ofp.OFP_NO_BUFFER, out_port=ofp.OFPP_NONE, flags=0,
                                          actions=actions))
        if msg.buffer_id == ofp.OFP_NO_BUFFER:
            self.send_out(switch, actions, msg)
