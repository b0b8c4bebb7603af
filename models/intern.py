"""Interning: equal values share one small integer id (SPIN's collapse compression).

A network state is a tuple of such ids, one per slot, so hashing and comparing a state
costs a few machine words, and equal components are stored once however many states
share them. An :class:`Interner` is a cache owned by one network; ids are assigned in the
order values are first seen, which is deterministic because exploration order is.
"""
from __future__ import annotations

from typing import Any, Generic, Hashable, TypeVar

V = TypeVar("V", bound=Hashable)


class Interner(Generic[V]):
    """A two-way map between hashable values and dense ids 0, 1, 2, ...

    Values of one interner must not mix types whose instances compare equal across
    types (``1 == True``, a tuple and an equal NamedTuple): the first one seen would
    stand for both. The network uses one interner per kind of slot for that reason.
    """

    __slots__ = ("ids", "values", "name")

    def __init__(self, name: str, *seed: V) -> None:
        self.name = name
        self.ids: dict[Any, int] = {}
        self.values: list[V] = []
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

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return f"Interner({self.name!r}, {len(self.values)} values)"
