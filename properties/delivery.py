"""Delivery: what hosts sent reaches whom it was addressed to, and nobody else (NICE's NoDrop)."""
from __future__ import annotations

from typing import Any

from nice_attendre.models.network import Network
from nice_attendre.property import Property


def _undelivered(net: Network, state: Any) -> list[str]:
    """Every unicast packet a host sent to another host of the network that the destination
    never received (by identity: a header rewritten on the way does not matter)."""
    missing = []
    received = {h: {(origin, seq) for _hdr, origin, seq in net.received(state, h)} for h in net.topology.hosts}
    for host in net.topology.hosts:
        for seq, hdr, _kind in net.value(state, f"host:{host}").sent_log:
            dst = net.host_of_mac.get(hdr.eth_dst)
            if dst is not None and dst != host and (host, seq) not in received[dst]:
                missing.append(f"{host}#{seq} never reached {dst}")
    return missing


def delivery(net: Network) -> Property:
    """When nothing more can happen, every packet a host sent to another host reached it, and no
    switch handed a unicast frame to a host it was not addressed to."""
    alerts_slot = net.slot_alerts
    alert_values = net.interned(alerts_slot)
    host_slots = tuple(net.slot_host[h] for h in net.topology.hosts)
    verdicts: dict[tuple[int, ...], bool] = {}

    def misdelivered(state: Any) -> list[str]:
        return [detail for kind, detail in alert_values[state[alerts_slot]] if kind == "delivery"]

    def holds(state: Any) -> bool:
        key = tuple(state[slot] for slot in host_slots)
        verdict = verdicts.get(key)
        if verdict is None:
            verdict = verdicts[key] = not _undelivered(net, state)
        return verdict and not misdelivered(state)

    def explain(state: Any) -> str:
        return "; ".join(misdelivered(state) + _undelivered(net, state))

    return Property.at_quiescence(
        "delivery", holds,
        "when nothing more can happen, every packet a host sent to another host reached it, and no "
        "switch handed a unicast frame to a host it was not addressed to", explain)
