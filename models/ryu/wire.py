"""Messages from a switch of the model to a Ryu app, built as OpenFlow bytes and parsed by os-ken.

Building the wire bytes and letting os-ken's own parser read them makes every field an app
reads genuine (``msg_len``, ``total_len``, ``buffer_id``, ``in_port`` or the OpenFlow 1.3
``match``, ``reason``, ``table_id``, ``data``), for OpenFlow 1.0 and 1.3 alike. The bytes
of a packet-in are cached per content; each call parses them again, so the app always gets
a fresh message object.

The switch the app sees: 256 buffers; 1 table (OpenFlow 1.0) or 254 (1.3); flow, table and
port statistics capabilities; ports named ``s<dpid>-eth<port>`` with MAC
``02:00:00:<dpid>:<port>`` (as many bytes as needed), up, 1 Gb/s full duplex, copper.

Port statistics: the model's statistics are a load class, one of the app's ``load_classes``
(a nondeterministic choice), so the reply gives every port of the switch the same
plausible numbers for that class, over :data:`STATS_DURATION` seconds:
:data:`LOAD_NUMBERS` (packets and bytes received and sent each; no drops, no errors).
"""
from __future__ import annotations

import ipaddress
import struct
from typing import Any

from os_ken import utils
from os_ken.ofproto import ofproto_parser

from nice_attendre.models.addresses import is_prefix
from nice_attendre.models.messages import Error, FlowRemoved, PacketIn, PortStatus
from nice_attendre.models.packet import Match
from nice_attendre.models.ryu.codec import ETH_TYPE_IPV4, IP_PROTO_TCP, Codec
from nice_attendre.models.ryu.translate import SentXid

#: Seconds the reported port counters cover (OpenFlow 1.3's duration_sec).
STATS_DURATION = 10
#: Load class -> (packets, bytes) each port received and, again, sent in STATS_DURATION
#: seconds: "low" 0.8 Mb/s (0.08% of a 1 Gb/s port), "high" 800 Mb/s (80%), with 1,000-byte
#: packets. Other class names get the numbers of their position in the app's load_classes.
LOAD_NUMBERS: dict[str, tuple[int, int]] = {"low": (1_000, 1_000_000), "high": (1_000_000, 1_000_000_000)}

_N_BUFFERS = 256
_PORT_SPEED_KBPS = 1_000_000


class Wire:
    """Builds the parsed messages switch ``datapath`` sends the app, for one codec."""

    def __init__(self, codec: Codec, load_classes: tuple[str, ...]) -> None:
        self.codec = codec
        self.load_classes = load_classes
        self._packet_ins: dict[tuple[Any, ...], bytes] = {}

    # ---- helpers ------------------------------------------------------------------------

    @staticmethod
    def _parse(datapath: Any, msg_type: int, body: bytes, xid: int = 0) -> Any:
        ofp = datapath.ofproto
        length = ofp.OFP_HEADER_SIZE + len(body)
        buf = struct.pack(ofp.OFP_HEADER_PACK_STR, ofp.OFP_VERSION, msg_type, length, xid) + body
        return ofproto_parser.msg(datapath, ofp.OFP_VERSION, msg_type, length, xid, buf)

    @staticmethod
    def _port_mac(dpid: int, port: int) -> bytes:
        return bytes((0x02, 0, 0, dpid & 0xFF, (port >> 8) & 0xFF, port & 0xFF))

    # ---- packet-in ----------------------------------------------------------------------

    def packet_in(self, datapath: Any, ev: PacketIn) -> Any:
        """The OFPPacketIn for the model's packet-in ``ev``."""
        ofp = datapath.ofproto
        frame = self.codec.frame(ev.packet)
        buffer_id = ofp.OFP_NO_BUFFER if ev.buffer_id is None else self.codec.buffer_int(ev.buffer_id)
        names = ("OFPR_NO_MATCH", "OFPR_TABLE_MISS") if ev.reason == "no-match" else ("OFPR_ACTION", "OFPR_APPLY_ACTION")
        reason = getattr(ofp, names[0]) if hasattr(ofp, names[0]) else getattr(ofp, names[1])  # (1.4 renamed them)
        key = (ofp.OFP_VERSION, buffer_id, ev.in_port, reason, ev.table_id, frame)
        body = self._packet_ins.get(key)
        if body is None:
            if ofp.OFP_VERSION == 0x01:
                body = struct.pack(ofp.OFP_PACKET_IN_PACK_STR, buffer_id, len(frame), ev.in_port, reason)
            else:  # 1.2 has no cookie
                head = (buffer_id, len(frame), reason, ev.table_id) + ((0,) if ofp.OFP_VERSION >= 0x04 else ())
                match = bytearray()
                length = datapath.ofproto_parser.OFPMatch(in_port=ev.in_port).serialize(match, 0)
                match += bytes(utils.round_up(length, 8) - len(match))
                body = (struct.pack(ofp.OFP_PACKET_IN_PACK_STR, *head)
                        + bytes(match) + bytes(2))
            body = self._packet_ins[key] = body + frame
        return self._parse(datapath, ofp.OFPT_PACKET_IN, body)

    # ---- switch features and ports ------------------------------------------------------

    def ports(self, datapath: Any, ports: tuple[int, ...]) -> dict[int, Any]:
        """``datapath.ports``: port number -> OFPPhyPort (1.0) or OFPPort (1.2+)."""
        return {port: self.port(datapath, port) for port in ports}

    def port(self, datapath: Any, port: int, up: bool = True) -> Any:
        """The description of ``port`` (OFPPhyPort, OFPPort), up or down (link down)."""
        ofp = datapath.ofproto
        parser = datapath.ofproto_parser
        if ofp.OFP_VERSION >= 0x05:  # OpenFlow 1.4+: the Ethernet details are a property
            features = ofp.OFPPF_1GB_FD | ofp.OFPPF_COPPER
            ethernet = parser.OFPPortDescPropEthernet(ofp.OFPPDPT_ETHERNET, 32, features, features, features, 0,
                                                      _PORT_SPEED_KBPS, _PORT_SPEED_KBPS)
            state = ofp.OFPPS_LIVE if up else ofp.OFPPS_LINK_DOWN
            mac = ":".join(f"{b:02x}" for b in self._port_mac(datapath.id, port))
            return parser.OFPPort(port, ofp.OFP_PORT_SIZE + 32, mac, f"s{datapath.id}-eth{port}".encode(), 0, state,
                                  [ethernet])
        raw = self._port_bytes(datapath, port, up)
        return (parser.OFPPhyPort if ofp.OFP_VERSION == 0x01 else parser.OFPPort).parser(raw, 0)

    def _port_bytes(self, datapath: Any, port: int, up: bool = True) -> bytes:
        ofp = datapath.ofproto
        name = f"s{datapath.id}-eth{port}".encode()
        mac = self._port_mac(datapath.id, port)
        features = ofp.OFPPF_1GB_FD | ofp.OFPPF_COPPER
        if ofp.OFP_VERSION == 0x01:
            state = 0 if up else ofp.OFPPS_LINK_DOWN
            return struct.pack(ofp.OFP_PHY_PORT_PACK_STR, port, mac, name, 0, state, features, features, features, 0)
        state = ofp.OFPPS_LIVE if up else ofp.OFPPS_LINK_DOWN
        return struct.pack(ofp.OFP_PORT_PACK_STR, port, mac, name, 0, state, features, features, features,
                           0, _PORT_SPEED_KBPS, _PORT_SPEED_KBPS)

    def switch_features(self, datapath: Any, ports: tuple[int, ...]) -> Any:
        """The OFPSwitchFeatures switch ``datapath`` sends when it connects."""
        ofp = datapath.ofproto
        capabilities = ofp.OFPC_FLOW_STATS | ofp.OFPC_TABLE_STATS | ofp.OFPC_PORT_STATS
        if ofp.OFP_VERSION == 0x01:
            body = struct.pack(ofp.OFP_SWITCH_FEATURES_PACK_STR, datapath.id, _N_BUFFERS, 1, capabilities,
                               1 << ofp.OFPAT_OUTPUT)
            body += b"".join(self._port_bytes(datapath, port) for port in ports)
        elif ofp.OFP_VERSION == 0x03:  # OpenFlow 1.2: the ports come with the features
            body = struct.pack(ofp.OFP_SWITCH_FEATURES_PACK_STR, datapath.id, _N_BUFFERS, 254, capabilities, 0)
            body += b"".join(self._port_bytes(datapath, port) for port in ports)
        else:
            body = struct.pack(ofp.OFP_SWITCH_FEATURES_PACK_STR, datapath.id, _N_BUFFERS, 254, 0, capabilities, 0)
        return self._parse(datapath, ofp.OFPT_FEATURES_REPLY, body)

    # ---- replies ------------------------------------------------------------------------

    def barrier_reply(self, datapath: Any, xid: int) -> Any:
        """The OFPBarrierReply to the request ``xid``."""
        return self._parse(datapath, datapath.ofproto.OFPT_BARRIER_REPLY, b"", xid)

    def load_numbers(self, load: str) -> tuple[int, int]:
        """(packets, bytes) per port and direction reported for load class ``load``."""
        if load in LOAD_NUMBERS:
            return LOAD_NUMBERS[load]
        index = self.load_classes.index(load) if load in self.load_classes else 0
        return list(LOAD_NUMBERS.values())[min(index, len(LOAD_NUMBERS) - 1)]

    def port_stats_reply(self, datapath: Any, ports: tuple[int, ...], load: str) -> Any:
        """The OFPPortStatsReply of every port of ``datapath`` under load class ``load``."""
        ofp = datapath.ofproto
        packets, octets = self.load_numbers(load)
        if ofp.OFP_VERSION == 0x01:
            body = struct.pack(ofp.OFP_STATS_MSG_PACK_STR, ofp.OFPST_PORT, 0)
            body += b"".join(struct.pack(ofp.OFP_PORT_STATS_PACK_STR, port, packets, packets, octets, octets,
                                         0, 0, 0, 0, 0, 0, 0, 0) for port in ports)
            return self._parse(datapath, ofp.OFPT_STATS_REPLY, body)
        body = struct.pack(ofp.OFP_MULTIPART_REPLY_PACK_STR, ofp.OFPMP_PORT_STATS, 0)
        body += b"".join(struct.pack(ofp.OFP_PORT_STATS_PACK_STR, port, packets, packets, octets, octets,
                                     0, 0, 0, 0, 0, 0, 0, 0, STATS_DURATION, 0) for port in ports)
        return self._parse(datapath, ofp.OFPT_MULTIPART_REPLY, body)

    # ---- asynchronous messages ----------------------------------------------------------

    def ofp_match(self, datapath: Any, match: Match) -> Any:
        """The OFPMatch an entry with the model's ``match`` reports (addresses as on the wire;
        OpenFlow 1.2+: with the eth_type/ip_proto its IPv4 and TCP fields need)."""
        parser = datapath.ofproto_parser
        fields = dict(match.fields)
        if datapath.ofproto.OFP_VERSION == 0x01:
            names = {"eth_src": "dl_src", "eth_dst": "dl_dst", "ip_src": "nw_src", "ip_dst": "nw_dst"}
            wire: dict[str, Any] = {}
            for name, value in fields.items():
                if name in ("eth_src", "eth_dst"):
                    value = self.codec.mac(value)
                elif name in ("ip_src", "ip_dst"):
                    if is_prefix(value):  # 1.0: the prefix length as nw_*_mask
                        address, length = value.split("/")
                        wire[names[name] + "_mask"] = int(length)
                        value = address
                    else:
                        value = self.codec.ip(value)
                wire[names.get(name, name)] = value
            if any(name.startswith(("ip_", "tp_")) for name in fields):
                wire["dl_type"] = ETH_TYPE_IPV4
            if any(name.startswith("tp_") for name in fields):
                wire["nw_proto"] = IP_PROTO_TCP
            return parser.OFPMatch(in_port=match.in_port, **wire)
        oxm: dict[str, Any] = {}
        if match.in_port is not None:
            oxm["in_port"] = match.in_port
        for name in ("eth_dst", "eth_src"):
            if name in fields:
                oxm[name] = self.codec.mac(fields[name])
        if any(name.startswith(("ip_", "tp_")) for name in fields):
            oxm["eth_type"] = ETH_TYPE_IPV4
        if any(name.startswith("tp_") for name in fields):
            oxm["ip_proto"] = IP_PROTO_TCP
        for name in ("ip_src", "ip_dst"):
            if name in fields:
                value = fields[name]
                if is_prefix(value):  # (address, mask)
                    network = ipaddress.IPv4Network(value)
                    oxm["ipv4_" + name[3:]] = (str(network.network_address), str(network.netmask))
                else:
                    oxm["ipv4_" + name[3:]] = self.codec.ip(value)
        for name in ("tp_src", "tp_dst"):
            if name in fields:
                oxm["tcp_" + name[3:]] = fields[name]
        return parser.OFPMatch(**oxm)

    def flow_removed(self, datapath: Any, ev: FlowRemoved) -> Any:
        """The OFPFlowRemoved for the model's ``ev`` (the entry's cookie; counters 0: the model has none)."""
        ofp = datapath.ofproto
        parser = datapath.ofproto_parser
        reason = {"idle": ofp.OFPRR_IDLE_TIMEOUT, "hard": ofp.OFPRR_HARD_TIMEOUT}.get(ev.reason, ofp.OFPRR_DELETE)
        match = self.ofp_match(datapath, ev.match)
        idle, hard = ev.timeouts.idle, ev.timeouts.hard
        if ofp.OFP_VERSION == 0x01:
            msg = parser.OFPFlowRemoved(datapath)
            msg.match, msg.cookie, msg.priority, msg.reason = match, ev.timeouts.cookie, ev.priority, reason
            msg.duration_sec = msg.duration_nsec = msg.packet_count = msg.byte_count = 0
            msg.idle_timeout = idle
        elif ofp.OFP_VERSION >= 0x06:
            msg = parser.OFPFlowRemoved(datapath, table_id=ev.table_id, reason=reason, priority=ev.priority,
                                        idle_timeout=idle, hard_timeout=hard, cookie=ev.timeouts.cookie, match=match,
                                        stats=parser.OFPStats(duration=(0, 0), packet_count=0, byte_count=0))
        else:
            msg = parser.OFPFlowRemoved(datapath, cookie=ev.timeouts.cookie, priority=ev.priority, reason=reason,
                                        table_id=ev.table_id, duration_sec=0, duration_nsec=0, idle_timeout=idle,
                                        hard_timeout=hard, packet_count=0, byte_count=0, match=match)
        msg.xid = 0
        return msg

    def error(self, datapath: Any, ev: Error) -> Any:
        """The OFPErrorMsg for the model's ``ev``: OFPET_FLOW_MOD_FAILED, OFPFMFC_OVERLAP, with
        the refused flow-mod's xid and, as its data, the flow-mod's first 64 bytes as os-ken
        serialised them (OpenFlow: at least 64 bytes of the failed request), so an app can
        parse them (:class:`~nice_attendre.models.ryu.translate.SentXid`)."""
        ofp = datapath.ofproto
        sent = ev.request.xid
        xid, data = (sent.xid, sent.data) if isinstance(sent, SentXid) else (sent if isinstance(sent, int) else 0, b"")
        msg = datapath.ofproto_parser.OFPErrorMsg(datapath, type_=ofp.OFPET_FLOW_MOD_FAILED, code=ofp.OFPFMFC_OVERLAP,
                                                  data=data)
        msg.xid = xid
        return msg

    def port_status(self, datapath: Any, ev: PortStatus) -> Any:
        """The OFPPortStatus for the model's ``ev``: the port's link went down or up (OFPPR_MODIFY)."""
        msg = datapath.ofproto_parser.OFPPortStatus(datapath, datapath.ofproto.OFPPR_MODIFY,
                                                    self.port(datapath, ev.port, ev.up))
        msg.xid = 0
        return msg
