"""A user's reactive router whose entries time out (idle 5 s), correct and buggy.

On a packet-in it installs the shortest path for the packet's flow with an idle timeout and
releases the packet. An entry may expire between any two packets (time is not modelled), so
a packet of a flow that already reached its destination may miss again: that is no fault of
the app, and ``direct-paths`` must not count it.

``bug="no-reinstall"`` remembers the flows it routed and, for a flow it saw before, only
sends the packet on (a packet-out towards the destination) without installing anything: once
an entry has expired, every later packet of the flow goes to the controller, which
``direct-paths`` must still catch.
"""
from __future__ import annotations

from nice_attendre.models.app import App, Hop, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Header, Match, Output

Routed = tuple[Header, ...]  # flows routed so far, sorted (the buggy variant's memory)


class IdleRouter(App[Routed]):
    """Shortest paths with idle timeouts (``bug="no-reinstall"``: only the first time)."""

    def __init__(self, bug: str | None = None) -> None:
        self.bug = self.check_bug(bug, ("no-reinstall",))

    def initial_state(self) -> Routed:
        return ()

    def on_packet_in(self, state: Routed, ev: PacketIn, out: Out) -> Routed:
        hdr = ev.packet.hdr
        path = out.topology.path(ev.dpid, hdr.eth_dst)
        if self.bug == "no-reinstall" and hdr in state:
            out.packet_out(ev.dpid, [Output(path[0][1])], buffer_id=ev.buffer_id, in_port=ev.in_port,
                           packet=ev.packet if ev.buffer_id is None else None)
            return state
        out.install_path([Hop(d, Match.exact(hdr), (Output(p),)) for d, p in path], packet_in=ev, idle_timeout=5)
        return state if self.bug is None or hdr in state else tuple(sorted(state + (hdr,)))
