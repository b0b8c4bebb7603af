"""Moving network states between processes: component hashes, and each component once.

A state is a tuple of ids into this process's intern tables; another process has other ids.
So a state travels as the stable hash of each slot's component (8 bytes a slot), and a
payload to a peer also carries the components this process has not sent to that peer yet
(a queue as the hashes of its items, and the items it needs). The receiver interns what it
did not have, checks that the component hashes the same there, and maps each hash to its own
id. Components are few compared with states (thousands against millions), so after the
first levels a payload is almost only hashes.
"""
from __future__ import annotations

from array import array
from operator import getitem
from typing import Any, Callable, Iterable, Sequence

from nice_attendre.errors import ModelError
from nice_attendre.models.fingerprints import Fingerprinter
from nice_attendre.models.intern import Interner

_ITEMS = 0  # Fingerprinter.interners starts with the items' interner


class NetworkCodec:
    """A :class:`~nice_attendre.system.StateCodec` for one network, owned by one process.

    ``encode`` remembers, per peer, which components it has sent (a flag per component id);
    ``decode`` keeps a map from component hash to local id for every interner.
    """

    def __init__(self, fingerprints: Fingerprinter,
                 make: Callable[[Iterable[int]], Any] = tuple) -> None:
        net = fingerprints.net
        self.make = make  # a state from its slot ids (the network's kind of state)
        self.fps = fingerprints
        self.kinds: tuple[Interner[Any], ...] = fingerprints.interners
        kind_of = {id(interner): k for k, interner in enumerate(self.kinds)}
        self.slot_kind = tuple(kind_of[id(interner)] for interner in net._slot_interners)
        self.queue_kind = kind_of[id(net._queues)]
        self.nslots = len(self.slot_kind)
        self.sent: dict[int, list[bytearray]] = {}
        self.by_hash: list[dict[int, int]] = [{} for _ in self.kinds]
        self.synced = [0] * len(self.kinds)

    # ---- sending ----------------------------------------------------------------------

    def encode(self, states: Sequence[tuple[int, ...]], peer: int) -> tuple[bytes, list[tuple[int, int, Any]]]:
        """``(hashes of every slot of every state, [(kind, hash, component)] new to peer)``."""
        self.fps.fill()
        flags = self.sent.setdefault(peer, [bytearray() for _ in self.kinds])
        for kind, interner in enumerate(self.kinds):
            missing = len(interner) - len(flags[kind])
            if missing > 0:
                flags[kind].extend(bytes(missing))
        slot_flags = [flags[kind] for kind in self.slot_kind]
        slot_hashes = self.fps.slot_hashes
        hashes = array("Q")
        new: list[tuple[int, int, Any]] = []
        for state in states:
            hashes.extend(map(getitem, slot_hashes, state))
            if not all(map(getitem, slot_flags, state)):
                for slot, value_id in enumerate(state):
                    slot_flag = slot_flags[slot]
                    if not slot_flag[value_id]:
                        slot_flag[value_id] = 1
                        self._component(self.slot_kind[slot], value_id, flags, new)
        return hashes.tobytes(), new

    def _component(self, kind: int, value_id: int, flags: list[bytearray], new: list[tuple[int, int, Any]]) -> None:
        interner = self.kinds[kind]
        value = interner.values[value_id]
        if kind == self.queue_kind:  # items first, then the queue as item hashes
            items, item_flags = self.kinds[_ITEMS], flags[_ITEMS]
            item_hashes = items.hashes
            batched = bool(value) and isinstance(value[0], tuple)
            for batch in (value if batched else (value,)):
                for item in batch:
                    if not item_flags[item]:
                        item_flags[item] = 1
                        new.append((_ITEMS, item_hashes[item], items.values[item]))
            if batched:
                value = tuple(tuple(item_hashes[i] for i in batch) for batch in value)
            else:
                value = tuple(item_hashes[i] for i in value)
        new.append((kind, interner.hashes[value_id], value))

    # ---- receiving --------------------------------------------------------------------

    def _sync(self) -> None:
        """Map the hash of every local component to its id (components interned since)."""
        self.fps.fill()
        for kind, interner in enumerate(self.kinds):
            table, hashes = self.by_hash[kind], interner.hashes
            for value_id in range(self.synced[kind], len(hashes)):
                found = table.setdefault(hashes[value_id], value_id)
                if found != value_id:
                    raise ModelError(f"two {interner.name} components have the same 64-bit hash "
                                     f"{hashes[value_id]:#018x}: {interner.values[found]!r} and "
                                     f"{interner.values[value_id]!r}")
            self.synced[kind] = len(hashes)

    def decode(self, payload: tuple[bytes, list[tuple[int, int, Any]]]) -> Callable[[int], tuple[int, ...]]:
        """Intern the payload's new components; return its ``i``-th state by index."""
        data, new = payload
        self._sync()
        items = self.by_hash[_ITEMS]
        for kind, hashed, value in new:
            table = self.by_hash[kind]
            if hashed in table:
                continue
            interner = self.kinds[kind]
            if kind == self.queue_kind:
                if value and isinstance(value[0], tuple):  # batches, kept sorted by local ids
                    value = tuple(sorted(tuple(items[h] for h in batch) for batch in value))
                else:
                    value = tuple(items[h] for h in value)
            value_id = interner.intern(value)
            local = interner.fill_hashes()[value_id]
            if local != hashed:
                raise ModelError(f"a {interner.name} component hashes to {local:#018x} here but to "
                                 f"{hashed:#018x} where it was sent from: {value!r}")
            table[hashed] = value_id
        hashes = array("Q")
        hashes.frombytes(data)
        slot_tables = [self.by_hash[kind] for kind in self.slot_kind]
        width = self.nslots
        make = self.make

        def state(index: int) -> tuple[int, ...]:
            return make(map(getitem, slot_tables, hashes[index * width:(index + 1) * width]))

        return state
