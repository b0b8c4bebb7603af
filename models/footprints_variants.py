"""The footprints of the protocol variants beyond OpenFlow (partial-order reduction; see
:mod:`nice_attendre.models.footprints` for the network's and :mod:`nice_attendre.por` for
the contract).

Each variant's class (with faults, a threaded controller, command order any, --joins-first
or a monitor that keeps history, refused for now) takes OpenFlow's footprints (:class:`~nice_attendre.models.footprints.Footprints`)
and changes what the variant's handlers do differently; every state-dependent refinement
whose assumptions the variant breaks is turned off (its method answers None: the guard's
writers, or the static footprint).

Attendre (:mod:`~nice_attendre.models.protocols.attendre`):

* a switch's packet step writes its table: the Attendre Command a packet carries installs or
  updates a buffer action, a miss adds a buffer entry, an encap action is used once (it
  also writes the switch's variant state ``ext:``, the message sets' progress and the
  packets waiting at buffer actions, as OpenFlow's footprint already says);
* a command step's bounded footprint: OpenFlow's while its channel holds no message of a
  set; while the messages of sets in it finish none (the progress in ``ext:`` plus those
  messages stay below each set's size), OpenFlow's footprint of those commands that also
  reads and writes ``ext:``; otherwise the command step's whole footprint (the set's end
  re-matches the waiting packets through the table: anywhere);
* what may arrive at a port before the controller acts (:meth:`Footprints.arrivals`, behind
  a dormant packet step's enablers): a pure buffer entry (no actions) forwards nothing at a
  packet step (the packet waits); a command step whose channel holds a message of a set may
  send any packet anywhere (the set's end);
* a dormant controller step keeps OpenFlow's enablers: before the controller acts, a
  packet step at a port where every packet hits an entry that stays and forwards still
  sends no packet-in (an Attendre Command turns such an entry into a buffer action, which
  holds packets; only a set's last message, in a command step, removes it, and a command
  step that may finish a set is named, its bounded footprint being the whole one);
* a switch's tie choices, when its table does not tie: its command and packet steps (a
  packet step may install an entry: the command step alone is not enough), or, when no two
  entries of one table and priority whose matches overlap may be in its table before the
  controller acts (those now, those the flow-mods in its channel add, those the Attendre
  Commands for it anywhere in the network name, a miss's buffer entry), the controller's
  events, whichever the closure finds cheaper; when it ties, the writers of its table;
* a switch's expiries keep OpenFlow's enablers: only a command adds an entry with a
  timeout (a packet step's entries have none, an updated entry keeps its own), and an
  entry holding a buffer action expires only once its set ends, when the table is written.

Batched flow-mods (:mod:`~nice_attendre.models.protocols.batch`): a flow-mod goes to the
switch's storage table (``ext:``) and is applied by the flow-mod that reaches the threshold,
a barrier or the timer event (:class:`~nice_attendre.models.protocols.batch.BatchTimerFires`):

* the timer's footprint is a command step's without the pop, guarded by ``ext:``; its
  occurrence is observed as a switch step's; dormant (nothing stored), its enabler is the
  switch's command step (only a flow-mod stores);
* a command step's bounded footprint is OpenFlow's for the stored flow-mods and the
  commands in its channel together (any of them may apply the batch), with ``ext:``;
* while flow-mods are stored, a switch's tie choices and expiries have their table's
  writers as enablers (the timer may apply them), its packets may go anywhere in the
  arrivals, and a packet may go to the controller at any port; while nothing is stored,
  OpenFlow's (the channel's flow-mods are applied as they would be);
* the timer is an enabler of a dormant controller step, or of a packet step at a link to
  its switch, whenever that switch's command step is one (it applies what the command
  step's bounded footprint covers).

Switch buffers (:mod:`~nice_attendre.models.protocols.buffer`): at packet granularity
OpenFlow's events with a capacity (a packet step reads the buffer and ``ext:``, both its
own); at flow granularity a missed packet joins its flow's queue in ``ext:``:

* a release takes the flow's packets from ``ext:`` (a command step's bounded footprint
  reads and writes it); while flow buffers hold packets, a command step that releases may
  send any packet anywhere in the arrivals;
* a timeout (:class:`~nice_attendre.models.protocols.buffer.FlowBufferTimeout`) is the
  packet step at its port, another way (its footprint), guarded also by the table and
  ``ext:`` (whether the head packet joins a buffered flow), its occurrence observed; the
  switch's timeouts are among a dormant controller step's enablers (each sends a packet-in).

Packet-in filtering (:mod:`~nice_attendre.models.protocols.pif`): a packet step at a miss reads
and writes the pending tables (``ext:``, its own) and sends a packet-in, drops the packet or
floods it:

* a meter drop (:class:`~nice_attendre.models.protocols.pif.MeterDropsPacket`) is the packet
  step at its port, another way, guarded also by the table and ``ext:``; a pending entry's
  expiry reads and writes ``ext:`` only (dormant, one stand-in per switch,
  :class:`PendingStandin`); both observed as switch steps;
* with ``remove=flow-mod`` a flow-mod also writes ``ext:`` (the bounded footprint says so);
* where a pending flow rule floods, a packet arriving at a port may leave by every other port
  (the arrivals);
* a dormant controller step keeps OpenFlow's enablers (a switch sends no packet-in it would
  not send under OpenFlow: filtering only drops, floods or meters packets that miss).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Hashable, Sequence

from nice_attendre.models import flowtable
from nice_attendre.models.events import SwitchProcessCommand, SwitchProcessPacket
from nice_attendre.models.footprints import HISTORY_MONITORS, Footprints, Standin, _fp
from nice_attendre.models.messages import BUFFER_PRIORITY, FlowMod
from nice_attendre.models.packet import AttendreCommand
from nice_attendre.models.protocols.batch import BatchTimerFires
from nice_attendre.models.protocols.buffer import FlowBufferTimeout
from nice_attendre.models.protocols.pif import MeterDropsPacket, PendingEntryExpires
from nice_attendre.por import Alternatives, Footprint

if TYPE_CHECKING:
    from nice_attendre.models.network import Network


class VariantFootprints(Footprints):
    """What the variants' footprints have in common: the options OpenFlow's footprints support
    (models/footprints_options.py) are refused with them, not yet checked."""

    def unsupported(self) -> str | None:
        found = super().unsupported()
        if found is not None:
            return found
        net = self.net
        name = net.protocol.name
        options = [what for what, used in (
            ("faults", net.faults is not None), ("a threaded controller", net.threaded),
            ("command order any", net.channels.batched or net.options.command_order != "fifo"),
            ("--joins-first", getattr(net.options, "joins_first", False)),
            ("a monitor that keeps history", bool(set(HISTORY_MONITORS) & set(net.options.monitors))))
            if used]
        return f"--por does not support protocol {name} with {options[0]} yet" if options else None


class AttendreFootprints(VariantFootprints):
    """Attendre's footprints (see the module docstring)."""

    def _compute(self, event: Hashable) -> Footprint:
        found = super()._compute(event)
        if type(event) is SwitchProcessPacket:
            return replace(found, writes=found.writes | {self.net.slot_table[event.dpid]})
        return found

    def bounded(self, state: Sequence[int], event: Hashable) -> tuple[Footprint, tuple[Hashable, ...]] | None:
        """OpenFlow's while the command channel holds no message of a set; otherwise, when no
        set finishes with the messages in the channel (the switch's ``ext:`` progress plus
        those messages stay below each set's size), OpenFlow's footprint of the same commands
        that also reads and writes ``ext:`` (the count of the set's messages); when one may
        finish, the command step's whole footprint (the waiting packets are re-matched)."""
        if type(event) is not SwitchProcessCommand:
            return None
        dpid = event.dpid  # type: ignore[attr-defined]
        if not self._sets_in_channel(state, dpid):
            return super().bounded(state, event)
        net = self.net
        ext = net.slot_ext[dpid]
        key = (dpid, state[net.slot_cmdq[dpid]], state[ext])
        found = self._bounded_sets.get(key)
        if found is None:
            commands = net.value(state, f"cmdq:{dpid}")
            progress = net.interned(ext)[state[ext]]
            counts: dict[Any, list[Any]] = {}
            for msg in commands:
                ms = getattr(msg, "ms", None)
                if ms is not None:
                    counts.setdefault(ms.version, []).append(ms)
            static = self.footprint(state, event)
            finishing = False
            for version, sets in counts.items():
                record = progress.progress(version)
                done = record.processed if record is not None else 0
                if any(done + len(sets) >= ms.size for ms in sets):
                    finishing = True
            found = static
            if not finishing:
                plain = super()._commands_footprint(dpid, commands)
                if plain is not static and plain != static:
                    found = replace(plain, reads=plain.reads | {ext}, writes=plain.writes | {ext})
            self._bounded_sets[key] = found
        return found, self._feeders

    def __init__(self, net: "Network") -> None:
        super().__init__(net)
        # the packets waiting at buffer actions carry headers too
        self._carriers = tuple(sorted(set(self._carriers) | set(net.slot_ext.values())))
        self._finishing: dict[int, bool] = {}
        self._untied_here: dict[Any, bool] = {}
        self._bounded_sets: dict[tuple[int, int, int], Footprint] = {}
        self._ac_cache: dict[tuple[int, int], frozenset[Any]] = {}

    def enablers(self, state: Sequence[int], event: Hashable) -> Any:
        """OpenFlow's, but a switch's tie choices: when its table ties, the writers of its
        table; otherwise the switch's command and packet steps (only they change its table in
        a way that may make a tie: an expiry removes an entry) and, when neither its table,
        nor the flow-mods in its channel, nor the entries the Attendre Commands now anywhere
        in the network would install there, nor a miss's buffer entry could tie
        (:meth:`_cannot_tie_here`), as an alternative, the controller's events."""
        if type(event) is Standin and event.kind == "tie":  # type: ignore[attr-defined]
            dpid = event.dpid  # type: ignore[attr-defined]
            net = self.net
            key = (dpid, state[net.slot_table[dpid]], state[net.slot_cmdq[dpid]], self._acs(state).get(dpid))
            found = self._untied_here.get(key)
            if found is None:
                found = self._untied_here[key] = self._cannot_tie_here(state, dpid, key[3] or ())
            table = net.slot_table[dpid]
            tying = self._tying.get(state[table])
            if tying is None:
                tying = self._tying[state[table]] = flowtable.may_tie(net.interned(table)[state[table]])
            if tying:
                return None
            # a table that cannot tie now ties only once the switch's own events change it
            own = (SwitchProcessCommand(dpid),) + tuple(SwitchProcessPacket(dpid, port)
                                                        for port in net.topology.ports[dpid])
            return Alternatives((own, self._feeders)) if found else own
        return super().enablers(state, event)

    def _acs(self, state: Sequence[int]) -> dict[int, frozenset[Any]]:
        """Per switch, the Attendre Commands for it anywhere in ``state`` (packets, their
        encapsulations in entries, messages, waiting packets)."""
        found: dict[int, set[Any]] = {}
        for slot in self._carriers:
            for ac in self._acs_in(state, slot):
                found.setdefault(ac.dpid, set()).add(ac)
        return {dpid: frozenset(acs) for dpid, acs in found.items()}

    def _acs_in(self, state: Sequence[int], slot: int) -> frozenset[Any]:
        key = (slot, state[slot])
        found = self._ac_cache.get(key)
        if found is None:
            acs = set()
            work = [self.net.value(state, self.net.slot_names[slot])]
            while work:
                item = work.pop()
                if type(item) is AttendreCommand:
                    acs.add(item)
                elif isinstance(item, (tuple, list, frozenset)):
                    work.extend(item)
                elif hasattr(item, "__dataclass_fields__"):
                    work.extend(getattr(item, name) for name in item.__dataclass_fields__)
            found = self._ac_cache[key] = frozenset(acs)
        return found

    def _cannot_tie_here(self, state: Sequence[int], dpid: int, acs: Any) -> bool:
        """Whether no two entries of one table and priority whose matches overlap may be in
        switch ``dpid``'s table before the controller acts (whatever their behaviour: an
        Attendre Command or a set's end changes an entry's buffer action, a packet its encap):
        those now, those the flow-mods in its channel add, those the Attendre Commands for it
        name. A miss's buffer entry has the highest priority and the packet's exact match: it
        overlaps only an entry at that priority (then: may tie)."""
        net = self.net
        keys = [(entry.table_id, entry.neg_priority, entry.match,
                 entry.buffer is not None and entry.actions is None and entry.match.is_exact)
                for entry in net.interned(net.slot_table[dpid])[state[net.slot_table[dpid]]]]
        for msg in net.value(state, f"cmdq:{dpid}"):
            if type(msg) is FlowMod:
                if msg.command not in ("add", "modify-or-add", "delete", "delete-strict"):
                    return False
                if msg.command[0] != "d":
                    keys.append((msg.table_id, -msg.priority, msg.match, False))
        keys.extend((ac.table_id, -ac.priority, ac.match, False) for ac in acs)
        if any(-neg == BUFFER_PRIORITY and not buffer_entry for _t, neg, _m, buffer_entry in keys):
            return False
        return not any(a[0] == b[0] and a[1] == b[1] and flowtable.overlap(a[2], b[2])
                       for i, a in enumerate(keys) for b in keys[i + 1:])

    def _sets_in_channel(self, state: Sequence[int], dpid: int) -> bool:
        """Whether switch ``dpid``'s command channel holds a message of a message set (whose
        processing may finish the set and re-match the packets waiting at its buffer actions)."""
        slot = self.net.slot_cmdq[dpid]
        found = self._finishing.get(state[slot])
        if found is None:
            found = self._finishing[state[slot]] = any(
                getattr(msg, "ms", None) is not None for msg in self.net.value(state, f"cmdq:{dpid}"))
        return found

    def _entries(self, state: Sequence[int], dpid: int) -> list[Any] | None:
        """OpenFlow's, without the pure buffer entries (no actions: a packet hitting one waits
        at the switch, it goes nowhere until its set ends, in a command step)."""
        found = super()._entries(state, dpid)
        if found is None:
            return None
        return [entry for entry in found if entry.actions is not None or entry.buffer is None]

    def _switch_moves(self, state: Sequence[int], dpid: int) -> tuple[Any, Any]:
        """OpenFlow's, but the command step may send any packet anywhere when its channel
        holds a message of a set: finishing the set re-matches the waiting packets (and those
        still to come to a buffer action) through the table."""
        transfer, released = super()._switch_moves(state, dpid)
        if released is not None and self._sets_in_channel(state, dpid):
            released = None
        return transfer, released



class BatchFootprints(VariantFootprints):
    """Batched flow-mods' footprints (see the module docstring)."""

    observed = Footprints.observed | {BatchTimerFires}

    def __init__(self, net: "Network") -> None:
        super().__init__(net)
        timers = net.protocol.settings["timer"] == "event"
        #: per switch, its timer event (none with timer=never)
        self._timers = {dpid: (BatchTimerFires(dpid),) if timers else () for dpid in net.topology.switches}
        self._universe = self._universe + tuple(event for events in self._timers.values() for event in events)
        self._stored_empty: dict[int, bool] = {}
        self._bounded_stored: dict[tuple[int, int, int], Footprint] = {}

    def _stored(self, state: Sequence[int], dpid: int) -> bool:
        """Whether switch ``dpid``'s storage table holds flow-mods."""
        slot = self.net.slot_ext[dpid]
        found = self._stored_empty.get(state[slot])
        if found is None:
            found = self._stored_empty[state[slot]] = bool(self.net.interned(slot)[state[slot]])
        return found

    def _compute(self, event: Hashable) -> Footprint:
        if type(event) is BatchTimerFires:  # applies the stored flow-mods: a command step's footprint, no pop
            dpid = event.dpid
            own, out = self._switch(dpid)
            return _fp(reads=own | self._reads_of_switch(dpid), writes=own, appends=out,
                       guard=(self.net.slot_ext[dpid],), adds=self._adds)
        return super()._compute(event)

    def bounded(self, state: Sequence[int], event: Hashable) -> tuple[Footprint, tuple[Hashable, ...]] | None:
        """OpenFlow's footprint of the flow-mods stored and the commands in the channel (a
        flow-mod or a barrier may apply them all), reading and writing the storage table."""
        if type(event) is not SwitchProcessCommand:
            return None
        net = self.net
        dpid = event.dpid  # type: ignore[attr-defined]
        ext = net.slot_ext[dpid]
        key = (dpid, state[net.slot_cmdq[dpid]], state[ext])
        found = self._bounded_stored.get(key)
        if found is None:
            static = self.footprint(state, event)
            plain = self._commands_footprint(dpid, tuple(net.interned(ext)[state[ext]])
                                             + tuple(net.value(state, f"cmdq:{dpid}")))
            found = static if plain == static else replace(plain, reads=plain.reads | {ext},
                                                           writes=plain.writes | {ext})
            self._bounded_stored[key] = found
        return found, self._feeders

    def _switch_moves(self, state: Sequence[int], dpid: int) -> tuple[Any, Any]:
        """OpenFlow's while the storage table is empty (the channel's flow-mods are applied as
        they would be); otherwise any packet anywhere."""
        if self._stored(state, dpid):
            return (lambda port, hdr: None), None
        return super()._switch_moves(state, dpid)

    def _missing_ports(self, state: Sequence[int], dpid: int) -> tuple[int, ...] | None:
        if self._stored(state, dpid):
            return None
        return super()._missing_ports(state, dpid)

    def _controller_enablers(self, state: Sequence[int], event: Hashable) -> tuple[Hashable, ...]:
        """OpenFlow's, and the switch's timer when its command step is among them (applying the
        stored flow-mods does what the command step's bounded footprint, which covers them,
        says: a timer applies no more than a command step may)."""
        found = super()._controller_enablers(state, event)
        dpid = event.dpid  # type: ignore[attr-defined]
        return found + self._timers[dpid] if SwitchProcessCommand(dpid) in found else found

    def _packet_enablers(self, state: Sequence[int], event: Hashable) -> tuple[Hashable, ...] | None:
        """OpenFlow's, and the timer of the switch at the other end when its command step is
        among them (applying a batch releases the buffered packets of its flow-mod/packet-outs,
        which the arrivals count as the command step's)."""
        found = super()._packet_enablers(state, event)
        if found is None:
            return None
        peer = self.net.topology.links[(event.dpid, event.port)]  # type: ignore[attr-defined]
        return found + self._timers[peer.node] if SwitchProcessCommand(peer.node) in found else found

    def enablers(self, state: Sequence[int], event: Hashable) -> Any:
        """OpenFlow's, but a switch's tie choices and expiries while it stores flow-mods (its
        timer may apply them): the writers of its table; a switch's timer, dormant (nothing
        stored): its command step (only a flow-mod stores)."""
        if type(event) is BatchTimerFires:
            return (SwitchProcessCommand(event.dpid),)
        if type(event) is Standin and self._stored(state, event.dpid):  # type: ignore[attr-defined]
            return None
        return super().enablers(state, event)


class BufferFootprints(VariantFootprints):
    """Switch buffers' footprints (see the module docstring)."""

    observed = Footprints.observed | {FlowBufferTimeout}

    def __init__(self, net: "Network") -> None:
        super().__init__(net)
        protocol = net.protocol
        self._flow = bool(protocol.flow)
        timeouts = protocol.settings["timeout"] == "event"
        #: per switch, its timeout events (one per port; none with timeout=never)
        self._timeouts = {dpid: tuple(FlowBufferTimeout(dpid, port) for port in net.topology.ports[dpid])
                          if timeouts else () for dpid in net.topology.switches}
        self._universe = self._universe + tuple(event for events in self._timeouts.values() for event in events)
        if self._flow:  # the packets a flow buffer holds carry headers too
            self._carriers = tuple(sorted(set(self._carriers) | set(net.slot_ext.values())))
        self._buffering: dict[int, bool] = {}

    def _compute(self, event: Hashable) -> Footprint:
        if type(event) is FlowBufferTimeout:  # the packet step at its port, another way
            dpid = event.dpid
            found = self.footprint((), SwitchProcessPacket(dpid, event.port))
            return replace(found, guard=found.guarded | {self.net.slot_table[dpid], self.net.slot_ext[dpid]})
        return super()._compute(event)

    def _commands_footprint(self, dpid: int, commands: Sequence[Any]) -> Footprint:
        """OpenFlow's; at flow granularity a release takes the flow's packets from ``ext:``."""
        found = super()._commands_footprint(dpid, commands)
        static = self.footprint((), SwitchProcessCommand(dpid))
        if not self._flow or found == static:
            return found
        ext = self.net.slot_ext[dpid]
        return replace(found, reads=found.reads | {ext}, writes=found.writes | {ext})

    def _switch_moves(self, state: Sequence[int], dpid: int) -> tuple[Any, Any]:
        """OpenFlow's; at flow granularity, while flow buffers hold packets, the command step
        may send any packet anywhere (a release sends every packet of the flow)."""
        transfer, released = super()._switch_moves(state, dpid)
        if self._flow and released is not None and self._holds(state, dpid):
            released = None
        return transfer, released

    def _holds(self, state: Sequence[int], dpid: int) -> bool:
        slot = self.net.slot_ext[dpid]
        found = self._buffering.get(state[slot])
        if found is None:
            found = self._buffering[state[slot]] = bool(self.net.interned(slot)[state[slot]])
        return found

    def _controller_enablers(self, state: Sequence[int], event: Hashable) -> tuple[Hashable, ...]:
        """OpenFlow's and the switch's timeouts (each sends a packet-in again)."""
        return super()._controller_enablers(state, event) + self._timeouts[event.dpid]  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class PendingStandin:
    """A dormant stand-in for the expiries of switch ``dpid``'s pending entries (packet-in
    filtering): never enabled itself."""

    dpid: int

    def stands_for(self, event: Hashable) -> bool:
        """Whether ``event`` is one of the events this stands in for."""
        return type(event) is PendingEntryExpires and event.dpid == self.dpid


class FilteringFootprints(VariantFootprints):
    """Packet-in filtering's footprints (see the module docstring)."""

    observed = Footprints.observed | {MeterDropsPacket, PendingEntryExpires}

    def __init__(self, net: "Network") -> None:
        super().__init__(net)
        protocol = net.protocol
        switches = net.topology.switches
        meters = protocol.global_limit or any(rule.action == "rate-limit" for rule in protocol.rules)
        expiries = protocol.settings["expire"] == "event"
        self._remove = protocol.settings["remove"] == "flow-mod"
        self._floods = any(rule.action == "flood" for rule in protocol.rules)
        self._universe = self._universe + tuple(
            MeterDropsPacket(dpid, port) for dpid in switches for port in net.topology.ports[dpid] if meters
        ) + tuple(PendingStandin(dpid) for dpid in switches if expiries)

    def _compute(self, event: Hashable) -> Footprint:
        kind = type(event)
        if kind is MeterDropsPacket:  # the packet step at its port, another way
            dpid = event.dpid
            found = self.footprint((), SwitchProcessPacket(dpid, event.port))
            return replace(found, guard=found.guarded | {self.net.slot_table[dpid], self.net.slot_ext[dpid]})
        if kind is PendingEntryExpires or kind is PendingStandin:  # the pending tables only
            ext = self.net.slot_ext[event.dpid]
            return _fp(reads=(ext,), writes=(ext,), guard=(ext,), adds=self._adds)
        return super()._compute(event)

    def _commands_footprint(self, dpid: int, commands: Sequence[Any]) -> Footprint:
        """OpenFlow's; with ``remove=flow-mod`` a flow-mod also removes pending entries."""
        found = super()._commands_footprint(dpid, commands)
        if not self._remove or not any(type(msg) is FlowMod for msg in commands):
            return found
        ext = self.net.slot_ext[dpid]
        return replace(found, reads=found.reads | {ext}, writes=found.writes | {ext})

    def _switch_moves(self, state: Sequence[int], dpid: int) -> tuple[Any, Any]:
        """OpenFlow's; where a pending flow rule floods, a packet may also leave by every
        other port (it may miss and repeat a pending entry)."""
        transfer, released = super()._switch_moves(state, dpid)
        if not self._floods:
            return transfer, released
        peers = tuple(self._peers[dpid])

        def flooding(port: int, hdr: Any) -> Any:
            out = transfer(port, hdr)
            if out is None:
                return None
            return tuple(out) + tuple((other, hdr) for other in peers if other != port)
        return flooding, released


#: Each supported variant's footprints (OpenFlow's and OpenFlow-B's: the base class).
VARIANTS: dict[str, type[Footprints]] = {"attendre": AttendreFootprints, "batch": BatchFootprints,
                                         "buffer": BufferFootprints, "pif": FilteringFootprints}


def variant_class(net: "Network") -> type[Footprints] | None:
    """The footprints class of ``net``'s protocol variant, or None (OpenFlow's)."""
    return VARIANTS.get(net.protocol.name)
