"""A learning switch written for the checker's own API: the native twin of the Ryu app
``examples/ryu/learning_switch_10.py``.

Every switch learns the port behind each source address it sees. A packet for an address it
has learned gets an entry (in-port, source, destination -> the learned port) installed
together with the packet itself (a flow-mod/packet-out); any other packet is flooded. It
makes the same decisions as the Ryu app, so the two have the same state space; the
benchmark ``benchmarks/ryu_vs_native.py`` compares their speed.
"""
from __future__ import annotations

from nice_attendre.models.app import App, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Flood, Match, Output

#: ((dpid, address), port) pairs, sorted: where each switch learned each address.
Learned = tuple[tuple[tuple[int, str], int], ...]


class LearningSwitch(App[Learned]):
    """Learning switch: exact entries per learned destination, flooding otherwise."""

    #: As for Ryu apps: later packets of a flow reach the controller by design (no direct-paths).
    default_properties = ("no-forwarding-loops", "no-black-holes", "no-forgotten-packets")

    def initial_state(self) -> Learned:
        return ()

    def on_packet_in(self, state: Learned, ev: PacketIn, out: Out) -> Learned:
        hdr = ev.packet.hdr
        learned = dict(state)
        learned[(ev.dpid, hdr.eth_src)] = ev.in_port
        port = learned.get((ev.dpid, hdr.eth_dst))
        if port is not None:
            out.flow_mod(ev.dpid, Match.of(in_port=ev.in_port, eth_src=hdr.eth_src, eth_dst=hdr.eth_dst),
                         [Output(port)], buffer_id=ev.buffer_id)
        else:
            out.packet_out(ev.dpid, [Flood()], buffer_id=ev.buffer_id, in_port=ev.in_port)
        return tuple(sorted(learned.items()))
