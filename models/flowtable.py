"""Flow tables as values: a sorted tuple of :class:`Entry`.

Entries are kept in canonical order (table id, descending priority, match), so two tables
with the same entries are the same value however they were installed. An entry is
identified by its key (table id, priority, match): adding an entry with a key already in
the table replaces that entry (OpenFlow's add semantics).
"""
from __future__ import annotations

from typing import Any, NamedTuple

from nice_attendre.models.addresses import is_prefix, prefix_covers
from nice_attendre.models.packet import Action, AttendreCommand, Header, Match, format_actions

EntryKey = tuple[int, int, Match]


class Entry(NamedTuple):
    """A flow entry.

    ``actions`` is ``None`` for an Attendre buffer entry that has no regular actions.
    Attendre's fields: ``buffer`` is the message-set version whose packets this entry
    buffers (``None``: no buffer action); ``encap`` an Attendre Command to encapsulate in
    the next packet that hits the entry (used once); ``version`` the message set that
    installed the entry while that set is unfinished at this switch. ``timeouts``: its idle
    and hard timeouts and whether its removal is reported (a
    :class:`~nice_attendre.models.messages.Timeouts`; ``None``: none).
    """

    table_id: int
    neg_priority: int
    match: Match
    actions: tuple[Action, ...] | None
    buffer: tuple[Any, ...] | None = None
    encap: AttendreCommand | None = None
    version: tuple[Any, ...] | None = None
    timeouts: Any = None

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
        timeouts = f" ({self.timeouts})" if self.timeouts is not None else ""
        return f"{table}prio {self.priority} {self.match} -> {acts}{timeouts}"


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


def covers(general: Match, specific: Match) -> bool:
    """Whether every packet ``specific`` matches is also matched by ``general``
    (``general``'s fields are a subset of ``specific``'s, with equal values, or a prefix of
    ``general`` contains ``specific``'s address or prefix)."""
    if general.in_port is not None and general.in_port != specific.in_port:
        return False
    fields = dict(specific.fields)
    return all(name in fields and (fields[name] == value or (is_prefix(value) and prefix_covers(value, fields[name])))
               for name, value in general.fields)


def delete_matching(table: Table, table_id: int, match: Match, strict: bool = False) -> Table:
    """``table`` after an OpenFlow delete in ``table_id``.

    Non-strict (OFPFC_DELETE): removes every entry whose match is covered by ``match``;
    strict: only entries whose match equals ``match``. An Attendre buffer action is
    switch-internal and survives: a deleted entry that buffers keeps only its buffer action.
    """
    kept = []
    for entry in table:
        if entry.table_id == table_id and (entry.match == match if strict else covers(match, entry.match)):
            if entry.buffer is None:
                continue
            entry = entry._replace(actions=None, encap=None)
        kept.append(entry)
    return tuple(kept)


def modify_matching(table: Table, table_id: int, match: Match, actions: tuple[Action, ...]) -> Table:
    """``table`` after a non-strict OpenFlow modify (OFPFC_MODIFY) in ``table_id``: every
    entry whose match is covered by ``match`` gets ``actions`` (Attendre buffer actions stay)."""
    return tuple(entry._replace(actions=actions) if entry.table_id == table_id and entry.actions is not None
                 and covers(match, entry.match) else entry for entry in table)


def lookup(table: Table, table_id: int, hdr: Header, in_port: int, exact_first: bool = False) -> int:
    """Index of the highest-priority entry of ``table_id`` matching the packet, or -1. With
    ``exact_first`` (OpenFlow 1.0) an exact-match entry that matches wins over every wildcard
    entry, whatever the priorities (OpenFlow 1.0 section 3.4)."""
    found = -1
    for index, entry in enumerate(table):
        if entry.table_id == table_id and entry.match.matches(hdr, in_port):
            if not exact_first or entry.match.is_exact:
                return index
            if found < 0:
                found = index
    return found
