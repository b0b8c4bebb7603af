"""The states of large networks: slot ids in fixed-size chunks, shared between states.

A small network's state is a tuple of slot ids, and a transition copies it. A large
network's (see :data:`nice_attendre.models.network.INCREMENTAL_SLOTS`) is a
:class:`ChunkedState`: the same ids cut into chunks of ``2**shift`` slots, held in a tuple of
chunk tuples. A transition copies the tuple of chunks and the chunks it writes, never the
whole state, so its successor shares every other chunk with it; and two states are compared
chunk by chunk, the shared ones by identity, so a revisit costs the number of chunks plus
the chunks that differ in identity, not the number of slots. With chunks of about the
square root of the slot count, both grow as the square root of the network.

It reads like a tuple (indexing, ``len``, iteration, equality and hashing among chunked
states); it is never equal to a tuple.
"""
from __future__ import annotations

from itertools import chain
from typing import Any, Iterable, Iterator

_new = object.__new__


def chunk_shift(slots: int) -> int:
    """The chunk size (as a power of two) for states of ``slots`` slots: about the square
    root of the slot count, at least 16."""
    return max(4, (slots.bit_length() + 1) // 2)


class ChunkedState:
    """An immutable sequence of slot ids, stored in chunks of ``2**shift`` (the last may be
    shorter). Build one with :meth:`of`; :meth:`updated` gives a copy with slots written."""

    __slots__ = ("chunks", "shift", "mask", "length")

    def __init__(self, chunks: tuple[tuple[int, ...], ...], shift: int, length: int) -> None:
        self.chunks = chunks
        self.shift = shift
        self.mask = (1 << shift) - 1
        self.length = length

    @classmethod
    def of(cls, ids: Iterable[int], shift: int, like: "ChunkedState | None" = None) -> "ChunkedState":
        """The state of the slot ids ``ids``, in chunks of ``2**shift``; each chunk equal to
        ``like``'s (a state of the same length and shift) is ``like``'s own, shared."""
        flat = tuple(ids)
        size = 1 << shift
        chunks = [flat[start:start + size] for start in range(0, len(flat), size)]
        if like is not None:
            chunks = [theirs if mine == theirs else mine for mine, theirs in zip(chunks, like.chunks)]
        return cls(tuple(chunks), shift, len(flat))

    def updated(self, writes: Iterable[tuple[int, int]]) -> "ChunkedState":
        """A copy with each ``(slot, id)`` of ``writes`` written (later pairs win); only the
        chunks written are copied."""
        shift = self.shift
        mask = self.mask
        chunks = list(self.chunks)
        copied: dict[int, list[int]] = {}
        for slot, value in writes:
            index = slot >> shift
            chunk = copied.get(index)
            if chunk is None:
                chunk = copied[index] = list(chunks[index])
            chunk[slot & mask] = value
        for index, chunk in copied.items():
            chunks[index] = tuple(chunk)
        state = _new(ChunkedState)  # without __init__'s call (a transition's hot path)
        state.chunks = tuple(chunks)
        state.shift = shift
        state.mask = mask
        state.length = self.length
        return state

    def slots_not_shared(self, other: "ChunkedState") -> Iterator[int]:
        """The slots of the chunks this state does not share (by identity) with ``other``,
        a state of the same length and shift: every slot whose id differs between the two
        is among them (and perhaps others, of chunks that are equal but not shared)."""
        size = 1 << self.shift
        length = self.length
        for index, (mine, theirs) in enumerate(zip(self.chunks, other.chunks)):
            if mine is not theirs:
                start = index * size
                yield from range(start, min(start + size, length))

    def __getitem__(self, index: Any) -> Any:
        if index.__class__ is int:
            if index < 0:
                index += self.length
                if index < 0:
                    raise IndexError("state index out of range")
            return self.chunks[index >> self.shift][index & self.mask]
        return tuple(self)[index]  # a slice: a plain tuple of those ids

    def __len__(self) -> int:
        return self.length

    def __iter__(self) -> Iterator[int]:
        return chain.from_iterable(self.chunks)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not ChunkedState:
            return NotImplemented
        return self.chunks == other.chunks  # type: ignore[attr-defined, no-any-return]

    def __ne__(self, other: object) -> bool:
        if other.__class__ is not ChunkedState:
            return NotImplemented
        return self.chunks != other.chunks  # type: ignore[attr-defined, no-any-return]

    def __hash__(self) -> int:
        return hash(self.chunks)

    def __reduce__(self) -> tuple[Any, ...]:
        return ChunkedState, (self.chunks, self.shift, self.length)

    def __repr__(self) -> str:
        return f"ChunkedState({tuple(self)!r})"


def slot_list(state: "tuple[int, ...] | ChunkedState") -> list[int]:
    """The slot ids of ``state`` (a tuple or a chunked state) in a new list: for a chunked
    state one C-level copy per chunk, not an iteration over every slot."""
    if state.__class__ is ChunkedState:
        ids: list[int] = []
        for chunk in state.chunks:  # type: ignore[union-attr]
            ids += chunk
        return ids
    return list(state)
