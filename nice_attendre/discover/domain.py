"""The packets discovery may find: who sends them, where they enter, their header fields.

A :class:`Candidate` is one packet with plain values (ints and strs), as a ``--flow`` can
send it: the sending host (its ``eth_src``, and the switch and port it is attached to: the
packet-in's ``dpid`` and ``in_port``), the destination (a host, ``broadcast``, or an IPv4
address no host has, such as a virtual IP: then ``eth_dst`` is that address), and any IPv4
source and destination address, transport ports and IP protocol (0, TCP or UDP). The model
has no VLAN tag, so there is none to discover.

:class:`Domain` is the set of them for a topology: what the symbolic probe
(:mod:`nice_attendre.discover.engine`) chooses among, and what it checks a realised packet
against (:meth:`Domain.candidate`).
"""
from __future__ import annotations

import ipaddress
import re
from dataclasses import asdict, dataclass
from typing import Any

from nice_attendre.models.addresses import IP_BROADCAST, default_ip, is_address
from nice_attendre.models.flows import BROADCAST_NAME, PROTOCOLS, Flow
from nice_attendre.models.packet import BROADCAST, Header
from nice_attendre.models.topology import Topology

#: IP protocol numbers a packet may carry (none, TCP, UDP): what ``--flow`` can send.
IP_PROTOCOLS = (0, 6, 17)
#: The destination kinds besides the hosts: broadcast, and an address no host has.
ADDRESS = "address"
_PROTOCOL_NAMES = {number: name for name, number in PROTOCOLS.items()}


@dataclass(frozen=True, order=True)
class Candidate:
    """One packet a host can send (see the module docstring). Ordered by its fields, which
    is the canonical order of discovered packets."""

    sender: str
    dst: str
    ip_proto: int
    tp_src: int
    tp_dst: int
    ip_src: str
    ip_dst: str
    dpid: int
    in_port: int

    @property
    def eth_dst(self) -> str:
        """The destination MAC (a host's name, broadcast, or the address itself)."""
        return BROADCAST if self.dst == BROADCAST_NAME else self.dst

    def header(self) -> Header:
        """The packet's header."""
        return Header(self.sender, self.eth_dst, self.ip_src, self.ip_dst, self.tp_src, self.tp_dst, self.ip_proto)

    def flow(self) -> Flow:
        """The one-packet flow that sends it (no answer: ``reply=none``); the addresses are
        given only where they differ from the hosts' own."""
        default_dst = (IP_BROADCAST if self.dst == BROADCAST_NAME else
                       self.dst if is_address(self.dst) else default_ip(self.dst))
        return Flow(self.sender, self.dst, 1, _PROTOCOL_NAMES.get(self.ip_proto), self.tp_src, self.tp_dst,
                    None if self.ip_src == default_ip(self.sender) else self.ip_src,
                    None if self.ip_dst == default_dst else self.ip_dst, "none")

    def describe(self) -> str:
        """``h1 -> h2 tcp 10.9.0.0:0 -> 10.0.0.2:22 (s1 port 1)``."""
        proto = {0: "", 6: "tcp ", 17: "udp "}[self.ip_proto]
        return (f"{self.sender} -> {self.dst} {proto}{self.ip_src}:{self.tp_src} -> {self.ip_dst}:{self.tp_dst} "
                f"(s{self.dpid} port {self.in_port})")

    def as_json(self) -> dict[str, Any]:
        """The packet's fields."""
        return {**asdict(self), "eth_src": self.sender, "eth_dst": self.eth_dst}


def key(candidate: Candidate) -> tuple[Any, ...]:
    """The canonical sort key: as the dataclass orders, but addresses by their numbers."""
    return (candidate.sender, candidate.dst, candidate.ip_proto, candidate.tp_src, candidate.tp_dst,
            _number(candidate.ip_src), _number(candidate.ip_dst), candidate.dpid, candidate.in_port)


def _number(address: str) -> int:
    try:
        return int(ipaddress.IPv4Address(address))
    except ValueError:
        return -1


def repair_address(text: str) -> str | None:
    """An IPv4 address from what the solver produced for an address field (any string): the
    address itself if it is one; else its leading digits and dots as octets (``"10.9."`` is
    ``10.9.0.0``; an octet above 255 is 255); None if it starts with neither."""
    if is_address(text):
        return str(ipaddress.IPv4Address(text))
    found = re.match(r"[0-9.]+", text)
    if found is None or not any(ch.isdigit() for ch in found.group()):
        return None
    parts = found.group().split(".")[:4]
    octets = [min(int(part[:3]), 255) if part else 0 for part in parts]
    octets += [0] * (4 - len(octets))
    return ".".join(str(octet) for octet in octets)


class Domain:
    """The packets of a topology (see the module docstring): every host is a sender, at the
    switch port it is attached to; its destinations are the other hosts, ``broadcast`` and
    an address no host has."""

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self.hosts: tuple[str, ...] = tuple(topology.hosts)
        #: (host, dpid, port) of every host, in the topology's host order
        self.attachments: tuple[tuple[str, int, int], ...] = tuple(
            (host, *topology.host_port[host]) for host in self.hosts)
        self.host_addresses = frozenset(default_ip(host) for host in self.hosts)

    def destinations(self, sender: str) -> tuple[str, ...]:
        """Where ``sender`` may send: the other hosts, ``broadcast``, an address (:data:`ADDRESS`)."""
        return tuple(host for host in self.hosts if host != sender) + (BROADCAST_NAME, ADDRESS)

    def default_ip_dst(self, dst: str) -> str:
        """The destination address a packet to ``dst`` has unless the flow says otherwise."""
        if dst == BROADCAST_NAME:
            return IP_BROADCAST
        return dst if is_address(dst) else default_ip(dst)

    def candidate(self, values: dict[str, Any]) -> Candidate | None:
        """The packet of realised probe arguments (``dpid``, ``in_port``, ``dst``: an index into
        :meth:`destinations`, ``ip_src``, ``ip_dst``, ``tp_src``, ``tp_dst``, ``ip_proto``),
        repaired into one a flow can send; None when none can (see :func:`repair_address`)."""
        try:
            dpid, in_port, dst = (int(values[name]) for name in ("dpid", "in_port", "dst"))
            ports = [int(values[name]) for name in ("tp_src", "tp_dst")]
            proto = int(values["ip_proto"])
            ip_src, ip_dst = str(values["ip_src"]), str(values["ip_dst"])
        except (KeyError, TypeError, ValueError):
            return None
        sender = next((host for host, d, p in self.attachments if (d, p) == (dpid, in_port)), None)
        if sender is None or proto not in IP_PROTOCOLS or not all(0 <= port <= 65535 for port in ports):
            return None
        destinations = self.destinations(sender)
        if not 0 <= dst < len(destinations):
            return None
        target = destinations[dst]
        source = repair_address(ip_src) or default_ip(sender)
        if target == ADDRESS:
            address = repair_address(ip_dst)
            if address is None or address in self.host_addresses:
                return None
            target, destination = address, address
        else:
            destination = repair_address(ip_dst) or self.default_ip_dst(target)
        return self.checked(Candidate(sender, target, proto, ports[0], ports[1], source, destination, dpid, in_port))

    def checked(self, candidate: Candidate) -> Candidate | None:
        """``candidate`` if its flow sends exactly its header on this topology, else None."""
        from nice_attendre.errors import InputError

        flow = candidate.flow()
        try:
            flow.check(self.topology)
        except InputError:
            return None
        return candidate if flow.header() == candidate.header() else None
