"""A user app whose packet-in handler raises: it looks routes up in a table it never filled.

The checker must report this as the violation ``app-exception``, not crash.
"""
from nice_attendre.models.app import App, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output

ROUTES: dict = {}  # never filled: every lookup raises KeyError


class LookupRouting(App[None]):
    """Forward by a route table (which is empty)."""

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        port = ROUTES[ev.packet.hdr.eth_dst]
        out.flow_mod(ev.dpid, Match.of(eth_dst=ev.packet.hdr.eth_dst), [Output(port)], buffer_id=ev.buffer_id)
        return state


class NotAnApp:
    """A class that is not a subclass of App."""
