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

State-dependent parts (what makes the sets small; each checked on every transition of the
footprint scenarios by the tests): a switch step's occurrence is observed on a recording copy
of the state (a slot it writes with the value it had is a read); a command step's bounded
footprint covers the commands now in its channel while the controller does not send; a
dormant event may name its enablers (:meth:`Footprints.enablers`): a controller step of a
switch's messages, the controller's other events and the steps of that switch that may send
it a message before the controller acts (packet steps only at ports where a packet that may
arrive there misses or hits an entry sending it to the controller); a packet step at a port
linked to a switch, the controller's events and the steps of that switch that may forward a
packet out of its end of the link (:meth:`Footprints.arrivals`: per port, the headers that
may arrive before the controller acts, a fixpoint over the tables, the entries the channels
add, the packets they release and what the hosts may send); a switch's tie choices and
expiries, when its table cannot tie or holds no entry with a timeout, its command step or
the controller's events (:class:`~nice_attendre.por.Alternatives`).

Supported: every protocol variant (``openflow`` and ``openflow-b`` here, the others' own
footprints in :mod:`~nice_attendre.models.footprints_variants`); ``openflow`` and ``openflow-b``
with either command order, a single-threaded or threaded controller, --joins-first, faults and
the monitors that keep history (what these options change is
:mod:`nice_attendre.models.footprints_options`'s), the other variants without them (yet);
:meth:`Footprints.unsupported` names what is not (yet).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Hashable, Sequence

from nice_attendre.models.events import (ControllerHandle, ControllerStats, HostAnswer, HostMove, HostReceive, HostSend,
                                         SwitchEntryExpires, SwitchProcessCommand, SwitchProcessPacket)
from nice_attendre.models import flowtable
from nice_attendre.models.messages import NO_TIMEOUTS, TABLE, BarrierRequest, FlowMod, PacketOut, PortStatsRequest
from nice_attendre.models.addresses import IP_BROADCAST, default_ip
from nice_attendre.models.packet import BROADCAST, Flood, GotoTable, Header, Output, SetField, ToController
from nice_attendre.models.protocols.openflow import releases
from nice_attendre.models.protocols.ties import SwitchChoosesEntry, ordinary
from nice_attendre.models.footprints_options import OptionFootprints
from nice_attendre.por import Alternatives, Footprint

if TYPE_CHECKING:
    from nice_attendre.models.network import Network

#: The variants whose events this module knows.
SUPPORTED_PROTOCOLS = ("openflow", "openflow-b", "attendre", "batch", "buffer", "pif")
#: The monitors that keep history in the state (host slots read from switch steps, the
#: ``history`` and ``expired`` slots): their footprints are models/footprints_options.py's.
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

    #: The kinds of events whose occurrence footprint is observed (a variant adds its own).
    observed: frozenset[type] = _SWITCH_STEPS

    def __new__(cls, net: "Network") -> "Footprints":
        if cls is Footprints:  # a protocol variant's own footprints (models/footprints_variants.py)
            from nice_attendre.models.footprints_variants import variant_class
            cls = variant_class(net) or cls
        return super().__new__(cls)

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
        #: the state :meth:`dormant` was last asked about, and its enabled events
        self._now: tuple[Any, tuple[Hashable, ...]] = ((), ())
        #: the headers the hosts' scripts and moves may put on the wire, closed under answers
        self._hosts = tuple(topo.hosts)
        seeds = {hdr for spec in net.specs.values() for hdr, _kind in spec.script}
        seeds |= {Header(host, BROADCAST, default_ip(host), IP_BROADCAST) for host in net.mobile}
        self._scripted = self._closed(frozenset(seeds), ())
        #: per switch, its ports where only hosts may be attached, and those hosts
        self._hosted: dict[int, dict[int, tuple[str, ...]]] = {}
        for dpid in topo.switches:
            ports: dict[int, list[str]] = {}
            for port in topo.ports[dpid]:
                peer = topo.links.get((dpid, port))
                if peer is not None and not peer.is_host:
                    continue
                ports[port] = [host for host in topo.hosts if (dpid, port) in self._places[host]]
            self._hosted[dpid] = {port: tuple(hosts) for port, hosts in ports.items()}
        #: what each host may send of its own (its script; its announcements if it moves)
        self._sent_by_host = {host: {hdr for hdr, _kind in (net.specs[host].script if host in net.specs else ())}
                              | ({Header(host, BROADCAST, default_ip(host), IP_BROADCAST)} if host in net.mobile else set())
                              for host in topo.hosts}
        self._carried: dict[tuple[int, int], tuple[frozenset[Header], frozenset[SetField]]] = {}
        self._universes: dict[tuple[frozenset[Header], frozenset[SetField]], frozenset[Header]] = {}
        self._missing: dict[tuple[Any, ...], tuple[int, ...] | None] = {}
        self._arrived: tuple[Any, dict[tuple[int, int], frozenset[Header]]] = ((), {})
        self._queue_headers: dict[tuple[int, int], frozenset[Header]] = {}
        self._moves: dict[tuple[int, int, int, int], tuple[Any, Any]] = {}
        #: per switch, its ports linked to a switch and the peer at the other end
        self._peers = {dpid: {port: peer for port in topo.ports[dpid]
                              if (peer := topo.links.get((dpid, port))) is not None and not peer.is_host}
                       for dpid in topo.switches}
        #: per port, the events that may send a packet to it in the state of ``_arrived``
        self._emitters: dict[tuple[int, int], tuple[Hashable, ...]] = {}
        #: the slots whose values may carry packets (headers) or set-field actions
        self._carriers = tuple(sorted(set(net.slot_port.values()) | set(net.slot_inbox.values())
                                      | set(net.slot_buffer.values()) | set(net.slot_cmdq.values())
                                      | set(net.slot_host.values()) | set(net.slot_table.values())))
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
        # ---- the options' footprints (faults ...: models/footprints_options.py) ----
        self.options = OptionFootprints(self)
        self._universe += tuple(self.options.universe())
        self._feeders += self.options.feeders()  # a restart runs the app: the controller acts

    def unsupported(self) -> str | None:
        """What about this network partial-order reduction does not support yet, or None."""
        net = self.net
        name = net.protocol.name
        if name not in SUPPORTED_PROTOCOLS:
            return f"--por does not support protocol {name} yet (supported: {', '.join(SUPPORTED_PROTOCOLS)})"
        refused = self.options.unsupported()
        if refused is not None:
            return refused
        return None

    def dormant(self, state: Sequence[int], enabled: Sequence[Hashable]) -> list[Hashable]:
        """Every event of the network that is not among ``enabled`` (``state``'s), and the stand-ins."""
        found = set(enabled)
        self._now = (state, tuple(enabled))
        return [event for event in self._universe if event not in found]

    def footprint(self, state: Sequence[int], event: Hashable) -> Footprint:
        """``event``'s footprint (the same in every state, but for the hosts' events under
        --joins-first: see models/footprints_options.py)."""
        found = self._cache.get(event)
        if found is None:
            own = self.options.footprint(event)
            found = self._cache[event] = self.options.adjust(event, self._compute(event) if own is None else own)
        if self.options.startup is not None:  # --joins-first: the hosts' until one acted
            return self.options.at_startup(state, event, found)
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
        if kind not in self.observed:
            return None
        static = self.footprint(state, event)
        looked = self.options.slots(static.reads | static.pops)  # a location: its slot
        if looked is None:
            return None
        key = (event, tuple(state[slot] for slot in looked))
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
        if isinstance(tracked, list):
            # a slot written with the value it had (a flow-mod adding an entry already there):
            # the transition changes nothing there, it only looked at it
            same = {slot for slot in writes if list.__getitem__(tracked, slot) == state[slot]}
            writes -= same
            reads |= same
        if self.options.parts:  # a split slot: the locations of it the event declares
            reads = self.options.locations(reads, static.reads)
            writes = self.options.locations(writes, static.writes)
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
        if type(event) is not SwitchProcessCommand or not self.options.refined:
            return None
        net = self.net
        dpid = event.dpid  # type: ignore[attr-defined]
        slot = net.slot_cmdq[dpid]
        value = state[slot]
        key = (dpid, value)
        found = self._bounded.get(key)
        if found is None:
            found = self._bounded[key] = self.options.widen_bounded(
                self._commands_footprint(dpid, self.options.commands(state, dpid)))
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
                if msg.command in ("delete", "delete-strict") or getattr(msg, "check_overlap", False):
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
        """:meth:`_named_enablers`, a switch's command step standing for all of its command
        events under batched channels (models/footprints_options.py)."""
        return self.options.expand(state, self._named_enablers(state, event))

    def _named_enablers(self, state: Sequence[int], event: Hashable) -> tuple[Hashable, ...] | None:
        """For a dormant event, the events one of which must happen before it can be
        enabled, or None (the writers of its guard): a switch's tie choices, when its table
        cannot tie: its command step (only an added entry makes a tie); its expiries (of
        entries not in its table: the enabled ones are events of their own), when no entry
        has a timeout: its command step; a controller step: see
        :meth:`_controller_enablers`; a packet step at a port linked to a switch: see
        :meth:`_packet_enablers`. None for all when an option breaks their assumptions
        (models/footprints_options.py)."""
        if not self.options.refined:
            return None
        if type(event) is ControllerHandle:
            return self._controller_enablers(state, event)
        if type(event) is SwitchProcessPacket:
            return self._packet_enablers(state, event)
        if type(event) is not Standin:
            return None
        net = self.net
        dpid = event.dpid  # type: ignore[attr-defined]
        table = net.interned(net.slot_table[dpid])[state[net.slot_table[dpid]]]
        if event.kind == "expiry":  # type: ignore[attr-defined]
            # expiries are named by their entry's index: with no entry with a timeout in the
            # table, the first needs one added, by the switch's command step, and when none
            # of the flow-mods in its channel adds one, by a command still to come
            if any(entry.timeouts is not None for entry in table):
                return None
            if any(type(msg) is FlowMod and msg.command in ("add", "modify-or-add") and msg.timeouts != NO_TIMEOUTS
                   for msg in self.options.commands(state, dpid)):
                return (SwitchProcessCommand(dpid),)
            return Alternatives(((SwitchProcessCommand(dpid),), self._feeders))
        # a table that cannot tie ties only once an entry is added, by the command step, and
        # when the flow-mods in its channel add none that could, by a command still to come
        key = (dpid, state[net.slot_table[dpid]], state[net.slot_cmdq[dpid]])
        found = self._untied.get(key)
        if found is None:
            found = self._untied[key] = self._cannot_tie(state, dpid, table)
        if found:
            return Alternatives(((SwitchProcessCommand(dpid),), self._feeders))
        tying = self._tying.get(state[net.slot_table[dpid]])
        if tying is None:
            tying = self._tying[state[net.slot_table[dpid]]] = flowtable.may_tie(table)
        return None if tying else (SwitchProcessCommand(dpid),)

    def _cannot_tie(self, state: Sequence[int], dpid: int, table: Sequence[Any]) -> bool:
        """Whether neither switch ``dpid``'s table nor the entries the flow-mods in its
        channel add could tie."""
        entries = list(table)
        for msg in self.options.commands(state, dpid):
            if type(msg) is FlowMod:
                if msg.command not in ("add", "modify-or-add", "delete", "delete-strict"):
                    return False  # a modify: not worked out here
                if msg.command[0] != "d":
                    entries.append(flowtable.make_entry(msg.table_id, msg.priority, msg.match, msg.actions))
        return not any(a.table_id == b.table_id and a.neg_priority == b.neg_priority
                       and flowtable.behaviour(a) != flowtable.behaviour(b)
                       and flowtable.overlap(a.match, b.match)
                       for i, a in enumerate(entries) for b in entries[i + 1:])

    # ---- where packet-ins may come from (a dormant controller step's enablers) -----------

    def _closed(self, headers: frozenset[Header], setfields: Any) -> frozenset[Header]:
        """``headers`` closed under a host's answer (the header reversed; to a broadcast, from
        any host) and under ``setfields`` (each rewriting one field)."""
        seen = set(headers)
        work = list(headers)
        while work:
            hdr = work.pop()
            if hdr.eth_dst == BROADCAST:
                after = [Header(host, hdr.eth_src, hdr.ip_dst, hdr.ip_src, hdr.tp_dst, hdr.tp_src, hdr.ip_proto)
                         for host in self._hosts]
            else:
                after = [hdr.reversed()]
            after.extend(hdr._replace(**{action.field: action.value}) for action in setfields)
            for other in after:
                if other not in seen:
                    seen.add(other)
                    work.append(other)
        return frozenset(seen)

    def _carried_by(self, state: Sequence[int], slot: int) -> tuple[frozenset[Header], frozenset[SetField]]:
        """The headers (beyond the scripted ones) and set-field actions in ``slot``'s value."""
        key = (slot, state[slot])
        found = self._carried.get(key)
        if found is None:
            headers: set[Header] = set()
            setfields: set[SetField] = set()
            work = [self.net.value(state, self.net.slot_names[slot])]
            while work:
                item = work.pop()
                kind = type(item)
                if kind is Header:
                    if item not in self._scripted:
                        headers.add(item)
                elif kind is SetField:
                    setfields.add(item)
                elif isinstance(item, (tuple, list, frozenset)):
                    work.extend(item)
                elif hasattr(item, "__dataclass_fields__"):
                    work.extend(getattr(item, name) for name in item.__dataclass_fields__)
            found = self._carried[key] = (frozenset(headers), frozenset(setfields))
        return found

    def headers(self, state: Sequence[int]) -> frozenset[Header]:
        """Every header a packet may carry on a path from ``state`` on which the controller
        does not act: the scripted ones, those of the packets in ``state`` (on links, in
        buffers, in packet-outs, in the hosts' answers due), closed under the hosts' answers
        and the set-field actions of the tables and the command channels."""
        headers: set[Header] = set()
        setfields: set[SetField] = set()
        for slot in self._carriers:
            more, actions = self._carried_by(state, slot)
            headers |= more
            setfields |= actions
        key = (frozenset(headers), frozenset(setfields))
        found = self._universes.get(key)
        if found is None:
            found = self._universes[key] = (self._scripted if not headers and not setfields
                                            else self._closed(self._scripted | key[0], sorted(key[1], key=repr)))
        return found

    def _missing_ports(self, state: Sequence[int], dpid: int) -> tuple[int, ...] | None:
        """The ports of switch ``dpid`` where a packet may arrive and go to the controller
        (a miss, or an entry that sends it there) on a path from ``state`` on which the
        controller does not act: its table then changes only by the flow-mods now in its
        channel and by expiries. None: any port (a command that deletes or modifies, an
        entry with a goto or an output to the table). A packet is safe when an entry that
        stays (no timeout, nothing deletes it) matches it and no entry that matches it, now
        or added by the channel, sends it to the controller."""
        net = self.net
        table_slot, cmdq_slot = net.slot_table[dpid], net.slot_cmdq[dpid]
        arrivals = self.arrivals(state)
        key = (dpid, state[table_slot], state[cmdq_slot],
               tuple(arrivals[(dpid, port)] for port in net.topology.ports[dpid]))
        if key in self._missing:
            return self._missing[key]
        present = net.interned(table_slot)[state[table_slot]]
        entries = list(present)
        found: tuple[int, ...] | None = None
        for msg in self.options.commands(state, dpid):
            if type(msg) is FlowMod:
                if msg.command != "add":
                    break
                entries.append(flowtable.make_entry(msg.table_id, msg.priority, msg.match, msg.actions))
        else:
            staying = [entry for entry in present if entry.timeouts is None and entry.table_id == 0]
            leaves = [entry for entry in entries if entry.table_id == 0 and not self._forwards_only(entry)]
            if not any(entry.table_id != 0 for entry in entries) or not leaves:
                ports = []
                for port in net.topology.ports[dpid]:
                    for hdr in arrivals[(dpid, port)]:
                        if (not any(entry.match.matches(hdr, port) for entry in staying)
                                or any(entry.match.matches(hdr, port) for entry in leaves)):
                            ports.append(port)
                            break
                found = tuple(ports)
        self._missing[key] = found
        return found

    def _entries(self, state: Sequence[int], dpid: int) -> list[Any] | None:
        """The entries switch ``dpid``'s table may hold before the controller acts (those now,
        those the flow-mods in its channel add), or None (a command that deletes or modifies)."""
        net = self.net
        entries = list(net.interned(net.slot_table[dpid])[state[net.slot_table[dpid]]])
        for msg in self.options.commands(state, dpid):
            if type(msg) is FlowMod:
                if msg.command != "add":
                    return None
                entries.append(flowtable.make_entry(msg.table_id, msg.priority, msg.match, msg.actions))
        return entries

    def arrivals(self, state: Sequence[int]) -> dict[tuple[int, int], frozenset[Header]]:
        """Per port of every switch, the headers of the packets that may arrive there on a
        path from ``state`` on which the controller does not act: those in its queue now;
        at a port hosts may be attached to, what they may send (:meth:`_from_hosts`); at a
        port linked to a switch, what that switch may forward out of its end of the link:
        the headers that may arrive at its ports and hit an entry (now or added by its
        channel) that outputs there or floods, the packets its channel's packet-outs and
        flow-mods release. Where a switch may send a packet through its table again or
        delete entries, every header that may exist (:meth:`headers`). Each switch's part
        (what a header arriving at a port leaves by, what its channel releases) is cached by
        the values of its table, channel and buffer."""
        last_state, found = self._arrived
        if last_state is state:
            return found
        net = self.net
        topo = net.topology
        universe = self.headers(state)
        sets: dict[tuple[int, int], set[Header]] = {}
        for dpid in topo.switches:
            hosted = self._hosted[dpid]
            for port in topo.ports[dpid]:
                queue = net.slot_port[(dpid, port)]
                here = set(self._queued(state, queue))
                if port in hosted:
                    here |= self._from_hosts(state, dpid, port, universe)
                sets[(dpid, port)] = here
        emitters: dict[tuple[int, int], set[Hashable]] = {key: set() for key in sets}
        moves = {dpid: self._switch_moves(state, dpid) for dpid in topo.switches}
        work = [(dpid, port, hdr) for (dpid, port), hdrs in sets.items() for hdr in hdrs]

        def send(source: Hashable, peer: Any, hdr: Header) -> None:
            key = (peer.node, peer.port)
            emitters[key].add(source)
            target = sets[key]
            if hdr not in target:
                target.add(hdr)
                work.append((peer.node, peer.port, hdr))

        def flood(source: Hashable, dpid: int) -> None:
            for hdr in universe:
                for peer in self._peers[dpid].values():
                    send(source, peer, hdr)

        for dpid in topo.switches:
            transfer, released = moves[dpid]
            command = SwitchProcessCommand(dpid)
            if released is None:
                flood(command, dpid)
                continue
            for port, hdr in released:
                send(command, self._peers[dpid][port], hdr)
        while work:
            dpid, port, hdr = work.pop()
            transfer, _released = moves[dpid]
            source = SwitchProcessPacket(dpid, port)
            outputs = transfer(port, hdr)
            if outputs is None:
                flood(source, dpid)
                continue
            for out_port, out_hdr in outputs:
                send(source, self._peers[dpid][out_port], out_hdr)
        found = {key: frozenset(value) for key, value in sets.items()}
        self._arrived = (state, found)
        self._emitters = {key: tuple(sorted(value, key=repr)) for key, value in emitters.items()}
        return found

    def _queued(self, state: Sequence[int], slot: int) -> frozenset[Header]:
        """The headers of the packets in queue ``slot`` (cached by its value)."""
        key = (slot, state[slot])
        found = self._queue_headers.get(key)
        if found is None:
            found = self._queue_headers[key] = frozenset(
                packet.hdr for packet in self.net.value(state, self.net.slot_names[slot]))
        return found

    def _switch_moves(self, state: Sequence[int], dpid: int) -> tuple[Any, Any]:
        """Switch ``dpid``'s part of :meth:`arrivals`, before the controller acts: a function
        of an arriving (port, header) giving the (port, header) pairs it may leave by towards
        a switch (None: any, with any header), and the (port, header) pairs of the packets
        its channel may release (None: any). Cached by its table, channel and buffer."""
        net = self.net
        key = (dpid, state[net.slot_table[dpid]], state[net.slot_cmdq[dpid]], state[net.slot_buffer[dpid]])
        found = self._moves.get(key)
        if found is not None:
            return found
        topo = net.topology
        peers = self._peers[dpid]
        entries = self._entries(state, dpid)

        def act(actions: Any, hdr: Header, in_port: int) -> list[tuple[int, Header]] | None:
            out: list[tuple[int, Header]] = []
            for action in actions:
                kind = type(action)
                if kind is SetField:
                    hdr = hdr._replace(**{action.field: action.value})
                elif kind is Output:
                    if action.port == TABLE:
                        return None
                    if action.port in peers:
                        out.append((action.port, hdr))
                elif kind is Flood:
                    out.extend((port, hdr) for port in peers if port != in_port)
                elif kind is not ToController:
                    return None
            return out

        answers: dict[tuple[int, Header], tuple[tuple[int, Header], ...] | None] = {}

        def transfer(port: int, hdr: Header) -> tuple[tuple[int, Header], ...] | None:
            known = answers.get((port, hdr), answers)
            if known is not answers:
                return known  # type: ignore[return-value]
            result: set[tuple[int, Header]] | None = set()
            if entries is None:
                result = None
            else:
                for entry in entries:
                    if entry.table_id != 0 or not entry.match.matches(hdr, port):
                        continue
                    done = None if entry.actions is None else act(entry.actions, hdr, port)
                    if done is None:
                        result = None
                        break
                    result.update(done)  # type: ignore[union-attr]
            answers[(port, hdr)] = value = None if result is None else tuple(sorted(result, key=repr))
            return value

        released: list[tuple[int, Header]] | None = []
        buffer = net.interned(net.slot_buffer[dpid])[state[net.slot_buffer[dpid]]]
        for msg in self.options.commands(state, dpid):
            kind = type(msg)
            if kind is PacketOut or (kind is FlowMod and msg.buffer_id is not None):
                hdrs = []
                if getattr(msg, "packet", None) is not None:
                    hdrs.append((msg.packet.hdr, msg.in_port))
                hdrs.extend((packet.hdr, in_port) for bid, in_port, packet in buffer if bid == msg.buffer_id)
                actions = msg.actions if kind is PacketOut or self._version == "1.0" else (Output(TABLE),)
                for hdr, in_port in hdrs:
                    done = act(actions or (), hdr, in_port)
                    if done is None:
                        released = None
                        break
                    released.extend(done)  # type: ignore[union-attr]
            if released is None:
                break
        found = self._moves[key] = (transfer, released)
        if len(self._moves) > 65536:
            self._moves.clear()
            self._moves[key] = found
        return found

    def _from_hosts(self, state: Sequence[int], dpid: int, port: int, universe: frozenset[Header]) -> set[Header]:
        """The headers of the packets that may arrive at ``dpid``:``port``, a port only hosts
        may be attached to: those in its queue now, and what those hosts may send (their
        scripts, their announcements when they move, their answers to packets addressed to
        them, among ``universe``)."""
        found = {packet.hdr for packet in self.net.value(state, self.net.slot_names[self.net.slot_port[(dpid, port)]])}
        for host in self._hosted[dpid][port]:
            found |= self._sent_by_host[host]
            for hdr in universe:
                if hdr.eth_dst == host:
                    found.add(hdr.reversed())
                elif hdr.eth_dst == BROADCAST:
                    found.add(Header(host, hdr.eth_src, hdr.ip_dst, hdr.ip_src, hdr.tp_dst, hdr.tp_src, hdr.ip_proto))
        return found

    @staticmethod
    def _forwards_only(entry: Any) -> bool:
        """Whether ``entry``'s actions only forward (outputs to ports, floods, set-fields)."""
        if entry.actions is None or entry.buffer is not None or entry.encap is not None:
            return False
        return all(type(action) is Flood or type(action) is SetField
                   or (type(action) is Output and action.port != TABLE) for action in entry.actions)

    def _controller_enablers(self, state: Sequence[int], event: Hashable) -> tuple[Hashable, ...]:
        """For a controller step of switch ``dpid``'s messages, dormant (its channel empty):
        the other controller events, and the events of the switch that may send it a
        message before the controller acts: its packet steps at ports where a packet may go
        to the controller (:meth:`_missing_ports`), its command step when the commands now
        in its channel may answer (:meth:`bounded`), its expiries and tie choices."""
        net = self.net
        dpid = event.dpid  # type: ignore[attr-defined]
        ctrlq = net.slot_ctrlq[dpid]
        found: list[Hashable] = [other for other in self._feeders if other != event]
        ports = self._missing_ports(state, dpid)
        found.extend(SwitchProcessPacket(dpid, port) for port in net.topology.ports[dpid]
                     if ports is None or port in ports)
        command = SwitchProcessCommand(dpid)
        bounded = self.bounded(state, command)
        if bounded is None or ctrlq in bounded[0].appends | bounded[0].writes:
            found.append(command)
        found.append(Standin("expiry", dpid))
        found.append(Standin("tie", dpid))
        found.extend(self.options.messengers(dpid))  # a link change's port-status
        now_state, enabled = self._now
        if now_state is not state:
            enabled = tuple(net.enabled(state))
        found.extend(other for other in enabled if type(other) in (SwitchEntryExpires, SwitchChoosesEntry)
                     and other.dpid == dpid)  # type: ignore[attr-defined]
        return tuple(found)

    def _packet_enablers(self, state: Sequence[int], event: Hashable) -> tuple[Hashable, ...] | None:
        """For a packet step at a port linked to switch ``n``, dormant (its port empty): the
        controller's events, and the events of ``n`` that may send a packet out of its end
        of the link before the controller acts (:meth:`arrivals`), with ``n``'s tie
        choices; None at a port hosts may be attached to."""
        dpid, port = event.dpid, event.port  # type: ignore[attr-defined]
        peer = self.net.topology.links.get((dpid, port))
        if peer is None or peer.is_host:
            return None
        self.arrivals(state)
        found: list[Hashable] = list(self._feeders)
        found.extend(self._emitters[(dpid, port)])
        found.append(Standin("tie", peer.node))
        now_state, enabled = self._now
        if now_state is not state:
            enabled = tuple(self.net.enabled(state))
        found.extend(other for other in enabled if type(other) is SwitchChoosesEntry
                     and other.dpid == peer.node)  # type: ignore[attr-defined]
        return tuple(found)

    def host_parts(self, host: str) -> tuple[int, int]:
        """The two locations of ``host``'s slot: what it sends, what it receives."""
        return self._sends[host], self._receives[host]

    def disabled_by(self, state: Sequence[int], event: Hashable) -> frozenset[int]:
        """For ``event`` not enabled in ``state``: locations it stays disabled until one of
        them changes (see the module docstring)."""
        net = self.net
        kind = type(event)
        own = self.options.disabled_by(state, event)
        if own is not None:
            return own
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
