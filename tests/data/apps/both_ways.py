"""A user app that installs both directions of a flow in one handler call (two paths).

On a packet-in it installs the path to the destination (releasing the buffered packet) and
the path back from the destination's switch. Under Attendre a switch on both paths gets two
Attendre Commands for one message set: one per path.
"""
from nice_attendre.models.app import App, Hop, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output


class BothWays(App[None]):
    """Reactive routing: the forward and the reverse path of a flow at once."""

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        hdr = ev.packet.hdr
        forward = out.topology.path(ev.dpid, hdr.eth_dst)
        out.install_path([Hop(d, Match.exact(hdr), (Output(p),)) for d, p in forward], packet_in=ev)
        back = out.topology.path(out.topology.host_port[hdr.eth_dst][0], hdr.eth_src)
        out.install_path([Hop(d, Match.exact(hdr.reversed()), (Output(p),)) for d, p in back])
        return state
