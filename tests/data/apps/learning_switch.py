"""A user's learning switch, written against the documented API (not the shipped pyswitch).

Each switch learns which port each MAC address is behind. A packet to a known address gets
an entry towards its destination (matching eth_dst only) and is released along it, after an
entry back towards its source, so that once two hosts have talked both ways every switch
between them has entries for both; a packet to an unknown address is flooded.

Without barriers, the switch may execute the two flow-mods in either order (OpenFlow allows
it; ``--command-order any``), and the packet may be released before the entry back is in:
``barriers=True`` sends a barrier request between them.

``bug="one-way"`` installs only the entry towards the destination: after an exchange, the
next packet towards the host that answered may still find no entry and go to the controller
(NICE's delayed-direct-path bug, found by strict-direct-paths).
"""
from __future__ import annotations

from nice_attendre.models.app import App, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import BROADCAST, Flood, Match, Output

Table = tuple[tuple[tuple[int, str], int], ...]  # ((dpid, mac), port), sorted


class LearningSwitch(App[Table]):
    """Learn source ports; forward to known destinations with entries, flood the rest."""

    default_properties = ("no-forwarding-loops", "no-black-holes", "no-forgotten-packets", "strict-direct-paths")

    def __init__(self, bug: str | None = None, barriers: bool = False) -> None:
        self.bug = self.check_bug(bug, ("one-way",))
        self.barriers = barriers

    def initial_state(self) -> Table:
        return ()

    def on_packet_in(self, state: Table, ev: PacketIn, out: Out) -> Table:
        hdr = ev.packet.hdr
        learned = dict(state)
        learned[(ev.dpid, hdr.eth_src)] = ev.in_port
        port = learned.get((ev.dpid, hdr.eth_dst)) if hdr.eth_dst != BROADCAST else None
        if port is None:
            out.packet_out(ev.dpid, [Flood()], buffer_id=ev.buffer_id, in_port=ev.in_port)
        else:
            if self.bug != "one-way":
                out.flow_mod(ev.dpid, Match.of(eth_dst=hdr.eth_src), [Output(ev.in_port)])
                if self.barriers:
                    out.barrier(ev.dpid)
            out.flow_mod(ev.dpid, Match.of(eth_dst=hdr.eth_dst), [Output(port)], buffer_id=ev.buffer_id)
        return tuple(sorted(learned.items()))
