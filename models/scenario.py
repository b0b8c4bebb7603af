"""Traffic scenarios: what each host sends, whether it answers, where it may move.

A scenario is configuration: a topology plus one :class:`HostSpec` per host. The state of
a host (how far through its script it is, what it received, where it is attached) lives in
the network state as a :class:`HostState`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from nice_attendre.errors import InputError
from nice_attendre.models.packet import Header, Packet
from nice_attendre.models.topology import Topology

Delivery = tuple[Header, str, int]  # (header, origin host, seq) of a received packet


class HostState(NamedTuple):
    """A host's state: packets sent so far, packets received (in order), attachment point."""

    sent: int
    received: tuple[Delivery, ...]
    location: tuple[int, int]


@dataclass(frozen=True, slots=True)
class HostSpec:
    """A host's behaviour.

    * ``script``: the packets it sends, in order, as (header, kind) pairs; every send may
      interleave with the rest of the network;
    * ``replies``: it answers each unicast packet addressed to it with a reply packet
      (header reversed; a ``syn`` is answered by a ``syn-ack``, anything else by a ``reply``);
    * ``moves``: attachment points (dpid, port) it may move to, once each, in order, at
      any point of the run (host mobility).
    """

    name: str
    script: tuple[tuple[Header, str], ...] = ()
    replies: bool = True
    moves: tuple[tuple[int, int], ...] = ()


REPLY_KIND = {"syn": "syn-ack", "data": "reply"}


def reply_to(packet: Packet, host: str, seq: int) -> Packet:
    """The packet ``host`` sends in answer to ``packet`` (its ``seq``-th packet)."""
    return Packet(packet.hdr.reversed(), host, seq, REPLY_KIND.get(packet.kind, "reply"))


def host_header(src: str, dst: str, tp_src: int = 0, tp_dst: int = 0) -> Header:
    """The header of a packet from host ``src`` to host ``dst`` (MAC and IP named after hosts)."""
    return Header(src, dst, src, dst, tp_src, tp_dst)


@dataclass(frozen=True, slots=True)
class Scenario:
    """A topology and the behaviour of every host in it."""

    topology: Topology
    hosts: tuple[HostSpec, ...]

    def __post_init__(self) -> None:
        names = [spec.name for spec in self.hosts]
        unknown = sorted(set(names) - set(self.topology.hosts))
        if unknown:
            raise InputError(f"scenario names hosts not in the topology: {', '.join(unknown)}")
        if len(set(names)) != len(names):
            raise InputError("scenario lists a host twice")
        for spec in self.hosts:
            for dpid, port in spec.moves:
                if port not in self.topology.spare_ports.get(dpid, ()):
                    raise InputError(f"host {spec.name} cannot move to s{dpid}:{port}: not a free port")
            for hdr, _ in spec.script:
                if hdr.eth_dst not in self.topology.hosts:
                    raise InputError(f"host {spec.name} sends to unknown host {hdr.eth_dst!r}")
            for dst in dict.fromkeys(hdr.eth_dst for hdr, _ in spec.script):
                # Else nothing would ever be delivered, and a search could pass vacuously.
                if not self.topology.connected(spec.name, dst):
                    raise InputError(f"host {spec.name} cannot reach {dst} in topology "
                                     f"{self.topology.name!r}: no path of links between them")

    def describe(self) -> str:
        """One line: who sends what to whom, who answers, who may move."""
        parts = []
        for spec in self.hosts:
            counts: dict[tuple[str, str], int] = {}
            for hdr, kind in spec.script:
                counts[(hdr.eth_dst, kind)] = counts.get((hdr.eth_dst, kind), 0) + 1
            for (dst, kind), count in counts.items():
                noun = "packet" if kind == "data" else f"{kind} packet"
                parts.append(f"{spec.name} sends {count} {noun}{'s' if count != 1 else ''} to {dst}")
        answering = [spec.name for spec in self.hosts if spec.replies]
        if answering:
            parts.append(f"{', '.join(answering)} answer{'s' if len(answering) == 1 else ''} each")
        for spec in self.hosts:
            if spec.moves:
                parts.append(f"{spec.name} may move to " + ", then ".join(f"s{d}:{p}" for d, p in spec.moves))
        return "; ".join(parts) if parts else "no traffic"

    def spec(self, host: str) -> HostSpec:
        """The spec of ``host``."""
        for spec in self.hosts:
            if spec.name == host:
                return spec
        raise KeyError(host)

    @staticmethod
    def ping(topology: Topology, packets: int, sender: str | None = None,
             receiver: str | None = None, kind: str = "data") -> "Scenario":
        """``sender`` (default: the first host) sends ``packets`` packets of one flow to
        ``receiver`` (default: the last host), which answers each; other hosts only answer.
        """
        if packets < 0:
            raise InputError(f"packets must not be negative, got {packets}")
        hosts = topology.hosts
        sender = sender or hosts[0]
        receiver = receiver or hosts[-1]
        for name in (sender, receiver):
            if name not in hosts:
                raise InputError(f"unknown host {name!r} (hosts: {', '.join(hosts)})")
        if sender == receiver:
            raise InputError("sender and receiver must differ")
        hdr = host_header(sender, receiver)
        specs = tuple(
            HostSpec(name, ((hdr, kind),) * packets if name == sender else (), replies=name != sender)
            for name in hosts)
        return Scenario(topology, specs)
