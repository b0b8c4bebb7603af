"""Stable fingerprints of network states, updated incrementally (Zobrist style).

A network state is a tuple of interned ids, one per slot. Each interned component has a
stable 64-bit hash (:class:`~nice_attendre.models.intern.Interner`), and the state's
fingerprint is ``sum(k_i * h_i) mod 2**64`` over its slots, ``k_i`` the slot's odd
multiplier (:func:`nice_attendre.fingerprint.slot_multiplier`). A transition writes one to
four slots, which its ``Tx`` records; :meth:`Fingerprinter.update` updates the fingerprint
from those slots only, with each ``k_i * h_i`` cached per slot and component, never
rehashing a component.

Queues hold ids of interned items, so a queue's hash is computed from its items' hashes
(a FIFO in order; a threaded controller's command channel, a sorted tuple of batches, as a
multiset: its batches' hashes sorted), never from ids, which mean nothing outside their
process.
"""
from __future__ import annotations

from itertools import compress
from operator import mul, ne
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from nice_attendre.fingerprint import MASK64, hash_sequence, slot_multiplier
from nice_attendre.models.intern import Interner

if TYPE_CHECKING:
    from nice_attendre.models.network import Network

_QUEUE, _BATCH, _BATCHES = b"Q", b"q", b"M"


def queue_hasher(items: Interner[Any]) -> Callable[[tuple[Any, ...]], int]:
    """The hasher of the queue interner: a queue of item ids (or of batches of item ids)
    hashed from the items' stable hashes."""

    def hash_queue(queue: tuple[Any, ...]) -> int:
        item_hashes = items.fill_hashes()
        if queue and isinstance(queue[0], tuple):  # batches: a multiset of FIFOs
            batches = sorted(hash_sequence(_BATCH, [item_hashes[i] for i in batch]) for batch in queue)
            return hash_sequence(_BATCHES, batches)
        return hash_sequence(_QUEUE, [item_hashes[i] for i in queue])

    return hash_queue


class Fingerprinter:
    """Fingerprints of one network's states (a cache owned by the network)."""

    __slots__ = ("net", "interners", "slot_interners", "slot_hashes", "multipliers", "slots", "weights")

    def __init__(self, net: "Network") -> None:
        self.net = net
        net._queues.hasher = queue_hasher(net._items)
        slot_interners: list[Interner[Any]] = net._slot_interners
        #: every interner of the network, the items first (queues' hashes need theirs)
        self.interners: tuple[Interner[Any], ...] = (net._items, *{id(i): i for i in slot_interners}.values())
        self.slot_interners: tuple[Interner[Any], ...] = tuple(slot_interners)
        self.slot_hashes: tuple[list[int], ...] = tuple(i.hashes for i in slot_interners)
        self.multipliers: tuple[int, ...] = tuple(slot_multiplier(i) for i in range(len(slot_interners)))
        self.slots = range(len(slot_interners))
        #: per slot: component id -> ``k_slot * h_id mod 2**64``, filled as components appear
        #: there (a dict, not a list: a queue id occurs in few of the many queue slots)
        self.weights: tuple[dict[int, int], ...] = tuple({} for _ in slot_interners)

    def fill(self) -> None:
        """Hash every component interned since the last call."""
        for interner in self.interners:
            interner.fill_hashes()

    def of(self, state: Sequence[int]) -> int:
        """The fingerprint of ``state``, from all its slots."""
        try:
            return sum(map(mul, self.multipliers, map(list.__getitem__, self.slot_hashes, state))) & MASK64
        except IndexError:  # a component without its hash yet
            self.fill()
            return sum(map(mul, self.multipliers, map(list.__getitem__, self.slot_hashes, state))) & MASK64

    def weight(self, slot: int, value_id: int) -> int:
        """``k_slot * h mod 2**64`` for component ``value_id`` in ``slot`` (cached)."""
        hashes = self.slot_hashes[slot]
        if value_id >= len(hashes):  # hash what this slot's interner holds (a queue's hasher fills its items')
            self.slot_interners[slot].fill_hashes()
        found = self.weights[slot][value_id] = (self.multipliers[slot] * hashes[value_id]) & MASK64
        return found

    def update(self, fingerprint: int, old: Sequence[int], new: Sequence[int], written: Iterable[int]) -> int:
        """The fingerprint of ``new``, from that of ``old`` and the slots ``written`` (every
        slot where ``new`` differs from ``old`` must be among them)."""
        weights, weight = self.weights, self.weight
        for slot in written:
            table = weights[slot]
            now, before = new[slot], old[slot]
            fingerprint += (table[now] if now in table else weight(slot, now)) - \
                (table[before] if before in table else weight(slot, before))
        return fingerprint & MASK64

    def part_hash(self, state: Sequence[int], slots: Iterable[int]) -> int:
        """The terms of ``state``'s fingerprint for ``slots``, summed: a stable hash of the
        components in those slots (equal components, equal hash, in every process)."""
        weights, weight = self.weights, self.weight
        total = 0
        for slot in slots:
            table = weights[slot]
            value = state[slot]
            total += table[value] if value in table else weight(slot, value)
        return total & MASK64

    def changed_slots(self, old: Sequence[int], new: Sequence[int]) -> list[int]:
        """The slots where ``new`` differs from ``old`` (for checks of ``written``)."""
        return list(compress(self.slots, map(ne, old, new)))
