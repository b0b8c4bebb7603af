"""A user's proactive app for star:3 whose entries overlap at equal priority (issue 29).

Switch s1 forwards by destination ({eth_dst=h2} -> h2's port) and "mirrors" h1's traffic
to the monitor h3 ({ip_src=10.0.0.1} -> h3's port), both at priority 100. A packet from h1
to h2 matches both: OpenFlow leaves the choice to the switch, so the packet may go to h3
(a misdelivery). ``MirrorEth`` and ``MirrorIp`` are the same two entries with the fields
named the other way round (``MirrorIp``: {ip_dst=10.0.0.2} and {eth_src=h1}); a checker
that breaks the tie by the entries' order in its table passes one and fails the other. A
packet that comes before the entries is resubmitted to the table by a packet-out.
``MirrorBelow`` is the correct version: the mirror entry has the lower priority.
"""
from __future__ import annotations

from typing import Any

from nice_attendre.models.app import App, Out
from nice_attendre.models.messages import TABLE, PacketIn
from nice_attendre.models.packet import Match, Output
from nice_attendre.models.scenario import Scenario
from nice_attendre.models.topology import Topology


class MirrorEth(App[None]):
    """Forward to h2 by {eth_dst=h2}, mirror h1's traffic by {ip_src=10.0.0.1}: equal priority."""

    default_topology = "star:3"
    mirror_priority = 100

    def forward(self) -> Match:
        return Match.of(eth_dst="h2")

    def mirror(self) -> Match:
        return Match.of(ip_src="10.0.0.1")

    def scenario(self, topology: Topology, packets: int, sender: Any = None, receiver: Any = None) -> Scenario:
        return Scenario.ping(topology, packets, sender or "h1", receiver or "h2")

    def on_switch_join(self, state: None, dpid: int, out: Out) -> None:
        out.flow_mod(dpid, self.forward(), [Output(2)], priority=100)
        out.flow_mod(dpid, self.mirror(), [Output(3)], priority=self.mirror_priority)
        out.flow_mod(dpid, Match.of(eth_dst="h1"), [Output(1)], priority=200)
        return state

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        # A packet that came before the entries: resubmitted to the table once they are in.
        out.packet_out(ev.dpid, [Output(TABLE)], buffer_id=ev.buffer_id, in_port=ev.in_port)
        return state


class MirrorIp(MirrorEth):
    """The same entries, the fields named the other way round."""

    def forward(self) -> Match:
        return Match.of(ip_dst="10.0.0.2")

    def mirror(self) -> Match:
        return Match.of(eth_src="h1")


class MirrorBelow(MirrorEth):
    """Correct: forwarding wins, the mirror entry only takes what forwarding does not."""

    mirror_priority = 50
