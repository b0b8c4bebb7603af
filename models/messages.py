"""OpenFlow messages between switches and the controller (plus Attendre's fields).

Controller-to-switch commands carry, under Attendre, the message set they belong to
(``ms``) and optionally the Attendre Command for the next hop (``ac``); under the other
protocols both are ``None``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from nice_attendre.models.packet import Action, AttendreCommand, Match, Packet, format_actions

#: ``Output(TABLE)`` in a packet-out submits the packet to the flow table (OFPP_TABLE).
TABLE = -1

#: Priority of entries when an app does not give one (OpenFlow's default).
DEFAULT_PRIORITY = 0x8000

#: Priority of Attendre's buffer entries at the packet-in switch (above any app entry).
BUFFER_PRIORITY = 0x10000

BufferId = tuple[str, int, int]  # (origin host, packet seq, copy index): derived, never a counter


class MessageSet(NamedTuple):
    """Attendre: a message set's version and its size at one switch.

    The version is the identity of the packet-in the set answers (its switch and buffer
    id), never a counter. ``acs`` is how many Attendre Commands for this set will also reach
    the switch through the data plane (one per path of the set that passes through it after
    another hop): the switch remembers a finished set until that many have come (to ignore
    them, Fig. 5 line 4), and forgets it then, or at once when none is due.
    """

    version: tuple[Any, ...]
    size: int
    acs: int = 0


class Timeouts(tuple):
    """An entry's timeouts in seconds (0: none), whether its removal is reported to the
    controller (a flow-removed message) and its cookie. Time is not modelled: an entry with a
    timeout may expire at any moment (see :mod:`nice_attendre.models.protocols.openflow`).

    ``cookie`` is the app's opaque 64-bit value for the entry (OpenFlow's flow cookie: carried
    in its flow-removed). A modify or delete flow-mod's ``cookie_mask`` restricts it to the
    entries whose ``cookie & cookie_mask`` equals its own (OpenFlow 1.1+; 0: every entry).
    A tuple ``(idle, hard, notify)``, followed by the cookie and the mask only when they are
    not 0: an app without cookies has the values (and state fingerprints) it had before
    cookies were modelled.
    """

    __slots__ = ()

    def __new__(cls, idle: int = 0, hard: int = 0, notify: bool = False, cookie: int = 0,
                cookie_mask: int = 0) -> "Timeouts":
        extra = (cookie, cookie_mask) if cookie_mask else (cookie,) if cookie else ()
        return tuple.__new__(cls, (idle, hard, notify) + extra)

    def __getnewargs__(self) -> tuple[Any, ...]:  # (pickle: the fields, not the tuple)
        return tuple(self)

    idle = property(lambda self: self[0], doc="The idle timeout (seconds; 0: none).")
    hard = property(lambda self: self[1], doc="The hard timeout (seconds; 0: none).")
    notify = property(lambda self: self[2], doc="Whether the entry's removal is reported.")
    cookie = property(lambda self: self[3] if len(self) > 3 else 0, doc="The flow cookie (0: none).")
    cookie_mask = property(lambda self: self[4] if len(self) > 4 else 0,
                           doc="A modify or delete's cookie mask (0: every entry).")

    def entry(self) -> "Timeouts":
        """What an entry an add makes keeps of these (not a cookie mask)."""
        return Timeouts(self.idle, self.hard, self.notify, self.cookie) if self.cookie_mask else self

    def selects(self, entry: "Timeouts | None") -> bool:
        """Whether a modify or delete with these selects an entry with ``entry`` (its
        timeouts, None for none): its cookie agrees on the bits of the mask."""
        mask = self.cookie_mask
        return not mask or ((entry.cookie if entry is not None else 0) & mask) == (self.cookie & mask)

    @property
    def expires(self) -> bool:
        return bool(self.idle or self.hard)

    def reasons(self) -> tuple[str, ...]:
        """Why the entry may expire: ``"idle"``, ``"hard"`` or both."""
        return (("idle",) if self.idle else ()) + (("hard",) if self.hard else ())

    def __repr__(self) -> str:
        extra = f", cookie={self.cookie:#x}" if self.cookie else ""
        extra += f", cookie_mask={self.cookie_mask:#x}" if self.cookie_mask else ""
        return f"Timeouts(idle={self.idle}, hard={self.hard}, notify={self.notify}{extra})"

    def __str__(self) -> str:
        parts = ([f"idle {self.idle}s"] if self.idle else []) + ([f"hard {self.hard}s"] if self.hard else [])
        parts += ["notify"] if self.notify else []
        parts += [f"cookie {self.cookie:#x}"] if self.cookie or self.cookie_mask else []
        parts += [f"mask {self.cookie_mask:#x}"] if self.cookie_mask else []
        return ", ".join(parts)


NO_TIMEOUTS = Timeouts()


# ---- switch -> controller ------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class PacketIn:
    """A switch asks the controller what to do with ``packet`` (buffered as ``buffer_id``).

    ``reason`` is ``"no-match"`` for a table miss, ``"action"`` for an explicit
    send-to-controller action (then ``buffer_id`` is ``None``: the packet travels whole).
    """

    dpid: int
    in_port: int
    buffer_id: BufferId | None
    packet: Packet
    table_id: int = 0
    reason: str = "no-match"

    def __str__(self) -> str:
        return f"packet-in(s{self.dpid}, port {self.in_port}, {self.packet.label()})"


@dataclass(frozen=True, slots=True)
class BarrierReply:
    """A switch processed every command received before the barrier request ``xid``."""

    dpid: int
    xid: Any

    def __str__(self) -> str:
        return f"barrier-reply(s{self.dpid})"


@dataclass(frozen=True, slots=True)
class PortStatsReply:
    """A switch's port statistics, reduced to the load class the app distinguishes."""

    dpid: int
    load: str
    xid: Any = None

    def __str__(self) -> str:
        return f"port-stats-reply(s{self.dpid}, {self.load})"


# ---- controller -> switch ------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class FlowMod:
    """Add an entry (replacing one with the same table, priority and match), or delete entries.

    With ``buffer_id`` it is a flow-mod/packet-out: the entry's actions are applied to the
    buffered packet. ``command`` is ``"add"``, ``"modify"`` (every entry of ``table_id``
    whose match is covered by ``match`` gets ``actions``: OFPFC_MODIFY), ``"delete"``
    (removes every such entry, whatever its priority: OFPFC_DELETE) or ``"delete-strict"``
    (only entries whose match equals ``match``).
    """

    match: Match
    actions: tuple[Action, ...]
    priority: int = DEFAULT_PRIORITY
    table_id: int = 0
    buffer_id: BufferId | None = None
    command: str = "add"
    ms: MessageSet | None = None
    ac: AttendreCommand | None = None
    timeouts: Timeouts = NO_TIMEOUTS
    #: OFPFF_CHECK_OVERLAP: the switch refuses an add that overlaps an entry of the same
    #: table and priority, with an :class:`Error` to the controller.
    check_overlap: bool = False
    #: The app's transaction id, which an error about this flow-mod names (None: none given).
    xid: Any = None

    def __str__(self) -> str:
        kind = "flow-mod/packet-out" if self.buffer_id is not None else "flow-mod"
        if self.command != "add":
            kind = f"flow-mod({self.command})"
        extra = f", AC for s{self.ac.dpid}" if self.ac is not None else ""
        if self.timeouts != NO_TIMEOUTS:
            extra += f", {self.timeouts}"
        if self.check_overlap:
            extra += ", check overlap"
        return f"{kind} {self.match} -> {format_actions(self.actions)}{extra}"


@dataclass(frozen=True, slots=True)
class PacketOut:
    """Apply ``actions`` to the buffered packet ``buffer_id`` (or to ``packet`` when given)."""

    actions: tuple[Action, ...]
    buffer_id: BufferId | None = None
    in_port: int = 0
    packet: Packet | None = None
    ms: MessageSet | None = None
    ac: AttendreCommand | None = None

    def __str__(self) -> str:
        extra = f", AC for s{self.ac.dpid}" if self.ac is not None else ""
        return f"packet-out -> {format_actions(self.actions)}{extra}"


@dataclass(frozen=True, slots=True)
class BarrierRequest:
    """Ask the switch to reply once every command received before this one is processed."""

    xid: Any

    def __str__(self) -> str:
        return "barrier-request"


@dataclass(frozen=True, slots=True)
class PortStatsRequest:
    """Ask the switch for its port statistics."""

    xid: Any = None

    def __str__(self) -> str:
        return "port-stats-request"


@dataclass(frozen=True, slots=True)
class FlowRemoved:
    """Switch ``dpid`` removed an entry whose flow-mod asked to be told: because it expired
    (``reason`` ``"idle"`` or ``"hard"``) or a flow-mod deleted it (``"delete"``).
    ``timeouts`` are the entry's (OpenFlow's flow-removed reports them)."""

    dpid: int
    match: Match
    priority: int
    reason: str
    table_id: int = 0
    timeouts: Timeouts = NO_TIMEOUTS

    def __str__(self) -> str:
        why = "deleted" if self.reason == "delete" else f"{self.reason} timeout"
        return f"flow-removed(s{self.dpid}, {self.match}, {why})"


@dataclass(frozen=True, slots=True)
class PortStatus:
    """Switch ``dpid`` reports that its port ``port`` went up or down (a link failure or
    recovery)."""

    dpid: int
    port: int
    up: bool

    def __str__(self) -> str:
        return f"port-status(s{self.dpid}, port {self.port} {'up' if self.up else 'down'})"


@dataclass(frozen=True, slots=True)
class Error:
    """Switch ``dpid`` refused flow-mod ``request``: ``reason`` ``"overlap"`` (OFPFMFC_OVERLAP:
    an add with OFPFF_CHECK_OVERLAP overlaps an entry of the same table and priority)."""

    dpid: int
    reason: str
    request: FlowMod

    def __str__(self) -> str:
        return f"error(s{self.dpid}, {self.reason}: {self.request.match} priority {self.request.priority})"


SwitchMessage = PacketIn | BarrierReply | PortStatsReply | FlowRemoved | PortStatus | Error
Command = FlowMod | PacketOut | BarrierRequest | PortStatsRequest
