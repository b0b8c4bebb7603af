"""A firewall for the discovery tests: TCP traffic to port 8080 from the quarantined prefix
10.66.0.0/16 is dropped at the first switch (a drop entry for the whole prefix); frames to
no host (broadcast, an unknown address) are dropped; everything else takes the shortest path.

``ForgetfulFirewall`` has the bug: its drop entry is installed without the packet-in's buffer
id, so the packet that triggered it stays in the switch's buffer for ever
(``no-forgotten-packets``). The default traffic (h1 pings h2) never uses port 8080 nor that
prefix: ``verify`` passes, ``verify --discover`` finds the packet and the bug.
"""
from __future__ import annotations

from nice_attendre.models.app import App, Hop, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output

QUARANTINED = "10.66."
QUARANTINED_PREFIX = "10.66.0.0/16"
PORT = 8080
DROP_PRIORITY = 40000


def quarantined(ip_src: str, tp_dst: int) -> bool:
    """Whether a packet from ``ip_src`` to port ``tp_dst`` is dropped."""
    return tp_dst == PORT and ip_src.startswith(QUARANTINED)


class QuarantineFirewall(App[None]):
    """Drop 10.66.0.0/16 -> port 8080 with a drop entry; route the rest on shortest paths."""

    #: a dropped packet is the firewall's intent, not a lost one: no delivery property
    default_properties = ("no-forwarding-loops", "no-forgotten-packets")

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        hdr = ev.packet.hdr
        if quarantined(hdr.ip_src, hdr.tp_dst):
            self.drop_quarantined(ev, out)
            return state
        if hdr.eth_dst not in out.topology.host_port:  # broadcast, or an address no host has
            out.packet_out(ev.dpid, [], buffer_id=ev.buffer_id, in_port=ev.in_port)
            return state
        path = out.topology.path(ev.dpid, hdr.eth_dst)
        out.install_path([Hop(d, Match.exact(hdr), (Output(p),)) for d, p in path], packet_in=ev)
        return state

    def drop_quarantined(self, ev: PacketIn, out: Out) -> None:
        """A drop entry for the prefix and port, which also drops the buffered packet."""
        out.flow_mod(ev.dpid, Match.of(ip_src=QUARANTINED_PREFIX, tp_dst=PORT), [], priority=DROP_PRIORITY,
                     buffer_id=ev.buffer_id)


class ForgetfulFirewall(QuarantineFirewall):
    """The bug: the drop entry forgets the packet-in's buffer id."""

    def drop_quarantined(self, ev: PacketIn, out: Out) -> None:
        out.flow_mod(ev.dpid, Match.of(ip_src=QUARANTINED_PREFIX, tp_dst=PORT), [], priority=DROP_PRIORITY)
