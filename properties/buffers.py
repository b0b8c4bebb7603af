"""Properties of what switches hold when the network is quiescent."""
from __future__ import annotations

from typing import Any

from nice_attendre.models.network import Network
from nice_attendre.property import Property


def no_forgotten_packets(net: Network) -> Property:
    """At quiescence no switch still holds a packet (in its packet buffer or an Attendre buffer)."""

    def holds(state: Any) -> bool:
        return not net.buffered_packets(state)

    def explain(state: Any) -> str:
        return "; ".join(f"s{dpid} still holds {packet}" for dpid, packet in net.buffered_packets(state))

    return Property.at_quiescence(
        "no-forgotten-packets", holds,
        "when nothing more can happen, no switch still holds a buffered packet", explain)
