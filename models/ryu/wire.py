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

import struct
from typing import Any

from os_ken import utils
from os_ken.ofproto import ofproto_parser

from nice_attendre.models.messages import PacketIn
from nice_attendre.models.ryu.codec import Codec

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
        reason = ofp.OFPR_NO_MATCH if ev.reason == "no-match" else ofp.OFPR_ACTION
        key = (ofp.OFP_VERSION, buffer_id, ev.in_port, reason, ev.table_id, frame)
        body = self._packet_ins.get(key)
        if body is None:
            if ofp.OFP_VERSION == 0x01:
                body = struct.pack(ofp.OFP_PACKET_IN_PACK_STR, buffer_id, len(frame), ev.in_port, reason)
            else:
                match = bytearray()
                length = datapath.ofproto_parser.OFPMatch(in_port=ev.in_port).serialize(match, 0)
                match += bytes(utils.round_up(length, 8) - len(match))
                body = (struct.pack(ofp.OFP_PACKET_IN_PACK_STR, buffer_id, len(frame), reason, ev.table_id, 0)
                        + bytes(match) + bytes(2))
            body = self._packet_ins[key] = body + frame
        return self._parse(datapath, ofp.OFPT_PACKET_IN, body)

    # ---- switch features and ports ------------------------------------------------------

    def ports(self, datapath: Any, ports: tuple[int, ...]) -> dict[int, Any]:
        """``datapath.ports``: port number -> OFPPhyPort (1.0) or OFPPort (1.3)."""
        ofp = datapath.ofproto
        parser = datapath.ofproto_parser
        found = {}
        for port in ports:
            raw = self._port_bytes(datapath, port)
            found[port] = (parser.OFPPhyPort if ofp.OFP_VERSION == 0x01 else parser.OFPPort).parser(raw, 0)
        return found

    def _port_bytes(self, datapath: Any, port: int) -> bytes:
        ofp = datapath.ofproto
        name = f"s{datapath.id}-eth{port}".encode()
        mac = self._port_mac(datapath.id, port)
        if ofp.OFP_VERSION == 0x01:
            features = ofp.OFPPF_1GB_FD | ofp.OFPPF_COPPER
            return struct.pack(ofp.OFP_PHY_PORT_PACK_STR, port, mac, name, 0, 0, features, features, features, 0)
        features = ofp.OFPPF_1GB_FD | ofp.OFPPF_COPPER
        return struct.pack(ofp.OFP_PORT_PACK_STR, port, mac, name, 0, ofp.OFPPS_LIVE, features, features, features,
                           0, _PORT_SPEED_KBPS, _PORT_SPEED_KBPS)

    def switch_features(self, datapath: Any, ports: tuple[int, ...]) -> Any:
        """The OFPSwitchFeatures switch ``datapath`` sends when it connects."""
        ofp = datapath.ofproto
        capabilities = ofp.OFPC_FLOW_STATS | ofp.OFPC_TABLE_STATS | ofp.OFPC_PORT_STATS
        if ofp.OFP_VERSION == 0x01:
            body = struct.pack(ofp.OFP_SWITCH_FEATURES_PACK_STR, datapath.id, _N_BUFFERS, 1, capabilities,
                               1 << ofp.OFPAT_OUTPUT)
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
