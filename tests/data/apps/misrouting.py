"""A user's routing app with a wrong table: every packet for h2 is routed to h3.

It drops nothing, loops nothing and leaves nothing buffered, so only the delivery property
can tell that h2 never gets its traffic.
"""
from __future__ import annotations

from nice_attendre.models.app import App, Hop, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output


class Misrouting(App[None]):
    """Shortest-path routing, except that h2's traffic goes to h3."""

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        hdr = ev.packet.hdr
        target = "h3" if hdr.eth_dst == "h2" else hdr.eth_dst
        path = out.topology.path(ev.dpid, target)
        out.install_path([Hop(d, Match.exact(hdr), (Output(p),)) for d, p in path], packet_in=ev)
        return state
