"""The app API: what a controller app sees and what it may ask for.

An app is NOX-style and pure. The app object holds configuration only; its state is a
hashable value passed to each handler and returned by it; commands go into a write-only
:class:`Out`. The platform (:mod:`nice_attendre.models.platform`) turns what the app asks
into the messages of the protocol variant, so an app is the same code under every variant.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Sequence, TypeVar

from nice_attendre.models.messages import (DEFAULT_PRIORITY, NO_TIMEOUTS, BarrierReply, BufferId, FlowMod,
                                           FlowRemoved, PacketIn, PortStatsReply, Timeouts)
from nice_attendre.models.packet import Action, Match, Packet
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


class Out:
    """Write-only sink for an app's commands during one handler call.

    ``topology`` is the network's topology (read-only configuration), for route lookups.
    """

    __slots__ = ("topology", "requests")

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self.requests: list[Request] = []

    def flow_mod(self, dpid: int, match: Match, actions: Sequence[Action], *,
                 priority: int = DEFAULT_PRIORITY, table_id: int = 0,
                 buffer_id: BufferId | None = None, command: str = "add", idle_timeout: int = 0,
                 hard_timeout: int = 0, notify_removed: bool = False) -> None:
        """Add an entry at switch ``dpid``; with ``command="modify"`` give every entry whose
        match is covered by ``match`` these actions (OpenFlow 1.1+: nothing happens if there
        is none); ``"modify-or-add"`` the same, but add the entry when none is covered
        (OpenFlow 1.0's OFPFC_MODIFY); with ``"delete"`` remove those entries
        (``"delete-strict"``: only an entry whose match equals ``match``).

        With ``buffer_id`` the entry's actions are also applied to that buffered packet
        (a flow-mod/packet-out). ``idle_timeout``/``hard_timeout`` (seconds, 0 = never) let
        the entry expire (at any moment: time is not modelled); with ``notify_removed`` the
        switch tells the app (``on_flow_removed``).
        """
        if command not in FLOW_MOD_COMMANDS:
            raise ValueError(f"flow_mod command must be one of {', '.join(FLOW_MOD_COMMANDS)}, not {command!r}")
        self.requests.append(FlowModRequest(dpid, match, tuple(actions), priority, table_id,
                                            buffer_id, command, _timeouts(idle_timeout, hard_timeout, notify_removed)))

    def packet_out(self, dpid: int, actions: Sequence[Action], *, buffer_id: BufferId | None = None,
                   in_port: int = 0, packet: Packet | None = None) -> None:
        """Apply ``actions`` at ``dpid`` to the buffered packet ``buffer_id`` (or ``packet``)."""
        if buffer_id is None and packet is None:
            raise ValueError("packet_out needs a buffer_id or a packet")
        self.requests.append(PacketOutRequest(dpid, tuple(actions), buffer_id, in_port, packet))

    def install_path(self, hops: Sequence[Hop], *, priority: int = DEFAULT_PRIORITY,
                     packet_in: PacketIn | None = None, idle_timeout: int = 0, hard_timeout: int = 0,
                     notify_removed: bool = False) -> None:
        """Install a forwarding path: one entry per hop, the hops in forwarding order.

        When ``packet_in`` is given and the first hop is its switch, that switch gets a
        flow-mod/packet-out releasing the buffered packet, the others flow-mods. The
        platform knows each hop's predecessor, which OpenFlow-B (barriers to the following
        switches) and Attendre (Attendre Commands to the next hop) need. Timeouts as for
        :meth:`flow_mod`, on every hop's entry.
        """
        hops = tuple(hops)
        if not hops:
            return
        timeouts = _timeouts(idle_timeout, hard_timeout, notify_removed)
        if packet_in is not None and packet_in.buffer_id is not None and hops[0].dpid == packet_in.dpid:
            self.requests.append(InstallPathRequest(hops, priority, packet_in.buffer_id, packet_in.dpid, timeouts))
        else:
            self.requests.append(InstallPathRequest(hops, priority, None, None, timeouts))

    def request_port_stats(self, dpid: int) -> None:
        """Ask switch ``dpid`` for its port statistics (answered by ``on_port_stats``)."""
        self.requests.append(PortStatsRequestRequest(dpid))

    def barrier(self, dpid: int, xid: Any = None) -> None:
        """Send switch ``dpid`` a barrier request: the switch executes every command sent to
        it before the barrier before any sent after it, then answers with a barrier reply
        (``on_barrier_reply``, with this ``xid``). Without barriers a switch may execute
        commands in any order (``--command-order any``)."""
        self.requests.append(BarrierRequestRequest(dpid, xid))


def _timeouts(idle: int, hard: int, notify: bool) -> Timeouts:
    for name, value in (("idle_timeout", idle), ("hard_timeout", hard)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 65535:
            raise ValueError(f"{name} must be a whole number of seconds from 0 to 65535, got {value!r}")
    return Timeouts(idle, hard, bool(notify))


class App(Generic[AS]):
    """Base class of controller apps. Override the handlers you need; each returns the new state.

    Handlers must be deterministic functions of their arguments (no clock, no globals, no
    unseeded randomness) and must not mutate ``state``. An exception raised by a handler
    is reported by the checker as the violation ``app-exception``.
    """

    #: Registered name (for listings); user apps may leave it empty.
    name: ClassVar[str] = ""
    #: Load classes a port-statistics reply can report to this app (see ``on_port_stats``).
    load_classes: ClassVar[tuple[str, ...]] = ("low", "high")
    #: Topology used when the user names none.
    default_topology: ClassVar[str] = "linear:2"
    #: Properties checked when the user names none (``None``: the registry's defaults).
    default_properties: ClassVar[tuple[str, ...] | None] = None
    #: The OpenFlow version the switches speak with this app: ``"1.0"`` (a table miss buffers
    #: the packet and sends a packet-in) or ``"1.3"`` (a miss without a table-miss entry drops
    #: the packet; a flow-mod's buffered packet goes through the pipeline). Configuration.
    openflow_version: ClassVar[str] = "1.0"

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

    def on_flow_removed(self, state: AS, ev: FlowRemoved, out: Out) -> AS:
        """A switch removed an entry installed with ``notify_removed`` (it expired)."""
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


__all__ = ["App", "Out", "Hop", "PacketIn", "BarrierReply", "PortStatsReply", "FlowRemoved", "Request"]
