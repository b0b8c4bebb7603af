"""A firewall for the coverage tests: SSH (TCP port 22) to any host is dropped, and so is
every packet from the prefix 10.9.0.0/16; everything else takes the shortest path.

The default traffic (h1 pings h2) never uses port 22 nor that prefix: the search never takes
the branches that drop, and ``verify --coverage`` names them.
"""
from __future__ import annotations

from nice_attendre.models.app import App, Hop, Out
from nice_attendre.models.messages import FlowRemoved, PacketIn
from nice_attendre.models.packet import Match, Output

SSH = 22
BLOCKED_PREFIX = "10.9."


def blocked(ip_src: str, tp_dst: int) -> bool:
    """Whether the firewall drops a packet from ``ip_src`` to port ``tp_dst``."""
    if tp_dst == SSH:
        return True
    if ip_src.startswith(BLOCKED_PREFIX):
        return True
    return False


class CoverageFirewall(App[None]):
    """Drop SSH and the prefix 10.9.0.0/16; route everything else on shortest paths."""

    #: a dropped packet is the firewall's intent, not a lost one: no delivery property
    default_properties = ("no-forwarding-loops", "no-forgotten-packets")

    def on_switch_join(self, state: None, dpid: int, out: Out) -> None:
        return state

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        hdr = ev.packet.hdr
        if blocked(hdr.ip_src, hdr.tp_dst):
            out.packet_out(ev.dpid, [], buffer_id=ev.buffer_id, in_port=ev.in_port)  # drop it
            return state
        path = out.topology.path(ev.dpid, hdr.eth_dst)
        out.install_path([Hop(d, Match.exact(hdr), (Output(p),)) for d, p in path], packet_in=ev)
        return state

    def on_flow_removed(self, state: None, ev: FlowRemoved, out: Out) -> None:
        if ev.dpid:  # never called: the firewall asks for no flow-removed messages
            return state
        return state

    def audit(self, ev: PacketIn) -> str:
        """A method no handler calls."""
        return f"{ev.packet.hdr.eth_src} -> {ev.packet.hdr.eth_dst}"

    def describe(self) -> str:  # the App API's, not a handler: runs while the network is built
        return "CoverageFirewall (SSH and 10.9.0.0/16 dropped)"


class PlainRouter(CoverageFirewall):
    """No rule: routes every packet (another app of the same file, inheriting the others)."""

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        path = out.topology.path(ev.dpid, ev.packet.hdr.eth_dst)
        out.install_path([Hop(d, Match.exact(ev.packet.hdr), (Output(p),)) for d, p in path], packet_in=ev)
        return state
