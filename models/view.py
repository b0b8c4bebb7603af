"""A readable view of one network state, for properties users write themselves.

The checker stores a state as a tuple of interned ids; a :class:`View` turns it into plain
values with names a network engineer knows. Everything is read lazily, so a predicate pays
only for what it looks at. Views are read-only and live only while a predicate runs.

    view.hosts["h2"].received          # what h2 received, in order: Received(header, origin, seq, kind)
    view.hosts["h1"].sent              # what h1 sent so far: Sent(seq, header, kind)
    view.hosts["h2"].location          # (dpid, port) it is attached to
    view.in_flight                     # packets on links: InFlight(at, packet), at = "s2:1" or "h2"
    view.switches[1].table             # flow entries of s1 (entry.match, entry.priority, entry.actions)
    view.switches[1].buffered          # packets s1 holds (packet buffer and protocol buffers)
    view.switches[1].pending           # commands sent to s1 and not executed yet
    view.to_controller[1]              # messages from s1 the controller has not handled yet
    view.app                           # the controller app's state
    view.quiescent                     # whether nothing more can happen

Packets (:class:`~nice_attendre.models.packet.Packet`) carry ``hdr`` (a
:class:`~nice_attendre.models.packet.Header`: ``eth_src``, ``eth_dst``, ``ip_src``, ``ip_dst``,
``tp_src``, ``tp_dst``), ``origin`` and ``seq`` (its identity: the seq-th packet of its
origin host), ``kind`` and ``trail`` (the (dpid, in_port) hops it crossed).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Mapping, NamedTuple, Sequence

from nice_attendre.models.packet import Header, Packet

if TYPE_CHECKING:
    from nice_attendre.models.network import Network


class Received(NamedTuple):
    """A packet a host received: its header on arrival, its origin host and seq, its kind."""

    header: Header
    origin: str
    seq: int


class Sent(NamedTuple):
    """A packet a host sent: its seq, its header when it left, its kind, and ``to``: the host
    it is meant for (an answer's: the host whose packet it answers, whatever address it
    carries, as behind a NAT; else the host it is addressed to; None for a broadcast, an
    announcement or an address no host has, such as a virtual IP)."""

    seq: int
    header: Header
    kind: str
    to: str | None = None


class InFlight(NamedTuple):
    """A packet on a link: ``at`` is where it waits, ``"s2:1"`` (port 1 of switch 2) or a
    host name (on the link into that host)."""

    at: str
    packet: Packet


@dataclass(frozen=True)
class HostView:
    """What one host did and where it is."""

    name: str
    location: tuple[int, int]
    sent: tuple[Sent, ...]
    received: tuple[Received, ...]

    def received_from(self, origin: str) -> tuple[Received, ...]:
        """The packets it received that ``origin`` sent."""
        return tuple(r for r in self.received if r.origin == origin)


class SwitchView:
    """One switch: its flow table, what it holds, the commands it has not executed yet."""

    def __init__(self, view: "View", dpid: int) -> None:
        self._view = view
        self.dpid = dpid

    @cached_property
    def table(self) -> tuple[Any, ...]:
        """Its flow entries, highest priority first (each has ``match``, ``priority``,
        ``actions``, ``table_id``)."""
        return self._view.net.value(self._view.state, f"table:{self.dpid}")

    @cached_property
    def buffered(self) -> tuple[Packet, ...]:
        """The packets it holds: in its packet buffer and in a protocol's buffers."""
        return tuple(packet for dpid, packet in self._view.net.buffered_packets(self._view.state)
                     if dpid == self.dpid)

    @cached_property
    def pending(self) -> tuple[Any, ...]:
        """Commands sent to it and not executed yet (flattened across controller calls)."""
        net = self._view.net
        value = net.value(self._view.state, f"cmdq:{self.dpid}")
        if net.channels.batched:
            return tuple(message for batch in value for message in batch)
        return value


class View:
    """A readable view of ``state`` of network ``net`` (see the module docstring)."""

    def __init__(self, net: "Network", state: Sequence[int]) -> None:
        self.net = net
        self.state = state

    @cached_property
    def hosts(self) -> Mapping[str, HostView]:
        """Every host by name."""
        net = self.net
        found = {}
        for host in net.topology.hosts:
            hs = net.value(self.state, f"host:{host}")
            sent = tuple(Sent(seq, hdr, kind, hs.addressee(seq, hdr, net.host_of_mac))
                         for seq, hdr, kind in hs.sent_log)
            found[host] = HostView(host, hs.location, sent,
                                   tuple(Received(*entry) for entry in hs.received))
        return found

    @cached_property
    def switches(self) -> Mapping[int, SwitchView]:
        """Every switch by dpid."""
        return {dpid: SwitchView(self, dpid) for dpid in self.net.topology.switches}

    @cached_property
    def in_flight(self) -> tuple[InFlight, ...]:
        """Every packet on a link, switch ports first (by dpid and port), then host links."""
        net = self.net
        found = []
        for dpid in net.topology.switches:
            for port in net.topology.ports[dpid]:
                found.extend(InFlight(f"s{dpid}:{port}", p) for p in net.value(self.state, f"port:{dpid}:{port}"))
        for host in net.topology.hosts:
            found.extend(InFlight(host, p) for p in net.value(self.state, f"inbox:{host}"))
        return tuple(found)

    @cached_property
    def to_controller(self) -> Mapping[int, tuple[Any, ...]]:
        """Messages from each switch the controller has not handled yet."""
        return {dpid: self.net.value(self.state, f"ctrlq:{dpid}") for dpid in self.net.topology.switches}

    @cached_property
    def app(self) -> Any:
        """The controller app's state."""
        return self.net.value(self.state, "app")

    @property
    def quiescent(self) -> bool:
        """Whether no event is enabled (the end of an execution)."""
        return not self.net.enabled(tuple(self.state))

    def __repr__(self) -> str:
        return f"View({self.net.describe()})"
