"""Routers that choose between the two paths of ``paths:2,3`` (s1-s2 directly, or through
s3) on each packet-in, each by another source: the nondeterministic ones read the clock,
randomness or an object's address, the deterministic ones a seeded generator or a stable
hash. ``bug="black-hole"`` plants a bug: the path installed stops one hop short, so the
packet stays buffered at the last switch (no-forgotten-packets, delivery). Whatever is
chosen, a correct router delivers every packet.
"""
from __future__ import annotations

import datetime
import os
import random
import secrets
import time
import uuid
import zlib
from time import perf_counter as clock  # a binding of the app's module: still the clock

from nice_attendre.models.app import App, Hop, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output
from nice_attendre.models.topology import Topology

Path = tuple[tuple[int, int], ...]

CALLS: list[int] = []  # NumberedRouter's calls, a global


def paths_to(topology: Topology, dpid: int, host: str) -> list[Path]:
    """Every loop-free path from switch ``dpid`` to ``host`` as (dpid, out port) hops, in a
    fixed order (shortest first, then by hops)."""
    found: list[Path] = []

    def walk(current: int, hops: Path, seen: frozenset[int]) -> None:
        for port in topology.ports[current]:
            peer = topology.links.get((current, port))
            if peer is None:
                continue
            if peer.is_host:
                if peer.node == host:
                    found.append(hops + ((current, port),))
            elif peer.node not in seen:
                walk(peer.node, hops + ((current, port),), seen | {peer.node})

    walk(dpid, (), frozenset({dpid}))
    return sorted(found, key=lambda path: (len(path), path))


class ChoosingRouter(App[None]):
    """Installs one of the paths to the destination on every packet-in (``choose`` picks)."""

    default_topology = "paths:2,3"

    def __init__(self, bug: str | None = None) -> None:
        self.bug = self.check_bug(bug, ("black-hole",))

    def choose(self, count: int, ev: PacketIn) -> int:
        """The index of the path to install, of ``count``."""
        return 0

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        hdr = ev.packet.hdr
        paths = paths_to(out.topology, ev.dpid, hdr.eth_dst)
        if not paths:
            return state
        path = paths[self.choose(len(paths), ev) % len(paths)]
        if self.bug == "black-hole":
            path = path[:-1]
        out.install_path([Hop(d, Match.exact(hdr), (Output(p),)) for d, p in path], packet_in=ev)
        return state


class RandomRouter(ChoosingRouter):
    """The random module's shared generator."""

    def choose(self, count: int, ev: PacketIn) -> int:
        return random.randrange(count)


class ClockRouter(ChoosingRouter):
    """The clock: time.time()."""

    def choose(self, count: int, ev: PacketIn) -> int:
        return int(time.time() * 1000) % count


class BoundClockRouter(ChoosingRouter):
    """The clock through the module's own name for it (``from time import perf_counter as clock``)."""

    def choose(self, count: int, ev: PacketIn) -> int:
        return int(clock() * 1e6) % count


class UrandomRouter(ChoosingRouter):
    """The system's randomness: os.urandom."""

    def choose(self, count: int, ev: PacketIn) -> int:
        return os.urandom(1)[0] % count


class HashRouter(ChoosingRouter):
    """hash(object()): an address."""

    def choose(self, count: int, ev: PacketIn) -> int:
        return hash(object()) % count


class IdRouter(ChoosingRouter):
    """id(object()): an address."""

    def choose(self, count: int, ev: PacketIn) -> int:
        return id(object()) // 16 % count


class StringHashRouter(ChoosingRouter):
    """hash() of the source address, a str: it varies with PYTHONHASHSEED."""

    def choose(self, count: int, ev: PacketIn) -> int:
        return hash(ev.packet.hdr.eth_src) % count


class SecretsRouter(ChoosingRouter):
    """secrets.randbelow."""

    def choose(self, count: int, ev: PacketIn) -> int:
        return secrets.randbelow(count)


class UuidRouter(ChoosingRouter):
    """uuid.uuid4()."""

    def choose(self, count: int, ev: PacketIn) -> int:
        return uuid.uuid4().int % count


class DatetimeRouter(ChoosingRouter):
    """datetime.datetime.now()."""

    def choose(self, count: int, ev: PacketIn) -> int:
        return datetime.datetime.now().microsecond % count


class KeptGeneratorRouter(ChoosingRouter):
    """A seeded generator made once, in the constructor: each call continues where the last
    one left it, so a call's choice depends on the calls before it."""

    def __init__(self, bug: str | None = None) -> None:
        super().__init__(bug)
        self.rng = random.Random(7)

    def choose(self, count: int, ev: PacketIn) -> int:
        return self.rng.randrange(count)


class NumberedRouter(ChoosingRouter):
    """Alternates by a global count of its calls (no clock, no randomness: only calling it
    again shows it)."""

    def choose(self, count: int, ev: PacketIn) -> int:
        CALLS.append(ev.dpid)
        return len(CALLS) % count


class SeededRouter(ChoosingRouter):
    """Deterministic: a generator seeded inside the call with the packet-in's switch."""

    def choose(self, count: int, ev: PacketIn) -> int:
        return random.Random(ev.dpid * 7).randrange(count)


class ReseedingRouter(ChoosingRouter):
    """Deterministic: seeds the shared generator with a value first, then reads it."""

    def choose(self, count: int, ev: PacketIn) -> int:
        random.seed(ev.dpid)
        return random.randrange(count)


class StableHashRouter(ChoosingRouter):
    """Deterministic: a hash that is the same in every run (CRC-32 of the addresses)."""

    def choose(self, count: int, ev: PacketIn) -> int:
        hdr = ev.packet.hdr
        return zlib.crc32(f"{hdr.eth_src}>{hdr.eth_dst}".encode()) % count


class LookupRouter(ChoosingRouter):
    """Deterministic: keeps a set of objects hashed by their address and asks whether one is
    in it (membership does not depend on the hash's value), and hashes a tuple of ints."""

    class Token:
        pass

    def __init__(self, bug: str | None = None) -> None:
        super().__init__(bug)
        self.tokens = {self.Token(): "t"}

    def choose(self, count: int, ev: PacketIn) -> int:
        token = next(iter(self.tokens))
        assert token in self.tokens and self.Token() not in self.tokens
        return hash((ev.dpid, ev.in_port)) % count


class FirstCallsRouter(ChoosingRouter):
    """Takes the second path on its second call only (counted on the app object): the
    search's two calls of the first packet-in disagree, every later pair agrees (the
    report's replay included)."""

    def __init__(self, bug: str | None = None) -> None:
        super().__init__(bug)
        self.calls = 0

    def choose(self, count: int, ev: PacketIn) -> int:
        self.calls += 1
        return 1 if self.calls == 2 else 0


class LaterCallsRouter(ChoosingRouter):
    """Takes the first path on its first two calls, the second from then on (counted on the
    app object): the two calls of each input agree, so neither check sees it in the search;
    the report's replay of a trace through its first call does (another path than recorded)."""

    def __init__(self, bug: str | None = None) -> None:
        super().__init__(bug)
        self.calls = 0

    def choose(self, count: int, ev: PacketIn) -> int:
        self.calls += 1
        return 0 if self.calls <= 2 else 1
