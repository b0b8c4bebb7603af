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

Blind appends: a transition that appends to a queue it never otherwise reads (a switch
sending a packet-in to the controller's queue, the controller's commands entering a switch's
channel, a packet put on the next port) does not depend on what the queue held. Such a write
is recorded as the items appended (:meth:`ReadTrackingList.append_blind`), not as the
queue's new id, and the queue's old id stays out of the key: the replay appends the same
items to whatever the queue holds in the state at hand. A later read of that slot in the
same transition (a pop, a look) makes it an ordinary read of the old id and an ordinary
write; a later overwrite makes it an ordinary write.

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

from nice_attendre.models.chunked import ChunkedState

_list_extend = list.extend

#: Transitions a network stores by default (a few hundred bytes each).
MEMO_ENTRIES = 250_000


class ReadTrackingList(list):  # type: ignore[type-arg]
    """A list of slot ids that records reads (before any write) in ``reads`` (slot -> id)
    and writes in ``written`` (an ordered set); any other use sets ``opaque``.

    ``appends`` (slot -> item ids) holds the written slots whose new value is their old one
    with items appended and whose old value was not read (see :meth:`append_blind`); every
    other written slot's new value is independent of its old one or its old one was read."""

    __slots__ = ("reads", "written", "opaque", "appends", "_base")

    def __init__(self, state: Sequence[int]) -> None:
        list.__init__(self, state)
        self.reads: dict[int, int] = {}
        self.written: dict[int, None] = {}
        self.opaque = False
        self.appends: dict[int, tuple[int, ...]] = {}
        self._base = state

    def __getitem__(self, index: Any) -> Any:
        if index.__class__ is int and index >= 0:
            if index not in self.reads:
                if index not in self.written:
                    value = list.__getitem__(self, index)
                    self.reads[index] = value
                    return value
                if index in self.appends:  # the appended queue is looked at: it was read
                    del self.appends[index]
                    self.reads[index] = self._base[index]
        else:
            self.opaque = True
        return list.__getitem__(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        if index.__class__ is int and index >= 0:
            self.written[index] = None
            if index in self.appends:  # overwritten: the value no longer depends on the old one
                del self.appends[index]
        else:
            self.opaque = True
        list.__setitem__(self, index, value)

    def current(self, index: int) -> int:
        """The id slot ``index`` holds now, not recorded as a read."""
        return list.__getitem__(self, index)  # type: ignore[no-any-return]

    def append_blind(self, index: int, items: tuple[int, ...], extend: Callable[[int, tuple[int, ...]], int]) -> bool:
        """Set slot ``index`` to ``extend(its id, items)`` without reading it, when its old
        value was neither read nor overwritten in this transition; return whether it did (if
        not, the caller appends through an ordinary read and write)."""
        if index.__class__ is not int or index < 0 or index in self.reads:
            return False
        appended = self.appends.get(index)
        if appended is None:
            if index in self.written:
                return False
            appended = ()
        self._set_untracked(index, extend(self.current(index), items))
        self.written[index] = None
        self.appends[index] = appended + items
        return True

    def _set_untracked(self, index: int, value: int) -> None:
        """Set slot ``index`` to id ``value``, recording nothing (the caller records it)."""
        list.__setitem__(self, index, value)

    def _copy_in(self) -> None:
        """Hold every slot in the list (it does already; see :class:`LazyReadTrackingList`)."""

    def _opaque(name: str) -> Callable[..., Any]:  # type: ignore[misc]
        method = getattr(list, name)

        def wrapper(self: "ReadTrackingList", *args: Any, **kwargs: Any) -> Any:
            self._copy_in()
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


class LazyReadTrackingList(ReadTrackingList):
    """A :class:`ReadTrackingList` over a large network's chunked state that copies nothing
    up front: reads come from the state, writes go to a dict, so a transition costs the
    slots it touches, not the size of the state. Any use other than by index (which marks
    it ``opaque``) first copies the whole state into the list, which then behaves as a
    :class:`ReadTrackingList`."""

    __slots__ = ("_over",)

    def __init__(self, state: ChunkedState) -> None:
        list.__init__(self)
        self.reads = {}
        self.written = {}
        self.opaque = False
        self.appends = {}
        self._base = state
        self._over: dict[int, int] | None = {}  # written slot -> id; None once copied

    def _copy_in(self) -> None:
        """Hold every slot in the list from now on."""
        over = self._over
        if over is not None:
            for chunk in self._base.chunks:  # type: ignore[attr-defined]
                _list_extend(self, chunk)  # C-level copies, chunk by chunk
            for slot, value in over.items():
                list.__setitem__(self, slot, value)
            self._over = None

    def __len__(self) -> int:
        return len(self._base) if self._over is not None else list.__len__(self)

    def __getitem__(self, index: Any) -> Any:
        over = self._over
        if over is not None:
            if index.__class__ is int and index >= 0:
                if index not in self.reads:
                    if index not in self.written:
                        value = self._base[index]
                        self.reads[index] = value
                        return value
                    if index in self.appends:  # the appended queue is looked at: it was read
                        del self.appends[index]
                        self.reads[index] = self._base[index]
                return over[index] if index in over else self._base[index]
            self._copy_in()
        return ReadTrackingList.__getitem__(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        over = self._over
        if over is not None:
            if index.__class__ is int and index >= 0:
                if index >= len(self._base):
                    raise IndexError("list assignment index out of range")
                self.written[index] = None
                if index in self.appends:
                    del self.appends[index]
                over[index] = value
                return
            self._copy_in()
        ReadTrackingList.__setitem__(self, index, value)

    def current(self, index: int) -> int:
        over = self._over
        if over is None:
            return list.__getitem__(self, index)  # type: ignore[no-any-return]
        return over[index] if index in over else self._base[index]  # type: ignore[no-any-return]

    def _set_untracked(self, index: int, value: int) -> None:
        over = self._over
        if over is None:
            list.__setitem__(self, index, value)
        else:
            over[index] = value


class TransitionMemo:
    """Stored transitions: per event (by identity, the event kept alive), per tuple of slots
    read, the ids read -> the writes ``((slot, id), ...)`` in the order first written (and,
    for a transition with blind appends, the appends ``((slot, item ids, {old queue id: new
    id}, {old queue id: (new id, fingerprint shift)}), ...)``).

    ``lookup`` returns stored writes valid in ``state`` or None; ``store`` records a
    transition just computed. At most ``capacity`` transitions are held (then all are
    dropped; ``size`` also counts the queue ids remembered for blind appends); ``misses``
    counts the lookups that found nothing. ``extend(queue id, item ids)`` is the id of that
    queue with those items appended: how blind appends are replayed (a memo without it
    stores none).
    """

    __slots__ = ("capacity", "size", "misses", "extend", "_table")

    def __init__(self, capacity: int = MEMO_ENTRIES,
                 extend: Callable[[int, tuple[int, ...]], int] | None = None) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be positive, got {capacity}")
        self.capacity = capacity
        self.size = 0
        self.misses = 0
        self.extend = extend
        # id(event) -> (event, [(slots read, their getter, {ids read: writes},
        #                        {ids read: fingerprint delta}, whether the writes append)])
        # where the writes of an appending group are (plain writes, appends).
        self._table: dict[int, tuple[Any, list[tuple[tuple[int, ...], Callable[[Sequence[int]], Any],
                                                     dict[Any, Any], dict[Any, int], bool]]]] = {}

    def lookup(self, state: Sequence[int], event: Any) -> tuple[tuple[int, int], ...] | None:
        """Stored writes of ``event`` valid in ``state`` (blind appends resolved to the ids
        they give in ``state``), or None."""
        entry = self._table.get(id(event))
        if entry is not None and entry[0] is event:
            for _slots, getter, by_reads, _deltas, appending in entry[1]:
                writes = by_reads.get(getter(state))
                if writes is not None:
                    if appending:
                        writes, appends = writes
                        resolved = []
                        for slot, items, known, _shifts in appends:
                            old = state[slot]
                            value = known.get(old)  # the replay's usual case: remembered
                            resolved.append((slot, self._appended(old, items, known) if value is None else value))
                        return writes + tuple(resolved)
                    return writes  # type: ignore[no-any-return]
        self.misses += 1
        return None

    def applier(self, miss: Callable[[tuple[int, ...], Any], tuple[int, ...]]
                ) -> Callable[[tuple[int, ...], Any], tuple[int, ...]]:
        """``apply(state, event)`` through this memo: the stored writes replayed on a copy of
        ``state`` when a transition is known, else ``miss(state, event)`` (which computes and
        stores it). One Python call per transition instead of two (the search's hot path)."""
        table = self._table
        appended = self._appended

        def apply(state: tuple[int, ...], event: Any) -> tuple[int, ...]:
            entry = table.get(id(event))
            if entry is not None and entry[0] is event:
                for _slots, getter, by_reads, _deltas, appending in entry[1]:
                    writes = by_reads.get(getter(state))
                    if writes is not None:
                        after = list(state)
                        if appending:
                            writes, appends = writes
                            for slot, items, known, _shifts in appends:
                                old = state[slot]
                                value = known.get(old)
                                after[slot] = appended(old, items, known) if value is None else value
                        for slot, value in writes:
                            after[slot] = value
                        return tuple(after)
            self.misses += 1
            return miss(state, event)

        return apply

    def fingerprinted_peeker(self, miss: Callable[[tuple[int, ...], int, Any], tuple[int, Any]],
                             update: Callable[[int, Any, Any, Any], int]
                             ) -> Callable[[tuple[int, ...], int, Any], tuple[int, Any]]:
        """``peek(state, fingerprint, event) -> (the successor's fingerprint, its writes)``
        through this memo (see :func:`nice_attendre.fingerprint.peek_functions`): a known
        transition's writes, as ``(slot, id)`` pairs, and ``fingerprint`` plus the delta
        stored with it when there is one (see :meth:`store`; blind appends add what each
        adds to its queue), else ``update(fingerprint, state, {slot: id}, slots)``; an
        unknown one is ``miss``'s. The successor is not built: most are revisits."""
        table = self._table
        shifted = self._shifted

        def peek(state: tuple[int, ...], fingerprint: int, event: Any) -> tuple[int, Any]:
            entry = table.get(id(event))
            if entry is not None and entry[0] is event:
                for _slots, getter, by_reads, deltas, appending in entry[1]:
                    key = getter(state)
                    writes = by_reads.get(key)
                    if writes is not None:
                        if appending:
                            plain, appends = writes
                            writes = list(plain)
                            for slot, items, known, shifts in appends:
                                old = state[slot]
                                found = shifts.get(old)
                                if found is None:
                                    found = shifted(slot, old, items, known, shifts, update)
                                writes.append(found[0])
                                fingerprint += found[1]
                        else:
                            plain = writes
                        delta = deltas.get(key)
                        if delta is None:
                            new = dict(plain)
                            return update(fingerprint, state, new, new), writes
                        return (fingerprint + delta) & 0xFFFFFFFFFFFFFFFF, writes
            self.misses += 1
            return miss(state, fingerprint, event)

        return peek

    def _appended(self, queue: int, items: tuple[int, ...], known: dict[int, int]) -> int:
        """The id of queue ``queue`` with ``items`` appended, remembered in ``known`` (old id
        -> new id, one per stored blind append) while the table has room: a replay then costs
        one lookup, not building and interning the longer queue."""
        found = known.get(queue)
        if found is None:
            found = self.extend(queue, items)  # type: ignore[misc]
            if self.size < self.capacity:
                known[queue] = found
                self.size += 1
        return found

    def _shifted(self, slot: int, queue: int, items: tuple[int, ...], known: dict[int, int],
                 shifts: dict[int, tuple[tuple[int, int], int]],
                 update: Callable[[int, Any, Any, Any], int]) -> tuple[tuple[int, int], int]:
        """``((slot, the id of queue ``queue`` with ``items`` appended), what that adds to a
        state's fingerprint)``, remembered in ``shifts`` while the table has room (the write
        pair kept whole: a replay appends it as it is)."""
        found = self._appended(queue, items, known)
        shift = ((slot, found), update(0, {slot: queue}, {slot: found}, (slot,)))
        if self.size < self.capacity:
            shifts[queue] = shift
            self.size += 1
        return shift

    def store(self, event: Any, reads: dict[int, int], writes: tuple[tuple[int, int], ...],
              delta: int | None = None, appends: tuple[tuple[int, tuple[int, ...]], ...] = ()) -> None:
        """Record that ``event`` in a state with ids ``reads`` (slot -> id) writes ``writes``
        and appends ``appends`` (slot -> item ids, to queues it did not read; never a slot
        of ``writes``).

        ``delta``: what the writes (not the appends) add to a state's fingerprint (mod
        2**64), given only when it is the same in every state with those reads: when every
        slot in ``writes`` was read first, so their old values are part of the key. (What an
        append adds depends on the queue it extends: the replay works it out per queue.)"""
        if appends and self.extend is None:
            raise ValueError("blind appends need the memo's extend")
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
        appending = bool(appends)
        for known, _getter, by_reads, deltas, known_appending in entry[1]:
            if known == slots and known_appending is appending:
                break
        else:
            by_reads, deltas = {}, {}
            entry[1].append((slots, itemgetter(*slots) if slots else _nothing, by_reads, deltas, appending))
        if key not in by_reads:
            by_reads[key] = ((writes, tuple((slot, items, {}, {}) for slot, items in appends)) if appending
                             else writes)
            self.size += 1
        if delta is not None:
            deltas[key] = delta


def _nothing(state: Sequence[int]) -> tuple[()]:
    """The ids read by a transition that reads no slot."""
    return ()
