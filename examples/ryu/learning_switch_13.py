"""An OpenFlow 1.3 learning switch written against the Ryu API, verified in the checker's tests and README.

When a switch connects, the app installs its table-miss entry (priority 0, match everything,
send to the controller without buffering). Every switch learns the port behind each source
MAC address; a frame for a learned address gets an entry (in-port, source, destination ->
the learned port, priority 1) and is sent on by a packet-out carrying its data; any other
frame is flooded.

With ``tables=2`` the learned entries live in table 1: table 0's table-miss entry goes to
table 1 (goto-table), whose table-miss entry sends to the controller.

The real race: a frame can reach a switch before its table-miss entry is installed, and
OpenFlow 1.3 drops it (``no-black-holes`` finds it).

``BufferingLearningSwitch13`` is a buggy variant: its table-miss entry keeps the default
max_len (the switch buffers the frame), but the app still sends the frame's data without
the buffer id, so the buffered copy stays in the switch forever.
"""
from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from os_ken.lib.packet import ethernet, packet
from os_ken.ofproto import ofproto_v1_3


class LearningSwitch13(app_manager.OSKenApp):
    """Learning switch (OpenFlow 1.3): table-miss entry at connection, entries per learned destination."""

    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, tables=1, **kwargs):
        super().__init__(*args, **kwargs)
        self.tables = tables
        self.port_of = {}  # dpid -> {MAC address: port}

    @property
    def learned_table(self):
        return self.tables - 1

    def add_entry(self, switch, table_id, priority, match, actions, goto=None):
        ofp, parser = switch.ofproto, switch.ofproto_parser
        instructions = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)] if actions else []
        if goto is not None:
            instructions.append(parser.OFPInstructionGotoTable(goto))
        switch.send_msg(parser.OFPFlowMod(datapath=switch, table_id=table_id, priority=priority, match=match,
                                          instructions=instructions))

    def miss_action(self, switch):
        ofp, parser = switch.ofproto, switch.ofproto_parser
        return parser.OFPActionOutput(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def handle_features(self, ev):
        switch = ev.msg.datapath
        parser = switch.ofproto_parser
        if self.tables == 2:
            self.add_entry(switch, 0, 0, parser.OFPMatch(), [], goto=1)
        self.add_entry(switch, self.learned_table, 0, parser.OFPMatch(), [self.miss_action(switch)])

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def handle_packet_in(self, ev):
        msg = ev.msg
        switch = msg.datapath
        ofp, parser = switch.ofproto, switch.ofproto_parser
        in_port = msg.match["in_port"]
        eth = packet.Packet(msg.data).get_protocol(ethernet.ethernet)
        known = self.port_of.setdefault(switch.id, {})
        known[eth.src] = in_port
        if eth.dst in known:
            actions = [parser.OFPActionOutput(known[eth.dst])]
            match = parser.OFPMatch(in_port=in_port, eth_src=eth.src, eth_dst=eth.dst)
            self.add_entry(switch, self.learned_table, 1, match, actions)
        else:
            actions = [parser.OFPActionOutput(ofp.OFPP_FLOOD)]
        self.send_out(switch, msg, in_port, actions)

    def send_out(self, switch, msg, in_port, actions):
        ofp, parser = switch.ofproto, switch.ofproto_parser
        data = msg.data if msg.buffer_id == ofp.OFP_NO_BUFFER else None
        switch.send_msg(parser.OFPPacketOut(datapath=switch, buffer_id=msg.buffer_id, in_port=in_port,
                                            actions=actions, data=data))


class BufferingLearningSwitch13(LearningSwitch13):
    """Buggy: the table-miss entry buffers (default max_len), but frames are sent on by data only."""

    def miss_action(self, switch):
        return switch.ofproto_parser.OFPActionOutput(switch.ofproto.OFPP_CONTROLLER)

    def send_out(self, switch, msg, in_port, actions):
        ofp, parser = switch.ofproto, switch.ofproto_parser
        switch.send_msg(parser.OFPPacketOut(datapath=switch, buffer_id=ofp.OFP_NO_BUFFER, in_port=in_port,
                                            actions=actions, data=msg.data))
