"""A user's virtual-IP load balancer: clients talk to 10.0.0.100, replicas h2 and h3 answer.

On the first packet of a client's connection the switch gets two entries: client -> VIP
rewritten to the chosen replica (MAC and IP) and sent to it, and replica -> client rewritten
back to come from the VIP. The replica is chosen from the client's source port, so every
packet of a connection goes to the same replica. ``bug="round-robin"`` takes the next replica
on every packet-in instead: when several packets of one connection reach the controller (a
type-1 race under plain OpenFlow), they are split between replicas.
"""
from __future__ import annotations

from nice_attendre.models.addresses import default_ip
from nice_attendre.models.app import App, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output, SetField

VIP = "10.0.0.100"
REPLICAS = ("h2", "h3")


class LoadBalancer(App[int]):
    """Connections to the virtual IP go to one replica each (chosen by source port)."""

    def __init__(self, bug: str | None = None) -> None:
        self.bug = self.check_bug(bug, ("round-robin",))

    def initial_state(self) -> int:
        return 0  # packet-ins seen (the buggy variant's round-robin counter)

    def on_packet_in(self, state: int, ev: PacketIn, out: Out) -> int:
        hdr = ev.packet.hdr
        topo = out.topology
        if hdr.ip_dst != VIP:  # ordinary traffic: straight to its host
            port = topo.next_port(ev.dpid, hdr.eth_dst)
            if port is not None:
                out.flow_mod(ev.dpid, Match.exact(hdr), [Output(port)], buffer_id=ev.buffer_id)
            return state
        if self.bug == "round-robin":
            replica = REPLICAS[state % len(REPLICAS)]
        else:
            replica = REPLICAS[hdr.tp_src % len(REPLICAS)]
        back = Match.of(eth_src=replica, eth_dst=hdr.eth_src, ip_src=default_ip(replica), tp_src=hdr.tp_dst,
                        tp_dst=hdr.tp_src)
        out.flow_mod(ev.dpid, back, [SetField("ip_src", VIP), SetField("eth_src", VIP),
                                     Output(topo.next_port(ev.dpid, hdr.eth_src))])
        out.flow_mod(ev.dpid, Match.exact(hdr), [SetField("eth_dst", replica), SetField("ip_dst", default_ip(replica)),
                                                 Output(topo.next_port(ev.dpid, replica))], buffer_id=ev.buffer_id)
        return state + 1
