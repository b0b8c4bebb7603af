"""A user's router that answers a repeated packet-in with a MODIFY flow-mod.

On the first packet-in for a destination it installs the path (a flow-mod/packet-out at the
packet-in switch, flow-mods at the others) and remembers the destination. A later packet of
the flow can miss at a switch before that switch's flow-mod arrives; ``ModifyRepeat`` then
answers with a modify of the entry carrying the packet-in's buffer id, which OpenFlow
applies to the buffered packet as an add does (only deletes ignore the buffer id).
``ModifyForgets`` answers with the same modify but without the buffer id: the packet stays
buffered for ever (its bug).
"""
from __future__ import annotations

from nice_attendre.models.app import App, Hop, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output, ToController


class ModifyRepeat(App[frozenset]):
    """Routes each destination once; a repeated packet-in gets a modify with its buffer id."""

    keep_buffer_id = True

    def initial_state(self) -> frozenset:
        return frozenset()

    def on_packet_in(self, state: frozenset, ev: PacketIn, out: Out) -> frozenset:
        dst = ev.packet.hdr.eth_dst
        path = out.topology.path(ev.dpid, dst)
        if not path:
            return state
        match = Match.of(eth_dst=dst)
        if dst not in state:
            out.install_path([Hop(d, match, (Output(p),)) for d, p in path], packet_in=ev)
            return state | {dst}
        buffer_id = ev.buffer_id if self.keep_buffer_id else None
        out.flow_mod(ev.dpid, match, [Output(path[0][1])], command="modify", buffer_id=buffer_id)
        return state


class ModifyForgets(ModifyRepeat):
    """The bug: the modify answering a repeated packet-in has no buffer id."""

    keep_buffer_id = False


class ModifyRepeat13(ModifyRepeat):
    """ModifyRepeat speaking OpenFlow 1.3: a table-miss entry sends misses to the controller
    (buffered), and a flow-mod's buffered packet goes through the table."""

    openflow_version = "1.3"

    def on_switch_join(self, state: frozenset, dpid: int, out: Out) -> frozenset:
        out.flow_mod(dpid, Match.of(), [ToController(buffered=True)], priority=0)
        return state
