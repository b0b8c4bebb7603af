"""A user's route-flow that reroutes around failed links.

On a packet-in it installs the shortest path that avoids every link it has heard is down (and
drops the packet when its destination cannot be reached). On a
port-status it updates its set of down ports and deletes every entry of every switch, so that
the next packets come to it and get paths that avoid the failed link. ``bug="ignore-failures"``
does nothing on a port-status (as the shipped route-flow): packets keep following entries into
the dead link.
"""
from __future__ import annotations

from collections import deque

from nice_attendre.models.app import App, Hop, Out, PortStatus
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output

Down = frozenset  # of (dpid, port) switch ports whose link is down


class Rerouting(App[frozenset]):
    """Shortest paths around the links known to be down."""

    default_properties = ("no-forwarding-loops", "no-forgotten-packets", "no-stale-routes")

    def __init__(self, bug: str | None = None) -> None:
        self.bug = self.check_bug(bug, ("ignore-failures",))

    def initial_state(self) -> frozenset:
        return frozenset()

    def on_port_status(self, state: frozenset, ev: PortStatus, out: Out) -> frozenset:
        if self.bug == "ignore-failures":
            return state
        state = state - {(ev.dpid, ev.port)} if ev.up else state | {(ev.dpid, ev.port)}
        for dpid in out.topology.switches:
            out.flow_mod(dpid, Match.of(), [], command="delete")
        return state

    def on_packet_in(self, state: frozenset, ev: PacketIn, out: Out) -> frozenset:
        hdr = ev.packet.hdr
        path = self._path(out, state, ev.dpid, hdr.eth_dst)
        if path:
            out.install_path([Hop(d, Match.exact(hdr), (Output(p),)) for d, p in path], packet_in=ev)
        else:  # the destination cannot be reached now: drop the packet
            out.packet_out(ev.dpid, [], buffer_id=ev.buffer_id, in_port=ev.in_port)
        return state

    @staticmethod
    def _path(out: Out, down: frozenset, start: int, host: str) -> list[tuple[int, int]]:
        """Breadth-first from ``start`` to ``host`` over links up at both ends: (dpid, port) hops."""
        topo = out.topology
        target = topo.host_port[host]
        if target in down:
            return []
        previous: dict[int, tuple[int, int] | None] = {start: None}
        queue = deque([start])
        while queue:
            dpid = queue.popleft()
            if dpid == target[0]:
                hops = [(dpid, target[1])]
                while previous[dpid] is not None:
                    dpid, port = previous[dpid]  # type: ignore[misc]
                    hops.append((dpid, port))
                return hops[::-1]
            for port in topo.ports[dpid]:
                peer = topo.links.get((dpid, port))
                if peer is None or peer.is_host or (dpid, port) in down or (peer.node, peer.port) in down:
                    continue
                if peer.node not in previous:
                    previous[peer.node] = (dpid, port)
                    queue.append(peer.node)
        return []
