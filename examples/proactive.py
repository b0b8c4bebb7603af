"""A user's own app, outside the package: proactive shortest-path routing.

When a switch joins, the app installs one entry per host: packets for that host's MAC go
out of the port on a shortest path towards it. A packet that reaches a switch before those
entries are installed (the checker explores that race) comes to the controller, which
sends it on with a packet-out.

    nice-attendre verify examples/proactive.py:ProactiveRouting --topology linear:3 --packets 2

Without ``on_packet_in`` the checker finds such early packets forgotten in switch buffers
(``no-forgotten-packets``): try ``-o early_packets=False``.
"""
from __future__ import annotations

from nice_attendre.models.app import App, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output


class ProactiveRouting(App[None]):
    """Install a route to every host on each switch as it joins."""

    def __init__(self, early_packets: bool = True) -> None:
        self.early_packets = early_packets

    def on_switch_join(self, state: None, dpid: int, out: Out) -> None:
        for host in out.topology.hosts:
            port = out.topology.next_port(dpid, host)
            if port is not None:
                out.flow_mod(dpid, Match.of(eth_dst=host), [Output(port)])
        return state

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        port = out.topology.next_port(ev.dpid, ev.packet.hdr.eth_dst)
        if self.early_packets and port is not None:
            out.packet_out(ev.dpid, [Output(port)], buffer_id=ev.buffer_id)
        return state
