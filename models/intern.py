"""Interning: equal values share one small integer id (SPIN's collapse compression).

A network state is a tuple of such ids, one per slot, so hashing and comparing a state
costs a few machine words, and equal components are stored once however many states
share them. An :class:`Interner` is a cache owned by one network; ids are assigned in the
order values are first seen, which is deterministic because exploration order is.

Ids mean nothing outside their process. What does is each value's *stable hash*, computed
once when the value is first interned (:mod:`nice_attendre.fingerprint`): state
fingerprints are built from them, and partitioned searches ship them between processes.
"""
from __future__ import annotations

from typing import Any, Callable, Generic, Hashable, TypeVar

from nice_attendre.fingerprint import stable_hash

V = TypeVar("V", bound=Hashable)


class Interner(Generic[V]):
    """A two-way map between hashable values and dense ids 0, 1, 2, ..., with the stable
    64-bit hash of each value (``hashes[id]``).

    Hashes are computed only when asked for (:meth:`fill_hashes`), so a search that does not
    use fingerprints pays nothing and accepts any hashable value; each value is hashed once.
    ``hasher`` computes a value's stable hash (default: :func:`stable_hash` of its canonical
    encoding); an interner whose values hold ids of another interner passes one that hashes
    what those ids stand for (and fills that interner's hashes first). Values of one interner must not mix types whose instances
    compare equal across types (``1 == True``, a tuple and an equal NamedTuple): the first
    one seen would stand for both. The network uses one interner per kind of slot for that
    reason.
    """

    __slots__ = ("ids", "values", "hashes", "hasher", "name")

    def __init__(self, name: str, *seed: V, hasher: Callable[[Any], int] = stable_hash) -> None:
        self.name = name
        self.ids: dict[Any, int] = {}
        self.values: list[V] = []
        self.hashes: list[int] = []
        self.hasher = hasher
        for value in seed:
            self.intern(value)

    def intern(self, value: V) -> int:
        """The id of ``value``, assigning the next id if it is new."""
        ids = self.ids
        found = ids.get(value)
        if found is None:
            # The value first, then its id: if either step fails (MemoryError, Ctrl-C), no id
            # points past the end of ``values`` (at worst a value is stored unused).
            values = self.values
            found = len(values)
            values.append(value)
            ids[value] = found
        return found

    def fill_hashes(self) -> list[int]:
        """Compute the stable hash of every value that has none yet; return ``hashes``.

        Raises :class:`~nice_attendre.fingerprint.FingerprintError` for a value that has no
        canonical encoding (the hashes before it are kept).
        """
        hashes, values, hasher = self.hashes, self.values, self.hasher
        for index in range(len(hashes), len(values)):
            hashes.append(hasher(values[index]))
        return hashes

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return f"Interner({self.name!r}, {len(self.values)} values)"
