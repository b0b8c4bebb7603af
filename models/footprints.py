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
        history = sorted(set(HISTORY_MONITORS) & set(net.options.monitors))
        if history:
            return f"--por does not support the {history[0]} property yet (its monitor keeps history)"
        return None

    def dormant(self, state: Sequence[int]) -> list[Hashable]:
        """Every event of the network that is not enabled in ``state``, and the stand-ins."""
        enabled = set(self.net.enabled(state))
        return [event for event in self._universe if event not in enabled]

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
