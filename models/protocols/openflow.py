"""Plain OpenFlow: the switch datapath and the controller platform (our NOX).

Switch: a packet is matched against the flow tables (highest priority first); on a hit the
entry's actions are applied, on a table miss the packet is buffered under a buffer id and
a packet-in goes to the controller. Commands: flow-mod (add, modify, delete; with a buffer id it
is a flow-mod/packet-out and the entry's actions are applied to the buffered packet, as in
OpenFlow 1.0), packet-out, barrier request, port-statistics request.

Platform: runs the app's handlers, catches their exceptions (reported as the alert
``app-exception``) and sends what the app asked for; ``install_path`` becomes one flow-mod
per hop, a flow-mod/packet-out for the packet-in switch.

Variants subclass :class:`OpenFlow` and override the hooks they change.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from nice_attendre.models import flowtable
from nice_attendre.models.app import (FlowModRequest, InstallPathRequest, Out, PacketOutRequest,
                                      PortStatsRequestRequest, Request)
from nice_attendre.models.events import ControllerStats
from nice_attendre.models.messages import (TABLE, BarrierReply, BarrierRequest, BufferId, FlowMod,
                                           PacketIn, PacketOut, PortStatsReply, PortStatsRequest)
from nice_attendre.models.packet import Flood, GotoTable, Output, Packet, ToController

if TYPE_CHECKING:
    from nice_attendre.models.network import Network, Tx

PACKET_INS, FLOW_MODS, PACKET_OUTS, BARRIERS = range(4)


class PlatformState(NamedTuple):
    """The controller platform's own state.

    ``stats``: switches whose port statistics arrived and await the app (one
    :class:`ControllerStats` event per load class each); ``held``: OpenFlow-B's messages
    held back until barrier replies arrive.
    """

    stats: tuple[int, ...] = ()
    held: tuple[Any, ...] = ()


class OpenFlow:
    """OpenFlow: table miss -> buffer + packet-in; flow-mod, flow-mod/packet-out, packet-out."""

    name = "openflow"

    def __init__(self, net: "Network") -> None:
        self.net = net
        self.topology = net.topology
        self.monitors = net.options.monitors
        self._stats_cache: dict[int, tuple[ControllerStats, ...]] = {}
        self._install_cache: dict[tuple[int, int], tuple[FlowMod, int, flowtable.Entry | None]] = {}

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
            self.run_app(tx, "on_switch_join", lambda app, state, out, d=dpid: app.on_switch_join(state, d, out),
                         f"switch s{dpid} joined", None)

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
                                             packet.trail + (hop,), packet.ac, packet.late), 0)

    def receive_attendre_command(self, tx: "Tx", dpid: int, packet: Packet) -> Packet:
        """A packet carries an Attendre Command: plain OpenFlow ignores it."""
        return packet._replace(ac=None)

    def pipeline(self, tx: "Tx", dpid: int, in_port: int, packet: Packet, table_id: int) -> None:
        """Match ``packet`` from flow table ``table_id`` on and act on the result."""
        net = self.net
        while True:
            index = net.lookup(tx, dpid, table_id, packet, in_port)
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
            goto = self.execute(tx, dpid, in_port, packet, entry.actions or ())
            if goto is None:
                return
            table_id = goto

    def marked_entry(self, tx: "Tx", dpid: int, in_port: int, packet: Packet,
                     entry: flowtable.Entry) -> Packet | None:
        """A hit on an entry with Attendre fields; return the packet to act on, or None if
        the packet was taken (buffered). Plain OpenFlow never creates such entries."""
        return packet

    def table_miss(self, tx: "Tx", dpid: int, in_port: int, packet: Packet, table_id: int) -> None:
        """No entry matches: buffer the packet and send a packet-in."""
        buffer_id = self.buffer_packet(tx, dpid, in_port, packet)
        tx.note(lambda: f"s{dpid}: table miss for {packet} from port {in_port}; buffered, packet-in sent")
        self.send_packet_in(tx, PacketIn(dpid, in_port, buffer_id, packet, table_id))

    def execute(self, tx: "Tx", dpid: int, in_port: int, packet: Packet,
                actions: tuple[Any, ...]) -> int | None:
        """Apply ``actions`` to ``packet``; return the table of a goto action, if any."""
        net = self.net
        sent = 0
        goto = None
        for action in actions:
            kind = type(action)
            if kind is Output:
                port = action.port
                if port == TABLE:
                    self.pipeline(tx, dpid, in_port, packet, 0)
                    sent += 1
                elif port == in_port:
                    tx.note(lambda: f"s{dpid}: output to the in-port {port} is not sent (OpenFlow needs IN_PORT)")
                elif net.deliver(tx, dpid, port, packet):
                    sent += 1
            elif kind is Flood:
                for port in self.topology.ports[dpid]:
                    if port != in_port and net.deliver(tx, dpid, port, packet):
                        sent += 1
            elif kind is ToController:
                self.send_packet_in(tx, PacketIn(dpid, in_port, None, packet, 0, "action"))
                sent += 1
            elif kind is GotoTable:
                goto = action.table_id
        if not sent and goto is None:
            self.drop(tx, dpid, packet)
        return goto

    def drop(self, tx: "Tx", dpid: int, packet: Packet) -> None:
        """``packet`` leaves the network at ``dpid`` without reaching a host."""
        tx.note(lambda: f"s{dpid} drops {packet}")
        if "no-black-holes" in self.monitors and packet.hdr.eth_dst in self.net.host_of_mac:
            tx.alert("no-black-holes", f"s{dpid} dropped {packet.label()} [{packet.hdr}] on its way to "
                     f"{packet.hdr.eth_dst}")

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
        tx.push(net.slot_ctrlq[msg.dpid], msg)

    def _watch_packet_in(self, tx: "Tx", msg: PacketIn) -> None:
        """The packet-in monitors. A packet-in for a copy of a packet its destination already
        received (a flooded duplicate) concerns no packet still to deliver: it is not counted
        against direct paths."""
        net = self.net
        packet = msg.packet
        hdr = packet.hdr
        dst = net.host_of_mac.get(hdr.eth_dst)
        src = net.host_of_mac.get(hdr.eth_src)
        if dst is not None and ("direct-paths" in self.monitors or packet.late):
            at_dst = tx.get(net.slot_host[dst]).received
            if (hdr, packet.origin, packet.seq) not in at_dst:
                if "direct-paths" in self.monitors and any(d[0] == hdr for d in at_dst):
                    tx.alert("direct-paths", f"s{msg.dpid} sent a packet-in for {packet.label()} [{hdr}] after "
                             f"an earlier packet of the flow reached {dst}")
                if packet.late:  # only set while strict-direct-paths is monitored
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

    def switch_command(self, tx: "Tx", dpid: int, batch: int = 0) -> None:
        """Switch ``dpid`` processes the head command from the controller (of ``batch``, when
        the controller is multi-threaded)."""
        net = self.net
        msg = net.take_command(tx, dpid, batch)
        kind = type(msg)
        if kind is FlowMod:
            self.flow_mod(tx, dpid, msg)
        elif kind is PacketOut:
            self.packet_out(tx, dpid, msg)
        elif kind is BarrierRequest:
            tx.note(lambda: f"s{dpid} processes a barrier request and answers")
            tx.count(BARRIERS)
            tx.push(net.slot_ctrlq[dpid], BarrierReply(dpid, msg.xid))
        elif kind is PortStatsRequest:
            tx.note(lambda: f"s{dpid} answers a port statistics request")
            tx.push(net.slot_ctrlq[dpid], PortStatsReply(dpid, "", msg.xid))
        else:  # pragma: no cover - the platform only sends the kinds above
            raise TypeError(f"unknown command {msg!r}")

    def install(self, tx: "Tx", dpid: int, msg: FlowMod,
                fields: Callable[[flowtable.Table], dict[str, Any]] | None = None) -> flowtable.Entry | None:
        """Apply the table change of flow-mod ``msg``; return the entry it added (None for
        modify and delete). ``fields(table)`` gives a variant's extra entry fields.

        Results are cached per (table, message): the same flow-mod on the same table gives
        the same table, and path installs repeat across interleavings. The message is the
        interned one the command queue held, so its identity stands for its value (the cache
        keeps it alive and checks it); ``fields`` depends only on the table and the message,
        and is only called on a cache miss.
        """
        slot = self.net.slot_table[dpid]
        key = (tx.s[slot], id(msg))
        cached = self._install_cache.get(key)
        if cached is not None and cached[0] is msg:
            _msg, table_value, entry = cached
            tx.set_id(slot, table_value)
        else:
            table = tx.get(slot)
            if msg.command == "modify":
                table = flowtable.modify_matching(table, msg.table_id, msg.match, msg.actions)
                entry = None
            elif msg.command in ("delete", "delete-strict"):
                table = flowtable.delete_matching(table, msg.table_id, msg.match,
                                                  strict=msg.command == "delete-strict")
                entry = None
            else:
                extra = fields(table) if fields is not None else {}
                entry = flowtable.make_entry(msg.table_id, msg.priority, msg.match, msg.actions, **extra)
                table = flowtable.put(table, entry)
            table_value = self.net._intern[slot](table)
            tx.set_id(slot, table_value)
            self._install_cache[key] = (msg, table_value, entry)
        tx.note(lambda: f"s{dpid} installs [{entry}]" if entry is not None
                else f"s{dpid} modifies entries {msg.match} -> {_actions(msg.actions)}" if msg.command == "modify"
                else f"s{dpid} deletes entries {msg.match}" + (" (strict)" if msg.command == "delete-strict" else ""))
        return entry

    def flow_mod(self, tx: "Tx", dpid: int, msg: FlowMod) -> None:
        """Install the entry; for a flow-mod/packet-out, apply its actions to the buffered packet."""
        entry = self.install(tx, dpid, msg)
        if msg.buffer_id is not None and entry is not None:
            self.release_buffered(tx, dpid, msg.buffer_id, msg.actions)

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
            self.pipeline(tx, dpid, in_port, packet, goto)

    def packet_out(self, tx: "Tx", dpid: int, msg: PacketOut) -> None:
        """Apply the packet-out's actions to its packet (buffered or carried)."""
        if msg.buffer_id is not None:
            self.release_buffered(tx, dpid, msg.buffer_id, msg.actions)
        elif msg.packet is not None:
            goto = self.execute(tx, dpid, msg.in_port, msg.packet, msg.actions)
            if goto is not None:
                self.pipeline(tx, dpid, msg.in_port, msg.packet, goto)

    # ---- controller platform -----------------------------------------------------------

    def controller_handle(self, tx: "Tx", dpid: int) -> None:
        """The controller handles the head message from switch ``dpid``."""
        msg = tx.pop(self.net.slot_ctrlq[dpid])
        kind = type(msg)
        if kind is PacketIn:
            self.run_app(tx, "on_packet_in", lambda app, state, out: app.on_packet_in(state, msg, out),
                         str(msg), msg)
        elif kind is BarrierReply:
            self.barrier_reply(tx, msg)
        elif kind is PortStatsReply:
            platform: PlatformState = tx.get(self.net.slot_platform)
            tx.note(lambda: f"controller receives port statistics of s{dpid}")
            tx.put(self.net.slot_platform, platform._replace(stats=tuple(sorted(platform.stats + (dpid,)))))

    def barrier_reply(self, tx: "Tx", msg: BarrierReply) -> None:
        """A barrier reply reaches the platform: the app gets it."""
        self.run_app(tx, "on_barrier_reply", lambda app, state, out: app.on_barrier_reply(state, msg, out),
                     str(msg), None)

    def extra_events(self, state: tuple[int, ...]) -> tuple[ControllerStats, ...]:
        """Port statistics awaiting the app: one event per (switch, load class)."""
        value = state[self.net.slot_platform]
        cached = self._stats_cache.get(value)
        if cached is None:
            platform = self.net._values[self.net.slot_platform][value]
            cached = self._stats_cache[value] = tuple(
                ControllerStats(dpid, load) for dpid in platform.stats for load in self.net.app.load_classes)
        return cached

    def controller_stats(self, tx: "Tx", dpid: int, load: str) -> None:
        """Port statistics of ``dpid`` with load class ``load`` reach the app."""
        platform: PlatformState = tx.get(self.net.slot_platform)
        stats = list(platform.stats)
        stats.remove(dpid)
        tx.put(self.net.slot_platform, platform._replace(stats=tuple(stats)))
        reply = PortStatsReply(dpid, load)
        self.run_app(tx, "on_port_stats", lambda app, state, out: app.on_port_stats(state, reply, out),
                     str(reply), None)

    def run_app(self, tx: "Tx", handler: str, call: Callable[[Any, Any, Out], Any], what: str,
                context: PacketIn | None) -> None:
        """Run one app handler; store its new state; send what it asked for.

        An exception in the handler, or an unhashable new state, becomes the alert
        ``app-exception`` (the app's state and the network are left as they were).
        """
        net = self.net
        out = Out(self.topology)
        app = net.app
        try:
            state = call(app, tx.get(net.slot_app), out)
            tx.put(net.slot_app, state)
        except Exception as exc:  # an app bug is a finding, not a crash
            tx.alert("app-exception", f"{type(app).__name__}.{handler} raised {type(exc).__name__}: {exc} "
                     f"(handling {what})")
            return
        tx.note(lambda: f"controller: {type(app).__name__}.{handler} handles {what}")
        self.dispatch(tx, out.requests, context)
        self.flush(tx)

    def dispatch(self, tx: "Tx", requests: list[Request], context: PacketIn | None) -> None:
        """Send what the app asked for, as OpenFlow messages, in the order asked."""
        for request in requests:
            kind = type(request)
            if kind is InstallPathRequest:
                for index, hop in enumerate(request.hops):
                    buffer_id = request.buffer_id if index == 0 else None
                    self.send(tx, hop.dpid, FlowMod(hop.match, hop.actions, request.priority, hop.table_id,
                                                    buffer_id))
            else:
                self.send(tx, request.dpid, self.message_for(request))

    def message_for(self, request: Request) -> Any:
        """The OpenFlow message for a single-switch request."""
        kind = type(request)
        if kind is FlowModRequest:
            return FlowMod(request.match, request.actions, request.priority, request.table_id,
                           request.buffer_id, request.command)
        if kind is PacketOutRequest:
            return PacketOut(request.actions, request.buffer_id, request.in_port, request.packet)
        if kind is PortStatsRequestRequest:
            return PortStatsRequest()
        raise TypeError(f"no single message for {request!r}")

    def send(self, tx: "Tx", dpid: int, msg: Any) -> None:
        """Queue ``msg`` to switch ``dpid`` (InstantStats answers statistics requests at once)."""
        net = self.net
        slot = net.slot_cmdq.get(dpid)
        if slot is None:
            tx.alert("app-exception", f"{type(net.app).__name__} sent {msg} to unknown switch {dpid!r}")
            return
        kind = type(msg)
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
        if net.threaded:
            if tx.outbox is None:
                tx.outbox = {}
            tx.outbox.setdefault(dpid, []).append(msg)
        else:
            tx.push(slot, msg)

    def flush(self, tx: "Tx") -> None:
        """End of a handler call: a threaded controller's commands leave, one batch per switch."""
        if tx.outbox:
            for dpid in sorted(tx.outbox):
                self.net.send_commands(tx, dpid, tx.outbox[dpid])
        tx.outbox = None


def _trail(trail: tuple[tuple[int, int], ...]) -> str:
    return " ".join(f"s{d}:{p}" for d, p in trail)


def _actions(actions: tuple[Any, ...]) -> str:
    return ",".join(str(a) for a in actions) if actions else "drop"
