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
    view.held                          # messages the platform holds back (OpenFlow-B): (dpid, waiting, messages)
    view.platform                      # the controller platform's own state, as the protocol keeps it
    view.app                           # the controller app's state
    view.quiescent                     # whether nothing more can happen
    view.topology                      # switches, hosts, ports, links, paths (a Topology; never changes)
    view.links                         # every link once: Link(a, b, up), a and b = "s1:2" or "h1"
    view.link_up(1, 2)                 # whether the link at port 2 of s1 is up (False: down, or no link)
    view.attached(1, 2)                # what is at s1:2 now: "h1", "s2:1", or None (nothing, or the link is down)
    view.faults_left                   # fault budgets left, by kind ({"link": 0, ...}; {} without faults)

Packets (:class:`~nice_attendre.models.packet.Packet`) carry ``hdr`` (a
:class:`~nice_attendre.models.packet.Header`: ``eth_src``, ``eth_dst``, ``ip_src``, ``ip_dst``,
``tp_src``, ``tp_dst``), ``origin`` and ``seq`` (its identity: the seq-th packet of its
origin host), ``kind`` and ``trail`` (the (dpid, in_port) hops it crossed).

Everything a property needs is on the view. ``view.net`` (the network the state belongs to)
is the checker's internal object: it still works, but its methods and slot names may change
from one version to the next; properties that used it for the topology, link state or
OpenFlow-B's held messages should use ``view.topology``, ``view.links``, ``view.link_up``,
``view.attached`` and ``view.held``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Mapping, NamedTuple, Sequence

from nice_attendre.models.packet import Header, Packet
from nice_attendre.models.topology import Topology

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


class Link(NamedTuple):
    """A link of the topology: its two ends (``"s1:2"``, port 2 of switch 1, or a host name)
    and whether it is up now (links go down only under ``--fault link``)."""

    a: str
    b: str
    up: bool


class HeldMessages(NamedTuple):
    """Messages the controller platform holds back: OpenFlow-B's flow-mod/packet-out for the
    first switch of a path (``dpid``), released when barrier replies from the switches in
    ``waiting`` have all arrived."""

    dpid: int
    waiting: tuple[int, ...]
    messages: tuple[Any, ...]


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
    def topology(self) -> Topology:
        """The topology (it never changes): ``switches`` (dpids), ``hosts`` (names),
        ``ports[dpid]``, ``links[(dpid, port)]`` (a :class:`~nice_attendre.models.topology.Peer`:
        ``is_host``, ``node``, ``port``), ``host_port[host]`` (where the host was plugged in at
        the start; ``hosts[h].location`` says where it is now), ``path(dpid, host)`` (the
        shortest path from a switch to a host, as (dpid, out port) hops), ``switch_names``."""
        return self.net.topology

    @cached_property
    def links(self) -> tuple[Link, ...]:
        """Every link of the topology once (switch-host links from the switch's end), in
        (dpid, port) order, with whether it is up now. A host that moved is on a new link."""
        net = self.net
        found = []
        for (dpid, port), peer in sorted(net.topology.links.items()):
            if peer.is_host:
                found.append(Link(f"s{dpid}:{port}", str(peer.node), self.link_up(dpid, port)))
            elif (dpid, port) < (peer.node, peer.port):
                found.append(Link(f"s{dpid}:{port}", f"s{peer.node}:{peer.port}", self.link_up(dpid, port)))
        return tuple(found)

    def link_up(self, dpid: int, port: int) -> bool:
        """Whether the link at port ``port`` of switch ``dpid`` is up (False when it is down,
        or when the port has no link in the topology)."""
        net = self.net
        if (dpid, port) not in net.topology.links:
            return False
        return net.faults is None or not net.faults.down(_Reader(net, self.state), dpid, port)

    def attached(self, dpid: int, port: int) -> str | None:
        """What is at port ``port`` of switch ``dpid`` now: a host's name, ``"s2:1"`` (a
        switch's port), or None (nothing, a host that moved away, or the link is down)."""
        peer = self.net.attached(self.state, dpid, port)
        if peer is None or isinstance(peer, str):
            return peer
        return f"s{peer.node}:{peer.port}"

    @cached_property
    def faults_left(self) -> Mapping[str, int]:
        """The fault budgets left, by kind (``loss``, ``duplicate``, ``reorder``, ``link``,
        ``control``, ``restart``); empty when the run injects no faults."""
        from nice_attendre.models.faults import KINDS

        faults = self._faults
        return {} if faults is None else dict(zip(KINDS, faults.left))

    @cached_property
    def _faults(self) -> Any:
        """The fault state, or None without faults."""
        net = self.net
        return None if net.faults is None else net.faults.state(self.state)

    @cached_property
    def held(self) -> tuple[HeldMessages, ...]:
        """The messages the controller platform holds back (OpenFlow-B: a path's first-hop
        flow-mod/packet-out until the barrier replies of the following switches arrive);
        empty under the other protocols."""
        platform = self.platform
        return tuple(HeldMessages(h.dpid, h.waiting, h.messages) for h in getattr(platform, "held", ()))

    @cached_property
    def platform(self) -> Any:
        """The controller platform's own state, as the protocol variant keeps it (OpenFlow:
        ``stats``, the switches whose port statistics await the app, and ``held``)."""
        return self.net.value(self.state, "platform")

    @property
    def quiescent(self) -> bool:
        """Whether no event is enabled (the end of an execution)."""
        return not self.net.enabled(tuple(self.state))

    def __repr__(self) -> str:
        return f"View({self.net.describe()})"


class _Reader:
    """Reads slot values of one state the way a transition does (``get``), for the model's
    own answers about a state (such as whether a link is down)."""

    def __init__(self, net: "Network", state: Sequence[int]) -> None:
        self._net = net
        self._state = state

    def get(self, slot: int) -> Any:
        return self._net.interned(slot)[self._state[slot]]
