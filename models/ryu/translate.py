"""What a Ryu app sends (os-ken message objects) as the model's requests, and what is refused.

A message the app passes to ``datapath.send_msg`` is serialised as Ryu does (so a malformed
message fails in the handler, as it would in Ryu); a flow-mod is then parsed back, which
normalises its match whichever OFPMatch API built it. The request goes into the handler's
:class:`~nice_attendre.models.app.Out`:

* ``OFPFlowMod``: ADD; MODIFY (OpenFlow 1.3: the covered entries get the new actions,
  nothing happens if there are none; 1.0: the same, but the entry is added when none is
  covered); DELETE (non-strict). A buffer id makes an ADD or a MODIFY a flow-mod/packet-out
  (a DELETE ignores it). Idle and hard timeouts and OFPFF_SEND_FLOW_REM are the entry's
  (it may expire at any moment; its removal comes back as EventOFPFlowRemoved); the counter
  flags (OFPFF_RESET_COUNTS, OFPFF_NO_PKT_COUNTS, OFPFF_NO_BYT_COUNTS) have no effect. An
  ADD with OFPFF_CHECK_OVERLAP is refused by the switch when it overlaps an entry of the same
  table and priority (EventOFPErrorMsg, OFPET_FLOW_MOD_FAILED/OFPFMFC_OVERLAP, its data the
  flow-mod's first 64 bytes). The cookie is the entry's (EventOFPFlowRemoved carries it); a
  1.2+ MODIFY or DELETE with a cookie_mask changes only the entries whose cookie agrees with
  its own on the mask's bits.
* ``OFPPacketOut`` of a buffered packet, or of a frame while a packet-in is handled
  (OFP_NO_BUFFER with data): the packet-in's own frame, or one the app built (with os-ken's
  packet library), which is that packet with the frame's headers, as if rewritten by
  set-field actions; a frame with headers the model's packets lack (ARP, VLAN, UDP, a
  payload...) is refused.
* ``OFPBarrierRequest``, ``OFPPortStatsRequest`` (all ports), ``OFPSetConfig`` (when it
  changes nothing the model shows: the IP-fragment flags, which have no effect as the
  model has no fragments; miss_send_len at least the frame length).

Matches: in-port, Ethernet and IPv4 addresses, TCP ports; IPv4 prefixes (a contiguous mask;
1.0's nw_*_mask); an Ethernet mask of every bit or of none (the address, or any);
eth_type/dl_type IPv4, ip_proto TCP, no VLAN and TOS/DSCP 0 hold for every packet of the
model and are dropped. Actions:
output to a port, FLOOD/ALL, CONTROLLER, TABLE (packet-out only); OpenFlow 1.3 instructions:
apply-actions and goto-table. Everything else (groups, meters, other messages, other masks,
header rewriting, other flags, strict modify/delete, ...) raises
:class:`UnsupportedFeature` naming it; :mod:`.literals` refuses, when the app is loaded, what
its code gives as constants, and a value computed at run time stops the search where it is
met (the explored part reported).
"""
from __future__ import annotations

import ipaddress
from typing import Any, NamedTuple

from os_ken.lib import addrconv
from os_ken.ofproto import ofproto_parser

from nice_attendre.errors import UnsupportedFeature
from nice_attendre.models.addresses import is_prefix
from nice_attendre.models.app import Out
from nice_attendre.models.messages import TABLE, BufferId, PacketIn
from nice_attendre.models.packet import Action, Flood, GotoTable, Match, Output, ToController
from nice_attendre.models.ryu.codec import ETH_TYPE_IPV4, FRAME_LENGTH, IP_PROTO_TCP, Codec

#: Messages refused with the feature they belong to (the rest: "<name> messages").
_FEATURES = {
    "OFPGroupMod": "groups (OFPGroupMod)",
    "OFPMeterMod": "meters (OFPMeterMod)",
    "OFPPortMod": "port configuration (OFPPortMod)",
    "OFPTableMod": "table configuration (OFPTableMod)",
    "OFPRoleRequest": "controller roles (OFPRoleRequest)",
}
_ACTION_FEATURES = {
    "OFPActionGroup": "groups (OFPActionGroup)",
    "OFPActionSetQueue": "queues (OFPActionSetQueue)",
    "OFPActionEnqueue": "queues (OFPActionEnqueue)",
}
#: Flags about counters, which the model does not have: accepted, no effect (OpenFlow 1.2+;
#: 1.0's bit 2 is OFPFF_EMERG, refused).
_HARMLESS_FLAGS = ("OFPFF_RESET_COUNTS", "OFPFF_NO_PKT_COUNTS", "OFPFF_NO_BYT_COUNTS")
_FLAG_NAMES = ("OFPFF_SEND_FLOW_REM", "OFPFF_CHECK_OVERLAP", "OFPFF_EMERG", "OFPFF_RESET_COUNTS",
               "OFPFF_NO_PKT_COUNTS", "OFPFF_NO_BYT_COUNTS")


_NAMES = {0x01: "1.0", 0x03: "1.2", 0x04: "1.3", 0x05: "1.4", 0x06: "1.5"}


#: How much of a refused request an error message carries (OpenFlow: at least 64 bytes).
ERROR_DATA_LENGTH = 64


class SentXid(NamedTuple):
    """What a Ryu flow-mod's ``xid`` field in the model holds: the app's transaction id and
    the first :data:`ERROR_DATA_LENGTH` bytes of the message as os-ken serialised it, which
    an error about it (EventOFPErrorMsg) echoes in its ``data``, as a switch does."""

    xid: int
    data: bytes


def refuse(feature: str) -> UnsupportedFeature:
    """The error for an unsupported ``feature`` of a Ryu app."""
    return UnsupportedFeature(f"Ryu apps: {feature} is not supported by the checker's model")


class Translator:
    """Turns one app's os-ken messages into requests on an :class:`Out` (see the module docstring).

    ``wire_version`` is the OpenFlow version spoken (0x01, 0x03-0x06); ``codec`` maps
    addresses and buffer ids of the topology.
    """

    def __init__(self, codec: Codec, wire_version: int) -> None:
        self.codec = codec
        self.wire_version = wire_version
        #: "1.0" (OpenFlow 1.0's messages) or "1.3" (1.2 to 1.5: OXM matches, instructions).
        self.version = "1.0" if wire_version == 0x01 else "1.3"

    def send(self, datapath: Any, msg: Any, out: Out, context: PacketIn | None) -> None:
        """Queue what ``msg`` (already serialised) asks of switch ``datapath.id`` into ``out``;
        ``context`` is the packet-in being handled, if any."""
        name = type(msg).__name__
        if name == "OFPFlowMod":
            self.flow_mod(datapath, msg, out)
        elif name == "OFPPacketOut":
            self.packet_out(datapath, msg, out, context)
        elif name == "OFPBarrierRequest":
            out.barrier(datapath.id, msg.xid)
        elif name == "OFPPortStatsRequest":
            ofp = datapath.ofproto
            if self.wire_version not in (0x01, 0x04):
                raise refuse(f"port statistics in OpenFlow {_NAMES[self.wire_version]} (the checker's switches "
                             "report them in 1.0 and 1.3)")
            if msg.port_no not in (getattr(ofp, "OFPP_NONE", None), getattr(ofp, "OFPP_ANY", None)):
                raise refuse(f"port statistics of one port (port_no={msg.port_no})")
            out.request_port_stats(datapath.id)
        elif name == "OFPSetConfig":
            self.set_config(datapath, msg)
        else:
            raise refuse(_FEATURES.get(name, f"{name} messages"))

    def set_config(self, datapath: Any, msg: Any) -> None:
        """OFPSetConfig: what it sets changes nothing the model shows, or it is refused. The
        IP-fragment flags (OFPC_FRAG_*) and 1.2's OFPC_INVALID_TTL_TO_CONTROLLER: the model has
        no fragments and no TTL (accepted, no effect); ``miss_send_len``: every frame of the
        model is :data:`FRAME_LENGTH` bytes, so any length from that up sends it whole (a
        smaller one, which truncates the packet-ins, is refused)."""
        ofp = datapath.ofproto
        harmless = ofp.OFPC_FRAG_MASK | getattr(ofp, "OFPC_INVALID_TTL_TO_CONTROLLER", 0)
        if msg.flags & ~harmless:
            raise refuse(f"OFPSetConfig flags {msg.flags:#x} (accepted: the IP-fragment flags OFPC_FRAG_*, which "
                         "have no effect: the model's packets are never fragments)")
        if msg.miss_send_len < FRAME_LENGTH:
            raise refuse(f"OFPSetConfig with miss_send_len={msg.miss_send_len} (truncated packet-ins; accepted: "
                         f"miss_send_len >= {FRAME_LENGTH}, the model's frame length)")

    # ---- flow-mod -----------------------------------------------------------------------

    def flow_mod(self, datapath: Any, msg: Any, out: Out) -> None:
        ofp = datapath.ofproto
        parsed = ofproto_parser.msg(datapath, msg.version, msg.msg_type, msg.msg_len, msg.xid, msg.buf)
        commands = {ofp.OFPFC_ADD: "add", ofp.OFPFC_MODIFY: "modify-or-add" if self.version == "1.0" else "modify",
                    ofp.OFPFC_DELETE: "delete"}
        command = commands.get(parsed.command)
        if command is None:
            strict = {ofp.OFPFC_MODIFY_STRICT: "OFPFC_MODIFY_STRICT", ofp.OFPFC_DELETE_STRICT: "OFPFC_DELETE_STRICT"}
            raise refuse(f"flow-mod command {strict.get(parsed.command, parsed.command)}")
        flags = [flag for flag in _FLAG_NAMES if hasattr(ofp, flag) and parsed.flags & getattr(ofp, flag)
                 and flag not in _HARMLESS_FLAGS and flag not in ("OFPFF_SEND_FLOW_REM", "OFPFF_CHECK_OVERLAP")]
        if flags:
            raise refuse(f"flow-mod flags {', '.join(flags)}")
        # Timeouts and OFPFF_SEND_FLOW_REM belong to the entry an add (or 1.0's modify) makes;
        # a delete's are ignored (OpenFlow), as a modify's are by the model's switches.
        timeouts: dict[str, Any] = {}
        if command != "delete" and (parsed.idle_timeout or parsed.hard_timeout or parsed.flags & ofp.OFPFF_SEND_FLOW_REM):
            timeouts = {"idle_timeout": parsed.idle_timeout, "hard_timeout": parsed.hard_timeout,
                        "notify_removed": bool(parsed.flags & ofp.OFPFF_SEND_FLOW_REM)}
        # The cookie is the entry's an add makes; a 1.3 modify or delete's cookie_mask selects
        # entries by it (1.0 has no mask: its modify and delete ignore cookies).
        if command == "add" or command == "modify-or-add":
            if parsed.cookie:
                timeouts["cookie"] = parsed.cookie
        elif getattr(parsed, "cookie_mask", 0):
            timeouts["cookie"], timeouts["cookie_mask"] = parsed.cookie, parsed.cookie_mask
        if command == "add" and parsed.flags & ofp.OFPFF_CHECK_OVERLAP:
            timeouts["check_overlap"] = True
            timeouts["xid"] = SentXid(parsed.xid, bytes(msg.buf[:ERROR_DATA_LENGTH]))  # (the error about it echoes them)
        if command == "delete":
            any_port = ofp.OFPP_NONE if self.version == "1.0" else ofp.OFPP_ANY
            if parsed.out_port != any_port or (self.version == "1.3" and parsed.out_group != ofp.OFPG_ANY):
                raise refuse(f"deleting only entries that output to a port or group (out_port={parsed.out_port:#x}; "
                             f"give {'OFPP_NONE' if self.version == '1.0' else 'OFPP_ANY and OFPG_ANY'} to delete "
                             "every matching entry)")
        table_id = getattr(parsed, "table_id", 0)
        if self.version == "1.3" and table_id == ofp.OFPTT_ALL:
            raise refuse("flow-mods for every table (OFPTT_ALL)")
        buffer_id = self.buffer_id(datapath, parsed.buffer_id)
        if buffer_id is not None and command == "delete":  # OpenFlow: a delete ignores its buffer id
            buffer_id = None
        match = self.match(datapath, parsed.match)
        if self.version == "1.0":
            actions = self.actions(datapath, parsed.actions, in_flow=True)
        else:
            actions = self.instructions(datapath, parsed.instructions, table_id)
        out.flow_mod(datapath.id, match, actions, priority=parsed.priority, table_id=table_id, buffer_id=buffer_id,
                     command=command, **timeouts)

    def buffer_id(self, datapath: Any, value: int) -> BufferId | None:
        """The model's buffer id for the app's ``value`` (None for OFP_NO_BUFFER). An id no
        packet has stays unknown to the switch, as on a real one."""
        if value == datapath.ofproto.OFP_NO_BUFFER:
            return None
        key = self.codec.buffer_key(value)
        return key if key is not None else ("<unknown>", int(value), 0)

    # ---- matches ------------------------------------------------------------------------

    def match(self, datapath: Any, match: Any) -> Match:
        """The model's match for a parsed OFPMatch."""
        if self.version == "1.0":
            return self._match_10(datapath.ofproto, match)
        return self._match_13(datapath.ofproto, match)

    def _match_10(self, ofp: Any, match: Any) -> Match:
        wildcards = match.wildcards
        fields: dict[str, Any] = {}
        in_port = None if wildcards & ofp.OFPFW_IN_PORT else match.in_port
        if not wildcards & ofp.OFPFW_DL_SRC:
            fields["eth_src"] = self.codec.host_of_mac(addrconv.mac.bin_to_text(match.dl_src))
        if not wildcards & ofp.OFPFW_DL_DST:
            fields["eth_dst"] = self.codec.host_of_mac(addrconv.mac.bin_to_text(match.dl_dst))
        _constant(not wildcards & ofp.OFPFW_DL_VLAN, "dl_vlan", match.dl_vlan, ofp.OFP_VLAN_NONE, "no VLAN tag")
        if not wildcards & ofp.OFPFW_DL_VLAN_PCP:
            raise refuse(f"matching dl_vlan_pcp={match.dl_vlan_pcp} (the model's frames have no VLAN tag)")
        _constant(not wildcards & ofp.OFPFW_DL_TYPE, "dl_type", match.dl_type, ETH_TYPE_IPV4, "IPv4")
        _constant(not wildcards & ofp.OFPFW_NW_TOS, "nw_tos", match.nw_tos, 0, "TOS 0")
        _constant(not wildcards & ofp.OFPFW_NW_PROTO, "nw_proto", match.nw_proto, IP_PROTO_TCP, "TCP")
        for name, field, shift, mask in (("nw_src", "ip_src", ofp.OFPFW_NW_SRC_SHIFT, ofp.OFPFW_NW_SRC_MASK),
                                         ("nw_dst", "ip_dst", ofp.OFPFW_NW_DST_SHIFT, ofp.OFPFW_NW_DST_MASK)):
            ignored_bits = (wildcards & mask) >> shift
            if ignored_bits >= 32:
                continue
            if ignored_bits:  # a prefix: the model's IPv4 matches take them
                fields[field] = f"{_ipv4_text(getattr(match, name))}/{32 - ignored_bits}"
                continue
            fields[field] = self.codec.host_of_ip(_ipv4_text(getattr(match, name)))
        if not wildcards & ofp.OFPFW_TP_SRC:
            fields["tp_src"] = match.tp_src
        if not wildcards & ofp.OFPFW_TP_DST:
            fields["tp_dst"] = match.tp_dst
        return Match.of(in_port=in_port, **fields)

    def _match_13(self, ofp: Any, match: Any) -> Match:
        fields: dict[str, Any] = {}
        in_port = None
        for name, value in match._fields2:
            if isinstance(value, tuple):
                value = _unmasked(name, *value)
                if value is None:  # a mask of 0: every value
                    continue
            if name == "in_port":
                in_port = value
            elif name in ("eth_src", "eth_dst"):
                fields[name] = self.codec.host_of_mac(value)
            elif name in ("ipv4_src", "ipv4_dst"):
                fields["ip_" + name[5:]] = value if is_prefix(value) else self.codec.host_of_ip(value)
            elif name in ("tcp_src", "tcp_dst"):
                fields["tp_" + name[4:]] = value
            elif name == "eth_type":
                _constant(True, name, value, ETH_TYPE_IPV4, "IPv4")
            elif name == "ip_proto":
                _constant(True, name, value, IP_PROTO_TCP, "TCP")
            elif name == "vlan_vid":
                _constant(True, name, value, ofp.OFPVID_NONE, "no VLAN tag")
            elif name in ("ip_dscp", "ip_ecn"):
                _constant(True, name, value, 0, "0")
            else:
                raise refuse(f"matching {name}")
        return Match.of(in_port=in_port, **fields)

    # ---- actions ------------------------------------------------------------------------

    def instructions(self, datapath: Any, instructions: list[Any], table_id: int) -> tuple[Action, ...]:
        """The model's actions for OpenFlow 1.3 instructions: apply-actions, then goto-table."""
        ofp = datapath.ofproto
        actions: tuple[Action, ...] = ()
        goto: tuple[Action, ...] = ()
        for instruction in instructions:
            name = type(instruction).__name__
            if name == "OFPInstructionActions" and instruction.type == ofp.OFPIT_APPLY_ACTIONS:
                actions += self.actions(datapath, instruction.actions, in_flow=True)
            elif name == "OFPInstructionGotoTable":
                if instruction.table_id <= table_id:
                    raise refuse(f"goto-table {instruction.table_id} from table {table_id} (it must go forward)")
                goto = (GotoTable(instruction.table_id),)
            elif name == "OFPInstructionActions":
                kind = "write-actions" if instruction.type == ofp.OFPIT_WRITE_ACTIONS else "clear-actions"
                raise refuse(f"the {kind} instruction (action sets)")
            else:
                raise refuse(f"the instruction {name}")
        return actions + goto

    def actions(self, datapath: Any, actions: list[Any], in_flow: bool) -> tuple[Action, ...]:
        """The model's actions for a list of OFPAction objects."""
        ofp = datapath.ofproto
        result: list[Action] = []
        for action in actions:
            name = type(action).__name__
            if name != "OFPActionOutput":
                raise refuse(_ACTION_FEATURES.get(name, f"the action {name} (header rewriting and other "
                                                        "actions than output)"))
            port = action.port
            if port == ofp.OFPP_FLOOD or port == ofp.OFPP_ALL:
                result.append(Flood())
            elif port == ofp.OFPP_CONTROLLER:
                buffered = self.version == "1.3" and action.max_len != ofp.OFPCML_NO_BUFFER
                if action.max_len < FRAME_LENGTH and (self.version == "1.0" or buffered):
                    raise refuse(f"output to CONTROLLER with max_len={action.max_len} (truncated packet-ins; "
                                 f"frames are {FRAME_LENGTH} bytes)")
                result.append(ToController(buffered))
            elif port == ofp.OFPP_TABLE:
                if in_flow:
                    raise refuse("output to TABLE in a flow entry (OpenFlow allows it only in packet-outs)")
                result.append(Output(TABLE))
            elif 0 < port <= ofp.OFPP_MAX:
                result.append(Output(port))
            else:
                names = {getattr(ofp, n): n for n in ("OFPP_IN_PORT", "OFPP_NORMAL", "OFPP_LOCAL") if hasattr(ofp, n)}
                raise refuse(f"output to {names.get(port, f'port {port:#x}')}")
        return tuple(result)

    # ---- packet-out ---------------------------------------------------------------------

    def packet_out(self, datapath: Any, msg: Any, out: Out, context: PacketIn | None) -> None:
        ofp = datapath.ofproto
        actions = self.actions(datapath, msg.actions, in_flow=False)
        in_port = msg.match.get("in_port", 0) if self.wire_version >= 0x06 else msg.in_port  # 1.5: in the match
        if self.wire_version >= 0x06 and set(dict(msg.match.items())) - {"in_port"}:
            raise refuse(f"packet-out match fields other than in_port ({msg.match})")
        in_port = in_port if 0 < in_port <= ofp.OFPP_MAX else 0
        buffer_id = self.buffer_id(datapath, msg.buffer_id)
        if buffer_id is not None:
            out.packet_out(datapath.id, actions, buffer_id=buffer_id, in_port=in_port)
            return
        data = bytes(msg.data) if msg.data is not None else b""
        if not data:
            raise refuse("a packet-out without a buffer id and without data")
        if context is None:
            raise refuse("a packet-out of a frame outside a packet-in handler (OFP_NO_BUFFER with data: the model "
                         "names every packet by the host that sent it)")
        packet = context.packet
        if data != self.codec.frame(packet):
            # A frame the app built while handling the packet-in: that packet with the frame's
            # headers, as if rewritten by set-field actions (its identity stays).
            header = self.codec.header_of(data, packet.hdr.ip_proto)
            if header != packet.hdr:
                packet = packet._replace(hdr=header)
        out.packet_out(datapath.id, actions, in_port=in_port, packet=packet)


def _constant(present: bool, name: str, value: Any, every: Any, meaning: str) -> None:
    """A match on a field every packet of the model has the same value of: true (dropped) if
    ``value`` is that value, refused otherwise."""
    if present and value != every:
        raise refuse(f"matching {name}={value!r} (every packet of the model has {name}={every!r}: {meaning})")


def _unmasked(name: str, value: Any, mask: Any) -> Any:
    """The model's value for a masked OXM field (os-ken's ``(value, mask)``): an IPv4
    address with a prefix mask is a prefix (``10.0.0.0/24``); a mask of every bit is the
    value itself and a mask of none matches every value (None). Other masks (an Ethernet
    address in part, an IPv4 mask with holes, other fields) are refused: the model's
    matches compare the other fields whole."""
    if name in ("ipv4_src", "ipv4_dst"):
        try:
            network = ipaddress.IPv4Network(f"{value}/{mask}", strict=False)
        except ValueError:
            network = None
        if network is not None:
            if network.prefixlen == 32:
                return str(network.network_address)
            return None if network.prefixlen == 0 else str(network)
    elif name in ("eth_src", "eth_dst"):
        if mask.lower() == "ff:ff:ff:ff:ff:ff":
            return value
        if mask == "00:00:00:00:00:00":
            return None
    raise refuse(f"masked match fields ({name}={value}/{mask}: the model matches "
                 f"{'IPv4 addresses whole or by prefix' if name.startswith('ipv4') else 'it whole'})")


def _ipv4_text(value: int) -> str:
    return ".".join(str((value >> shift) & 0xFF) for shift in (24, 16, 8, 0))
