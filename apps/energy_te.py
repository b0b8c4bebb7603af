"""Energy-efficient traffic engineering (REsPoNse; paper VI.C).

For each pair of hosts the app precomputes two paths: *alwaysOn* (the shortest) and
*onDemand* (the shortest one avoiding alwaysOn's inner switches, or its links when it has
none). On the packet-in of a new flow's first packet it asks the packet-in switch for its
port statistics; when they arrive it picks alwaysOn if the network is lightly loaded, onDemand
otherwise, and installs the whole path (one ``install_path``). The answer of the flow (the
SYN-ACK) takes the chosen path back without asking again; a packet-in from a switch further
along a chosen path (a type-2 race) gets the rest of that path.

The statistics are a nondeterministic choice between the two load classes the app
distinguishes, ``low`` and ``high``. With ``instant_stats`` (NICE's InstantStats, the
default, as in the paper) the controller receives them at once instead of after a round trip
through the switch.

Scenario: the sender opens ``packets`` TCP-like flows to the server (a SYN each, from ports
1000, 1001, ...), which answers each with a SYN-ACK. Topology ``paths:A,D``: two disjoint
paths of A and D switches between them (the paper uses 2/3 and 3/4).

Bug variants (``bug=``): ``drop-first-packet`` installs the path without releasing the
buffered SYN (found by ``no-forgotten-packets``); ``first-hop-always-on`` sends the first hop
along alwaysOn whatever path was chosen (found by ``intended-paths``).
"""
from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from nice_attendre.models.app import App, Hop, Out
from nice_attendre.models.messages import PacketIn, PortStatsReply
from nice_attendre.models.packet import Header, Match, Output
from nice_attendre.models.scenario import HostSpec, Scenario, host_header
from nice_attendre.models.topology import Topology

BUGS = ("drop-first-packet", "first-hop-always-on")
SERVER_PORT = 80
FIRST_CLIENT_PORT = 1000


class Waiting(NamedTuple):
    """A new flow's packet-in waiting for port statistics of ``dpid``."""

    dpid: int
    flow: Header
    packet_in: PacketIn


class TEState(NamedTuple):
    """The app's state: flows waiting for statistics, and the path chosen per flow (the
    forward header -> the switches of the forward path, with the class chosen)."""

    waiting: tuple[Waiting, ...] = ()
    chosen: tuple[tuple[Header, tuple[int, ...], str], ...] = ()

    def path_of(self, flow: Header) -> tuple[tuple[int, ...], str] | None:
        for hdr, path, kind in self.chosen:
            if hdr == flow:
                return path, kind
        return None


def _switch_paths(topology: Topology, src: str, dst: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(alwaysOn, onDemand) switch sequences from ``src``'s switch to ``dst``'s switch."""
    import networkx as nx

    graph = nx.Graph()
    for (dpid, _port), peer in topology.links.items():
        if not peer.is_host:
            graph.add_edge(dpid, peer.node)
    first = topology.host_port[src][0]
    last = topology.host_port[dst][0]
    graph.add_nodes_from([first, last])
    always_on = tuple(nx.shortest_path(graph, first, last))
    pruned = graph.copy()
    inner = always_on[1:-1]
    if inner:
        pruned.remove_nodes_from(inner)
    elif len(always_on) == 2:
        pruned.remove_edge(*always_on)
    try:
        on_demand = tuple(nx.shortest_path(pruned, first, last))
    except nx.NetworkXNoPath:
        on_demand = always_on
    return always_on, on_demand


def _hops(topology: Topology, switches: tuple[int, ...], dst: str, match: Match) -> list[Hop]:
    """Entries along ``switches`` (in forwarding order) ending at host ``dst``."""
    hops = []
    for index, dpid in enumerate(switches):
        if index + 1 < len(switches):
            nxt = switches[index + 1]
            port = next(p for p in topology.ports[dpid]
                        if (peer := topology.links.get((dpid, p))) is not None and not peer.is_host
                        and peer.node == nxt)
        else:
            port = topology.host_port[dst][1]
        hops.append(Hop(dpid, match, (Output(port),)))
    return hops


class EnergyTE(App[TEState]):
    """REsPoNse: alwaysOn path when lightly loaded, onDemand otherwise, chosen from port statistics."""

    name = "energy-te"
    default_topology = "paths:2,3"
    load_classes = ("low", "high")
    default_properties = ("no-forwarding-loops", "no-black-holes", "no-forgotten-packets", "intended-paths",
                          "delivery")

    def __init__(self, bug: str | None = None, instant_stats: bool = True) -> None:
        self.bug = self.check_bug(bug, BUGS)
        self.instant_stats = instant_stats

    def initial_state(self) -> TEState:
        return TEState()

    def scenario(self, topology: Topology, packets: int, sender: str | None = None,
                 receiver: str | None = None) -> Scenario:
        """The sender opens ``packets`` flows (one SYN each) to the receiver, which answers."""
        base = Scenario.ping(topology, 0, sender, receiver)
        sender = sender or topology.hosts[0]
        receiver = receiver or topology.hosts[-1]
        script = tuple((host_header(sender, receiver, FIRST_CLIENT_PORT + i, SERVER_PORT), "syn")
                       for i in range(packets))
        return Scenario(topology, tuple(HostSpec(s.name, script if s.name == sender else (), s.replies)
                                        for s in base.hosts))

    @staticmethod
    @lru_cache(maxsize=64)
    def paths(topology: Topology, src: str, dst: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(alwaysOn, onDemand) switch sequences between two hosts (cached per topology)."""
        return _switch_paths(topology, src, dst)

    def intended_path(self, state: TEState, hdr: Header) -> tuple[int, ...] | None:
        """The switches the app meant packets with header ``hdr`` to cross, if it chose."""
        found = state.path_of(hdr)
        if found is not None:
            return found[0]
        found = state.path_of(hdr.reversed())
        return tuple(reversed(found[0])) if found is not None else None

    def on_packet_in(self, state: TEState, ev: PacketIn, out: Out) -> TEState:
        hdr = ev.packet.hdr
        if self.intended_path(state, hdr) is not None:
            self._install(state, ev, out)
            return state
        if ev.packet.kind != "syn":  # not a new flow of ours: route it on the shortest path
            self._install_shortest(ev, out)
            return state
        if not any(w.flow == hdr for w in state.waiting):
            out.request_port_stats(ev.dpid)
        return state._replace(waiting=state.waiting + (Waiting(ev.dpid, hdr, ev),))

    def on_port_stats(self, state: TEState, ev: PortStatsReply, out: Out) -> TEState:
        answered = [w for w in state.waiting if w.dpid == ev.dpid]
        chosen = list(state.chosen)
        for waiting in answered:
            if state.path_of(waiting.flow) is None and not any(c[0] == waiting.flow for c in chosen):
                hdr = waiting.flow
                always_on, on_demand = self.paths(out.topology, hdr.eth_src, hdr.eth_dst)
                kind = "alwaysOn" if ev.load == "low" else "onDemand"
                chosen.append((hdr, always_on if kind == "alwaysOn" else on_demand, kind))
        state = TEState(tuple(w for w in state.waiting if w.dpid != ev.dpid), tuple(sorted(chosen)))
        for waiting in answered:
            self._install(state, waiting.packet_in, out)
        return state

    def _install(self, state: TEState, ev: PacketIn, out: Out) -> None:
        hdr = ev.packet.hdr
        path = self.intended_path(state, hdr)
        assert path is not None
        if ev.dpid not in path:
            self._install_shortest(ev, out)
            return
        rest = path[path.index(ev.dpid):]
        hops = _hops(out.topology, rest, hdr.eth_dst, Match.exact(hdr))
        if self.bug == "first-hop-always-on" and len(rest) == len(path):
            always_on, _ = self.paths(out.topology, hdr.eth_src, hdr.eth_dst)
            if tuple(path) != always_on and hdr.tp_dst == SERVER_PORT:
                hops[0] = _hops(out.topology, always_on, hdr.eth_dst, Match.exact(hdr))[0]
        out.install_path(hops, packet_in=None if self.bug == "drop-first-packet" else ev)

    def _install_shortest(self, ev: PacketIn, out: Out) -> None:
        hdr = ev.packet.hdr
        hops = [Hop(d, Match.exact(hdr), (Output(p),)) for d, p in out.topology.path(ev.dpid, hdr.eth_dst)]
        out.install_path(hops, packet_in=ev)

    def describe(self) -> str:
        options = [f"bug: {self.bug}"] if self.bug else []
        if not self.instant_stats:
            options.append("statistics by round trip")
        return "energy-te" + (f" ({', '.join(options)})" if options else "")
