"""Memoised transitions: a transition stored as the slots it wrote, keyed on its event and
the values of the slots it actually read.

Sound by construction: a transition of the network is a function of its event, the
network's configuration and the slots it reads, and every read of the state goes through
the transaction's list of slot ids (``Tx.s``: :meth:`Tx.get`, ``pop``, ``push``, app
handlers through the app slot, and handlers indexing ``tx.s`` directly). :class:`MemoTx`
makes that list a :class:`ReadTrackingList`, which records the id of each slot read before
the transition wrote it. Replaying the stored writes in any state that has the same ids in
those slots gives the state the handlers would compute, and the same written slots (for
incremental fingerprints).

Not stored: transitions that used the list other than by index (iteration, slices: every
slot may have been read), and transitions that wrote the ``alerts`` slot (app exceptions,
handler time limits, monitors' findings: rare states, never expanded, and a time limit
depends on the clock, not on the state). An app that reads outside its state is not
deterministic; the search cannot tell either way, and the replay of reported traces (which
never uses the memo) still detects it.

Memory is bounded: once ``capacity`` transitions are stored the table is emptied and
filled again (the search's results do not depend on what the table holds).
"""
from __future__ import annotations

from operator import itemgetter
from typing import Any, Callable, Sequence

#: Transitions a network stores by default (a few hundred bytes each).
MEMO_ENTRIES = 250_000


class ReadTrackingList(list):  # type: ignore[type-arg]
    """A list of slot ids that records reads (before any write) in ``reads`` (slot -> id)
    and writes in ``written`` (an ordered set); any other use sets ``opaque``."""

    __slots__ = ("reads", "written", "opaque")

    def __init__(self, state: Sequence[int]) -> None:
        list.__init__(self, state)
        self.reads: dict[int, int] = {}
        self.written: dict[int, None] = {}
        self.opaque = False

    def __getitem__(self, index: Any) -> Any:
        if index.__class__ is int and index >= 0:
            if index not in self.written and index not in self.reads:
                value = list.__getitem__(self, index)
                self.reads[index] = value
                return value
        else:
            self.opaque = True
        return list.__getitem__(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        if index.__class__ is int and index >= 0:
            self.written[index] = None
        else:
            self.opaque = True
        list.__setitem__(self, index, value)

    def _opaque(name: str) -> Callable[..., Any]:  # type: ignore[misc]
        method = getattr(list, name)

        def wrapper(self: "ReadTrackingList", *args: Any, **kwargs: Any) -> Any:
            self.opaque = True
            return method(self, *args, **kwargs)

        wrapper.__name__ = name
        return wrapper

    for _name in ("__iter__", "__reversed__", "__contains__", "__delitem__", "__eq__", "__ne__", "__lt__",
                  "__le__", "__gt__", "__ge__", "__add__", "__mul__", "__iadd__", "__imul__", "index", "count",
                  "copy", "append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear"):
        locals()[_name] = _opaque(_name)
    del _name, _opaque
    __hash__ = None  # type: ignore[assignment]


class TransitionMemo:
    """Stored transitions: per event (by identity, the event kept alive), per tuple of slots
    read, the ids read -> the writes ``((slot, id), ...)`` in the order first written.

    ``lookup`` returns stored writes valid in ``state`` or None; ``store`` records a
    transition just computed. At most ``capacity`` transitions are held (then all are
    dropped); ``misses`` counts the lookups that found nothing.
    """

    __slots__ = ("capacity", "size", "misses", "_table")

    def __init__(self, capacity: int = MEMO_ENTRIES) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be positive, got {capacity}")
        self.capacity = capacity
        self.size = 0
        self.misses = 0
        # id(event) -> (event, [(slots read, their getter, {ids read: writes},
        #                        {ids read: fingerprint delta})])
        self._table: dict[int, tuple[Any, list[tuple[tuple[int, ...], Callable[[Sequence[int]], Any],
                                                     dict[Any, Any], dict[Any, int]]]]] = {}

    def lookup(self, state: Sequence[int], event: Any) -> tuple[tuple[int, int], ...] | None:
        """Stored writes of ``event`` valid in ``state``, or None."""
        entry = self._table.get(id(event))
        if entry is not None and entry[0] is event:
            for _slots, getter, by_reads, _deltas in entry[1]:
                writes = by_reads.get(getter(state))
                if writes is not None:
                    return writes
        self.misses += 1
        return None

    def applier(self, miss: Callable[[tuple[int, ...], Any], tuple[int, ...]]
                ) -> Callable[[tuple[int, ...], Any], tuple[int, ...]]:
        """``apply(state, event)`` through this memo: the stored writes replayed on a copy of
        ``state`` when a transition is known, else ``miss(state, event)`` (which computes and
        stores it). One Python call per transition instead of two (the search's hot path)."""
        table = self._table

        def apply(state: tuple[int, ...], event: Any) -> tuple[int, ...]:
            entry = table.get(id(event))
            if entry is not None and entry[0] is event:
                for _slots, getter, by_reads, _deltas in entry[1]:
                    writes = by_reads.get(getter(state))
                    if writes is not None:
                        after = list(state)
                        for slot, value in writes:
                            after[slot] = value
                        return tuple(after)
            self.misses += 1
            return miss(state, event)

        return apply

    def fingerprinted_applier(self, miss: Callable[[tuple[int, ...], int, Any], tuple[tuple[int, ...], int]],
                              update: Callable[[int, tuple[int, ...], tuple[int, ...], Any], int]
                              ) -> Callable[[tuple[int, ...], int, Any], tuple[tuple[int, ...], int]]:
        """``apply_fingerprinted(state, fingerprint, event)`` through this memo, as
        :meth:`applier`: a known transition's new fingerprint is ``fingerprint`` plus the
        delta stored with it when there is one (see :meth:`store`), else
        ``update(fingerprint, state, new state, writes)``; an unknown one is ``miss``'s."""
        table = self._table

        def apply_fingerprinted(state: tuple[int, ...], fingerprint: int, event: Any) -> tuple[tuple[int, ...], int]:
            entry = table.get(id(event))
            if entry is not None and entry[0] is event:
                for _slots, getter, by_reads, deltas in entry[1]:
                    key = getter(state)
                    writes = by_reads.get(key)
                    if writes is not None:
                        after = list(state)
                        for slot, value in writes:
                            after[slot] = value
                        new = tuple(after)
                        delta = deltas.get(key)
                        if delta is None:
                            return new, update(fingerprint, state, new, [slot for slot, _value in writes])
                        return new, (fingerprint + delta) & 0xFFFFFFFFFFFFFFFF
            self.misses += 1
            return miss(state, fingerprint, event)

        return apply_fingerprinted

    def store(self, event: Any, reads: dict[int, int], writes: tuple[tuple[int, int], ...],
              delta: int | None = None) -> None:
        """Record that ``event`` in a state with ids ``reads`` (slot -> id) writes ``writes``.

        ``delta``: what the transition adds to a state's fingerprint (mod 2**64), given only
        when it is the same in every state with those reads: when every slot written was
        read first, so the old values of the written slots are part of the key."""
        if self.size >= self.capacity:
            self._table.clear()
            self.size = 0
        entry = self._table.get(id(event))
        if entry is None or entry[0] is not event:
            entry = self._table[id(event)] = (event, [])
        slots = tuple(sorted(reads))
        key = tuple(reads[slot] for slot in slots)
        if len(slots) == 1:
            key = key[0]
        for known, _getter, by_reads, deltas in entry[1]:
            if known == slots:
                break
        else:
            by_reads, deltas = {}, {}
            entry[1].append((slots, itemgetter(*slots) if slots else _nothing, by_reads, deltas))
        if key not in by_reads:
            by_reads[key] = writes
            self.size += 1
        if delta is not None:
            deltas[key] = delta


def _nothing(state: Sequence[int]) -> tuple[()]:
    """The ids read by a transition that reads no slot."""
    return ()
