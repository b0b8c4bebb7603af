"""Attendre (paper IV, Figs. 5-7): the switch buffers packets its commands are about to address.

Platform: every message answering one packet-in belongs to a message set whose version is
that packet-in's identity (switch, buffer id); each switch is told the set's size there.
For a path, each hop's message carries the Attendre Command (AC) for the next hop: the
flow-mod/packet-out to the packet-in switch encapsulates it in the released packet; a
flow-mod to a following switch adds an encap action, used once, to its entry.

Switch (Fig. 5): a packet carrying an AC for this switch first installs (or updates, by
version) a buffer action for the AC's entry, unless the set is already finished here; on a
table miss the switch also inserts a highest-priority buffer entry for the packet's exact
match. Packets hitting a buffer action wait at the switch. (Figs. 6, 7): after processing
the last message of a set, the switch removes the set's buffer actions and re-matches the
waiting packets in arrival order, from the table of their buffer entry.

Bookkeeping never outlives its use: a finished set is forgotten at once unless some of its
ACs are still to come (then when the last one comes: a set may send a switch several ACs,
one per path through it, so the switch counts them); an entry carries its set's version
only while the set is unfinished. So states that behave alike are equal (no monotone
counters in the state: docs/model.md).
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, NamedTuple

from nice_attendre.models import flowtable
from nice_attendre.models.app import (FlowModRequest, InstallPathRequest, PacketOutRequest, Request)
from nice_attendre.models.messages import (BUFFER_PRIORITY, FlowMod, MessageSet, PacketIn, PacketOut)
from nice_attendre.models.packet import AttendreCommand, Match, Packet, format_actions, rewritten
from nice_attendre.models.protocols.openflow import OpenFlow, releases

if TYPE_CHECKING:
    from nice_attendre.models.network import Tx

Version = tuple[Any, ...]


class SetProgress(NamedTuple):
    """How far a switch is through message set ``version`` of ``size`` messages.

    ``acs_due``: how many of the set's Attendre Commands have not reached this switch yet.
    """

    version: Version
    size: int
    processed: int
    acs_due: int

    @property
    def finished(self) -> bool:
        return self.processed >= self.size


class AttendreState(NamedTuple):
    """An Attendre switch's own state (the ``ext:D`` slot).

    ``sets``: progress of the message sets this switch still needs to know about, sorted
    by version; ``waits``: packets waiting at buffer actions, per entry key, in arrival
    order, as (in_port, packet).
    """

    sets: tuple[SetProgress, ...] = ()
    waits: tuple[tuple[flowtable.EntryKey, tuple[tuple[int, Packet], ...]], ...] = ()

    def progress(self, version: Version) -> SetProgress | None:
        for record in self.sets:
            if record.version == version:
                return record
        return None

    def with_progress(self, record: SetProgress | None, version: Version) -> "AttendreState":
        sets = [r for r in self.sets if r.version != version]
        if record is not None:
            sets.append(record)
        return self._replace(sets=tuple(sorted(sets)))


def _key_order(key: flowtable.EntryKey) -> tuple[Any, ...]:
    return (key[0], -key[1], flowtable.match_order(key[2]))


class Attendre(OpenFlow):
    """Attendre: buffer entries, Attendre Commands via encap, message sets with version and size."""

    name = "attendre"

    def __init__(self, net: Any, settings: Any = None) -> None:
        super().__init__(net, settings)
        self._done_cache: dict[tuple[int, int, MessageSet], tuple[int, int, Any]] = {}
        self._encap_cache: dict[tuple[int, int], tuple[flowtable.Entry, int]] = {}

    def initial_switch_state(self, dpid: int) -> AttendreState:
        return AttendreState()

    def held_packets(self, ext: AttendreState) -> tuple[Packet, ...]:
        return tuple(packet for _key, waiting in ext.waits for _port, packet in waiting)

    # ---- Fig. 5: data packets ----------------------------------------------------------

    def receive_attendre_command(self, tx: "Tx", dpid: int, packet: Packet) -> Packet:
        """Fig. 5 lines 2-15: process the AC a packet carries, then strip it."""
        ac = packet.ac
        packet = packet._replace(ac=None)
        if ac is None or ac.dpid != dpid:
            tx.note(lambda: f"s{dpid} strips an Attendre Command meant for s{ac.dpid if ac else '?'}")
            return packet
        net = self.net
        ext_slot = net.slot_ext[dpid]
        ext: AttendreState = tx.get(ext_slot)
        record = ext.progress(ac.version)
        if record is not None and record.finished:
            # Line 4: every message of the set is processed; the AC is stale. Once the last AC
            # due has come, nothing can name the set here any more, so it is forgotten.
            due = record.acs_due - 1
            tx.put(ext_slot, ext.with_progress(record._replace(acs_due=due) if due > 0 else None, ac.version))
            tx.note(lambda: f"s{dpid} ignores the Attendre Command of {packet.label()}: its message set is finished")
            return packet
        record = (SetProgress(ac.version, ac.size, 0, ac.acs - 1) if record is None
                  else record._replace(acs_due=record.acs_due - 1))
        tx.put(ext_slot, ext.with_progress(record, ac.version))
        table_slot = net.slot_table[dpid]
        table = tx.get(table_slot)
        key = (ac.table_id, ac.priority, ac.match)
        entry = flowtable.find(table, key)
        if entry is None:  # line 12
            new = flowtable.make_entry(ac.table_id, ac.priority, ac.match, None, buffer=ac.version,
                                       version=ac.version)
            tx.note(lambda: f"s{dpid} takes the Attendre Command from {packet.label()}: adds buffer entry [{new}]")
        elif entry.version is None or entry.version < ac.version:  # lines 6-7
            new = entry._replace(actions=None, buffer=ac.version, version=ac.version)
            tx.note(lambda: f"s{dpid} takes the Attendre Command from {packet.label()}: replaces [{entry}] by a buffer action")
        elif entry.version == ac.version:  # lines 8-9
            new = entry._replace(buffer=ac.version)
            tx.note(lambda: f"s{dpid} takes the Attendre Command from {packet.label()}: appends a buffer action to [{entry}]")
        else:  # an older set's command: ignored
            tx.note(lambda: f"s{dpid} ignores an Attendre Command older than entry [{entry}]")
            return packet
        tx.put(table_slot, flowtable.put(table, new))
        return packet

    def marked_entry(self, tx: "Tx", dpid: int, in_port: int, packet: Packet,
                     entry: flowtable.Entry) -> Packet | None:
        """A buffer action takes the packet; an encap action (used once) attaches its AC."""
        net = self.net
        if entry.buffer is not None:
            ext_slot = net.slot_ext[dpid]
            ext: AttendreState = tx.get(ext_slot)
            key = entry.key
            waits = dict(ext.waits)
            waits[key] = waits.get(key, ()) + ((in_port, packet),)
            tx.put(ext_slot, ext._replace(waits=tuple(sorted(waits.items(), key=lambda kv: _key_order(kv[0])))))
            tx.note(lambda: f"s{dpid} buffers {packet} at [{entry}]")
            return None
        table_slot = net.slot_table[dpid]
        key = (tx.s[table_slot], id(entry))
        cached = self._encap_cache.get(key)
        if cached is None or cached[0] is not entry:  # the entry is a part of the interned table
            cached = self._encap_cache[key] = (
                entry, net._intern[table_slot](flowtable.put(tx.get(table_slot), entry._replace(encap=None))))
        tx.set_id(table_slot, cached[1])
        tx.note(lambda: f"s{dpid} encapsulates the Attendre Command for s{entry.encap.dpid} in {packet.label()}")
        return packet._replace(ac=entry.encap)

    def table_miss(self, tx: "Tx", dpid: int, in_port: int, packet: Packet, table_id: int) -> None:
        """Lines 21-24: buffer entry with the packet's exact match, highest priority; packet-in.
        (OpenFlow 1.3 without a table-miss entry: dropped, as under OpenFlow.)"""
        if self.version == "1.3":
            super().table_miss(tx, dpid, in_port, packet, table_id)
            return
        buffer_id = self.buffer_packet(tx, dpid, in_port, packet)
        version = (dpid, buffer_id)
        entry = flowtable.make_entry(table_id, BUFFER_PRIORITY, Match.exact(packet.hdr, in_port), None,
                                     buffer=version, version=version)
        table_slot = self.net.slot_table[dpid]
        tx.put(table_slot, flowtable.put(tx.get(table_slot), entry))
        tx.note(lambda: f"s{dpid}: table miss for {packet} from port {in_port}; buffered, buffer entry added, "
                "packet-in sent")
        self.send_packet_in(tx, PacketIn(dpid, in_port, buffer_id, packet, table_id))

    def to_controller(self, tx: "Tx", dpid: int, in_port: int, packet: Packet, action: Any,
                      entry: flowtable.Entry | None) -> None:
        """OpenFlow 1.3: a hit on the table-miss entry is the paper's table miss. As at a miss
        (lines 21-24), the switch adds a buffer entry with the packet's exact match, so that
        later packets of the flow wait for the answer instead of causing packet-ins; the
        packet-in itself is OpenFlow's (whole packet, or buffer id when the entry buffers).
        The message set's version is the packet-in's identity: (switch, buffer id), or for an
        unbuffered packet (switch, (origin, seq, -in_port)), unique because a packet enters a
        switch through a port at most once (loops are dropped)."""
        if entry is None or not self.is_table_miss_entry(entry):
            super().to_controller(tx, dpid, in_port, packet, action, entry)
            return
        buffer_id = self.buffer_packet(tx, dpid, in_port, packet) if action.buffered else None
        msg = PacketIn(dpid, in_port, buffer_id, packet, entry.table_id, "no-match")
        version = self.packet_in_version(msg)
        new = flowtable.make_entry(entry.table_id, BUFFER_PRIORITY, Match.exact(packet.hdr, in_port), None,
                                   buffer=version, version=version)
        table_slot = self.net.slot_table[dpid]
        tx.put(table_slot, flowtable.put(tx.get(table_slot), new))
        tx.note(lambda: f"s{dpid} sends {packet.label()} to the controller (table-miss entry"
                + (", buffered" if action.buffered else "") + "); buffer entry added")
        self.send_packet_in(tx, msg)

    def packet_in_version(self, msg: PacketIn) -> Version | None:
        """The message-set version of the answer to packet-in ``msg`` (None: no set)."""
        if msg.buffer_id is not None:
            return (msg.dpid, msg.buffer_id)
        if self.version == "1.3" and msg.reason == "no-match":
            return (msg.dpid, (msg.packet.origin, msg.packet.seq, -msg.in_port))
        return None

    # ---- Figs. 6 and 7: commands -------------------------------------------------------

    def flow_mod(self, tx: "Tx", dpid: int, msg: FlowMod) -> None:
        """Fig. 6: encap on the released packet or on the entry; count the message of its set."""
        if msg.ms is None:
            super().flow_mod(tx, dpid, msg)
            return
        def fields(table: flowtable.Table) -> dict[str, Any]:
            existing = flowtable.find(table, (msg.table_id, msg.priority, msg.match))
            # A buffer action on the entry belongs to an unfinished set: it stays until that set ends.
            return {"buffer": existing.buffer if existing is not None else None,
                    "encap": msg.ac if msg.buffer_id is None else None,
                    "version": msg.ms.version}

        self.install(tx, dpid, msg, fields)
        if releases(msg):
            self.release_buffered(tx, dpid, msg.buffer_id, self.release_actions(msg), self._encapsulate(msg.ac))
        self.message_done(tx, dpid, msg.ms)

    def packet_out(self, tx: "Tx", dpid: int, msg: PacketOut) -> None:
        """Fig. 7: encap on the packet; count the message of its set."""
        if msg.ms is None:
            super().packet_out(tx, dpid, msg)
            return
        if msg.buffer_id is not None:
            self.release_buffered(tx, dpid, msg.buffer_id, msg.actions, self._encapsulate(msg.ac))
        elif msg.packet is not None:
            packet = msg.packet if msg.ac is None else msg.packet._replace(ac=msg.ac)
            tx.note(lambda: f"s{dpid} applies {format_actions(msg.actions)} to {msg.packet} "
                    "(carried by the packet-out)")
            goto = self.execute(tx, dpid, msg.in_port, packet, msg.actions)
            if goto is not None:
                self.pipeline(tx, dpid, msg.in_port, rewritten(packet, msg.actions), goto)
        self.message_done(tx, dpid, msg.ms)

    @staticmethod
    def _encapsulate(ac: AttendreCommand | None) -> Any:
        if ac is None:
            return None
        return lambda packet: packet._replace(ac=ac)

    def message_done(self, tx: "Tx", dpid: int, ms: MessageSet) -> None:
        """Count one processed message of set ``ms``; on the last, release its buffers
        (Fig. 6 lines 13-16, Fig. 7 lines 6-9)."""
        net = self.net
        ext_slot = net.slot_ext[dpid]
        table_slot = net.slot_table[dpid]
        key = (tx.s[table_slot], tx.s[ext_slot], ms)
        done = self._done_cache.get(key)
        if done is None:
            done = self._done_cache[key] = self._count_message(tx.get(table_slot), tx.get(ext_slot), ms,
                                                               net._intern[table_slot], net._intern[ext_slot])
        table_value, ext_value, released = done
        tx.set_id(table_slot, table_value)
        tx.set_id(ext_slot, ext_value)
        if released is None:
            return
        version = ms.version
        tx.note(lambda: f"s{dpid} finished message set {_version(version)}; buffer actions removed")
        for table_id, in_port, packet in released:
            tx.note(lambda: f"s{dpid} re-matches waiting {packet}")
            self.pipeline(tx, dpid, in_port, packet, table_id)

    @staticmethod
    def _count_message(table: flowtable.Table, ext: AttendreState, ms: MessageSet, intern_table: Any,
                       intern_ext: Any) -> tuple[int, int, tuple[tuple[int, int, Packet], ...] | None]:
        """(table id, ext id, packets to re-match or None if the set is not finished) after one
        message of ``ms`` is processed: a pure function of the switch's table and state, cached."""
        version = ms.version
        record = ext.progress(version) or SetProgress(version, ms.size, 0, ms.acs)
        record = record._replace(processed=record.processed + 1)
        if not record.finished:
            return intern_table(table), intern_ext(ext.with_progress(record, version)), None
        # The set is finished: remove its buffer actions, forget its version on entries.
        released_keys = []
        kept = []
        for entry in table:
            if entry.buffer == version:
                released_keys.append(entry.key)
                if entry.actions is None:
                    continue  # a pure buffer entry goes away
                entry = entry._replace(buffer=None)
            if entry.version == version:
                entry = entry._replace(version=None)
            kept.append(entry)
        waits = dict(ext.waits)
        released = tuple((key[0], in_port, packet) for key in released_keys
                         for in_port, packet in waits.pop(key, ()))
        ext = ext._replace(waits=tuple(sorted(waits.items(), key=lambda kv: _key_order(kv[0]))))
        return (intern_table(tuple(kept)), intern_ext(ext.with_progress(record if record.acs_due > 0 else None, version)),
                released)

    # ---- platform ----------------------------------------------------------------------

    def dispatch(self, tx: "Tx", requests: list[Request], context: PacketIn | None) -> None:
        """Group the answer to a packet-in into message sets; attach each hop's AC for the next hop."""
        default = self.packet_in_version(context) if context is not None else None
        plan: list[tuple[int, Any, Any, Version | None, int]] = []  # (dpid, message, next hop, version, priority)
        for request in requests:
            kind = type(request)
            if kind is InstallPathRequest:
                version = default
                if version is None and request.buffer_id is not None:
                    version = (request.packet_in_dpid, request.buffer_id)
                hops = request.hops
                for index, hop in enumerate(hops):
                    buffer_id = request.buffer_id if index == 0 else None
                    message = request.flow_mod(index, buffer_id)
                    following = hops[index + 1] if index + 1 < len(hops) else None
                    plan.append((hop.dpid, message, following, version, request.priority))
                    if index == 0 and request.carried is not None:
                        plan.append((hop.dpid, request.carried, None, version, 0))
            else:
                version = default
                if version is None and kind in (FlowModRequest, PacketOutRequest) and request.buffer_id is not None:
                    version = (request.dpid, request.buffer_id)
                if kind not in (FlowModRequest, PacketOutRequest):
                    version = None  # statistics requests are not commands for the flow
                plan.append((request.dpid, self.message_for(request), None, version, 0))
        sizes: dict[tuple[int, Version], int] = {}
        for dpid, _message, _following, version, _priority in plan:
            if version is not None:
                sizes[(dpid, version)] = sizes.get((dpid, version), 0) + 1
        acs: dict[tuple[int, Version], int] = {}  # ACs planned per (switch, set)
        for _dpid, _message, following, version, _priority in plan:
            if following is not None and version is not None:
                acs[(following.dpid, version)] = acs.get((following.dpid, version), 0) + 1
        for dpid, message, following, version, priority in plan:
            if version is not None:
                ms = MessageSet(version, sizes[(dpid, version)], acs.get((dpid, version), 0))
                ac = None
                if following is not None:
                    ac = AttendreCommand(following.dpid, following.match, priority, following.table_id,
                                         version, sizes[(following.dpid, version)],
                                         acs[(following.dpid, version)])
                message = _with_set(message, ms, ac)
            self.send(tx, dpid, message)


def _with_set(message: Any, ms: MessageSet, ac: AttendreCommand | None) -> Any:
    if type(message) is FlowMod:
        return dataclasses.replace(message, ms=ms, ac=ac)
    if type(message) is PacketOut:
        return PacketOut(message.actions, message.buffer_id, message.in_port, message.packet, ms, ac)
    return message


def _version(version: Version) -> str:
    dpid, (origin, seq, copy) = version
    return f"s{dpid}/{origin}#{seq}" + (f".{copy}" if copy > 0 else f"@port{-copy}" if copy < 0 else "")
