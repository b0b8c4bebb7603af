"""The app API: what a controller app sees and what it may ask for.

An app is NOX-style and pure. The app object holds configuration only; its state is a
hashable value passed to each handler and returned by it; commands go into a write-only
:class:`Out`. The platform of each protocol variant (the controller side of
:mod:`nice_attendre.models.protocols.openflow` and the variants deriving from it) turns
what the app asks into the messages of that variant, so an app is the same code under every variant.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Sequence, TypeVar

from nice_attendre.errors import CallTimeout, Interrupted, StopRequest, UnsupportedFeature
from nice_attendre.models.addresses import is_prefix, normalise_prefix
from nice_attendre.models.messages import (DEFAULT_PRIORITY, NO_TIMEOUTS, TABLE, BarrierReply, BufferId, Error,
                                           FlowMod, FlowRemoved, PacketIn, PacketOut, PortStatsReply, PortStatus, Timeouts)
from nice_attendre.models.packet import (HEADER_FIELDS, Action, Flood, GotoTable, Match, Output, Packet,
                                         SetField, ToController)
from nice_attendre.models.scenario import Scenario
from nice_attendre.models.topology import Topology

AS = TypeVar("AS")


@dataclass(frozen=True, slots=True)
class Hop:
    """One switch of a path to install: its entry's match and actions."""

    dpid: int
    match: Match
    actions: tuple[Action, ...]
    table_id: int = 0


# ---- what the app asked for (the platform translates these) ---------------------------

@dataclass(frozen=True, slots=True)
class FlowModRequest:
    dpid: int
    match: Match
    actions: tuple[Action, ...]
    priority: int
    table_id: int
    buffer_id: BufferId | None
    command: str
    timeouts: Timeouts = NO_TIMEOUTS
    check_overlap: bool = False
    xid: Any = None


@dataclass(frozen=True, slots=True)
class PacketOutRequest:
    dpid: int
    actions: tuple[Action, ...]
    buffer_id: BufferId | None
    in_port: int
    packet: Packet | None


@dataclass(frozen=True, slots=True)
class InstallPathRequest:
    hops: tuple[Hop, ...]
    priority: int
    buffer_id: BufferId | None
    packet_in_dpid: int | None
    timeouts: Timeouts = NO_TIMEOUTS
    #: For a packet-in that carried its packet (no buffer id): the packet-out that sends it along
    #: the first hop, right after the first hop's flow-mod.
    carried: PacketOut | None = None

    def flow_mod(self, index: int, buffer_id: BufferId | None = None) -> "FlowMod":
        """The flow-mod of hop ``index`` (with ``buffer_id``: a flow-mod/packet-out)."""
        hop = self.hops[index]
        return FlowMod(hop.match, hop.actions, self.priority, hop.table_id, buffer_id, timeouts=self.timeouts)


@dataclass(frozen=True, slots=True)
class PortStatsRequestRequest:
    dpid: int


@dataclass(frozen=True, slots=True)
class BarrierRequestRequest:
    dpid: int
    xid: Any


Request = (FlowModRequest | PacketOutRequest | InstallPathRequest | PortStatsRequestRequest
           | BarrierRequestRequest)

#: Flow-mod commands an app may send (see :meth:`Out.flow_mod`).
FLOW_MOD_COMMANDS = ("add", "modify", "modify-or-add", "delete", "delete-strict")

#: Highest priority an app's entry may have (OpenFlow's 16 bits; Attendre's buffer entries are above).
MAX_PRIORITY = 0xFFFF
#: Highest flow table id (OpenFlow 1.3: 0..254).
MAX_TABLE_ID = 254

_COMMANDS = FLOW_MOD_COMMANDS
_SEQUENCES = (list, tuple)


class BadRequest(ValueError):
    """An app called :class:`Out` with a malformed argument. The platform reports it as the
    violation ``app-exception``, naming the handler and the call."""


def _show(value: Any) -> str:
    """A value for an error message: its type and a short repr."""
    return f"{type(value).__name__} {_short(value)}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def app_failure(exc: BaseException) -> str:
    """What went wrong in a call into the app, after its name: ``raised KeyError: 'h2'``."""
    if isinstance(exc, CallTimeout):
        return f"did not return within {exc.seconds:g} s (stuck in a loop or waiting?)"
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r})"
    if isinstance(exc, BadRequest):
        return f"made a malformed request: {exc}"
    where = getattr(exc, "app_where", None)  # set by adapters that know (a Ryu app's file and line)
    return f"raised {type(exc).__name__}: {_message(exc)}" + (f" at {where}" if isinstance(where, str) else "")


#: What :func:`app_failure` says of a call that ran past the handler time limit (how a
#: replayed trace recognises a step that differs only by the time limit).
TIME_LIMIT_FAILURE = "did not return within"


def _message(exc: BaseException) -> str:
    """``str(exc)``, or what its ``__str__`` did instead of returning (an app's exception
    class is user code too)."""
    try:
        return str(exc)
    except BaseException as failure:  # noqa: BLE001 - a user's __str__ fails: say so, never crash
        if not is_app_failure(failure):
            raise
        return f"<its __str__ raised {type(failure).__name__}>"


def is_app_failure(exc: BaseException) -> bool:
    """Whether ``exc``, raised out of a call into user code (an app handler, the app
    state's ``__hash__``/``__eq__``/``__repr__``, a user's property), is the app's own
    failure, which the checker reports as the violation ``app-exception``, rather than
    something that must pass through and end the run.

    Passing through: exhausted memory, :class:`~nice_attendre.errors.UnsupportedFeature`
    (a model limit, exit 2), the watchdog's own stops
    (:class:`~nice_attendre.errors.StopRequest`), and Ctrl-C: the checker's
    :class:`~nice_attendre.errors.Interrupted`, or a plain ``KeyboardInterrupt`` while
    SIGINT raises it (no watchdog turns Ctrl-C into its own stop). Everything else is the
    app's: any :class:`Exception`, ``sys.exit`` (SystemExit), GeneratorExit, the
    watchdog's :class:`~nice_attendre.errors.CallTimeout`, a ``BaseException`` subclass of
    the app's own, and a ``KeyboardInterrupt`` the app raises itself (while a watchdog
    handles Ctrl-C, or SIGINT is ignored, a real Ctrl-C never arrives as one).
    """
    if isinstance(exc, (MemoryError, UnsupportedFeature, StopRequest, Interrupted)):
        return False
    if isinstance(exc, KeyboardInterrupt):
        return not _sigint_raises_keyboard_interrupt()
    return True


def _sigint_raises_keyboard_interrupt() -> bool:
    """Whether a Ctrl-C now would raise a plain ``KeyboardInterrupt`` (SIGINT's handler is
    Python's default one, or a handler we do not know)."""
    import signal

    try:
        handler = signal.getsignal(signal.SIGINT)
    except (ValueError, AttributeError):  # pragma: no cover - no SIGINT here
        return True
    if handler in (signal.SIG_IGN, signal.SIG_DFL, None):
        return False
    owner = getattr(handler, "__self__", None)
    return not getattr(owner, "translates_ctrl_c", False)


def state_failure(state: Any, exc: BaseException) -> str:
    """What is wrong with ``state``, an app state a handler returned, whose interning
    (``__hash__``, ``__eq__``) or first check (``__repr__``, ``==`` with itself) raised
    ``exc``: after "returned", ``an unhashable state [1] (list); ...`` or ``a state whose
    __eq__ raised ValueError: boom``."""
    if isinstance(exc, _DunderFailure):
        return f"a state whose {exc.dunder} {exc.what}"
    if isinstance(exc, CallTimeout):
        return f"a state whose __hash__, __eq__ or __repr__ {app_failure(exc)}"
    if isinstance(exc, TypeError):
        try:
            hash(state)
        except TypeError:
            return (f"an unhashable state {_short_safe(state)} ({type(state).__name__}); states must be hashable "
                    "values: tuples, frozensets, frozen dataclasses")
        except BaseException as again:  # noqa: BLE001 - user code: described, never a crash
            if not is_app_failure(again):
                raise
            return f"a state whose __hash__ {app_failure(again)}"
    try:
        hash(state)
    except BaseException as again:  # noqa: BLE001 - user code: described, never a crash
        if not is_app_failure(again):
            raise
        return f"a state whose __hash__ {app_failure(again)}"
    return f"a state whose __eq__ {app_failure(exc)}"


class _DunderFailure(Exception):
    """Raised by :func:`checked_new_state` for a dunder of a new app state that failed."""

    def __init__(self, dunder: str, what: str) -> None:
        super().__init__(dunder, what)
        self.dunder = dunder
        self.what = what


def checked_new_state(state: Any) -> None:
    """Check an app state never seen before, as traces, reports and the interning of equal
    states will use it: its ``__repr__`` must return a str and it must equal itself (a
    state that does not would be stored anew every time it is reached). Raises
    :class:`_DunderFailure` (an :class:`Exception`, so the caller reports it as the app's)
    or what must pass through (see :func:`is_app_failure`)."""
    for dunder in ("__repr__", "__eq__"):
        try:
            if dunder == "__repr__":
                text = repr(state)
                if not isinstance(text, str):  # pragma: no cover - repr() itself refuses non-str
                    raise TypeError(f"__repr__ returned {type(text).__name__}")
            elif not state == state:
                raise _DunderFailure("__eq__", "says it is not equal to itself")
        except _DunderFailure:
            raise
        except BaseException as exc:  # noqa: BLE001 - user code: a finding, never a crash
            if not is_app_failure(exc):
                raise
            raise _DunderFailure(dunder, app_failure(exc)) from None


def _short_safe(value: Any) -> str:
    """:func:`_short`, or what ``repr`` did instead (user code)."""
    try:
        return _short(value)
    except BaseException as exc:  # noqa: BLE001 - user code: described, never a crash
        if not is_app_failure(exc):
            raise
        return f"<{type(value).__name__} whose __repr__ {app_failure(exc)}>"


def bad_state(state: Any, before: Any, hashing: bool = False) -> str | None:
    """Why ``state``, returned by a handler in place of ``before``, cannot be the app's
    state (``None`` if it can). ``hashing``: also check that it is hashable."""
    if state is None and before is not None:
        return (f"None instead of the app's state (it was {_short_safe(before)}; a handler returns the new "
                "state, e.g. `return state`)")
    if hashing:
        try:
            hash(state)
        except BaseException as exc:  # noqa: BLE001 - user code: described, never a crash
            if not is_app_failure(exc):
                raise
            return state_failure(state, exc)
    return None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_dpid(call: str, dpid: Any) -> None:
    if not _is_int(dpid):
        raise BadRequest(f"{call}: dpid must be an int, got {_show(dpid)}")


def _known(valid: set[Any] | None, value: Any) -> bool:
    """Whether ``value`` was already found valid (an unhashable value never was)."""
    if valid is None:
        return False
    try:
        return value in valid
    except TypeError:
        return False


def _plain_actions(actions: Any, kinds: tuple[type, ...] = (tuple,), entry: bool = True) -> bool:
    """Whether ``actions`` is a sequence of one of ``kinds`` holding Outputs to int ports
    (for an ``entry``'s actions, not to TABLE), Floods and ToControllers (the fast path;
    anything else, GotoTable included, gets the full check)."""
    if type(actions) not in kinds:
        return False
    for action in actions:
        kind = type(action)
        if kind is Output:
            if type(action.port) is not int or (entry and action.port == TABLE):
                return False
        elif kind is not Flood and kind is not ToController:
            return False
    return True


def _check_match(call: str, match: Any) -> None:
    """A :class:`Match` whose fields are (header field, str or int) pairs sorted by name."""
    if type(match) is not Match:
        raise BadRequest(f"{call}: match must be a Match (Match.of(...) or Match.exact(header)), got {_show(match)}")
    fields = match.fields
    if type(fields) is not tuple:
        raise BadRequest(f"{call}: match fields must be a tuple of (name, value) pairs, got {_show(fields)}")
    previous = ""
    for pair in fields:
        if type(pair) is not tuple or len(pair) != 2 or pair[0] not in HEADER_FIELDS:
            raise BadRequest(f"{call}: bad match field {_show(pair)} (names: {', '.join(HEADER_FIELDS)})")
        if pair[0] <= previous:
            raise BadRequest(f"{call}: match fields must be sorted by name, each once (use Match.of)")
        if not isinstance(pair[1], (str, int)):
            raise BadRequest(f"{call}: match field {pair[0]} must be a str or an int, got {_show(pair[1])}")
        if is_prefix(pair[1]):
            _check_prefix(call, *pair)
        previous = pair[0]
    if match.in_port is not None and not _is_int(match.in_port):
        raise BadRequest(f"{call}: match in_port must be an int or None, got {_show(match.in_port)}")


def _check_prefix(call: str, name: str, value: str) -> None:
    """A prefix in a match: of an IP field, a valid IPv4 prefix, normalised (as Match.of makes it)."""
    if name not in ("ip_src", "ip_dst"):
        raise BadRequest(f"{call}: only ip_src and ip_dst take a prefix, not {name}={value!r}")
    try:
        normal = normalise_prefix(value)
    except ValueError as exc:
        raise BadRequest(f"{call}: match field {exc}") from None
    if normal != value:
        raise BadRequest(f"{call}: match field {name}={value!r} has host bits set; write {normal!r} "
                         "(Match.of normalises it)")


#: Header fields whose values are numbers (the others are addresses, as text).
_NUMERIC_FIELDS = ("tp_src", "tp_dst", "ip_proto")


def _check_actions(call: str, actions: Any, table_id: int = 0, entry: bool = True) -> tuple[Action, ...]:
    """The actions as a tuple; each an Output (int port), Flood, ToController, SetField or
    GotoTable (to a later table). ``entry``: they are a flow entry's, where an Output to
    TABLE is refused: OpenFlow allows OFPP_TABLE only in a packet-out's actions, and a switch
    answers a flow-mod using it with an error (OFPET_BAD_ACTION, OFPBAC_BAD_OUT_PORT)."""
    if not isinstance(actions, (list, tuple)):
        raise BadRequest(f"{call}: actions must be a list or tuple of actions, got {_show(actions)}")
    for action in actions:
        kind = type(action)
        if kind is Output:
            if not _is_int(action.port):
                raise BadRequest(f"{call}: Output port must be an int, got {_show(action.port)}")
            if entry and action.port == TABLE:
                raise BadRequest(f"{call}: Output(TABLE) is valid only in a packet-out's actions; a switch "
                                 "refuses a flow entry with it (OFPET_BAD_ACTION, OFPBAC_BAD_OUT_PORT)")
        elif kind is GotoTable:
            if not _is_int(action.table_id) or not table_id < action.table_id <= MAX_TABLE_ID:
                raise BadRequest(f"{call}: GotoTable must go to a later table (after {table_id}, up to "
                                 f"{MAX_TABLE_ID}), got {_show(action.table_id)}")
        elif kind is SetField:
            numeric = action.field in _NUMERIC_FIELDS
            if not (_is_int(action.value) if numeric else isinstance(action.value, str)):
                raise BadRequest(f"{call}: SetField {action.field} takes {'an int' if numeric else 'a str'}, "
                                 f"got {_show(action.value)}")
        elif kind is not Flood and kind is not ToController:
            raise BadRequest(f"{call}: not an action: {_show(action)} (actions: Output, Flood, ToController, "
                             "SetField, GotoTable)")
    return tuple(actions)


def _timeouts(call: str, idle: Any, hard: Any, notify: Any, cookie: Any = 0, cookie_mask: Any = 0) -> Timeouts:
    if not idle and not hard and not notify and not cookie and not cookie_mask:
        return NO_TIMEOUTS
    _check_number(call, "idle_timeout", idle, 0, 65535)
    _check_number(call, "hard_timeout", hard, 0, 65535)
    _check_number(call, "cookie", cookie, 0, 2**64 - 1)
    _check_number(call, "cookie_mask", cookie_mask, 0, 2**64 - 1)
    return Timeouts(idle, hard, bool(notify), cookie, cookie_mask)


def _check_number(call: str, name: str, value: Any, low: int, high: int) -> None:
    if not _is_int(value) or not low <= value <= high:
        raise BadRequest(f"{call}: {name} must be an int from {low} to {high}, got {_show(value)}")


def _check_buffer_id(call: str, buffer_id: Any) -> None:
    # Buffer ids are opaque to apps: a switch's packet buffer names a packet by (host, sequence,
    # copy), a flow-granularity buffer names a flow by its 5-tuple; both are non-empty tuples.
    if buffer_id is not None and (type(buffer_id) is not tuple or not buffer_id):
        raise BadRequest(f"{call}: buffer_id must be None or a packet-in's buffer_id, got {_show(buffer_id)}")


class Out:
    """Write-only sink for an app's commands during one handler call.

    ``topology`` is the network's topology (read-only configuration), for route lookups.
    """

    __slots__ = ("topology", "requests", "_valid")

    def __init__(self, topology: Topology, valid: set[Any] | None = None) -> None:
        self.topology = topology
        self.requests: list[Request] = []
        # Matches already checked: a cache the platform keeps across calls,
        # so that checking costs a set lookup once an app's requests repeat.
        self._valid = valid

    def fresh(self) -> "Out":
        """An empty :class:`Out` for another call with the same input (same topology and
        cache of checked matches): how a platform makes a call again to compare."""
        return Out(self.topology, self._valid)

    def flow_mod(self, dpid: int, match: Match, actions: Sequence[Action], *,
                 priority: int = DEFAULT_PRIORITY, table_id: int = 0,
                 buffer_id: BufferId | None = None, command: str = "add", idle_timeout: int = 0,
                 hard_timeout: int = 0, notify_removed: bool = False, check_overlap: bool = False,
                 xid: Any = None, cookie: int = 0, cookie_mask: int = 0) -> None:
        """Add an entry at switch ``dpid``; with ``command="modify"`` give every entry whose
        match is covered by ``match`` these actions (OpenFlow 1.1+: nothing happens if there
        is none); ``"modify-or-add"`` the same, but add the entry when none is covered
        (OpenFlow 1.0's OFPFC_MODIFY); with ``"delete"`` remove those entries
        (``"delete-strict"``: only an entry whose match equals ``match``).

        With ``buffer_id`` (an add or a modify; deletes ignore it) the flow-mod's actions are
        also applied to that buffered packet (a flow-mod/packet-out; OpenFlow 1.3: the packet
        goes through the table), whatever entries the modify found.
        ``idle_timeout``/``hard_timeout`` (seconds, 0 = never) let the entry expire (at any
        moment: time is not modelled); with ``notify_removed`` the switch tells the app
        (``on_flow_removed``). With ``check_overlap`` (OFPFF_CHECK_OVERLAP) the switch refuses
        an add that overlaps an entry of the same table and priority and tells the app
        (``on_error``), naming the flow-mod's ``xid`` if given. ``cookie`` (64 bits) is the
        added entry's (its flow-removed carries it); a modify or delete with a ``cookie_mask``
        changes only the entries whose cookie agrees with ``cookie`` on the mask's bits
        (OpenFlow 1.1+; a modify keeps the entries' cookies). Raises :class:`BadRequest` for a
        malformed argument, and for ``Output(TABLE)`` among the actions of an entry (OpenFlow
        allows it only in a packet-out; a switch refuses such a flow-mod).
        """
        valid = self._valid
        if valid is not None and type(dpid) is int and type(priority) is int and 0 <= priority <= MAX_PRIORITY \
                and table_id == 0 and type(table_id) is int and command in _COMMANDS \
                and (buffer_id is None or (type(buffer_id) is tuple and len(buffer_id) == 3)) \
                and not idle_timeout and not hard_timeout and not notify_removed and not check_overlap and xid is None \
                and not cookie and not cookie_mask \
                and _plain_actions(actions, _SEQUENCES):
            try:  # the common case inline: this runs for every flow-mod an app sends
                known = match in valid
            except TypeError:  # unhashable: malformed, named below
                known = False
            if known:
                self.requests.append(FlowModRequest(dpid, match, tuple(actions), priority, table_id, buffer_id,
                                                    command))
                return
        call = "out.flow_mod"
        if command not in _COMMANDS:
            raise BadRequest(f"{call}: command must be one of {', '.join(_COMMANDS)}, not {command!r}")
        _check_dpid(call, dpid)
        if not _known(valid, match):
            _check_match(call, match)
            if valid is not None:
                valid.add(match)
        _check_number(call, "table_id", table_id, 0, MAX_TABLE_ID)
        checked = _check_actions(call, actions, table_id, entry=not command.startswith("delete"))
        _check_number(call, "priority", priority, 0, MAX_PRIORITY)
        _check_buffer_id(call, buffer_id)
        timeouts = _timeouts(call, idle_timeout, hard_timeout, notify_removed, cookie, cookie_mask)
        self.requests.append(FlowModRequest(dpid, match, checked, priority, table_id, buffer_id, command, timeouts,
                                            bool(check_overlap), xid))

    def packet_out(self, dpid: int, actions: Sequence[Action], *, buffer_id: BufferId | None = None,
                   in_port: int = 0, packet: Packet | None = None) -> None:
        """Apply ``actions`` at ``dpid`` to the buffered packet ``buffer_id`` (or ``packet``).
        Raises :class:`BadRequest` for a malformed argument."""
        if type(dpid) is int and type(in_port) is int and in_port >= 0 and _plain_actions(actions, _SEQUENCES, False) \
                and ((type(buffer_id) is tuple and len(buffer_id) == 3 and packet is None)
                     or (buffer_id is None and type(packet) is Packet)):
            self.requests.append(PacketOutRequest(dpid, tuple(actions), buffer_id, in_port, packet))
            return  # the common case, checked inline
        call = "out.packet_out"
        _check_dpid(call, dpid)
        checked = _check_actions(call, actions, entry=False)
        _check_buffer_id(call, buffer_id)
        if packet is not None and type(packet) is not Packet:
            raise BadRequest(f"{call}: packet must be a Packet (such as ev.packet), got {_show(packet)}")
        if buffer_id is None and packet is None:
            raise BadRequest(f"{call}: needs a buffer_id or a packet")
        if not _is_int(in_port) or in_port < 0:
            raise BadRequest(f"{call}: in_port must be an int >= 0, got {_show(in_port)}")
        self.requests.append(PacketOutRequest(dpid, checked, buffer_id, in_port, packet))

    def install_path(self, hops: Sequence[Hop], *, priority: int = DEFAULT_PRIORITY,
                     packet_in: PacketIn | None = None, idle_timeout: int = 0, hard_timeout: int = 0,
                     notify_removed: bool = False) -> None:
        """Install a forwarding path: one entry per hop, the hops in forwarding order.

        When ``packet_in`` is given and the first hop is its switch, that switch gets a
        flow-mod/packet-out releasing the buffered packet (or, when the packet-in carried its
        packet without a buffer id, a flow-mod and then a packet-out sending that packet),
        the others flow-mods. The
        platform knows each hop's predecessor, which OpenFlow-B (barriers to the following
        switches) and Attendre (Attendre Commands to the next hop) need. Timeouts as for
        :meth:`flow_mod`, on every hop's entry. Raises :class:`BadRequest` for a malformed
        argument.
        """
        timeouts = (_timeouts("out.install_path", idle_timeout, hard_timeout, notify_removed)
                    if idle_timeout or hard_timeout or notify_removed else NO_TIMEOUTS)
        valid = self._valid if self._valid is not None else set()
        if type(hops) is list or type(hops) is tuple:
            # The common case first, with no allocation but the path (this runs for every
            # path an app installs): plain types, Output/Flood/ToController actions in a
            # tuple, table 0, a match already checked (hashing a Match is a C tuple hash).
            for hop in hops:
                if type(hop) is not Hop or type(hop.dpid) is not int or hop.table_id != 0 \
                        or type(hop.table_id) is not int:
                    break
                actions = hop.actions
                if not (type(actions) is tuple and len(actions) == 1 and type(actions[0]) is Output
                        and type(actions[0].port) is int and actions[0].port >= 0) and not _plain_actions(actions):
                    break
                try:
                    if hop.match not in valid:
                        break
                except TypeError:  # unhashable: malformed, named below
                    break
            else:
                self._add_path(tuple(hops), priority, packet_in, timeouts)
                return
        self._add_path(self._checked_hops(hops, valid), priority, packet_in, timeouts)

    def _checked_hops(self, hops: Any, valid: set[Any]) -> tuple[Hop, ...]:
        """Every hop checked, named by its number when malformed; actions given as a list
        become a tuple. The checked matches are remembered in ``valid``."""
        call = "out.install_path"
        if isinstance(hops, (str, bytes, Hop)) or not isinstance(hops, (list, tuple)):
            raise BadRequest(f"{call}: hops must be a list or tuple of Hop, got {_show(hops)}")
        checked: list[Hop] = []
        for number, hop in enumerate(hops, start=1):
            if type(hop) is not Hop:
                raise BadRequest(f"{call}: hop {number} must be a Hop(dpid, match, actions), got {_show(hop)}")
            where = f"{call} hop {number}"
            _check_dpid(where, hop.dpid)
            _check_match(where, hop.match)
            _check_number(where, "table_id", hop.table_id, 0, MAX_TABLE_ID)
            actions = _check_actions(where, hop.actions, hop.table_id)
            if type(hop.actions) is not tuple:
                hop = Hop(hop.dpid, hop.match, actions, hop.table_id)
            valid.add(hop.match)
            checked.append(hop)
        return tuple(checked)

    def _add_path(self, path: tuple[Hop, ...], priority: int, packet_in: Any, timeouts: Timeouts) -> None:
        call = "out.install_path"
        if type(priority) is not int or not 0 <= priority <= MAX_PRIORITY:
            _check_number(call, "priority", priority, 0, MAX_PRIORITY)
        if packet_in is not None and type(packet_in) is not PacketIn:
            raise BadRequest(f"{call}: packet_in must be the handler's PacketIn (ev) or None, got {_show(packet_in)}")
        if not path:
            return
        if packet_in is not None and packet_in.buffer_id is not None and path[0].dpid == packet_in.dpid:
            self.requests.append(InstallPathRequest(path, priority, packet_in.buffer_id, packet_in.dpid, timeouts))
        elif packet_in is not None and path[0].dpid == packet_in.dpid:  # the packet came along: send it on
            carried = PacketOut(path[0].actions, None, packet_in.in_port, packet_in.packet)
            self.requests.append(InstallPathRequest(path, priority, None, None, timeouts, carried))
        else:
            self.requests.append(InstallPathRequest(path, priority, None, None, timeouts))

    def request_port_stats(self, dpid: int) -> None:
        """Ask switch ``dpid`` for its port statistics (answered by ``on_port_stats``)."""
        _check_dpid("out.request_port_stats", dpid)
        self.requests.append(PortStatsRequestRequest(dpid))

    def barrier(self, dpid: int, xid: Any = None) -> None:
        """Send switch ``dpid`` a barrier request: the switch executes every command sent to
        it before the barrier before any sent after it, then answers with a barrier reply
        (``on_barrier_reply``, with this ``xid``). Without barriers a switch may execute
        commands in any order (``--command-order any``)."""
        _check_dpid("out.barrier", dpid)
        self.requests.append(BarrierRequestRequest(dpid, xid))


class App(Generic[AS]):
    """Base class of controller apps. Override the handlers you need; each returns the new state.

    Handlers must be deterministic functions of their arguments (no clock, no globals, no
    unseeded randomness) and must not mutate ``state``. An exception raised by a handler
    is reported by the checker as the violation ``app-exception``; a handler that reads the
    clock, randomness or an object's address, or gives another outcome when called again
    with the same input, as ``app-nondeterminism`` (exit code 4; see
    :mod:`nice_attendre.models.determinism`).
    """

    #: Registered name (for listings); user apps may leave it empty.
    name: ClassVar[str] = ""
    #: Load classes a port-statistics reply can report to this app (see ``on_port_stats``).
    load_classes: ClassVar[tuple[str, ...]] = ("low", "high")
    #: Topology used when the user names none.
    default_topology: ClassVar[str] = "linear:2"
    #: Properties checked when the user names none (``None``: the registry's defaults): names
    #: (registered, or of ``properties``) or property objects.
    default_properties: ClassVar[tuple[Any, ...] | None] = None
    #: Properties the app ships, by name (``--property NAME`` finds them too).
    properties: ClassVar[dict[str, Any]] = {}
    #: The OpenFlow version the switches speak with this app: ``"1.0"`` (a table miss buffers
    #: the packet and sends a packet-in; an exact-match entry wins over every wildcard entry;
    #: a flow-mod's actions apply to its buffered packet), ``"1.2"`` (a table miss as 1.0's,
    #: the rest as 1.3's) or ``"1.3"`` (a miss without a table-miss entry drops the packet; a
    #: flow-mod's buffered packet goes through the pipeline). Configuration.
    openflow_version: ClassVar[str] = "1.0"
    #: Whether the app checks itself that a handler call gives the same outcome when made
    #: again with the same input (the Ryu adapter runs the Ryu handlers twice itself, as its
    #: own memo would answer a second call); otherwise the platform calls every handler
    #: twice (see :mod:`nice_attendre.models.determinism`). Configuration.
    checks_own_determinism: ClassVar[bool] = False

    def scenario(self, topology: Topology, packets: int, sender: str | None = None,
                 receiver: str | None = None) -> Scenario:
        """The traffic this app is verified with (default: ``sender`` pings ``receiver``
        ``packets`` times; see :meth:`Scenario.ping`). Apps with their own traffic (mobile
        hosts, TCP flows) override it."""
        return Scenario.ping(topology, packets, sender, receiver)

    def initial_state(self) -> AS:
        """The app's state before any event."""
        return None  # type: ignore[return-value]

    def on_switch_join(self, state: AS, dpid: int, out: Out) -> AS:
        """Switch ``dpid`` connected (called once per switch, in dpid order, before any event)."""
        return state

    def on_packet_in(self, state: AS, ev: PacketIn, out: Out) -> AS:
        """A switch sent a packet-in."""
        return state

    def on_barrier_reply(self, state: AS, ev: BarrierReply, out: Out) -> AS:
        """A switch answered a barrier request."""
        return state

    def on_port_stats(self, state: AS, ev: PortStatsReply, out: Out) -> AS:
        """Port statistics of a switch arrived (``ev.load`` is one of ``load_classes``)."""
        return state

    def on_port_status(self, state: AS, ev: PortStatus, out: Out) -> AS:
        """A switch's port went down or up (``ev.up``): a link failed or recovered."""
        return state

    def on_flow_removed(self, state: AS, ev: FlowRemoved, out: Out) -> AS:
        """A switch removed an entry installed with ``notify_removed`` (it expired, or a
        flow-mod deleted it)."""
        return state

    def handler_name(self, handler: str) -> str:
        """How traces name the app's handler ``handler`` (``"on_packet_in"``):
        ``LearningSwitch.on_packet_in``. (Adapters name the method of the app they wrap.)"""
        return f"{type(self).__name__}.{handler}"

    def on_error(self, state: AS, ev: Error, out: Out) -> AS:
        """A switch refused a flow-mod (``ev.reason``: ``"overlap"``, for ``check_overlap``)."""
        return state

    @classmethod
    def check_bug(cls, bug: str | None, known: tuple[str, ...]) -> str | None:
        """``bug`` if it names one of the ``known`` buggy variants (or is None); otherwise
        ``ValueError`` naming the app and the known variants (a constructor helper)."""
        if bug is not None and bug not in known:
            raise ValueError(f"unknown {cls.name or cls.__name__} bug {bug!r} (known: {', '.join(known)})")
        return bug

    def describe(self) -> str:
        """One line for reports (the class name and its options)."""
        return type(self).__name__

    def __repr__(self) -> str:
        return self.describe()


__all__ = ["App", "Out", "Hop", "PacketIn", "BarrierReply", "PortStatsReply", "PortStatus", "FlowRemoved", "Request",
           "BadRequest"]
