"""Properties of what hosts received: order and duplicates."""
from __future__ import annotations

from typing import Any, Callable

from nice_attendre.models.network import Network
from nice_attendre.property import Property

Received = tuple[Any, ...]  # (header, origin, seq) of each delivery, in order


def _first_receipts(received: Received) -> list[tuple[Any, str, int]]:
    """The deliveries that were the first of their packet (later copies left out)."""
    seen: set[tuple[str, int]] = set()
    first = []
    for hdr, origin, seq in received:
        if (origin, seq) not in seen:
            seen.add((origin, seq))
            first.append((hdr, origin, seq))
    return first


def _reordered(received: Received) -> str:
    """Why the first receipts of some flow are out of sending order ("" when they are not)."""
    last: dict[Any, int] = {}
    for hdr, origin, seq in _first_receipts(received):
        key = (hdr, origin)
        if last.get(key, -1) > seq:
            return f"{origin}#{seq} after {origin}#{last[key]}"
        last[key] = max(seq, last.get(key, -1))
    return ""


def _duplicated(received: Received) -> str:
    """The first packet received twice ("" when none was)."""
    seen: set[tuple[str, int]] = set()
    for _hdr, origin, seq in received:
        if (origin, seq) in seen:
            return f"{origin}#{seq} twice"
        seen.add((origin, seq))
    return ""


def _per_host(net: Network, name: str, check: Callable[[Received], str], description: str) -> Property:
    """An ``always`` property that ``check`` (a verdict per received list) finds nothing in
    any host's deliveries; verdicts cached per host value."""
    slots = [net.slot_host[h] for h in net.topology.hosts]
    values = net.interned(slots[0])
    verdicts: dict[int, bool] = {}

    def holds(state: Any) -> bool:
        for slot in slots:
            value = state[slot]
            verdict = verdicts.get(value)
            if verdict is None:
                verdict = verdicts[value] = not check(values[value].received)
            if not verdict:
                return False
        return True

    def explain(state: Any) -> str:
        found = []
        for host in net.topology.hosts:
            received = net.received(state, host)
            why = check(received)
            if why:
                found.append(f"{host} received {why} (" + ", ".join(f"{o}#{s}" for _h, o, s in received) + ")")
        return "; ".join(found)

    return Property.always(name, holds, description, explain)


def no_reordering(net: Network) -> Property:
    """Packets of a flow first arrive in the order their origin sent them (a second copy of a
    packet is a duplicate, judged by no-duplicates, not a reordering)."""
    return _per_host(net, "no-reordering", _reordered,
                     "packets of a flow first arrive in the order they were sent")


def no_duplicates(net: Network) -> Property:
    """No host receives the same packet twice."""
    return _per_host(net, "no-duplicates", _duplicated, "no host receives the same packet twice")
