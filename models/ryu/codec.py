"""The wire view of the model's packets for a Ryu app: addresses, Ethernet frames, buffer ids.

The model names hosts (``h1``) where a real network has addresses, and identifies buffered
packets by (origin host, packet seq, copy index) where a switch has a 32-bit buffer id. A
:class:`Codec` translates both ways for one topology; it is configuration (a pure function
of the topology), so equal network states look the same to the app whatever the path to them.

* Host number ``i`` (1-based, in the topology's natural host order) has MAC
  ``00:00:00:00:00:ii`` (hexadecimal, 48 bits). Its IPv4 address is the model's
  (:func:`~nice_attendre.models.addresses.default_ip`: ``10.0.0.N`` for host ``hN``); a host
  whose name gives no address gets ``10.0.i/256.i%256``. Broadcast frames go to
  ``ff:ff:ff:ff:ff:ff`` / ``255.255.255.255``.
* Every packet is a 60-byte Ethernet/IPv4/TCP frame (no VLAN tag, TOS 0, TTL 64, no payload) built
  with os-ken's packet library from the packet's header; its TCP flags follow its kind (SYN,
  SYN+ACK, otherwise ACK). Frames are cached per (header, kind).
* A buffer id (origin, seq, copy) is the int ``(host number << 24) | (seq << 8) | copy``:
  never OFP_NO_BUFFER, and decoded back exactly.
"""
from __future__ import annotations

from typing import Any

from os_ken.lib.packet import ethernet, ether_types, in_proto, ipv4, tcp
from os_ken.lib.packet import packet as os_ken_packet

from nice_attendre.errors import UnsupportedFeature
from nice_attendre.models.addresses import IP_BROADCAST, default_ip
from nice_attendre.models.messages import BufferId
from nice_attendre.models.packet import BROADCAST, Header, Packet
from nice_attendre.models.topology import Topology

#: Values of header fields every frame of the model has (so a match on them is always true).
ETH_TYPE_IPV4 = ether_types.ETH_TYPE_IP
IP_PROTO_TCP = in_proto.IPPROTO_TCP
#: Length of every frame: Ethernet (14) + IPv4 (20) + TCP (20), padded to Ethernet's minimum of
#: 60 bytes (without the frame check sequence, as switches send frames to the controller).
FRAME_LENGTH = 60

_MAX_HOSTS = 254  # so that no buffer id is OFP_NO_BUFFER (0xffffffff)
_TCP_FLAGS = {"syn": tcp.TCP_SYN, "syn-ack": tcp.TCP_SYN | tcp.TCP_ACK}


class Codec:
    """Addresses, frames and buffer ids of one topology (see the module docstring)."""

    def __init__(self, topology: Topology) -> None:
        hosts = topology.hosts
        if len(hosts) > _MAX_HOSTS:
            raise UnsupportedFeature(f"Ryu apps: at most {_MAX_HOSTS} hosts (the topology has {len(hosts)})")
        self.hosts = hosts
        self._number = {host: index + 1 for index, host in enumerate(hosts)}
        self._mac = {host: _mac(n) for host, n in self._number.items()}
        # Header values that are not IPv4 addresses (names of hosts without one, broadcast)
        # and the address that stands for each on the wire.
        self._ip = {host: f"10.0.{n // 256}.{n % 256}" for host, n in self._number.items()
                    if default_ip(host) == host}
        self._mac[BROADCAST] = BROADCAST
        self._ip[BROADCAST] = IP_BROADCAST
        self._host_of_mac = {mac: host for host, mac in self._mac.items()}
        self._host_of_ip = {ip: host for host, ip in self._ip.items() if host != BROADCAST}
        self._frames: dict[tuple[Header, str], bytes] = {}

    # ---- addresses ----------------------------------------------------------------------

    def mac(self, host: str) -> str:
        """The MAC address of ``host`` (or of broadcast)."""
        return self._mac[host]

    def ip(self, value: str) -> str:
        """The IPv4 address on the wire for header value ``value`` (an address, the name of a
        host without one, or broadcast)."""
        return self._ip.get(value, value)

    def host_of_mac(self, mac: str) -> str:
        """The header value for MAC ``mac``: a host's name, or the address itself when no
        host has it (then no packet of the model carries it)."""
        return self._host_of_mac.get(mac.lower(), mac.lower())

    def host_of_ip(self, ip: str) -> str:
        """The header value for IPv4 address ``ip`` (see :meth:`host_of_mac`)."""
        return self._host_of_ip.get(ip, ip)

    # ---- frames -------------------------------------------------------------------------

    def frame(self, packet: Packet) -> bytes:
        """The Ethernet frame of ``packet`` (cached per header and kind)."""
        key = (packet.hdr, packet.kind)
        data = self._frames.get(key)
        if data is None:
            data = self._frames[key] = self._build(*key)
        return data

    def _build(self, hdr: Header, kind: str) -> bytes:
        frame = os_ken_packet.Packet()
        frame.add_protocol(ethernet.ethernet(dst=self._mac[hdr.eth_dst], src=self._mac[hdr.eth_src],
                                             ethertype=ETH_TYPE_IPV4))
        frame.add_protocol(ipv4.ipv4(src=self.ip(hdr.ip_src), dst=self.ip(hdr.ip_dst), proto=IP_PROTO_TCP,
                                     ttl=64))
        frame.add_protocol(tcp.tcp(src_port=hdr.tp_src, dst_port=hdr.tp_dst, bits=_TCP_FLAGS.get(kind, tcp.TCP_ACK),
                                   window_size=65535))
        frame.serialize()
        data = bytes(frame.data)
        assert len(data) == FRAME_LENGTH, len(data)
        return data

    def header_of(self, data: bytes, ip_proto: int = 0) -> Header:
        """The model's header of an Ethernet/IPv4/TCP frame ``data`` (as an app builds one
        with os-ken's packet library; ``ip_proto`` is the header's protocol number, which
        the model's frames, all TCP on the wire, leave to the packet). Raises
        :class:`UnsupportedFeature` naming what the model's packets do not have (another
        protocol, a VLAN tag, IP options or a TOS, a payload)."""
        try:
            parsed = os_ken_packet.Packet(bytes(data))
        except Exception as exc:  # noqa: BLE001 - os-ken's parser on the app's bytes
            raise UnsupportedFeature(f"Ryu apps: a packet-out of a frame os-ken cannot parse ({exc})") from None
        protocols = [p for p in parsed.protocols if not isinstance(p, (bytes, bytearray))]
        names = [type(p).__name__ for p in protocols]
        if names != ["ethernet", "ipv4", "tcp"]:
            raise UnsupportedFeature(f"Ryu apps: a packet-out of a {'/'.join(names) or 'raw'} frame (the model's "
                                     "packets are Ethernet/IPv4/TCP)")
        eth, ip, segment = protocols
        payload = b"".join(bytes(p) for p in parsed.protocols if isinstance(p, (bytes, bytearray)))
        if ip.tos or ip.header_length != 5 or payload.rstrip(b"\0"):
            raise UnsupportedFeature("Ryu apps: a packet-out of a frame with IP options, a TOS or a payload (the "
                                     "model's packets have none)")
        return Header(self.host_of_mac(eth.src), self.host_of_mac(eth.dst), self.host_of_ip(ip.src),
                      self.host_of_ip(ip.dst), segment.src_port, segment.dst_port, ip_proto)

    # ---- buffer ids ---------------------------------------------------------------------

    def buffer_int(self, buffer_id: BufferId) -> int:
        """The 32-bit buffer id the app sees for the model's ``buffer_id``."""
        origin, seq, copy = buffer_id
        if seq > 0xFFFF or copy > 0xFF:
            raise UnsupportedFeature(f"Ryu apps: buffer id {buffer_id} does not fit 32 bits "
                                     "(at most 65,536 packets per host and 256 copies)")
        return (self._number[origin] << 24) | (seq << 8) | copy

    def buffer_key(self, value: Any) -> BufferId | None:
        """The model's buffer id for the app's int ``value``; None if no packet can have it."""
        if not isinstance(value, int):
            return None
        number, seq, copy = value >> 24, (value >> 8) & 0xFFFF, value & 0xFF
        if not 1 <= number <= len(self.hosts):
            return None
        return (self.hosts[number - 1], seq, copy)


def _mac(number: int) -> str:
    return ":".join(f"{(number >> shift) & 0xFF:02x}" for shift in range(40, -8, -8))
