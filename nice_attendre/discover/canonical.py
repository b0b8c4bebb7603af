"""From the solver's values to a canonical set of packets.

The solver's choices (which value among those that take a path) and CrossHair's search
order are not part of the answer. So every realised path becomes a packet a host can send
(:meth:`~nice_attendre.discover.domain.Domain.candidate`), which is replayed concretely to
learn the path it really takes: the set of the app's lines it runs, the exception it
raises if any, and what it asks of the switches (a replica choice that is an index, not a
branch, still differs there). Per path, the smallest packet is kept, then shrunk field by field toward
plain values (the first sender and destination in the topology's order, no protocol, port
0, the hosts' own addresses, else address octets to 0),
each change kept only if the replay still takes the same path. The packets are sorted
(:func:`~nice_attendre.discover.domain.key`): the same app, state and topology give the
same packets whatever the solver chose.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from nice_attendre.discover.domain import Candidate, Domain, key
from nice_attendre.models.addresses import default_ip

#: A packet's path: the lines of the app it runs, the exception it raises (or None), and
#: what it asks of the switches (:func:`~nice_attendre.discover.handler.behaviour`).
Path = tuple[frozenset[tuple[str, int]], str | None, Any]
#: The small port numbers tried when port 0 takes another path.
SMALL_PORTS = (0, 1, 2, 3)


@dataclass(frozen=True)
class Found:
    """A discovered packet, the path it takes in app state number ``state``."""

    packet: Candidate
    lines: frozenset[tuple[str, int]]
    raised: str | None
    state: int
    behaviour: Any = ()


def canonical(domain: Domain, realised: Iterable[dict[str, Any]], replay: Callable[[Candidate], Path],
              state: int) -> list[Found]:
    """One shrunk packet per distinct path among the ``realised`` paths (see the module docstring)."""
    by_path: dict[Path, Candidate] = {}
    for values in realised:
        candidate = domain.candidate(values)
        if candidate is None:
            continue
        path = replay(candidate)
        if path not in by_path or key(candidate) < key(by_path[path]):
            by_path[path] = candidate
    found: dict[Path, Candidate] = {}
    for path in sorted(by_path, key=lambda p: key(by_path[p])):
        small = shrink(domain, by_path[path], path, replay)
        if path not in found or key(small) < key(found[path]):
            found[path] = small
    return sorted((Found(packet, path[0], path[1], state, path[2]) for path, packet in found.items()),
                  key=lambda f: key(f.packet))


def shrink(domain: Domain, packet: Candidate, path: Path, replay: Callable[[Candidate], Path]) -> Candidate:
    """``packet`` with each field as plain as the path allows (see the module docstring)."""
    def attempt(current: Candidate, **change: Any) -> Candidate | None:
        tried = domain.checked(dataclasses.replace(current, **change))
        return tried if tried is not None and tried != current and replay(tried) == path else None

    packet = _first_ends(domain, packet, path, replay)
    for name, values in (("ip_proto", (0, 6, 17)), ("tp_src", SMALL_PORTS), ("tp_dst", SMALL_PORTS)):
        for value in values:
            if value == getattr(packet, name):
                break
            better = attempt(packet, **{name: value})
            if better is not None:
                packet = better
                break
    own = {"ip_src": default_ip(packet.sender)}
    if packet.dst in domain.hosts or packet.dst == "broadcast":
        own["ip_dst"] = domain.default_ip_dst(packet.dst)
    for name in ("ip_src", "ip_dst"):
        if name in own:
            if getattr(packet, name) == own[name]:
                continue
            better = attempt(packet, **{name: own[name]})
            if better is not None:
                packet = better
                continue
        for octet in (3, 2, 1, 0):
            parts = getattr(packet, name).split(".")
            if len(parts) != 4 or parts[octet] == "0":
                continue
            parts[octet] = "0"
            change = {name: ".".join(parts)}
            if name == "ip_dst" and packet.dst == getattr(packet, name):  # an address destination
                change["dst"] = change[name]
            better = attempt(packet, **change)
            if better is not None:
                packet = better
    return packet


def _first_ends(domain: Domain, packet: Candidate, path: Path, replay: Callable[[Candidate], Path]) -> Candidate:
    """``packet`` from the first sender, to the first destination (hosts in the topology's
    order, then broadcast, then the packet's own address destination) that take the same
    path; an address that was the old end's own becomes the new end's."""
    address = packet.dst if packet.dst not in domain.hosts and packet.dst != "broadcast" else None
    for sender, dpid, port in domain.attachments:
        for target in domain.destinations(sender):
            if target == "address":
                if address is None:
                    continue
                target = address
            if (sender, target) == (packet.sender, packet.dst):
                return packet
            ip_src = default_ip(sender) if packet.ip_src == default_ip(packet.sender) else packet.ip_src
            ip_dst = packet.ip_dst
            if target == address:
                ip_dst = address
            elif packet.ip_dst == domain.default_ip_dst(packet.dst):
                ip_dst = domain.default_ip_dst(target)
            tried = domain.checked(dataclasses.replace(packet, sender=sender, dst=target, dpid=dpid, in_port=port,
                                                       ip_src=ip_src, ip_dst=ip_dst))
            if tried is not None and replay(tried) == path:
                return tried
    return packet
