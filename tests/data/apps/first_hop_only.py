"""A user's routing app that only answers packet-ins from a flow's first switch.

It installs the whole path when the sender's own switch asks, and ignores packet-ins from
any other switch, assuming the path is in place before the packet gets there. Plain OpenFlow
promises no such thing (a type-2 race: the packet can beat the flow-mod to the next switch,
which then asks and waits forever). Attendre makes that switch buffer the packet until its
flow-mod arrives, so the same app passes there: a pass under Attendre says nothing about
plain OpenFlow switches (paper IV.D holds one way only).
"""
from nice_attendre.models.app import App, Hop, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output


class FirstHopOnly(App[None]):
    """Install a flow's path when its first switch asks; ignore the other switches."""

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        hdr = ev.packet.hdr
        if out.topology.host_port[hdr.eth_src][0] != ev.dpid:
            return state  # "cannot happen": the path is installed from the first switch
        path = out.topology.path(ev.dpid, hdr.eth_dst)
        out.install_path([Hop(d, Match.exact(hdr), (Output(p),)) for d, p in path], packet_in=ev)
        return state
