"""A compact visited set of 64-bit fingerprints: open addressing in an ``array('Q')``.

A Python ``set`` of ints costs about 75-100 bytes per stored fingerprint (a 32-byte int
object plus the set's entry and spare room); this table stores the fingerprints themselves,
8 bytes each, in a flat array of ``2**k`` buckets probed linearly from the fingerprint's low
bits, grown by doubling when three quarters full. Between growths it holds 8 / load bytes
per fingerprint, 10.7 to 21.3; while it doubles, the old and the new array are both alive
(24 bytes per bucket of the old one: at most 32 bytes per stored fingerprint).

0 marks an empty bucket, so the fingerprint 0 is kept in a separate field.
"""
from __future__ import annotations

from array import array
from typing import Any, Iterator

#: Buckets of a new table (a power of two).
INITIAL_BUCKETS = 1 << 10

_MAX_LOAD_NUM, _MAX_LOAD_DEN = 3, 4  # grow when more than 3/4 of the buckets are used


def collision_probability(stored: int, generated: int) -> float:
    """The probability that a fingerprint collision hid a state, estimated as TLC does.

    TLC (``tlc2.tool.ModelChecker.reportSuccess``, its "calculated (optimistic)" estimate)
    prints ``n * (g - n) / 2**64`` for ``n`` distinct fingerprints stored and ``g`` states
    generated: each of the ``g - n`` generated states that matched a stored fingerprint could
    have been a new state whose fingerprint equals one of the ``n`` stored ones, each with
    probability ``2**-64`` under uniformly spread fingerprints. Here ``g`` is the transitions
    plus the initial states, so ``g - n`` is the revisits.
    """
    if stored <= 0 or generated <= stored:
        return 0.0
    return stored * (generated - stored) / 2.0 ** 64


class FingerprintTable:
    """A set of 64-bit unsigned fingerprints (``0 .. 2**64 - 1``).

    ``add`` inserts and says whether the fingerprint was new; ``in`` tests membership.
    """

    __slots__ = ("_keys", "_mask", "_used", "_limit", "_has_zero")

    def __init__(self, buckets: int = INITIAL_BUCKETS) -> None:
        if buckets < 2 or buckets & (buckets - 1):
            raise ValueError(f"buckets must be a power of two >= 2, got {buckets}")
        self._keys = array("Q", [0]) * buckets
        self._mask = buckets - 1
        self._used = 0
        self._limit = buckets * _MAX_LOAD_NUM // _MAX_LOAD_DEN
        self._has_zero = False

    def __len__(self) -> int:
        return self._used + self._has_zero

    def __contains__(self, fingerprint: int) -> bool:
        if not fingerprint:
            return self._has_zero
        keys, mask = self._keys, self._mask
        index = fingerprint & mask
        while True:
            found = keys[index]
            if found == fingerprint:
                return True
            if not found:
                return False
            index = (index + 1) & mask

    def add(self, fingerprint: int) -> bool:
        """Insert ``fingerprint``; True if it was not there yet."""
        if not fingerprint:
            if self._has_zero:
                return False
            self._has_zero = True
            return True
        keys, mask = self._keys, self._mask
        index = fingerprint & mask
        while True:
            found = keys[index]
            if found == fingerprint:
                return False
            if not found:
                keys[index] = fingerprint
                self._used += 1
                if self._used > self._limit:
                    self._grow()
                return True
            index = (index + 1) & mask

    def _grow(self) -> None:
        old_keys = self._keys
        buckets = 2 * len(old_keys)
        mask = buckets - 1
        keys = array("Q", [0]) * buckets
        for fingerprint in old_keys:
            if fingerprint:
                index = fingerprint & mask
                while keys[index]:
                    index = (index + 1) & mask
                keys[index] = fingerprint
        self._keys, self._mask = keys, mask
        self._limit = buckets * _MAX_LOAD_NUM // _MAX_LOAD_DEN

    @property
    def nbytes(self) -> int:
        """Bytes held by the array."""
        return self._keys.itemsize * len(self._keys)

    def __iter__(self) -> Iterator[int]:
        """The stored fingerprints, in bucket order (0 first if stored)."""
        if self._has_zero:
            yield 0
        for fingerprint in self._keys:
            if fingerprint:
                yield fingerprint


class KeyedStates:
    """An exact set of states, each stored under its 64-bit fingerprint.

    For systems whose states are large (see :class:`nice_attendre.system.Fingerprinted`'s
    ``large_states``): a Python set would hash every state in full on each lookup, while the
    fingerprint is updated from the few slots a transition writes. Exact all the same: a
    state is new unless an equal state is stored (two states with one fingerprint are both
    kept). Keys are ``(fingerprint, state)`` pairs.
    """

    __slots__ = ("_states", "_size")

    def __init__(self) -> None:
        self._states: dict[int, Any] = {}  # fingerprint -> state, or a _Bucket of states
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def __contains__(self, key: tuple[int, Any]) -> bool:
        fingerprint, state = key
        found = self._states.get(fingerprint)
        if found is None:
            return False
        if found.__class__ is _Bucket:
            return state in found
        return found == state

    def add(self, key: tuple[int, Any]) -> bool:
        """Insert the state of ``key``; True if no equal state was there yet."""
        fingerprint, state = key
        states = self._states
        found = states.get(fingerprint)
        if found is None:
            states[fingerprint] = state
        elif found.__class__ is _Bucket:
            if state in found:
                return False
            found.append(state)
        elif found == state:
            return False
        else:  # a fingerprint collision: keep both
            states[fingerprint] = _Bucket((found, state))
        self._size += 1
        return True

    def __iter__(self) -> Iterator[Any]:
        """The stored states."""
        for found in self._states.values():
            if found.__class__ is _Bucket:
                yield from found
            else:
                yield found


class _Bucket(list):  # type: ignore[type-arg]
    """States that share one fingerprint (told apart from a stored state by its class)."""

    __slots__ = ()
