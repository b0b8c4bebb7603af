"""Route-flow (paper III): install the whole shortest path of a flow on its first packet-in.

On a packet-in the app looks up the shortest path from the packet-in switch to the
destination host and installs it with one ``install_path`` call: a flow-mod/packet-out for
the packet-in switch, flow-mods for the following switches. The entries match the packet's
header exactly (any in-port). The app keeps no state.

``bug="forget-last-hop"`` makes the deliberately buggy variant: the last switch of every
path is left out, so packets reach it without an entry and, when it asks, it is given an
empty path: they stay in its buffer forever (found by ``no-forgotten-packets``).
"""
from __future__ import annotations

from nice_attendre.models.app import App, Hop, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output

BUGS = ("forget-last-hop",)


class RouteFlow(App[None]):
    """Shortest-path routing: one path install per packet-in."""

    name = "route-flow"

    def __init__(self, bug: str | None = None) -> None:
        self.bug = self.check_bug(bug, BUGS)

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        hdr = ev.packet.hdr
        path = out.topology.path(ev.dpid, hdr.eth_dst)
        if self.bug == "forget-last-hop":
            path = path[:-1]
        match = Match.exact(hdr)
        out.install_path([Hop(dpid, match, (Output(port),)) for dpid, port in path], packet_in=ev)
        return state

    def describe(self) -> str:
        return "route-flow" + (f" (bug: {self.bug})" if self.bug else "")
