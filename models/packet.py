"""Packets, match fields and actions: plain values.

A :class:`Packet` carries the header fields switches match on, its identity (origin host
and sequence number) for properties and buffer ids, the trail of switches it visited and,
under Attendre, the Attendre Command encapsulated in it. Packets are immutable; a switch
that forwards a packet creates a new value with a longer trail.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from nice_attendre.models.addresses import in_prefix, is_prefix, normalise_prefix

#: Header fields a match can name, in canonical order.
HEADER_FIELDS = ("eth_src", "eth_dst", "ip_src", "ip_dst", "tp_src", "tp_dst", "ip_proto")

#: The MAC address of broadcast frames.
BROADCAST = "ff:ff:ff:ff:ff:ff"


class Header(NamedTuple):
    """The header fields switches match on (a flow is a header). ``ip_proto`` is the IP
    protocol number (6 TCP, 17 UDP; 0 when a scenario does not say)."""

    eth_src: str
    eth_dst: str
    ip_src: str
    ip_dst: str
    tp_src: int = 0
    tp_dst: int = 0
    ip_proto: int = 0

    def reversed(self) -> "Header":
        """The header of a reply: sources and destinations swapped."""
        return Header(self.eth_dst, self.eth_src, self.ip_dst, self.ip_src, self.tp_dst, self.tp_src, self.ip_proto)

    def __str__(self) -> str:
        proto = {6: "tcp ", 17: "udp "}.get(self.ip_proto, f"proto {self.ip_proto} " if self.ip_proto else "")
        ports = f":{proto}{self.tp_src}->{self.tp_dst}" if (self.tp_src or self.tp_dst) else (
            f" ({proto.strip()})" if proto else "")
        return f"{self.eth_src}->{self.eth_dst}{ports}"


class AttendreCommand(NamedTuple):
    """An Attendre Command (paper IV.C): tells switch ``dpid`` to buffer a flow.

    ``match``/``priority``/``table_id`` name the entry the controller will install at
    ``dpid``; ``version``/``size`` identify the message set and its size at ``dpid``;
    ``acs`` is how many Attendre Commands of the set reach ``dpid`` in all (see
    :class:`~nice_attendre.models.messages.MessageSet`).
    """

    dpid: int
    match: "Match"
    priority: int
    table_id: int
    version: tuple[Any, ...]
    size: int
    acs: int = 1


class Packet(NamedTuple):
    """A data packet: header, identity, trail of visited switches, encapsulated command.

    ``origin``/``seq`` identify the packet (see :mod:`nice_attendre.models.hosts`);
    ``kind`` is informational ("data", "reply", "syn", "syn-ack"). History bits, set when
    the packet is sent and only while the property that reads them is checked (otherwise
    always False): ``followup`` marks a packet sent after an earlier packet of its flow
    reached the destination (``direct-paths``), ``late`` a packet sent after its two hosts
    had exchanged unicast packets both ways (``strict-direct-paths``).
    """

    hdr: Header
    origin: str
    seq: int
    kind: str = "data"
    trail: tuple[int, ...] = ()
    ac: AttendreCommand | None = None
    late: bool = False
    followup: bool = False

    @property
    def uid(self) -> tuple[str, int]:
        """The packet's identity: (origin host, sequence number)."""
        return (self.origin, self.seq)

    def label(self) -> str:
        """A short name for traces, such as ``h1#0``."""
        return f"{self.origin}#{self.seq}"

    def __str__(self) -> str:
        enc = f" +AC(s{self.ac.dpid})" if self.ac is not None else ""
        return f"{self.kind} {self.label()} [{self.hdr}]{enc}"


class Match(NamedTuple):
    """Match fields of a flow entry: header fields that must be equal, and an optional in-port.

    ``fields`` is a tuple of (field name, value) pairs sorted by name; a field not named
    is wildcarded. ``ip_src`` and ``ip_dst`` may be IPv4 prefixes (``10.0.0.0/24``: every
    address in it matches; see :mod:`nice_attendre.models.addresses`).
    """

    fields: tuple[tuple[str, Any], ...]
    in_port: int | None = None

    @staticmethod
    def of(in_port: int | None = None, **fields: Any) -> "Match":
        """A match on the given header fields (names from :data:`HEADER_FIELDS`; IP fields
        may be prefixes, normalised: ``ip_dst="10.0.0.9/24"`` is ``10.0.0.0/24``)."""
        for name, value in fields.items():
            if name not in HEADER_FIELDS:
                raise ValueError(f"unknown match field {name!r}; known: {', '.join(HEADER_FIELDS)}")
            if is_prefix(value):
                if name not in ("ip_src", "ip_dst"):
                    raise ValueError(f"only ip_src and ip_dst take a prefix, not {name}={value!r}")
                fields[name] = normalise_prefix(value)
        return Match(tuple(sorted(fields.items())), in_port)

    @staticmethod
    def exact(hdr: Header, in_port: int | None = None) -> "Match":
        """A match on every header field of ``hdr`` (and ``in_port`` when given)."""
        return Match(tuple(sorted(zip(HEADER_FIELDS, hdr))), in_port)

    @property
    def is_exact(self) -> bool:
        """Whether it names the in-port and every header field, with no prefix (OpenFlow
        1.0's exact-match entry, which takes precedence over every wildcard entry)."""
        return (self.in_port is not None and len(self.fields) == len(HEADER_FIELDS)
                and not any(is_prefix(value) for _name, value in self.fields))

    def matches(self, hdr: Header, in_port: int) -> bool:
        """Whether a packet with header ``hdr`` arriving on ``in_port`` matches."""
        if self.in_port is not None and self.in_port != in_port:
            return False
        for name, value in self.fields:
            field = getattr(hdr, name)
            if field != value and not (is_prefix(value) and in_prefix(field, value)):
                return False
        return True

    def __str__(self) -> str:
        port = f"in_port={self.in_port}, " if self.in_port is not None else ""
        if len(self.fields) == len(HEADER_FIELDS):  # an exact match: show it as the header
            values = dict(self.fields)
            return "{" + port + "exact " + str(Header(*(values[name] for name in HEADER_FIELDS))) + "}"
        parts = ([f"in_port={self.in_port}"] if self.in_port is not None else []) + [
            f"{name}={value}" for name, value in self.fields]
        return "{" + ", ".join(parts) + "}" if parts else "{*}"


# ---- actions -------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Output:
    """Send the packet out of ``port``."""

    port: int

    def __str__(self) -> str:
        return "output:table" if self.port == -1 else f"output:{self.port}"  # -1: messages.TABLE


@dataclass(frozen=True, slots=True)
class Flood:
    """Send the packet out of every port except the one it came in on."""

    def __str__(self) -> str:
        return "flood"


@dataclass(frozen=True, slots=True)
class ToController:
    """Send the packet to the controller in a packet-in.

    Unbuffered (the default) the whole packet travels in the packet-in; ``buffered`` (an
    OpenFlow 1.3 output to CONTROLLER whose max_len is not OFPCML_NO_BUFFER) the switch keeps
    the packet in its buffer and the packet-in carries its buffer id.
    """

    buffered: bool = False

    def __str__(self) -> str:
        return "controller(buffered)" if self.buffered else "controller"


@dataclass(frozen=True, slots=True)
class GotoTable:
    """Continue matching at flow table ``table_id`` (must be greater than the current one)."""

    table_id: int

    def __str__(self) -> str:
        return f"goto:{self.table_id}"


@dataclass(frozen=True, slots=True)
class SetField:
    """Rewrite header field ``field`` (a name from :data:`HEADER_FIELDS`) to ``value``; later
    actions of the list see the rewritten packet (OpenFlow's set-field / 1.0's set_dl_dst,
    set_nw_dst, set_tp_dst...)."""

    field: str
    value: Any

    def __post_init__(self) -> None:
        if self.field not in HEADER_FIELDS:
            raise ValueError(f"set-field: unknown header field {self.field!r}; known: {', '.join(HEADER_FIELDS)}")
        if is_prefix(self.value):
            raise ValueError(f"set-field: {self.field} takes an address, not a prefix ({self.value!r})")

    def apply(self, packet: "Packet") -> "Packet":
        """``packet`` with the field rewritten."""
        return packet._replace(hdr=packet.hdr._replace(**{self.field: self.value}))

    def __str__(self) -> str:
        return f"set:{self.field}={self.value}"


Action = Output | Flood | ToController | GotoTable | SetField


def rewritten(packet: "Packet", actions: tuple[Action, ...]) -> "Packet":
    """``packet`` after the set-field actions of ``actions`` (what a goto-table matches next)."""
    for action in actions:
        if type(action) is SetField:
            packet = action.apply(packet)
    return packet


def format_actions(actions: tuple[Action, ...]) -> str:
    """Actions as a short string for traces (``drop`` for none)."""
    return ",".join(str(a) for a in actions) if actions else "drop"
