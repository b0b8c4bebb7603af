"""A user's reactive router whose entries expire (idle timeout), and which answers the packet-in
of a flow it has routed through that switch already by resubmitting the packet to the switch's
table (``Output(TABLE)`` in a packet-out), trusting the entry it installed to forward it.

``forget_expired=False`` (the bug, the default): the app asks for no flow-removed message, so it
never learns that an entry expired. A packet that misses an expired entry goes to the
controller, is resubmitted, misses again, and so on for ever: a livelock that no
at-quiescence property sees, because the execution never ends.

``forget_expired=True`` (correct): the entries notify their removal and the app forgets the
(switch, flow) pair, so the next packet-in of the flow at that switch installs the path again.
The flow-removed message is ahead of the packet-in on the switch's channel (it was sent when
the entry expired, before the packet missed), so the app never resubmits a packet to a table
that lost the entry; a packet-in that overtook the entry's flow-mod is resubmitted after it
(the switch takes its commands in order).
"""
from __future__ import annotations

from nice_attendre.models.app import App, FlowRemoved, Hop, Out
from nice_attendre.models.messages import TABLE, PacketIn
from nice_attendre.models.packet import Match, Output

#: (dpid, eth_src, eth_dst) for each switch the app installed an entry of a flow at
Routed = frozenset


class ResubmittingRouter(App[frozenset]):
    """Shortest paths with idle timeouts; a routed flow's packet-ins are resubmitted to the table."""

    def __init__(self, forget_expired: bool = False) -> None:
        self.forget_expired = forget_expired

    def initial_state(self) -> frozenset:
        return frozenset()

    def on_packet_in(self, state: frozenset, ev: PacketIn, out: Out) -> frozenset:
        hdr = ev.packet.hdr
        if (ev.dpid, hdr.eth_src, hdr.eth_dst) in state:  # the table knows what to do with it
            out.packet_out(ev.dpid, (Output(TABLE),), buffer_id=ev.buffer_id, in_port=ev.in_port,
                           packet=None if ev.buffer_id is not None else ev.packet)
            return state
        path = out.topology.path(ev.dpid, hdr.eth_dst)
        out.install_path([Hop(d, Match.exact(hdr), (Output(p),)) for d, p in path], packet_in=ev,
                         idle_timeout=10, notify_removed=self.forget_expired)
        return state | {(d, hdr.eth_src, hdr.eth_dst) for d, _port in path}

    def on_flow_removed(self, state: frozenset, ev: FlowRemoved, out: Out) -> frozenset:
        fields = dict(ev.match.fields)
        return state - {(ev.dpid, fields.get("eth_src"), fields.get("eth_dst"))}
