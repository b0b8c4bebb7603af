"""A user's stateless firewall in front of a server (h1: the server, h2: a client).

At switch join every switch gets its policy: packets the client sends to the server on TCP
port 80 are forwarded; any other packet from the client to the server is dropped by an entry
with no actions (an intended drop). Everything else takes the shortest path, installed
reactively; a packet that reaches a switch before the policy does goes to the controller,
which applies the same policy.

Bug variants: ``bug="open"`` forgets the drop rule (the client reaches any port of the
server); ``bug="early-packets"`` routes every packet-in without checking the policy, so a
packet that beats the policy entries to a switch gets through.
"""
from __future__ import annotations

from nice_attendre.models.app import App, Hop, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output

SERVER, CLIENT, ALLOWED_PORT = "h1", "h2", 80


class Firewall(App[None]):
    """Allow client -> server on port 80 only; route everything else on shortest paths."""

    def __init__(self, bug: str | None = None) -> None:
        self.bug = self.check_bug(bug, ("open", "early-packets"))

    def on_switch_join(self, state: None, dpid: int, out: Out) -> None:
        port = out.topology.next_port(dpid, SERVER)
        if port is not None:
            out.flow_mod(dpid, Match.of(eth_src=CLIENT, eth_dst=SERVER, tp_dst=ALLOWED_PORT), [Output(port)],
                         priority=200)
        if self.bug != "open":
            out.flow_mod(dpid, Match.of(eth_src=CLIENT, eth_dst=SERVER), [], priority=100)
        return state

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        hdr = ev.packet.hdr
        denied = hdr.eth_src == CLIENT and hdr.eth_dst == SERVER and hdr.tp_dst != ALLOWED_PORT
        if denied and self.bug is None:
            out.packet_out(ev.dpid, [], buffer_id=ev.buffer_id, in_port=ev.in_port)  # drop it
            return state
        path = out.topology.path(ev.dpid, hdr.eth_dst)
        out.install_path([Hop(d, Match.exact(hdr), (Output(p),)) for d, p in path], packet_in=ev)
        return state
