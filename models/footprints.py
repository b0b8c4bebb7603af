"""The network's footprints: what each kind of event may read, write, append to, pop and
add to, in slots (the :class:`~nice_attendre.por.Slotted` contract, for partial-order
reduction; see :mod:`nice_attendre.por`).

Footprints are the same in every state (so they hold in every state reachable from any):

* a host's slot is two locations (footprints are over locations: the slots, and these
  parts of slots beyond them): what it sends (``sent``, ``sent_log``) and what it receives
  (``received``, ``extra``, ``answer_to``, ``answers``). A send reads and writes the first
  and appends to the input port the host is attached to; a receive pops its ``inbox`` and
  reads and writes the second (and the first, and appends to the port, for a host that
  answers at once); an answer reads and writes both and appends to the port;
* a switch's packet step pops its input port, reads the switch's table and reads and
  writes its buffer and variant state (``buffer``, ``ext``); a switch's command step pops
  its command channel and reads and writes all three; both append to the switch's channel
  to the controller and to every link out of it (the input ports of its neighbours, the
  inboxes of its hosts);
* the controller's handling of one switch's messages pops that switch's channel, reads and
  writes the app's and the platform's state and appends to every switch's command channel
  (an app may send to any switch); port statistics (InstantStats) the same, guarded by the
  platform's state;
* an entry's expiry reads and writes its switch's table, buffer and variant state and
  appends to its controller channel; a tie choice (``SwitchChoosesEntry``) does what its
  ordinary event does;
* every event may add to the ``alerts`` (a set: monitors only add) and ``load`` (counters)
  slots: adds commute, so alerts alone make no two events dependent.

Dormant stand-ins (events not enabled now that may be later): every host, port, command
channel, controller channel and statistics event of the network, and per switch one entry
expiry and one tie choice standing for all of theirs. What keeps each disabled
(:meth:`Footprints.disabled_by`): an empty queue it pops, its host's part (no answer due), the
platform's state (no statistics due), the switch's table (no entry that may expire or tie);
a host's finished stream never sends again.

A host that moves reads and writes both its parts and where it is (``where``), reads the
input ports of every place it may be at (it waits until its frames left) and appends to the
one it moves to; a switch's steps read where every mobile host is and may append to its
inbox if it may be attached to the switch.

Supported: the ``openflow`` variant with FIFO channels, a single-threaded controller, no
faults, and the monitors that keep no history; :meth:`Footprints.unsupported`
names what is not (yet).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Hashable, Sequence

from nice_attendre.models.events import (ControllerHandle, ControllerStats, HostAnswer, HostMove, HostReceive, HostSend,
                                         SwitchEntryExpires, SwitchProcessCommand, SwitchProcessPacket)
from nice_attendre.models import flowtable
from nice_attendre.models.messages import NO_TIMEOUTS, TABLE, BarrierRequest, FlowMod, PacketOut, PortStatsRequest
from nice_attendre.models.packet import Flood, GotoTable, Output, ToController
from nice_attendre.models.protocols.openflow import releases
from nice_attendre.models.protocols.ties import SwitchChoosesEntry, ordinary
from nice_attendre.por import Footprint

if TYPE_CHECKING:
    from nice_attendre.models.network import Network

#: The variants whose events this module knows.
SUPPORTED_PROTOCOLS = ("openflow",)
#: The monitors that keep history in the state (host slots read from switch steps, the
#: ``history`` and ``expired`` slots): not supported yet.
HISTORY_MONITORS = ("direct-paths", "strict-direct-paths", "one-packet-in-per-flow")


@dataclass(frozen=True, slots=True)
class Standin:
    """A dormant stand-in for a family of events of switch ``dpid`` (``kind``: ``expiry`` or
    ``tie``): never enabled itself."""

    kind: str
    dpid: int


#: The events whose occurrence footprint is observed (see :meth:`Footprints.occurrence`).
_SWITCH_STEPS = frozenset({SwitchProcessPacket, SwitchProcessCommand, SwitchEntryExpires, SwitchChoosesEntry})


def _fp(reads: Any = (), writes: Any = (), appends: Any = (), pops: Any = (), guard: Any = None,
        adds: Any = ()) -> Footprint:
    return Footprint(frozenset(reads), frozenset(writes), frozenset(appends), frozenset(pops),
                     None if guard is None else frozenset(guard), frozenset(adds))


class Footprints:
    """The footprints of one network's events (computed once per event)."""

    def __init__(self, net: "Network") -> None:
        self.net = net
        topo = net.topology
        self._cache: dict[Hashable, Footprint] = {}
        adds = [net.slot_alerts] + ([net.slot_load] if net.slot_load >= 0 else [])
        self._adds = frozenset(adds)
        #: per switch: the slots its packets may go to (neighbours' input ports, hosts' inboxes)
        self._outputs: dict[int, frozenset[int]] = {}
        for dpid in topo.switches:
            out = set()
            for port in topo.ports[dpid]:
                peer = topo.links.get((dpid, port))
                if peer is None:
                    continue
                out.add(net.slot_inbox[peer.node] if peer.is_host else net.slot_port[(peer.node, peer.port)])
            self._outputs[dpid] = frozenset(out)
        #: every place each host may be attached to (a mobile host's moves too)
        self._places = {host: (topo.host_port[host],) + (net.specs[host].moves if host in net.specs else ())
                        for host in topo.hosts}
        self._wheres = frozenset(net.slot_where.values())
        for host in net.mobile:  # a switch delivers to a mobile host wherever it is now
            for dpid, _port in self._places[host]:
                self._outputs[dpid] = self._outputs[dpid] | {net.slot_inbox[host]}
        self._cmdqs = frozenset(net.slot_cmdq.values())
        # the hosts' two locations each, numbered after the slots
        first = len(net.slot_names)
        self._sends = {host: first + 2 * index for index, host in enumerate(topo.hosts)}
        self._receives = {host: first + 2 * index + 1 for index, host in enumerate(topo.hosts)}
        self._tying: dict[int, bool] = {}
        self._occurrences: dict[Any, Footprint] = {}
        self._bounded: dict[tuple[int, int], Footprint] = {}
        self._untied: dict[tuple[int, int, int], bool] = {}
        self._version = getattr(net.protocol, "version", "1.0")
        dormant: list[Hashable] = []
        hosts = net.hosts
        dormant.extend(event for _slot, event, _stream, _length in hosts.senders)
        dormant.extend(event for _slot, event in hosts.receivers)
        dormant.extend(event for _slot, event in hosts.answerers)
        dormant.extend(HostMove(host, dpid, port) for host in net.mobile for dpid, port in self._places[host][1:])
        dormant.extend(SwitchProcessPacket(d, p) for d in topo.switches for p in topo.ports[d])
        dormant.extend(SwitchProcessCommand(d) for d in topo.switches)
        dormant.extend(ControllerHandle(d) for d in topo.switches)
        dormant.extend(ControllerStats(d, load) for d in topo.switches for load in net.app.load_classes)
        dormant.extend(Standin("expiry", d) for d in topo.switches)
        dormant.extend(Standin("tie", d) for d in topo.switches)
        self._universe = tuple(dormant)
        #: the producers of every command channel: the controller's events
        self._feeders = tuple(event for event in self._universe if type(event) in (ControllerHandle, ControllerStats))

    def unsupported(self) -> str | None:
        """What about this network partial-order reduction does not support yet, or None."""
        net = self.net
        name = net.protocol.name
        if name not in SUPPORTED_PROTOCOLS:
            return f"--por does not support protocol {name} yet (supported: {', '.join(SUPPORTED_PROTOCOLS)})"
        if net.faults is not None:
            return "--por does not support faults yet"
        if net.threaded:
            return "--por does not support a threaded controller yet"
        if net.channels.batched or net.options.command_order != "fifo":
            return "--por does not support command order any yet"
        if getattr(net.options, "joins_first", False):
            # hosts are enabled only once every control channel is empty: an enabling the
            # footprints do not declare
            return "--por does not support --joins-first yet"
        history = sorted(set(HISTORY_MONITORS) & set(net.options.monitors))
        if history:
            return f"--por does not support the {history[0]} property yet (its monitor keeps history)"
        return None

    def dormant(self, state: Sequence[int], enabled: Sequence[Hashable]) -> list[Hashable]:
        """Every event of the network that is not among ``enabled`` (``state``'s), and the stand-ins."""
        found = set(enabled)
        return [event for event in self._universe if event not in found]

    def footprint(self, state: Sequence[int], event: Hashable) -> Footprint:
        """``event``'s footprint (the same in every state)."""
        found = self._cache.get(event)
        if found is None:
            found = self._cache[event] = self._compute(event)
        return found

    def _switch(self, dpid: int) -> tuple[set[int], set[int]]:
        """The switch's own slots (read and written) and where it may append."""
        net = self.net
        own = {net.slot_table[dpid], net.slot_buffer[dpid], net.slot_ext[dpid]}
        return own, set(self._outputs[dpid]) | {net.slot_ctrlq[dpid]}

    def _reads_of_switch(self, dpid: int) -> set[int]:
        """What a switch's step reads besides its own slots: where the mobile hosts are."""
        return set(self._wheres)

    def _compute(self, event: Hashable) -> Footprint:
        net = self.net
        adds = self._adds
        kind = type(event)
        if kind is HostSend or kind is HostAnswer or kind is HostReceive:
            host = event.host  # type: ignore[attr-defined]
            sends, receives = self._sends[host], self._receives[host]
            ports = [net.slot_port[place] for place in self._places[host]]
            if kind is HostSend:
                return _fp(reads=(sends,), writes=(sends,), appends=ports, guard=(sends,), adds=adds)
            if kind is HostAnswer:
                both = (sends, receives)
                return _fp(reads=both, writes=both, appends=ports, guard=(receives,), adds=adds)
            inbox = net.slot_inbox[host]
            if host in net.hosts.atomic_answers:
                both = (sends, receives)
                return _fp(reads=both, writes=both, appends=ports, pops=(inbox,), guard=(inbox,), adds=adds)
            return _fp(reads=(receives,), writes=(receives,), pops=(inbox,), guard=(inbox,), adds=adds)
        if kind is HostMove:  # waits until its frames left its port; announces itself from the new one
            host = event.host  # type: ignore[attr-defined]
            parts = (self._sends[host], self._receives[host], net.slot_where[host])
            ports = [net.slot_port[place] for place in self._places[host]]
            return _fp(reads=parts + tuple(ports), writes=parts, appends=(net.slot_port[(event.dpid, event.port)],),  # type: ignore[attr-defined]
                       adds=adds)
        if kind is SwitchProcessPacket or kind is SwitchProcessCommand:
            dpid = event.dpid  # type: ignore[attr-defined]
            own, out = self._switch(dpid)
            where = self._reads_of_switch(dpid)
            if kind is SwitchProcessPacket:
                queue = net.slot_port[(dpid, event.port)]  # type: ignore[attr-defined]
                return _fp(reads=own | where, writes=own - {net.slot_table[dpid]}, appends=out, pops=(queue,),
                           guard=(queue,), adds=adds)
            queue = net.slot_cmdq[dpid]
            return _fp(reads=own | where, writes=own, appends=out, pops=(queue,), guard=(queue,), adds=adds)
        if kind is ControllerHandle or kind is ControllerStats:
            controller = (net.slot_app, net.slot_platform)
            if kind is ControllerHandle:
                queue = net.slot_ctrlq[event.dpid]  # type: ignore[attr-defined]
                return _fp(reads=controller, writes=controller, appends=self._cmdqs, pops=(queue,), guard=(queue,),
                           adds=adds)
            return _fp(reads=controller, writes=controller, appends=self._cmdqs, guard=(net.slot_platform,),
                       adds=adds)
        if kind is SwitchEntryExpires or (kind is Standin and event.kind == "expiry"):  # type: ignore[attr-defined]
            dpid = event.dpid  # type: ignore[attr-defined]
            own, _out = self._switch(dpid)
            return _fp(reads=own, writes=own, appends=(net.slot_ctrlq[dpid],), guard=(net.slot_table[dpid],),
                       adds=adds)
        if kind is SwitchChoosesEntry:
            base = ordinary(event.base, event.dpid, event.args)  # type: ignore[attr-defined]
            if base is None:
                return self._whole_switch(event.dpid)  # type: ignore[attr-defined]
            return self.footprint((), base)
        if kind is Standin and event.kind == "tie":  # type: ignore[attr-defined]
            return self._whole_switch(event.dpid)  # type: ignore[attr-defined]
        # an event this module does not know: it may touch anything
        every = range(len(net.slot_names))
        return _fp(reads=every, writes=every)

    def occurrence(self, state: Sequence[int], event: Hashable) -> Footprint | None:
        """The footprint of a switch's step from ``state`` (its packet or command step, an
        expiry, a tie choice), found by running it on a copy of the state that records what
        it reads, writes and appends to (:class:`~nice_attendre.models.network.MemoTx`);
        None for the hosts' and the controller's events (their footprints are their own; a
        controller step is not run twice, as its first call is the one checked for
        determinism). Cached by the values of the slots its footprint may read."""
        kind = type(event)
        if kind not in _SWITCH_STEPS:
            return None
        static = self.footprint(state, event)
        if any(slot >= len(state) for slot in static.reads):
            return None
        key = (event, tuple(state[slot] for slot in sorted(static.reads | static.pops)))
        found = self._occurrences.get(key)
        if found is None:
            found = self._occurrences[key] = self._observe(state, event, static)
        return found

    def _observe(self, state: Sequence[int], event: Hashable, static: Footprint) -> Footprint:
        from nice_attendre.models.network import MemoTx

        net = self.net
        tx = MemoTx(net, state)
        net._handlers[type(event)](tx, event)
        tracked = tx.s
        if tracked.opaque:
            return static
        written = set(tracked.written)
        appends = set(tracked.appends)
        pops = written & static.pops
        adds = written & static.adds
        reads = set(tracked.reads) - pops - adds
        writes = written - pops - adds - appends
        if not (reads | pops <= static.reads | static.pops and writes <= static.writes | static.pops
                and appends <= static.appends | static.writes):
            return static  # outside its declared footprint (a test would say so): keep that
        return _fp(reads=reads, writes=writes, appends=appends, pops=pops, adds=adds)

    def bounded(self, state: Sequence[int], event: Hashable) -> tuple[Footprint, tuple[Hashable, ...]] | None:
        """For a switch's command step: a footprint covering its transitions until the
        controller sends again (the commands now in its channel: a flow-mod that releases no
        packet only changes the table and may tell the controller of a removed entry; a
        barrier or statistics request only answers), and the controller's events (the
        channel's producers) as feeders; None for other events."""
        if type(event) is not SwitchProcessCommand:
            return None
        net = self.net
        dpid = event.dpid  # type: ignore[attr-defined]
        slot = net.slot_cmdq[dpid]
        value = state[slot]
        key = (dpid, value)
        found = self._bounded.get(key)
        if found is None:
            found = self._bounded[key] = self._commands_footprint(dpid, net.value(state, f"cmdq:{dpid}"))
        return found, self._feeders

    def _commands_footprint(self, dpid: int, commands: Sequence[Any]) -> Footprint:
        """What processing ``commands`` at switch ``dpid`` may do (see :meth:`bounded`): a
        flow-mod changes the table (a delete may tell the controller of removed entries); a
        packet-out, or a flow-mod that releases a buffered packet, sends the packet where its
        actions say (an output to a port: that link; a flood: every link; to the controller:
        its channel), reading and writing the buffer; a barrier or statistics request answers
        on the controller channel. Anything else (an output to the table, a goto, another
        message): the command step's own footprint."""
        net = self.net
        own, _out = self._switch(dpid)
        table, buffer, ctrlq = net.slot_table[dpid], net.slot_buffer[dpid], net.slot_ctrlq[dpid]
        static = self.footprint(None, SwitchProcessCommand(dpid))  # type: ignore[arg-type]
        reads, writes, appends = set(), set(), set()
        for msg in commands:
            kind = type(msg)
            if kind is FlowMod:
                reads.add(table)
                writes.add(table)
                if msg.command in ("delete", "delete-strict"):
                    appends.add(ctrlq)
                if not releases(msg):
                    continue
                actions = msg.actions if self._version == "1.0" else None
            elif kind is PacketOut:
                actions = msg.actions
            elif kind is BarrierRequest or kind is PortStatsRequest:
                appends.add(ctrlq)
                continue
            else:
                return static
            sent = self._sent_by(dpid, actions)
            if sent is None:
                return static
            reads |= own | self._wheres
            writes.add(buffer)
            appends |= sent
        queue = net.slot_cmdq[dpid]
        return _fp(reads=reads, writes=writes, appends=appends, pops=(queue,), guard=(queue,), adds=self._adds)

    def _sent_by(self, dpid: int, actions: Sequence[Any] | None) -> set[int] | None:
        """Where applying ``actions`` at switch ``dpid`` may put a packet, or None when they
        may go through the table again (or are unknown)."""
        if actions is None:
            return None
        net = self.net
        sent: set[int] = set()
        for action in actions:
            kind = type(action)
            if kind is Output:
                if action.port not in net.topology.ports[dpid]:
                    if action.port == TABLE:
                        return None
                    continue  # no such port: dropped (a black hole's alert)
                sent |= self._at_port(dpid, action.port)
            elif kind is Flood:
                sent |= self._outputs[dpid]
            elif kind is ToController:
                sent.add(net.slot_ctrlq[dpid])
            elif kind is GotoTable:
                return None
        return sent

    def _at_port(self, dpid: int, port: int) -> set[int]:
        """The queues a packet sent out of ``dpid``:``port`` may enter."""
        net = self.net
        found = set()
        peer = net.topology.links.get((dpid, port))
        if peer is not None:
            found.add(net.slot_inbox[peer.node] if peer.is_host else net.slot_port[(peer.node, peer.port)])
        for host in net.mobile:
            if (dpid, port) in self._places[host]:
                found.add(net.slot_inbox[host])
        return found

    def enablers(self, state: Sequence[int], event: Hashable) -> tuple[Hashable, ...] | None:
        """For a switch's tie choices, dormant: when neither its table nor the entries the
        flow-mods in its channel add could tie, only new commands can make a tie (the
        controller's events); for its expiries (of entries not in its table: the enabled
        ones are events of their own), when no flow-mod in its channel adds an entry with
        a timeout, only new commands can; None otherwise (the writers of its guard)."""
        if type(event) is not Standin:
            return None
        net = self.net
        dpid = event.dpid  # type: ignore[attr-defined]
        if event.kind == "expiry":  # type: ignore[attr-defined]
            # expiries are named by their entry's index: with no entry with a timeout in the
            # table, the first can only come from a flow-mod in the channel or a command still
            # to come
            if any(entry.timeouts is not None for entry in net.interned(net.slot_table[dpid])[state[net.slot_table[dpid]]]):
                return None
            if any(type(msg) is FlowMod and msg.command == "add" and msg.timeouts != NO_TIMEOUTS
                   for msg in net.value(state, f"cmdq:{dpid}")):
                return None
            return self._feeders
        key = (dpid, state[net.slot_table[dpid]], state[net.slot_cmdq[dpid]])
        found = self._untied.get(key)
        if found is None:
            entries = list(net.interned(net.slot_table[dpid])[key[1]])
            for msg in net.value(state, f"cmdq:{dpid}"):
                if type(msg) is FlowMod:
                    if msg.command not in ("add", "modify-or-add", "delete", "delete-strict"):
                        entries = []  # a modify: not worked out here
                        found = False
                        break
                    if msg.command[0] != "d":
                        entries.append(flowtable.make_entry(msg.table_id, msg.priority, msg.match, msg.actions))
            else:
                found = not any(a.table_id == b.table_id and a.neg_priority == b.neg_priority
                                and flowtable.behaviour(a) != flowtable.behaviour(b)
                                and flowtable.overlap(a.match, b.match)
                                for i, a in enumerate(entries) for b in entries[i + 1:])
            self._untied[key] = found
        return self._feeders if found else None

    def host_parts(self, host: str) -> tuple[int, int]:
        """The two locations of ``host``'s slot: what it sends, what it receives."""
        return self._sends[host], self._receives[host]

    def disabled_by(self, state: Sequence[int], event: Hashable) -> frozenset[int]:
        """For ``event`` not enabled in ``state``: locations it stays disabled until one of
        them changes (see the module docstring)."""
        net = self.net
        kind = type(event)
        if kind is HostSend:
            return frozenset()  # its stream is sent: nothing sends it again
        if kind is Standin and event.kind == "tie":  # type: ignore[attr-defined]
            dpid = event.dpid  # type: ignore[attr-defined]
            table = net.slot_table[dpid]
            value = state[table]
            tying = self._tying.get(value)
            if tying is None:
                tying = self._tying[value] = flowtable.may_tie(net.interned(table)[value])
            if not tying:
                return frozenset({table})
        return self.footprint(state, event).guarded

    def _whole_switch(self, dpid: int) -> Footprint:
        """Anything switch ``dpid`` may do: its packet and command steps together (guarded by
        its table, ports and command channel)."""
        net = self.net
        own, out = self._switch(dpid)
        queues = {net.slot_port[(dpid, port)] for port in net.topology.ports[dpid]} | {net.slot_cmdq[dpid]}
        return _fp(reads=own | self._reads_of_switch(dpid), writes=own, appends=out, pops=queues,
                   guard=queues | {net.slot_table[dpid]}, adds=self._adds)
