"""Properties of what hosts received."""
from __future__ import annotations

from typing import Any

from nice_attendre.models.network import Network
from nice_attendre.property import Property


def _in_order(received: tuple[Any, ...]) -> bool:
    last: dict[Any, int] = {}
    for hdr, origin, seq in received:
        key = (hdr, origin)
        if last.get(key, -1) >= seq:
            return False
        last[key] = seq
    return True


def no_reordering(net: Network) -> Property:
    """Packets of a flow arrive in the order their origin sent them."""
    slots = [net.slot_host[h] for h in net.topology.hosts]
    values = net.interned(slots[0])
    verdicts: dict[int, bool] = {}

    def holds(state: Any) -> bool:
        for slot in slots:
            value = state[slot]
            verdict = verdicts.get(value)
            if verdict is None:
                verdict = verdicts[value] = _in_order(values[value].received)
            if not verdict:
                return False
        return True

    def explain(state: Any) -> str:
        bad = [h for h in net.topology.hosts if not _in_order(net.received(state, h))]
        return "; ".join(
            f"{h} received " + ", ".join(f"{origin}#{seq}" for _hdr, origin, seq in net.received(state, h))
            for h in bad)

    return Property.always("no-reordering", holds, "packets of a flow arrive in the order they were sent",
                           explain)
