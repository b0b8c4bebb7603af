"""A user's router that resubmits packets to the flow table (OFPP_TABLE).

``ResubmitByPacketOut`` installs the path's entries, then sends the packet through the
switch's table with a packet-out to TABLE: OpenFlow allows OFPP_TABLE there, and the packet
follows the new entry. ``ResubmitInEntry`` puts ``Output(TABLE)`` in a flow entry, which
OpenFlow allows only in packet-outs: a switch refuses such a flow-mod (OFPET_BAD_ACTION,
OFPBAC_BAD_OUT_PORT), so the checker reports the call as an app-exception.
"""
from __future__ import annotations

from nice_attendre.models.app import App, Out
from nice_attendre.models.messages import TABLE, PacketIn
from nice_attendre.models.packet import Match, Output


class ResubmitByPacketOut(App[None]):
    """Shortest-path routing: an entry per hop, then the buffered packet is resubmitted to the table."""

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        hdr = ev.packet.hdr
        for dpid, port in out.topology.path(ev.dpid, hdr.eth_dst):
            out.flow_mod(dpid, Match.of(eth_dst=hdr.eth_dst), [Output(port)])
        out.packet_out(ev.dpid, [Output(TABLE)], buffer_id=ev.buffer_id, in_port=ev.in_port)
        return state


class ResubmitInEntry(App[None]):
    """The bug: the entry at the packet-in switch resubmits to the table (a loop for ever)."""

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        out.flow_mod(ev.dpid, Match.of(eth_dst=ev.packet.hdr.eth_dst), [Output(TABLE)], buffer_id=ev.buffer_id)
        return state
