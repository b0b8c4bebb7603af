"""A user's subnet firewall: the lab subnet 10.0.0.2/31 (h2, h3) reaches the server h1
(10.0.0.1) on port 80 only; everyone else reaches it freely.

Proactive: at switch join, per switch, a rule allowing lab -> server on port 80, a drop rule
(no actions: an intended drop) for the rest of lab -> server, and routes towards the server;
a packet that beats the rules to a switch is judged by the same policy at the controller.
``bug="narrow-prefix"`` writes the lab as 10.0.0.2/32, so h3 gets through on any port.
"""
from __future__ import annotations

from nice_attendre.models.addresses import in_prefix
from nice_attendre.models.app import App, Hop, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output

SERVER, SERVER_IP, WEB = "h1", "10.0.0.1", 80


class PrefixFirewall(App[None]):
    """Lab subnet -> server: port 80 only; intended drops for the rest."""

    def __init__(self, bug: str | None = None) -> None:
        self.bug = self.check_bug(bug, ("narrow-prefix",))
        self.lab = "10.0.0.2/32" if bug == "narrow-prefix" else "10.0.0.2/31"

    def on_switch_join(self, state: None, dpid: int, out: Out) -> None:
        port = out.topology.next_port(dpid, SERVER)
        out.flow_mod(dpid, Match.of(ip_src=self.lab, ip_dst=SERVER_IP, tp_dst=WEB), [Output(port)], priority=300)
        out.flow_mod(dpid, Match.of(ip_src=self.lab, ip_dst=SERVER_IP), [], priority=200)
        out.flow_mod(dpid, Match.of(ip_dst=SERVER_IP), [Output(port)], priority=100)
        return state

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        hdr = ev.packet.hdr
        if in_prefix(hdr.ip_src, self.lab) and hdr.ip_dst == SERVER_IP and hdr.tp_dst != WEB:
            out.packet_out(ev.dpid, [], buffer_id=ev.buffer_id, in_port=ev.in_port)  # denied: drop it
            return state
        path = out.topology.path(ev.dpid, hdr.eth_dst)
        out.install_path([Hop(d, Match.exact(hdr), (Output(p),)) for d, p in path], packet_in=ev)
        return state
