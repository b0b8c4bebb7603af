"""Flow tables as values: a sorted tuple of :class:`Entry`.

Entries are kept in canonical order (table id, descending priority, match), so two tables
with the same entries are the same value however they were installed. An entry is
identified by its key (table id, priority, match): adding an entry with a key already in
the table replaces that entry (OpenFlow's add semantics).
"""
from __future__ import annotations

from typing import Any, NamedTuple

from nice_attendre.models.packet import Action, AttendreCommand, Header, Match, format_actions

EntryKey = tuple[int, int, Match]


class Entry(NamedTuple):
    """A flow entry.

    ``actions`` is ``None`` for an Attendre buffer entry that has no regular actions.
    Attendre's fields: ``buffer`` is the message-set version whose packets this entry
    buffers (``None``: no buffer action); ``encap`` an Attendre Command to encapsulate in
    the next packet that hits the entry (used once); ``version`` the message set that
    installed the entry while that set is unfinished at this switch.
    """

    table_id: int
    neg_priority: int
    match: Match
    actions: tuple[Action, ...] | None
    buffer: tuple[Any, ...] | None = None
    encap: AttendreCommand | None = None
    version: tuple[Any, ...] | None = None

    @property
    def priority(self) -> int:
        return -self.neg_priority

    @property
    def key(self) -> EntryKey:
        return (self.table_id, -self.neg_priority, self.match)

    def __str__(self) -> str:
        acts = "buffer" if self.actions is None else format_actions(self.actions)
        if self.actions is not None and self.buffer is not None:
            acts += "+buffer"
        if self.encap is not None:
            acts += f"+encap(s{self.encap.dpid})"
        table = f"t{self.table_id} " if self.table_id else ""
        return f"{table}prio {self.priority} {self.match} -> {acts}"


Table = tuple[Entry, ...]


def match_order(match: Match) -> tuple[Any, ...]:
    """A sort key for matches: fields as (name, type name, value), then the in-port."""
    return (tuple((name, type(value).__name__, value) for name, value in match.fields),
            -1 if match.in_port is None else match.in_port)


def _order(entry: Entry) -> tuple[Any, ...]:
    return (entry.table_id, entry.neg_priority, match_order(entry.match))


def make_entry(table_id: int, priority: int, match: Match, actions: tuple[Action, ...] | None,
               **attendre: Any) -> Entry:
    """An entry with the given key and actions (Attendre fields as keywords)."""
    return Entry(table_id, -priority, match, actions, **attendre)


def find(table: Table, key: EntryKey) -> Entry | None:
    """The entry with ``key``, if any."""
    table_id, priority, match = key
    for entry in table:
        if entry.table_id == table_id and entry.neg_priority == -priority and entry.match == match:
            return entry
    return None


def put(table: Table, entry: Entry) -> Table:
    """``table`` with ``entry`` added, replacing the entry with the same key."""
    key = entry.key
    kept = [e for e in table if e.key != key]
    kept.append(entry)
    kept.sort(key=_order)
    return tuple(kept)


def remove(table: Table, key: EntryKey) -> Table:
    """``table`` without the entry with ``key``."""
    return tuple(e for e in table if e.key != key)


def delete_matching(table: Table, table_id: int, match: Match) -> Table:
    """``table`` without the entries of ``table_id`` whose match equals ``match``."""
    return tuple(e for e in table if not (e.table_id == table_id and e.match == match))


def lookup(table: Table, table_id: int, hdr: Header, in_port: int) -> int:
    """Index of the highest-priority entry of ``table_id`` matching the packet, or -1."""
    for index, entry in enumerate(table):
        if entry.table_id == table_id and entry.match.matches(hdr, in_port):
            return index
    return -1
