"""A user's route-flow that forgets its routes when a link fails, but routes around nothing.

On a port-status it notes which ports are down and deletes every entry of every switch, so
the next packets come to it. On a packet-in it drops the packet when its destination's own
link is down, and else installs the shortest path of the topology: it never checks the links
between switches, so after a failure on that path it routes the next packets into the dead
link. Its tables hold nothing stale (they miss), so ``no-stale-routes`` passes; only a check
that asks what the controller then does (``strict-no-stale-routes``) sees it.
"""
from __future__ import annotations

from nice_attendre.models.app import App, Hop, Out, PortStatus
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output

Down = frozenset  # of (dpid, port): switch ports whose link is down


class FlushingRouter(App[frozenset]):
    """Shortest paths; every entry deleted on a port-status."""

    def initial_state(self) -> frozenset:
        return frozenset()

    def on_port_status(self, state: frozenset, ev: PortStatus, out: Out) -> frozenset:
        for dpid in out.topology.switches:
            out.flow_mod(dpid, Match.of(), [], command="delete")
        return state - {(ev.dpid, ev.port)} if ev.up else state | {(ev.dpid, ev.port)}

    def on_packet_in(self, state: frozenset, ev: PacketIn, out: Out) -> frozenset:
        hdr = ev.packet.hdr
        if out.topology.host_port[hdr.eth_dst] in state:  # its host is cut off: drop the packet
            out.packet_out(ev.dpid, [], buffer_id=ev.buffer_id, in_port=ev.in_port)
            return state
        path = out.topology.path(ev.dpid, hdr.eth_dst)
        out.install_path([Hop(d, Match.exact(hdr), (Output(p),)) for d, p in path], packet_in=ev)
        return state
