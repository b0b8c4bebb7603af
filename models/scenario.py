"""Traffic scenarios: what each host sends, whether it answers, where it may move.

A scenario is configuration: a topology plus one :class:`HostSpec` per host. The state of
a host (how far through its script it is, what it received, where it is attached) lives in
the network state as a :class:`HostState`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from nice_attendre.errors import InputError
from nice_attendre.models.addresses import default_ip, is_address
from nice_attendre.models.hosts import Delivery, HostState, reply_to
from nice_attendre.models.packet import BROADCAST, Header
from nice_attendre.models.topology import Topology

__all__ = ["Delivery", "HostState", "HostSpec", "MAX_MOVES", "MAX_PACKETS", "Scenario", "host_header", "reply_to"]

#: Most packets a scenario made of flows may send in all, as ``--packets`` is bounded
#: (:data:`nice_attendre.frontend.api.MAX_PACKETS`): a state space grows exponentially with
#: them, so far fewer can be explored, and a million flows would only exhaust memory while
#: the scenario is built, before any limit of the search applies.
MAX_PACKETS = 1000
#: Most host moves a scenario may give (each adds a port to a switch).
MAX_MOVES = 1000


@dataclass(frozen=True, slots=True)
class HostSpec:
    """A host's behaviour.

    * ``script``: the packets it sends, in order, as (header, kind) pairs; every send may
      interleave with the rest of the network;
    * ``replies``: it answers each unicast packet addressed to it with a reply packet
      (header reversed; a ``syn`` is answered by a ``syn-ack``, anything else by a ``reply``);
    * ``moves``: attachment points (dpid, port) it may move to, once each, in order, at
      any point of the run (host mobility);
    * ``streams``: how the script splits into streams (flows) the host sends at once: their
      lengths, in script order (empty: one stream, the whole script).
    """

    name: str
    script: tuple[tuple[Header, str], ...] = ()
    replies: bool = True
    moves: tuple[tuple[int, int], ...] = ()
    streams: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.streams and (sum(self.streams) != len(self.script) or min(self.streams) < 1):
            raise InputError(f"host {self.name}: streams {self.streams} do not split its {len(self.script)} packets")

    def stream_bounds(self) -> tuple[tuple[int, int], ...]:
        """(start, end) in the script of each stream (none for a host with no script)."""
        if not self.script:
            return ()
        bounds = []
        start = 0
        for length in self.streams or (len(self.script),):
            bounds.append((start, start + length))
            start += length
        return tuple(bounds)


def host_header(src: str, dst: str, tp_src: int = 0, tp_dst: int = 0, ip_proto: int = 0) -> Header:
    """The header of a packet from host ``src`` to host ``dst`` (MACs named after the hosts,
    their IPv4 addresses: see :func:`nice_attendre.models.addresses.default_ip`)."""
    return Header(src, dst, default_ip(src), default_ip(dst), tp_src, tp_dst, ip_proto)


@dataclass(frozen=True, slots=True)
class Scenario:
    """A topology and the behaviour of every host in it."""

    topology: Topology
    hosts: tuple[HostSpec, ...]
    #: The flows the scenario was made from, when it was (for descriptions).
    flows: tuple[Any, ...] = ()

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
                if hdr.eth_dst not in self.topology.hosts and hdr.eth_dst != BROADCAST and not is_address(hdr.eth_dst):
                    raise InputError(f"host {spec.name} sends to unknown host {hdr.eth_dst!r}")
            for dst in dict.fromkeys(hdr.eth_dst for hdr, _ in spec.script if hdr.eth_dst in self.topology.hosts):
                # Else nothing would ever be delivered, and a search could pass vacuously.
                if not self.topology.connected(spec.name, dst):
                    raise InputError(f"host {spec.name} cannot reach {dst} in topology "
                                     f"{self.topology.name!r}: no path of links between them")

    def describe(self) -> str:
        """One line: who sends what to whom, who answers, who may move."""
        if self.flows:
            parts = [flow.describe() for flow in self.flows]
            parts += [f"{spec.name} may move to " + ", then ".join(f"s{d}:{p}" for d, p in spec.moves)
                      for spec in self.hosts if spec.moves]
            return "; ".join(parts)
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

    @staticmethod
    def from_flows(topology: Topology, flows: Sequence[Any], moves: Sequence[tuple[str, str]] = ()) -> "Scenario":
        """The scenario of ``flows`` (:class:`~nice_attendre.models.flows.Flow` objects or
        ``--flow`` strings): each host sends its flows at once and answers what asks it to;
        ``moves`` are (host, switch name or ``sN``) pairs: the host may move once to a new free
        port of that switch. Raises :class:`InputError` for a flow or move that does not fit
        the topology, and for more than :data:`MAX_PACKETS` packets in all (checked before
        any flow is parsed when there are more flows than that) or :data:`MAX_MOVES` moves."""
        from nice_attendre.models.flows import as_flows

        # Bounded before anything is built from them: each flow sends a packet at least.
        if len(flows) > MAX_PACKETS:
            raise InputError(f"a scenario may send at most {MAX_PACKETS} packets in all (as --packets), and "
                             f"it has {len(flows)} flows")
        if len(moves) > MAX_MOVES:
            raise InputError(f"a scenario may have at most {MAX_MOVES} moves, got {len(moves)}")
        flows = as_flows(flows)
        if not flows:
            raise InputError("a scenario needs at least one flow")
        total = 0
        for flow in flows:
            flow.check(topology)
            total += flow.packets
        if total > MAX_PACKETS:
            raise InputError(f"a scenario may send at most {MAX_PACKETS} packets in all (as --packets), and "
                             f"its {len(flows)} flows send {total}")
        scripts: dict[str, list[tuple[Header, str]]] = {h: [] for h in topology.hosts}
        streams: dict[str, list[int]] = {h: [] for h in topology.hosts}
        for flow in flows:
            script = flow.script()
            scripts[flow.src].extend(script)
            streams[flow.src].append(len(script))
        targets: dict[str, list[tuple[int, int]]] = {h: [] for h in topology.hosts}
        for host, switch in moves:
            if host not in topology.hosts:
                raise InputError(f"move: unknown host {host!r} (hosts: {', '.join(topology.hosts)})")
            dpid = _dpid(topology, switch)
            topology = topology.with_spare_port(dpid)
            targets[host].append((dpid, topology.spare_ports[dpid][-1]))
        specs = tuple(HostSpec(h, tuple(scripts[h]), True, tuple(targets[h]),
                               tuple(streams[h]) if len(streams[h]) > 1 else ())
                      for h in topology.hosts)
        return Scenario(topology, specs, tuple(flows))


def _dpid(topology: Topology, switch: str) -> int:
    """The dpid of a switch named by its graph name, ``sN`` or its dpid."""
    for dpid, name in topology.switch_names.items():
        if str(name) == switch or f"s{dpid}" == switch or str(dpid) == switch:
            return dpid
    names = ", ".join(str(topology.switch_names[d]) for d in topology.switches)
    raise InputError(f"move: unknown switch {switch!r} (switches: {names})")
