"""Plain OpenFlow: the switch datapath and the controller platform (our NOX).

Switch: a packet is matched against the flow tables (highest priority first); on a hit the
entry's actions are applied, on a table miss the packet is buffered under a buffer id and
a packet-in goes to the controller. Commands: flow-mod (add, modify, delete; an add or a
modify with a buffer id is a flow-mod/packet-out: its actions are applied to the buffered
packet, as in OpenFlow 1.0, or in 1.3 the packet goes through the table), packet-out,
barrier request, port-statistics request.

Platform: runs the app's handlers, catches their exceptions (reported as the alert
``app-exception``) and sends what the app asked for; ``install_path`` becomes one flow-mod
per hop, a flow-mod/packet-out for the packet-in switch.

Variants subclass :class:`OpenFlow` and override the hooks they change. The open interface
a variant uses (every hook is a method of this class):

* ``params``: the parameters it declares (:class:`~nice_attendre.models.protocols.params.Param`);
  their checked values are ``self.settings`` (every declared one, defaults filled in);
* ``event_handlers()``: its own event classes (frozen dataclasses with a ``rank``, like
  :mod:`nice_attendre.models.events`), each with the method that applies it; the network
  builds its handler table from them. ``switch_events()`` declares the kinds of them that
  each switch decides from its own slots alone (:class:`SwitchEvents`): a large network
  recomputes a switch's events of a kind only when a transition writes a slot the kind
  reads, so their cost does not grow with the network. ``extra_events(state)`` lists any
  others, read from the whole state in every state. In ``enabled`` order, after the
  network's own events: ``extra_events``, then each kind of ``switch_events`` switch by
  switch (in dpid order);
* ``initial_switch_state`` / ``held_packets``: its per-switch state (the ``ext:D`` slot);
* the data-plane and command hooks: ``table_miss``, ``buffer_packet``, ``take_buffered``,
  ``release_buffered``, ``flow_mod``, ``packet_out``, ``barrier``, ``marked_entry``.
* ``alternatives()``: those of its events that are alternative ways of processing a packet
  (below), so that they are also offered with every choice at equal-priority ties; the
  variant marks the point where it makes such a choice with ``self.ties.reach(choice)``
  (:mod:`~nice_attendre.models.protocols.ties`).

A variant event that is an alternative way of processing a switch's head packet (a meter's
verdict, a timeout) sets ``tx.choice`` and runs :meth:`OpenFlow.switch_packet`; the hooks
read the choice (``None`` for the ordinary :class:`SwitchProcessPacket`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping, NamedTuple, Sequence

from nice_attendre.errors import CallTimeout, UnsupportedFeature
from nice_attendre.models import flowtable
from nice_attendre.watchdog import guarded_caller
from nice_attendre.models.app import (BarrierRequestRequest, FlowModRequest, InstallPathRequest, Out,
                                      PacketOutRequest, PortStatsRequestRequest, Request, app_failure,
                                      bad_state, is_app_failure, state_failure)
from nice_attendre.models.determinism import NondeterministicCall, Outcome, Read, difference, reads_text
from nice_attendre.models.events import ControllerStats
from nice_attendre.models.messages import (NO_TIMEOUTS, TABLE, BarrierReply, BarrierRequest, BufferId, Error, FlowMod,
                                           FlowRemoved, PacketIn, PacketOut, PortStatsReply, PortStatsRequest,
                                           PortStatus)
from nice_attendre.models.packet import Flood, GotoTable, Output, Packet, SetField, ToController, rewritten
from nice_attendre.models.protocols.params import Param
from nice_attendre.models.protocols.ties import SwitchChoosesEntry, Ties

if TYPE_CHECKING:
    from nice_attendre.models.network import Network, Tx

PACKET_INS, FLOW_MODS, PACKET_OUTS, BARRIERS = range(4)


class _Unwatched:
    """A detector that watches nothing (a handler's second call, made to compare)."""

    reads: tuple[Read, ...] = ()

    def begin(self) -> None:
        """Nothing to watch."""

    def end(self) -> None:
        """Nothing was watched."""


_UNWATCHED = _Unwatched()


class PlatformState(NamedTuple):
    """The controller platform's own state.

    ``stats``: switches whose port statistics arrived and await the app (one
    :class:`ControllerStats` event per load class each); ``held``: OpenFlow-B's messages
    held back until barrier replies arrive.
    """

    stats: tuple[int, ...] = ()
    held: tuple[Any, ...] = ()


class SwitchEvents(NamedTuple):
    """A kind of a variant's own events that each switch decides from its own slots alone.

    ``reads``: the slots of the switch the events depend on, by kind (of :data:`SWITCH_SLOTS`:
    ``ext`` its variant state, ``table`` its flow table, ``buffer`` its packet buffer,
    ``ports`` the queue of every input port); ``events(state, dpid)``: the events of this kind
    switch ``dpid`` has enabled in ``state`` (a tuple in a fixed order, empty for none). The
    contract: ``events`` reads no other slot, so its result changes only with those it reads
    (tests/models/test_incremental.py compares it with a full recomputation in every state).
    """

    reads: tuple[str, ...]
    events: Callable[[Sequence[int], int], tuple[Any, ...]]


#: The slot kinds of a switch a :class:`SwitchEvents` may read.
SWITCH_SLOTS = ("ext", "table", "buffer", "ports")


class OpenFlow:
    """OpenFlow: table miss -> buffer + packet-in; flow-mod, flow-mod/packet-out, packet-out."""

    name = "openflow"
    #: The parameters the variant declares (none for the paper's three).
    params: ClassVar[tuple[Param, ...]] = ()

    def __init__(self, net: "Network", settings: Mapping[str, Any] | None = None) -> None:
        """``settings``: the values of the declared parameters, checked and with defaults
        filled in (:func:`nice_attendre.models.protocols.resolve`); defaults when None."""
        from nice_attendre.models.protocols.params import resolve_params

        self.net = net
        #: The value of each declared parameter (configuration).
        self.settings: dict[str, Any] = resolve_params(self.name, self.params, {}) if settings is None \
            else dict(settings)
        self.topology = net.topology
        self.monitors = net.options.monitors
        #: The OpenFlow version the app speaks ("1.0", "1.2" or "1.3"): configuration, from the app.
        self.version: str = net.app.openflow_version
        self._stats_cache: dict[int, tuple[ControllerStats, ...]] = {}
        self._install_cache: dict[tuple[int, int], tuple[FlowMod, int, flowtable.Entry | None]] = {}
        self._valid_requests: set[Any] = set()  # matches and hops Out has checked (see Out)
        self._hits: dict[tuple[Any, ...], int | tuple[int, ...]] = {}
        #: The exploration of equal-priority ties (see :mod:`~nice_attendre.models.protocols.ties`).
        self.ties = Ties(net)

    # ---- the variant's interface -------------------------------------------------------

    def label(self) -> str:
        """The variant and its parameters in the ``NAME:KEY=VALUE,...`` syntax (reports print
        it; it parses back to this configuration)."""
        from nice_attendre.models.protocols import format_spec

        return format_spec(type(self), self.settings)

    def settings_json(self) -> dict[str, Any]:
        """The parameters' values as JSON data (empty for a variant without parameters)."""
        return {param.name: param.to_json(self.settings[param.name]) for param in self.params}

    def event_handlers(self) -> dict[type, Callable[["Tx", Any], None]]:
        """The variant's own events and the method applying each (see the module docstring).
        Subclasses add theirs to ``super().event_handlers()``."""
        return {ControllerStats: self._stats_event, SwitchChoosesEntry: self.ties.apply}

    def _stats_event(self, tx: "Tx", ev: ControllerStats) -> None:
        self.controller_stats(tx, ev.dpid, ev.load)

    def alternatives(self) -> dict[Any, type]:
        """The variant's own events that are alternative ways of processing a switch's head
        packet, by the ``tx.choice`` each sets (none for OpenFlow). Where the processing
        reaches the point where such a choice is made, the variant calls
        ``self.ties.reach(choice)``, so that at equal-priority ties the alternative is offered
        with every combination of choices that reaches that point (see :class:`Ties`)."""
        return {}

    def switch_events(self) -> tuple[SwitchEvents, ...]:
        """The kinds of the variant's own events each switch decides from its own slots (see
        the module docstring); asked once, when the network is built. None for OpenFlow."""
        return ()

    # ---- initial state -----------------------------------------------------------------

    def initial_switch_state(self, dpid: int) -> Any:
        """The variant's per-switch state before any event (``ext:D`` slot)."""
        return None

    def initial_platform_state(self) -> Any:
        """The platform's state before any event."""
        return PlatformState()

    def switches_join(self, tx: "Tx") -> None:
        """Tell the app about every switch, in dpid order (its commands are queued)."""
        for dpid in self.topology.switches:
            self.switch_join(tx, dpid)

    def switch_join(self, tx: "Tx", dpid: int) -> None:
        """Switch ``dpid`` connects (at the start, or again after a restart): the app hears of it."""
        tx.origin = dpid  # the call runs for dpid (a per-switch threaded controller orders its calls)
        self.run_app(tx, "on_switch_join", lambda app, state, out: app.on_switch_join(state, dpid, out),
                     f"switch s{dpid} joined", None, message=dpid)

    def held_packets(self, ext: Any) -> tuple[Packet, ...]:
        """Packets the variant's switch state holds (none for OpenFlow)."""
        return ()

    # ---- data plane --------------------------------------------------------------------

    def switch_packet(self, tx: "Tx", dpid: int, port: int) -> None:
        """Switch ``dpid`` processes the head packet of input port ``port``."""
        net = self.net
        packet: Packet = tx.pop(net.slot_port[(dpid, port)])
        if packet.ac is not None:
            packet = self.receive_attendre_command(tx, dpid, packet)
        hop = (dpid, port)
        if hop in packet.trail:
            if "no-forwarding-loops" in self.monitors:
                tx.alert("no-forwarding-loops", f"{packet.label()} [{packet.hdr}] came to s{dpid} port {port} again "
                         f"(trail {_trail(packet.trail)})")
            tx.note(lambda: f"s{dpid} drops looping {packet}")
            return
        self.pipeline(tx, dpid, port, Packet(packet.hdr, packet.origin, packet.seq, packet.kind,
                                             packet.trail + (hop,), packet.ac, packet.late, packet.followup), 0)

    def receive_attendre_command(self, tx: "Tx", dpid: int, packet: Packet) -> Packet:
        """A packet carries an Attendre Command: plain OpenFlow ignores it."""
        return packet._replace(ac=None)

    def pipeline(self, tx: "Tx", dpid: int, in_port: int, packet: Packet, table_id: int) -> None:
        """Match ``packet`` from flow table ``table_id`` on and act on the result."""
        net = self.net
        while True:
            index = self.hit(tx, dpid, table_id, packet, in_port)
            if index < 0:
                self.table_miss(tx, dpid, in_port, packet, table_id)
                return
            entry = tx.get(net.slot_table[dpid])[index]
            if entry.buffer is not None or entry.encap is not None:
                handled = self.marked_entry(tx, dpid, in_port, packet, entry)
                if handled is None:
                    return
                packet = handled
            tx.note(lambda: f"s{dpid}: {packet.label()} from port {in_port} matches [{entry}]")
            goto = self.execute(tx, dpid, in_port, packet, entry.actions or (), entry)
            if goto is None:
                return
            packet = rewritten(packet, entry.actions or ())
            table_id = goto

    def hit(self, tx: "Tx", dpid: int, table_id: int, packet: Packet, in_port: int) -> int:
        """Index in switch ``dpid``'s table of the entry ``packet`` hits in ``table_id``, or -1.
        Where entries of equal priority tie, the choice the transition makes (see
        :mod:`~nice_attendre.models.protocols.ties`). Cached per table value, table id,
        header and in-port."""
        slot = self.net.slot_table[dpid]
        key = (tx.s[slot], table_id, packet.hdr, in_port)
        found = self._hits.get(key)
        if found is None:
            found = self._hits[key] = flowtable.candidates(tx.get(slot), table_id, packet.hdr, in_port,
                                                           self.version == "1.0")
        if found.__class__ is int:
            return found  # type: ignore[return-value]
        return self.ties.choose(tx, dpid, found, packet, in_port)  # type: ignore[arg-type]

    def marked_entry(self, tx: "Tx", dpid: int, in_port: int, packet: Packet,
                     entry: flowtable.Entry) -> Packet | None:
        """A hit on an entry with Attendre fields; return the packet to act on, or None if
        the packet was taken (buffered). Plain OpenFlow never creates such entries."""
        return packet

    def table_miss(self, tx: "Tx", dpid: int, in_port: int, packet: Packet, table_id: int) -> None:
        """No entry matches: buffer the packet and send a packet-in (OpenFlow 1.0). In OpenFlow
        1.3 a miss without a table-miss entry drops the packet."""
        if self.version == "1.3":
            self.drop(tx, dpid, packet, [f"no entry of table {table_id} matches it and there is no table-miss "
                                         "entry (OpenFlow 1.3 drops it)"])
            return
        buffer_id = self.buffer_packet(tx, dpid, in_port, packet)
        tx.note(lambda: f"s{dpid}: table miss for {packet} from port {in_port}; buffered, packet-in sent")
        self.send_packet_in(tx, PacketIn(dpid, in_port, buffer_id, packet, table_id))

    def execute(self, tx: "Tx", dpid: int, in_port: int, packet: Packet,
                actions: tuple[Any, ...], entry: flowtable.Entry | None = None) -> int | None:
        """Apply ``actions`` (of ``entry``, if they are an entry's) to ``packet``; return the
        table of a goto action, if any.

        A packet that goes nowhere is dropped: deliberately when the actions name no output
        (an entry or packet-out without actions, a flood with no other port), a black hole
        when an output named a port that could not take it (nothing attached, no such port,
        or the in-port, which OpenFlow only sends to through IN_PORT). A single output is a
        unicast: a frame it hands to a host it is not addressed to is a misdelivery.
        """
        net = self.net
        sent = 0
        goto = None
        failed: list[str] = []
        outputs = 0
        for action in actions:
            if type(action) is Output:
                outputs += 1
            elif type(action) is Flood:
                outputs += 2
        unicast = outputs == 1
        for action in actions:
            kind = type(action)
            if kind is Output:
                port = action.port
                if port == TABLE:
                    self.pipeline(tx, dpid, in_port, packet, 0)
                    sent += 1
                elif port == in_port:
                    tx.note(lambda: f"s{dpid}: output to the in-port {port} is not sent (OpenFlow needs IN_PORT)")
                    failed.append(f"port {port} is its in-port (OpenFlow sends there only through IN_PORT)")
                elif net.deliver(tx, dpid, port, packet, unicast):
                    sent += 1
                elif port not in self.topology.ports[dpid]:
                    failed.append(f"s{dpid} has no port {port}")
                elif net.faults is not None and net.faults.down(tx, dpid, port):
                    failed.append(f"the link at port {port} is down")
                else:
                    failed.append(f"nothing is attached to port {port}")
            elif kind is Flood:
                for port in self.topology.ports[dpid]:
                    if port != in_port and net.deliver(tx, dpid, port, packet, False):
                        sent += 1
            elif kind is ToController:
                self.to_controller(tx, dpid, in_port, packet, action, entry)
                sent += 1
            elif kind is GotoTable:
                goto = action.table_id
            elif kind is SetField:
                packet = action.apply(packet)
                tx.note(lambda: f"s{dpid} rewrites {packet.label()}: {action}")
        if not sent and goto is None:
            self.drop(tx, dpid, packet, failed)
        return goto

    def to_controller(self, tx: "Tx", dpid: int, in_port: int, packet: Packet, action: ToController,
                      entry: flowtable.Entry | None) -> None:
        """An output-to-controller action: a packet-in with the whole packet, or (``buffered``)
        with the buffer id of the packet kept here. In OpenFlow 1.2 and 1.3 the packet-in names
        the entry's table; in 1.3 its reason is "no-match" when the entry is the table-miss
        entry (priority 0, matching everything)."""
        table_id, reason = 0, "action"
        if self.version != "1.0" and entry is not None:
            table_id = entry.table_id
            if self.is_table_miss_entry(entry):
                reason = "no-match"
        buffer_id = self.buffer_packet(tx, dpid, in_port, packet) if action.buffered else None
        tx.note(lambda: f"s{dpid} sends {packet.label()} to the controller"
                + (" (buffered, the packet-in carries its buffer id)" if action.buffered else ""))
        self.send_packet_in(tx, PacketIn(dpid, in_port, buffer_id, packet, table_id, reason))

    def is_table_miss_entry(self, entry: flowtable.Entry) -> bool:
        """Whether ``entry`` is an OpenFlow 1.3 table-miss entry (priority 0, matching everything)."""
        return (self.version == "1.3" and entry.priority == 0 and not entry.match.fields
                and entry.match.in_port is None)

    def drop(self, tx: "Tx", dpid: int, packet: Packet, failed: list[str] | None = None) -> None:
        """``packet`` leaves the network at ``dpid`` without reaching a host. ``failed`` says
        which outputs could not take it; without any, the drop was deliberate."""
        if not failed:
            tx.note(lambda: f"s{dpid} drops {packet} (its actions send it nowhere)")
            return
        why = "; ".join(failed)
        tx.note(lambda: f"s{dpid} drops {packet}: {why}")
        if "no-black-holes" in self.monitors and packet.hdr.eth_dst in self.net.host_of_mac:
            tx.alert("no-black-holes", f"s{dpid} dropped {packet.label()} [{packet.hdr}] on its way to "
                     f"{packet.hdr.eth_dst}: {why}")

    def buffer_packet(self, tx: "Tx", dpid: int, in_port: int, packet: Packet) -> BufferId:
        """Store ``packet`` in the switch's packet buffer; return its buffer id.

        The id is derived from the packet's identity (origin, seq, copy index), never from a
        counter, so equal situations give equal states.
        """
        slot = self.net.slot_buffer[dpid]
        buffer = tx.get(slot)
        used = {entry[0] for entry in buffer}
        copy = 0
        while (packet.origin, packet.seq, copy) in used:
            copy += 1
        buffer_id = (packet.origin, packet.seq, copy)
        tx.put(slot, tuple(sorted(buffer + ((buffer_id, in_port, packet),))))
        return buffer_id

    def take_buffered(self, tx: "Tx", dpid: int, buffer_id: BufferId) -> tuple[int, Packet] | None:
        """Remove the packet ``buffer_id`` from the buffer: (in_port, packet), or None."""
        slot = self.net.slot_buffer[dpid]
        buffer = tx.get(slot)
        for index, (bid, in_port, packet) in enumerate(buffer):
            if bid == buffer_id:
                tx.put(slot, buffer[:index] + buffer[index + 1:])
                return in_port, packet
        return None

    def send_packet_in(self, tx: "Tx", msg: PacketIn) -> None:
        """Queue a packet-in to the controller; run the packet-in monitors."""
        net = self.net
        if self.monitors:
            self._watch_packet_in(tx, msg)
        tx.count(PACKET_INS)
        net.to_controller(tx, msg.dpid, msg)

    def _watch_packet_in(self, tx: "Tx", msg: PacketIn) -> None:
        """The packet-in monitors. Direct paths judge only packets sent after an earlier packet
        of their flow reached the destination (``Packet.followup``): a packet already on its
        way before that still reaches the controller, and no app can avoid it. A packet-in for
        a copy of a packet its destination already received (a flooded duplicate) concerns no
        packet still to deliver: it is not counted against direct paths."""
        net = self.net
        packet = msg.packet
        hdr = packet.hdr
        # only set while (strict-)direct-paths is monitored; a packet on its way when an
        # entry of its flow timed out is not judged (Hosts.entry_expires)
        if (packet.followup or packet.late) and not net.hosts.excused(tx, packet):
            dst = net.host_of_mac.get(hdr.eth_dst)
            src = net.host_of_mac.get(hdr.eth_src)
            if dst is not None and (hdr, packet.origin, packet.seq) not in tx.get(net.slot_host[dst]).received:
                if packet.followup:
                    tx.alert("direct-paths", f"s{msg.dpid} sent a packet-in for {packet.label()} [{hdr}], which "
                             f"{packet.origin} sent after an earlier packet of the flow had reached {dst} "
                             "(use strict-direct-paths for apps that learn where hosts are)")
                if packet.late:
                    tx.alert("strict-direct-paths", f"s{msg.dpid} sent a packet-in for {packet.label()} [{hdr}], "
                             f"which {src} sent after {src} and {dst} had exchanged packets both ways")
        if "one-packet-in-per-flow" in self.monitors:
            seen = tx.get(net.slot_history)
            if hdr in seen:
                tx.alert("one-packet-in-per-flow", f"s{msg.dpid} sent a second packet-in for flow [{hdr}] "
                         f"({packet.label()})")
            else:
                tx.put(net.slot_history, tuple(sorted(seen + (hdr,))))

    # ---- commands ----------------------------------------------------------------------

    def switch_command(self, tx: "Tx", dpid: int, batch: int = 0, pick: int = 0) -> None:
        """Switch ``dpid`` processes a command from the controller: the head one, or the one
        the event names (``batch``, ``pick``) under a threaded controller or ``any`` order."""
        net = self.net
        msg = tx.pop(net.slot_cmdq[dpid]) if net.fifo_commands else net.take_command(tx, dpid, batch, pick)
        kind = type(msg)
        if kind is FlowMod:
            self.flow_mod(tx, dpid, msg)
        elif kind is PacketOut:
            self.packet_out(tx, dpid, msg)
        elif kind is BarrierRequest:
            self.barrier(tx, dpid, msg)
        elif kind is PortStatsRequest:
            tx.note(lambda: f"s{dpid} answers a port statistics request")
            net.to_controller(tx, dpid, PortStatsReply(dpid, "", msg.xid))
        else:  # pragma: no cover - the platform only sends the kinds above
            raise TypeError(f"unknown command {msg!r}")

    def barrier(self, tx: "Tx", dpid: int, msg: BarrierRequest) -> None:
        """Answer a barrier request: every command before it has been processed."""
        tx.note(lambda: f"s{dpid} processes a barrier request and answers")
        tx.count(BARRIERS)
        self.net.to_controller(tx, dpid, BarrierReply(dpid, msg.xid))

    def install(self, tx: "Tx", dpid: int, msg: FlowMod,
                fields: Callable[[flowtable.Table], dict[str, Any]] | None = None) -> flowtable.Entry | None:
        """Apply the table change of flow-mod ``msg``; return the entry it added (None for
        modify and delete). ``fields(table)`` gives a variant's extra entry fields.
        An add with ``check_overlap`` that overlaps an entry of the same table and priority
        changes nothing: the switch sends the controller an :class:`Error` (returns None).

        Results are cached per (table, message): the same flow-mod on the same table gives
        the same table, and path installs repeat across interleavings. The message is the
        interned one the command queue held, so its identity stands for its value (the cache
        keeps it alive and checks it); ``fields`` depends only on the table and the message,
        and is only called on a cache miss.
        """
        slot = self.net.slot_table[dpid]
        if msg.check_overlap and self.overlapping(tx, dpid, msg):
            return None
        key = (tx.s[slot], id(msg))
        cached = self._install_cache.get(key)
        if cached is not None and cached[0] is msg:
            _msg, table_value, entry, removed = cached
            tx.set_id(slot, table_value)
        else:
            table = tx.get(slot)
            before = table
            selects = msg.timeouts if msg.timeouts.cookie_mask else None  # (cookie mask)
            if msg.command == "modify-or-add" and not any(
                    e.table_id == msg.table_id and e.actions is not None and flowtable.covers(msg.match, e.match)
                    for e in table):  # OpenFlow 1.0: a modify that finds no entry adds one
                entry = flowtable.make_entry(msg.table_id, msg.priority, msg.match, msg.actions)
                table = flowtable.put(table, entry)
            elif msg.command in ("modify", "modify-or-add"):
                table = flowtable.modify_matching(table, msg.table_id, msg.match, msg.actions, selects)
                entry = None
            elif msg.command in ("delete", "delete-strict"):
                table = flowtable.delete_matching(table, msg.table_id, msg.match,
                                                  strict=msg.command == "delete-strict", cookie=selects)
                entry = None
            else:
                extra = fields(table) if fields is not None else {}
                if msg.timeouts != NO_TIMEOUTS:
                    extra["timeouts"] = msg.timeouts.entry()
                    self.net.timers = self.net.timers or msg.timeouts.expires
                entry = flowtable.make_entry(msg.table_id, msg.priority, msg.match, msg.actions, **extra)
                table = flowtable.put(table, entry)
            # Entries a delete removed whose flow-mods asked to be told (OFPFF_SEND_FLOW_REM).
            removed = tuple(e for e in before if e.timeouts is not None and e.timeouts.notify
                            and msg.command in ("delete", "delete-strict") and e not in table)
            table_value = self.net._intern[slot](table)
            tx.set_id(slot, table_value)
            self._install_cache[key] = (msg, table_value, entry, removed)
        tx.note(lambda: f"s{dpid} installs [{entry}]" if entry is not None
                else f"s{dpid} modifies entries {msg.match} -> {_actions(msg.actions)}" if msg.command[0] == "m"
                else f"s{dpid} deletes entries {msg.match}" + (" (strict)" if msg.command == "delete-strict" else ""))
        for gone in removed:
            self.net.to_controller(tx, dpid, FlowRemoved(dpid, gone.match, gone.priority, "delete", gone.table_id,
                                                             gone.timeouts))
            tx.note(lambda: f"s{dpid} tells the controller it deleted [{gone}] (flow-removed)")
        return entry

    def overlapping(self, tx: "Tx", dpid: int, msg: FlowMod) -> bool:
        """OFPFF_CHECK_OVERLAP: whether add ``msg`` overlaps an entry of its table with its
        priority; if so the switch refuses it and sends the controller an :class:`Error`."""
        if msg.command != "add":
            return False
        clash = next((e for e in tx.get(self.net.slot_table[dpid]) if e.table_id == msg.table_id
                      and e.priority == msg.priority and flowtable.overlap(e.match, msg.match)), None)
        if clash is None:
            return False
        tx.note(lambda: f"s{dpid} refuses {msg}: it overlaps [{clash}] (OFPFF_CHECK_OVERLAP); error sent")
        self.net.to_controller(tx, dpid, Error(dpid, "overlap", msg))
        return True

    def flow_mod(self, tx: "Tx", dpid: int, msg: FlowMod) -> None:
        """Change the table; for a flow-mod/packet-out, then apply its actions to the buffered
        packet (see :func:`releases`), unless the switch refused it (OFPFF_CHECK_OVERLAP)."""
        if msg.check_overlap and self.overlapping(tx, dpid, msg):
            return
        self.install(tx, dpid, msg)
        if releases(msg):
            self.release_buffered(tx, dpid, msg.buffer_id, self.release_actions(msg))

    def release_actions(self, msg: FlowMod) -> tuple[Any, ...]:
        """What a flow-mod/packet-out does to its buffered packet: OpenFlow 1.0 applies the new
        entry's actions; 1.2 and 1.3 send the packet through the pipeline from table 0 (OFPP_TABLE)."""
        return (Output(TABLE),) if self.version != "1.0" else msg.actions

    def release_buffered(self, tx: "Tx", dpid: int, buffer_id: BufferId, actions: tuple[Any, ...],
                         transform: Callable[[Packet], Packet] | None = None) -> None:
        """Apply ``actions`` to buffered packet ``buffer_id`` (after ``transform``), if it is there."""
        taken = self.take_buffered(tx, dpid, buffer_id)
        if taken is None:
            tx.note(lambda: f"s{dpid}: buffer {buffer_id} is empty; nothing to release")
            return
        in_port, packet = taken
        if transform is not None:
            packet = transform(packet)
        tx.note(lambda: f"s{dpid} applies {_actions(actions)} to buffered {packet}")
        goto = self.execute(tx, dpid, in_port, packet, actions)
        if goto is not None:
            self.pipeline(tx, dpid, in_port, rewritten(packet, actions), goto)

    def packet_out(self, tx: "Tx", dpid: int, msg: PacketOut) -> None:
        """Apply the packet-out's actions to its packet (buffered or carried)."""
        if msg.buffer_id is not None:
            self.release_buffered(tx, dpid, msg.buffer_id, msg.actions)
        elif msg.packet is not None:
            tx.note(lambda: f"s{dpid} applies {_actions(msg.actions)} to {msg.packet} (carried by the packet-out)")
            goto = self.execute(tx, dpid, msg.in_port, msg.packet, msg.actions)
            if goto is not None:
                self.pipeline(tx, dpid, msg.in_port, rewritten(msg.packet, msg.actions), goto)

    # ---- timeouts ----------------------------------------------------------------------

    def expire(self, tx: "Tx", dpid: int, index: int, reason: str) -> None:
        """Entry ``index`` of switch ``dpid`` expires: it is removed; if its flow-mod asked,
        the controller is told (a flow-removed message)."""
        net = self.net
        slot = net.slot_table[dpid]
        table = tx.get(slot)
        entry = table[index]
        tx.put(slot, table[:index] + table[index + 1:])
        tx.note(lambda: f"s{dpid}: [{entry}] expires ({reason} timeout)")
        if entry.timeouts.notify:
            net.to_controller(tx, dpid, FlowRemoved(dpid, entry.match, entry.priority, reason, entry.table_id,
                                                         entry.timeouts))
            tx.note(lambda: f"s{dpid} tells the controller (flow-removed)")

    # ---- controller platform -----------------------------------------------------------

    def controller_handle(self, tx: "Tx", dpid: int, pick: int = 0) -> None:
        """The controller handles a message from switch ``dpid`` (the head one, or ``pick``
        under a threaded controller)."""
        net = self.net
        msg = net.from_switch(tx, dpid, pick) if net.threaded else tx.pop(net.slot_ctrlq[dpid])
        kind = type(msg)
        if kind is PacketIn:
            self.run_app(tx, "on_packet_in", lambda app, state, out: app.on_packet_in(state, msg, out),
                         str(msg), msg, message=msg)
        elif kind is BarrierReply:
            self.barrier_reply(tx, msg)
        elif kind is FlowRemoved:
            self.run_app(tx, "on_flow_removed", lambda app, state, out: app.on_flow_removed(state, msg, out),
                         str(msg), None, message=msg)
        elif kind is PortStatus:
            self.run_app(tx, "on_port_status", lambda app, state, out: app.on_port_status(state, msg, out),
                         str(msg), None, message=msg)
        elif kind is Error:
            self.run_app(tx, "on_error", lambda app, state, out: app.on_error(state, msg, out),
                         str(msg), None, message=msg)
        elif kind is PortStatsReply:
            platform: PlatformState = tx.get(self.net.slot_platform)
            tx.note(lambda: f"controller receives port statistics of s{dpid}")
            tx.put(self.net.slot_platform, platform._replace(stats=tuple(sorted(platform.stats + (dpid,)))))

    def barrier_reply(self, tx: "Tx", msg: BarrierReply) -> None:
        """A barrier reply reaches the platform: the app gets it for its own barrier requests
        (with the xid it gave); the platform's own barriers (OpenFlow-B) stop here."""
        origin, xid = msg.xid if isinstance(msg.xid, tuple) and len(msg.xid) == 2 else (None, None)
        if origin != "app":
            tx.note(lambda: f"controller: {msg} for a barrier the app did not send; ignored")
            return
        reply = BarrierReply(msg.dpid, xid)
        self.run_app(tx, "on_barrier_reply", lambda app, state, out: app.on_barrier_reply(state, reply, out),
                     str(msg), None, message=reply)

    def extra_events(self, state: tuple[int, ...]) -> tuple[Any, ...]:
        """The variant's own events that are not :meth:`switch_events`, read from the whole
        state (subclasses add theirs to ``super().extra_events(state)``). OpenFlow's: port
        statistics awaiting the app, one event per (switch, load class); then the other
        choices at equal-priority ties (:meth:`Ties.events`: none until a table may tie)."""
        value = state[self.net.slot_platform]
        cached = self._stats_cache.get(value)
        if cached is None:
            platform = self.net._values[self.net.slot_platform][value]
            cached = self._stats_cache[value] = tuple(
                ControllerStats(dpid, load) for dpid in platform.stats for load in self.net.app.load_classes)
        ties = self.ties
        if ties.tying or ties.checked != len(ties.values):  # inline: this runs in every state
            found = ties.events(state)
            if found:
                return cached + found
        return cached

    def controller_stats(self, tx: "Tx", dpid: int, load: str) -> None:
        """Port statistics of ``dpid`` with load class ``load`` reach the app."""
        platform: PlatformState = tx.get(self.net.slot_platform)
        stats = list(platform.stats)
        stats.remove(dpid)
        tx.put(self.net.slot_platform, platform._replace(stats=tuple(stats)))
        reply = PortStatsReply(dpid, load)
        tx.origin = dpid
        self.run_app(tx, "on_port_stats", lambda app, state, out: app.on_port_stats(state, reply, out),
                     str(reply), None, message=reply)

    @guarded_caller
    def run_app(self, tx: "Tx", handler: str, call: Callable[[Any, Any, Out], Any], what: str,
                context: PacketIn | None, message: Any = None) -> None:
        """Run one app handler; store its new state; send what it asked for.

        A handler that raises (anything: ``sys.exit``, GeneratorExit, a ``BaseException`` of
        its own), makes a malformed request, runs past the per-call time limit, or returns a
        state that cannot be stored (unhashable, ``None`` where the app had a state, or one
        whose ``__hash__``, ``__eq__`` or ``__repr__`` fails) becomes the alert
        ``app-exception`` naming the handler (the app's state and the network are left as
        they were). Exhausted memory, Ctrl-C, the search's own stops and unsupported
        features are not the app's findings: they pass through (see
        :func:`~nice_attendre.models.app.is_app_failure`). The call, and the interning of the
        state it returned (the state's dunders are user code too), are marked on the
        network's :class:`~nice_attendre.watchdog.CallGuard` so a watchdog may interrupt them.

        A handler that is not a function of its input becomes the alert
        ``app-nondeterminism`` (the app's state and the network left as they were), whether
        or not its call also failed: a call that reads the clock, a random generator or an
        address (see :mod:`nice_attendre.models.determinism`), or whose outcome (the state it
        returned, what it asked for, what it raised) differs when it is called again with
        the same input. The first call's outcome is the transition's: a second call that
        hits the time limit is not nondeterminism.

        ``message`` is what the handler is called with besides the app's state (a hashable
        value; ``None``: not known). A call whose handler, message and state were checked
        once already is made once, unwatched: each distinct input is checked once, as the
        memo calls a handler once per distinct input (so the checks find the same with the
        memo off, at about the memo's speed).
        """
        net = self.net
        app = net.app
        before = tx.get(net.slot_app)
        name = app.handler_name(handler)
        checked = net.detector.checked
        key = None if message is None else (handler, message, tx.s[net.slot_app])
        if key is not None and key in checked:
            first, state, requests, failure, reads = self._call_app(call, app, before, watch=False)
        else:
            first, state, requests, failure, reads = self._checked_call(tx, call, app, before, name, what)
            if first is None:
                return  # found nondeterministic: the alert is raised
            if key is not None:
                checked.add(key)
        if first.failure is not None:
            tx.alert("app-exception", f"{name} {first.failure} (handling {what})")
            return
        tx.set_id(net.slot_app, first.key)
        tx.note(lambda: f"controller: {name} handles {what}")
        if tx.notes is not None:  # narrating a trace: say what the handler changed
            tx.notes.extend(f"app state: {line}" for line in self._changes(before, state))
        self.dispatch(tx, requests, context)
        self.flush(tx)

    def _checked_call(self, tx: "Tx", call: Callable[[Any, Any, Out], Any], app: Any, before: Any, name: str,
                      what: str) -> tuple[Any, Any, list[Request], BaseException | None, tuple[Read, ...]]:
        """The handler called watched, then again unwatched to compare (see
        :meth:`run_app`): the first call's :meth:`_call_app` result, or ``None`` for its
        outcome once the alert ``app-nondeterminism`` is raised in ``tx``."""
        first, state, requests, failure, reads = self._call_app(call, app, before)
        if reads:
            tx.alert("app-nondeterminism", f"{name} {reads_text(reads)} (handling {what})")
            return None, state, requests, failure, reads
        if isinstance(failure, NondeterministicCall):
            tx.alert("app-nondeterminism", f"{name} {failure.what} (handling {what})")
            return None, state, requests, failure, reads
        if not app.checks_own_determinism and not isinstance(failure, CallTimeout):
            second, _state, _requests, again, _reads = self._call_app(call, app, before, watch=False)
            if not isinstance(again, CallTimeout):  # a time limit is not nondeterminism: the first call stands
                differ = difference(first, second)
                if differ is not None:
                    tx.alert("app-nondeterminism", f"{name} {differ} (handling {what})")
                    return None, state, requests, failure, reads
        return first, state, requests, failure, reads

    @guarded_caller
    def _call_app(self, call: Callable[[Any, Any, Out], Any], app: Any, before: Any, watch: bool = True
                  ) -> tuple[Outcome, Any, list[Request], BaseException | None, tuple[Read, ...]]:
        """One call of a handler (``call(app, before, out)``) under the network's guard and,
        with ``watch``, watched by its :class:`~nice_attendre.models.determinism.Detector`:
        its outcome (the failure in words, the new state's id, the state, the requests), the
        state, the requests, what the call raised if it is the app's failure (or ``None``),
        and the nondeterministic reads it made. What must pass through (see
        :func:`~nice_attendre.models.app.is_app_failure`) is raised. (The second call of a
        handler, made to compare, is not watched: it would see the first call's reads again,
        at the cost of a profile event per call the handler makes.)"""
        net = self.net
        guard = net.guard
        detector = net.detector if watch else _UNWATCHED
        out = Out(self.topology, self._valid_requests)
        state = None
        returned = False
        guard.calls += 1
        detector.begin()
        guard.active = True
        try:
            try:
                state = call(app, before, out)
            finally:
                detector.end()
            returned = True
            state_id = -1 if state is None and before is not None else net.intern_app_state(state)
            guard.active = False
            if guard.hit is not None:  # the call swallowed the watchdog's limit: it still holds
                raise guard.hit
        except BaseException as exc:  # noqa: BLE001 - an app bug is a finding, not a crash
            guard.active = False
            detector.end()  # (if a limit came before the call's own finally)
            hit = guard.take()  # a limit raised inside the call wins over what the call made of it
            failure = exc if hit is None else hit
            if not is_app_failure(failure):
                if failure is exc:
                    raise
                raise failure from None
            problem = f"returned {state_failure(state, exc)}" if returned and hit is None else app_failure(failure)
            reads = tuple(detector.reads)
            return Outcome(problem, None, None, tuple(out.requests)), state, out.requests, failure, reads
        reads = tuple(detector.reads)
        if state_id < 0:
            return (Outcome(f"returned {bad_state(state, before)}", None, None, tuple(out.requests)), state,
                    out.requests, None, reads)
        return Outcome(None, state_id, state, tuple(out.requests)), state, out.requests, None, reads

    @staticmethod
    def _changes(before: Any, after: Any) -> list[str]:
        """What a handler changed in the app's state, in words (for a narrated trace); a
        line saying so when the state's own code (its ``__eq__``, ``__repr__``...) fails
        while it is described, which never ends the run."""
        from nice_attendre.models.app_diff import state_changes

        try:
            return list(state_changes(before, after))
        except BaseException as exc:  # noqa: BLE001 - user code: described, never a crash
            if not is_app_failure(exc):
                raise
            return [f"(not described: the state's own code {app_failure(exc)})"]

    def dispatch(self, tx: "Tx", requests: list[Request], context: PacketIn | None) -> None:
        """Send what the app asked for, as OpenFlow messages, in the order asked."""
        for request in requests:
            kind = type(request)
            if kind is InstallPathRequest:
                buffer_id = request.buffer_id
                for hop in request.hops:  # the flow-mods of InstallPathRequest.flow_mod, built inline
                    self.send(tx, hop.dpid, FlowMod(hop.match, hop.actions, request.priority, hop.table_id,
                                                    buffer_id, "add", None, None, request.timeouts))
                    if request.carried is not None and hop is request.hops[0]:
                        self.send(tx, hop.dpid, request.carried)
                    buffer_id = None
            else:
                self.send(tx, request.dpid, self.message_for(request))

    def message_for(self, request: Request) -> Any:
        """The OpenFlow message for a single-switch request."""
        kind = type(request)
        if kind is FlowModRequest:
            return FlowMod(request.match, request.actions, request.priority, request.table_id,
                           request.buffer_id, request.command, timeouts=request.timeouts,
                           check_overlap=request.check_overlap, xid=request.xid)
        if kind is PacketOutRequest:
            return PacketOut(request.actions, request.buffer_id, request.in_port, request.packet)
        if kind is PortStatsRequestRequest:
            return PortStatsRequest()
        if kind is BarrierRequestRequest:
            return BarrierRequest(("app", request.xid))
        raise TypeError(f"no single message for {request!r}")

    def send(self, tx: "Tx", dpid: int, msg: Any) -> None:
        """Queue ``msg`` to switch ``dpid`` (InstantStats answers statistics requests at once)."""
        net = self.net
        slot = net.slot_cmdq.get(dpid)
        if slot is None:
            tx.alert("app-exception", f"{type(net.app).__name__} sent {msg} to unknown switch {dpid!r}")
            return
        kind = type(msg)
        if kind is FlowMod or kind is PacketOut:
            missing = [a.port for a in msg.actions
                       if type(a) is Output and a.port != TABLE and a.port not in self.topology.ports[dpid]]
            if missing:
                tx.alert("app-exception", f"{type(net.app).__name__} sent {msg} to s{dpid}, which has no port "
                         f"{missing[0]} (ports: {', '.join(map(str, self.topology.ports[dpid]))})")
                return
        if kind is PortStatsRequest and net.options.instant_stats:
            platform: PlatformState = tx.get(net.slot_platform)
            tx.put(net.slot_platform, platform._replace(stats=tuple(sorted(platform.stats + (dpid,)))))
            tx.note(lambda: f"controller asks s{dpid} for port statistics (answered instantly)")
            return
        if kind is FlowMod:
            tx.count(FLOW_MODS)
        elif kind is PacketOut:
            tx.count(PACKET_OUTS)
        elif kind is BarrierRequest:
            tx.count(BARRIERS)
        tx.note(lambda: f"controller sends {msg} to s{dpid}")
        if tx.outbox is None:
            tx.outbox = {}
        tx.outbox.setdefault(dpid, []).append(msg)

    def flush(self, tx: "Tx") -> None:
        """End of a handler call: its commands enter the switches' channels, one piece per
        switch (a batch, with a threaded controller)."""
        outbox = tx.outbox
        if outbox:
            send = self.net.send_commands
            for dpid, messages in outbox.items():  # in the order first sent: deterministic
                send(tx, dpid, messages)
        tx.outbox = None


def releases(msg: FlowMod) -> bool:
    """Whether flow-mod ``msg`` also releases a buffered packet: it names a buffer id and is
    not a delete. OpenFlow applies an add's or a modify's buffer id whatever the table
    change did (1.0: "buffered packet to apply to"; 1.3: a flow-mod with a buffer id is the
    flow-mod followed by a packet-out to OFPP_TABLE, "regardless of the table to which the
    flow mod refers"); only OFPFC_DELETE and OFPFC_DELETE_STRICT ignore it."""
    return msg.buffer_id is not None and not msg.command.startswith("delete")


def _trail(trail: tuple[tuple[int, int], ...]) -> str:
    return " ".join(f"s{d}:{p}" for d, p in trail)


def _actions(actions: tuple[Any, ...]) -> str:
    return ",".join(str(a) for a in actions) if actions else "drop"
