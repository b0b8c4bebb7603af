"""A user's OpenFlow 1.3 learning switch, written the way Ryu's OpenFlow 1.3 samples are (our own
code, against the documented API): when a switch joins, the app installs the table-miss entry
(priority 0, matching everything, output to the controller with the whole packet); on a
packet-in it learns the source's port, installs an entry (in-port, eth_dst) towards a known
destination and sends the packet there with a packet-out, or floods it.

A frame that reaches a switch before its table-miss entry is in is dropped (OpenFlow 1.3: a
miss without a table-miss entry drops the packet): by default hosts may send while the
switches join, so ``no-black-holes`` fails after two transitions; with ``--joins-first`` the
traffic starts after the entries are in, and ``delivery`` holds.

``bug="no-flood"`` forgets to flood a packet to an unknown destination (the packet-in carried
the whole packet, so it is gone): ``delivery`` fails, with or without ``--joins-first``.
"""
from __future__ import annotations

from nice_attendre.models.app import App, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import BROADCAST, Flood, Match, Output, ToController

Table = tuple[tuple[tuple[int, str], int], ...]  # ((dpid, mac), port), sorted


class TableMissSwitch(App[Table]):
    """OpenFlow 1.3 learning switch: table-miss entry at join, learned entries on packet-in."""

    openflow_version = "1.3"

    def __init__(self, bug: str | None = None) -> None:
        self.bug = self.check_bug(bug, ("no-flood",))

    def initial_state(self) -> Table:
        return ()

    def on_switch_join(self, state: Table, dpid: int, out: Out) -> Table:
        out.flow_mod(dpid, Match.of(), [ToController()], priority=0)
        return state

    def on_packet_in(self, state: Table, ev: PacketIn, out: Out) -> Table:
        hdr = ev.packet.hdr
        learned = dict(state)
        learned[(ev.dpid, hdr.eth_src)] = ev.in_port
        port = learned.get((ev.dpid, hdr.eth_dst)) if hdr.eth_dst != BROADCAST else None
        if port is None:
            if self.bug != "no-flood":
                out.packet_out(ev.dpid, [Flood()], in_port=ev.in_port, packet=ev.packet)
        else:
            out.flow_mod(ev.dpid, Match.of(in_port=ev.in_port, eth_dst=hdr.eth_dst), [Output(port)], priority=1)
            out.packet_out(ev.dpid, [Output(port)], in_port=ev.in_port, packet=ev.packet)
        return tuple(sorted(learned.items()))
