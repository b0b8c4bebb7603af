"""A user's NAT: inside hosts h1 and h2 reach the outside host h3 from one public address.

Topology ``star:3`` (one switch, h1 and h2 inside, h3 outside). On the first packet of an
inside connection (host, source port) the app picks a public port and installs two entries:
outbound, the packet's source rewritten to the public address and port, and inbound, packets
to that public port rewritten back to the inside host. h3 answers the public address, so only
the NAT knows whom an answer is for.

``bug="port-collision"`` keeps the inside source port as the public port (port preservation
without a collision check): two inside hosts using the same source port share one public
port, the second inbound entry replaces the first, and h1's answer is handed to h2. Nothing
is dropped, looped, duplicated or left buffered: only a ``delivery`` that pairs answers with
requests sees it.

A scenario of two concurrent connections with the same source port, as a user would give it
(``--scenario tests/data/apps/nat.toml``)::

    h1->h3:sport=1000,dport=80    h2->h3:sport=1000,dport=80
"""
from __future__ import annotations

from nice_attendre.models.addresses import default_ip
from nice_attendre.models.app import App, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output, SetField

#: The NAT's public address (its MAC and IPv4 address in this model).
PUBLIC = "10.0.0.200"
INSIDE = ("h1", "h2")
#: The first public port a correct NAT hands out.
FIRST_PORT = 40000

Mappings = tuple[tuple[tuple[str, int], int], ...]  # ((inside host, its port), public port), sorted


class Nat(App[Mappings]):
    """Source NAT for the inside hosts, one public port per connection."""

    default_topology = "star:3"

    def __init__(self, bug: str | None = None) -> None:
        self.bug = self.check_bug(bug, ("port-collision",))

    def initial_state(self) -> Mappings:
        return ()

    def on_packet_in(self, state: Mappings, ev: PacketIn, out: Out) -> Mappings:
        hdr = ev.packet.hdr
        topo = out.topology
        if hdr.eth_src not in INSIDE:  # an answer with no inbound entry: nothing to do but send it on
            port = topo.next_port(ev.dpid, hdr.eth_dst) if hdr.eth_dst in topo.hosts else None
            if port is not None:
                out.packet_out(ev.dpid, [Output(port)], buffer_id=ev.buffer_id, in_port=ev.in_port,
                               packet=ev.packet if ev.buffer_id is None else None)
            return state
        key = (hdr.eth_src, hdr.tp_src)
        known = dict(state)
        public = known.get(key)
        if public is None:
            public = hdr.tp_src if self.bug == "port-collision" else FIRST_PORT + len(state)
            state = tuple(sorted(state + ((key, public),)))
        inbound = Match.of(eth_dst=PUBLIC, ip_dst=PUBLIC, tp_dst=public, eth_src=hdr.eth_dst)
        out.flow_mod(ev.dpid, inbound, [SetField("eth_dst", hdr.eth_src), SetField("ip_dst", default_ip(hdr.eth_src)),
                                        SetField("tp_dst", hdr.tp_src), Output(topo.next_port(ev.dpid, hdr.eth_src))])
        out.flow_mod(ev.dpid, Match.exact(hdr), [SetField("eth_src", PUBLIC), SetField("ip_src", PUBLIC),
                                                 SetField("tp_src", public),
                                                 Output(topo.next_port(ev.dpid, hdr.eth_dst))],
                     buffer_id=ev.buffer_id)
        return state
