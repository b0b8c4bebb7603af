"""Flow tables as values: a sorted tuple of :class:`Entry`.

Entries are kept in canonical order (table id, descending priority, match), so two tables
with the same entries are the same value however they were installed. An entry is
identified by its key (table id, priority, match): adding an entry with a key already in
the table replaces that entry (OpenFlow's add semantics).

The canonical order is not the switch's: where several entries of the same priority match a
packet, OpenFlow lets the switch take any of them, so :func:`candidates` returns them all
and the switch explores each choice (:mod:`nice_attendre.models.protocols.ties`).
:func:`lookup` gives the first in table order, for those that only ask whether a packet
hits an entry.
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


def delete_matching(table: Table, table_id: int, match: Match, strict: bool = False, cookie: Any = None) -> Table:
    """``table`` after an OpenFlow delete in ``table_id``.

    Non-strict (OFPFC_DELETE): removes every entry whose match is covered by ``match``;
    strict: only entries whose match equals ``match``. With ``cookie`` (the flow-mod's
    :class:`~nice_attendre.models.messages.Timeouts`) only the entries it selects (cookie
    mask). An Attendre buffer action is switch-internal and survives: a deleted entry that
    buffers keeps only its buffer action.
    """
    kept = []
    for entry in table:
        if entry.table_id == table_id and (entry.match == match if strict else covers(match, entry.match)) \
                and (cookie is None or cookie.selects(entry.timeouts)):
            if entry.buffer is None:
                continue
            entry = entry._replace(actions=None, encap=None)
        kept.append(entry)
    return tuple(kept)


def modify_matching(table: Table, table_id: int, match: Match, actions: tuple[Action, ...],
                    cookie: Any = None) -> Table:
    """``table`` after a non-strict OpenFlow modify (OFPFC_MODIFY) in ``table_id``: every
    entry whose match is covered by ``match`` (and, with ``cookie``, the flow-mod's
    timeouts, that it selects: see :func:`delete_matching`) gets ``actions`` (Attendre
    buffer actions stay)."""
    return tuple(entry._replace(actions=actions) if entry.table_id == table_id and entry.actions is not None
                 and covers(match, entry.match) and (cookie is None or cookie.selects(entry.timeouts))
                 else entry for entry in table)


def behaviour(entry: Entry) -> tuple[Any, ...]:
    """What a hit on ``entry`` does, for telling tied entries apart: its actions, Attendre
    fields and whether it is a table-miss entry (priority 0, matching everything: an OpenFlow
    1.3 packet-in from it says "no-match"). Entries that agree here are one choice."""
    return (entry.actions, entry.buffer, entry.encap,
            entry.neg_priority == 0 and not entry.match.fields and entry.match.in_port is None)


def candidates(table: Table, table_id: int, hdr: Header, in_port: int,
               exact_first: bool = False) -> int | tuple[int, ...]:
    """What a packet hits in ``table_id``: the index of the entry, -1 for a miss, or, when
    several entries of the highest matching priority match it and they behave differently
    (:func:`behaviour`), a tuple of their indices (two or more, in table order; one per
    behaviour, the first entry that has it). OpenFlow leaves that choice to the switch
    ("free to choose any ordering", 1.0 section 3.4; "explicitly undefined", 1.3 section 5.3),
    so the caller explores every one. With ``exact_first`` (OpenFlow 1.0) an exact-match
    entry that matches wins over every wildcard entry, whatever the priorities (1.0 section
    3.4); two exact entries matching one packet have the same match, so never tie."""
    first = -1
    tied: list[int] | None = None
    seen: list[tuple[Any, ...]] = []
    for index, entry in enumerate(table):
        if entry.table_id != table_id:
            if entry.table_id > table_id:
                break
            continue
        if first >= 0 and entry.neg_priority != table[first].neg_priority and not exact_first:
            break
        if not entry.match.matches(hdr, in_port):
            continue
        if exact_first and entry.match.is_exact:
            return index
        if first < 0:
            first = index
            seen.append(behaviour(entry))
        elif entry.neg_priority == table[first].neg_priority:
            kind = behaviour(entry)
            if kind not in seen:
                seen.append(kind)
                if tied is None:
                    tied = [first]
                tied.append(index)
    return first if tied is None else tuple(tied)


def overlap(one: Match, other: Match) -> bool:
    """Whether some packet matches both ``one`` and ``other`` (fields both name have equal
    values, or one is a prefix holding the other's address or prefix; in-ports likewise)."""
    if one.in_port is not None and other.in_port is not None and one.in_port != other.in_port:
        return False
    values = dict(other.fields)
    for name, value in one.fields:
        if name not in values:
            continue
        theirs = values[name]
        if value == theirs:
            continue
        if is_prefix(value) and prefix_covers(value, theirs):
            continue
        if is_prefix(theirs) and prefix_covers(theirs, value):
            continue
        return False
    return True


def may_tie(table: Table) -> bool:
    """Whether some packet could meet a tie in ``table`` (see :func:`candidates`): two entries
    of one table and one priority, behaving differently, whose matches overlap. A cheap
    test of a whole table, so that tables without any tie cost nothing more."""
    for index, entry in enumerate(table):
        for other in table[index + 1:]:
            if other.table_id != entry.table_id or other.neg_priority != entry.neg_priority:
                break
            if behaviour(other) != behaviour(entry) and overlap(entry.match, other.match):
                return True
    return False


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
