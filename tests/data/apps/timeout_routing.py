"""A user's reactive router whose entries time out (idle 10 s), and which counts, per flow, the
packet-ins it handled and the flow-removed messages it got."""
from __future__ import annotations

from nice_attendre.models.app import App, FlowRemoved, Hop, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output

Counts = tuple[int, int]  # (packet-ins handled, flow-removed messages received)


class TimeoutRouting(App[Counts]):
    """Shortest paths with idle timeouts; the switch reports expired entries."""

    def initial_state(self) -> Counts:
        return (0, 0)

    def on_packet_in(self, state: Counts, ev: PacketIn, out: Out) -> Counts:
        hdr = ev.packet.hdr
        path = out.topology.path(ev.dpid, hdr.eth_dst)
        out.install_path([Hop(d, Match.exact(hdr), (Output(p),)) for d, p in path], packet_in=ev,
                         idle_timeout=10, notify_removed=True)
        return (state[0] + 1, state[1])

    def on_flow_removed(self, state: Counts, ev: FlowRemoved, out: Out) -> Counts:
        return (state[0], state[1] + 1)
