"""The footprints the network's options add (see :mod:`nice_attendre.models.footprints`):
faults, command order any, a threaded controller, --joins-first and the monitors that keep
history (issue 30). :class:`OptionFootprints` is called from
:class:`~nice_attendre.models.footprints.Footprints` at a few hooks: the fault events' own
footprints, the reads the options add to other events, the locations a slot is split into,
the dormant stand-ins of the options' events, what keeps them disabled, and whether the
state-dependent refinements (bounded footprints, named enablers) still hold.

Faults (:mod:`nice_attendre.models.faults`). The ``faults`` slot is split into locations: one
per kind's budget and one for the links that are down (``down``). Then:

* a link fault (loss, duplicate, reorder) on the queue into a switch port or a host
  **writes** that queue (it is not a FIFO pop or append: it drops, copies or swaps items)
  and reads and writes its kind's budget; guarded by both;
* a link change (down or up) reads and writes the ``link`` budget and ``down``; going down
  it empties (writes) the queues into both ends (a host's inbox: the host's where, when it
  moves, is read), and each end's switch appends a port-status to its controller channel;
* a control loss pops the head of a switch's command channel or controller channel (the
  head is what it takes) and reads and writes the ``control`` budget;
* a restart writes its switch's table, buffer, variant state and command channel and the
  ``restart`` budget, then runs the app's ``on_switch_join``: the controller's footprint
  (reads and writes the app's and platform's state, appends to every command channel);
* every event that may put a packet on a link (a host's send, answer and move, a receive
  that answers at once, a switch's
  packet and command steps and tie choices) reads ``down`` (a packet sent into a link that
  is down is lost).

A fault event whose kind's budget is spent never happens again (budgets only fall): it is
disabled for good. The state-dependent refinements of :mod:`~nice_attendre.models.footprints`
(bounded command steps, the named enablers of dormant controller and packet steps, of tie
choices and expiries) hold with faults, given two more kinds of enablers: a restart runs the
app (the controller acts: it may send any command to any switch, after the switch's table
and channel were emptied), so the restarts count among the controller's events (the feeders
of every command channel, the enablers of what may happen once the controller acts); a link
change sends each end's controller a port-status, so it enables a dormant controller step
of those switches. The other faults only take packets and commands away, copy a packet
already queued or reorder a queue: no header may arrive where it could not, no entry is
added that could not be. A command step's bounded footprint reads whether a link is down.

Command order any (:mod:`nice_attendre.models.channels`): a command channel holds batches,
each barrier-delimited segment kept sorted, and a switch may take any command a barrier does
not hold back (its events are named by batch and position). A controller's send re-sorts
the channel and a command step takes an item anywhere in it: both read and write the
channel (a send shifts the positions that name the command steps: they do not commute), as
does a control loss towards the switch. The refinements (bounded command steps, named
enablers) read a channel's commands as a set (which entries they may add, which packets they
may release, whether one deletes): they hold, given the commands batch after batch
(:meth:`OptionFootprints.commands`), and a switch's command step named as an enabler stands
for every command event of the switch enabled (:meth:`OptionFootprints.expand`).

--joins-first: before any host acted, a host's event is enabled only once every command
channel and every channel to the controller is empty, and a host's first event lets every
host act from then on. Until a host acted (its slot still initial), a host's events read,
and are guarded by, every control channel and every host's parts (the state-dependent part:
the network's footprints are then not the same in every state); from then on, their own.
The refinements stay: the option only takes behaviours away.

The monitors that keep history (``one-packet-in-per-flow``, ``direct-paths``,
``strict-direct-paths``): a switch's step that may send a packet-in (its packet and command
steps, tie choices) reads and writes the ``history`` slot (the flows that caused one) and,
under the direct-paths monitors, reads the ``expired`` slot (the excused packets) and what
every host received (whether the packet's destination has it); an entry's expiry reads what
every host sent and received and reads and writes ``expired`` (its flows start over); a
host's send, answer or receive marks the packets it sends from what its peers received and
``expired``, and a receive writes ``expired`` (a flow established again). Switch steps that
send no packet-in do not touch them: their occurrences say so. A command step's bounded
footprint that may answer the controller gets the packet-in's reads and writes.

A threaded controller: each handler call's commands to a switch form a batch of their own
(under ``per-switch`` threads, joined to the waiting batch of the call's origin switch), the
switch taking the next command of any batch: the command channels are batched, as above. Its
handler calls are the single-threaded controller's events (they read and write the app's and
the platform's state); under ``any`` threads a switch's messages to the controller are kept
sorted and the controller takes any of them: a switch's message and a controller step read
and write that channel too.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Hashable, Iterable, Sequence

from nice_attendre.models.events import (HostAnswer, HostMove, HostReceive, HostSend, SwitchEntryExpires,
                                         SwitchProcessCommand, SwitchProcessPacket)
from nice_attendre.models.faults import KINDS, ControlLoss, LinkChange, LinkFault, SwitchRestart
from nice_attendre.models.protocols.ties import SwitchChoosesEntry
from nice_attendre.por import Alternatives, Footprint

if TYPE_CHECKING:
    from nice_attendre.models.footprints import Footprints

#: The events that may put a packet on a link (they read whether it is down).
_SENDERS = frozenset({HostSend, HostAnswer, HostMove, SwitchProcessPacket, SwitchProcessCommand, SwitchChoosesEntry})
_FAULT_EVENTS = (LinkFault, LinkChange, ControlLoss, SwitchRestart)
_HOST_EVENTS = (HostSend, HostAnswer, HostReceive, HostMove)
#: The switch's steps that may send a packet-in.
_SWITCH_STEPS = (SwitchProcessPacket, SwitchProcessCommand, SwitchChoosesEntry)


def _fp(reads: Any = (), writes: Any = (), appends: Any = (), pops: Any = (), guard: Any = None,
        adds: Any = ()) -> Footprint:
    return Footprint(frozenset(reads), frozenset(writes), frozenset(appends), frozenset(pops),
                     None if guard is None else frozenset(guard), frozenset(adds))


class OptionFootprints:
    """The footprints one network's options add (see the module docstring)."""

    def __init__(self, fps: "Footprints") -> None:
        self.fps = fps
        net = fps.net
        self.net = net
        #: the first location after the slots and the hosts' parts
        base = len(net.slot_names) + 2 * len(net.topology.hosts)
        self.faults = net.faults
        #: slot -> the locations it is split into (beyond the hosts')
        self.parts: dict[int, frozenset[int]] = {}
        self._budget: dict[str, int] = {}
        self._down = -1
        if self.faults is not None:
            self._budget = {kind: base + index for index, kind in enumerate(KINDS)}
            self._down = base + len(KINDS)
            self.parts[net.slot_faults] = frozenset(self._budget.values()) | {self._down}
        channels = net.channels
        #: channels that are no FIFOs under the options: a command channel of batches (command
        #: order any, a threaded controller), a controller channel kept sorted (``any`` threads)
        rewritten = set(net.slot_cmdq.values()) if channels.batched else set()
        if channels.any_handling:
            rewritten |= set(net.slot_ctrlq.values())
        self._rewritten = frozenset(rewritten)
        # the monitors that keep history (see the module docstring)
        hosts = net.topology.hosts
        for host in hosts:
            self.parts[net.slot_host[host]] = frozenset(fps.host_parts(host))
        self._history = net.slot_history
        self._expired = net.slot_expired
        self._all_receives = frozenset(fps._receives[host] for host in hosts)
        self._all_sends = frozenset(fps._sends[host] for host in hosts)
        self._ctrlqs = frozenset(net.slot_ctrlq.values())
        #: --joins-first: the host slots with their initial values, and what the hosts'
        #: events read before any of them acted (every host's parts, every control channel)
        self.startup: tuple[tuple[int, int], ...] | None = None
        self._startup_reads: frozenset[int] = frozenset()
        self._at_startup: dict[Hashable, Footprint] = {}
        startup = getattr(net, "_startup", None)
        if startup is not None:
            self.startup = startup[0]
            self._startup_reads = (frozenset(fps._sends.values()) | frozenset(fps._receives.values())
                                   | frozenset(startup[1]))
            # the hosts' footprints differ before and after the first host acts
            net.static_footprints = False
        #: whether the refinements hold (every option here keeps them; see the module docstring)
        self.refined = True
        self._batched = channels.batched

    # ---- what stays refused --------------------------------------------------------------

    def unsupported(self) -> str | None:
        """The options --por does not support yet, or None."""
        return None

    # ---- hooks ---------------------------------------------------------------------------

    def universe(self) -> list[Hashable]:
        """The options' events, for the dormant stand-ins (each may be enabled later)."""
        found: list[Hashable] = []
        faults = self.faults
        if faults is None:
            return found
        net = self.net
        budgets = dict(zip(KINDS, faults.budgets))
        for kind in ("loss", "duplicate", "reorder"):
            if budgets[kind]:
                found.extend(LinkFault(kind, at) for at, _slot in faults.links)
        if budgets["link"]:
            found.extend(LinkChange(dpid, port, up) for dpid, port in faults.ends for up in (False, True))
        if budgets["control"]:
            found.extend(ControlLoss(dpid, way) for dpid in net.topology.switches for way in (True, False))
        if budgets["restart"]:
            found.extend(SwitchRestart(dpid) for dpid in net.topology.switches)
        return found

    def adjust(self, event: Hashable, fp: Footprint) -> Footprint:
        """``fp`` (the footprint :class:`Footprints` gives ``event``) with the reads the
        options add: ``down`` for an event that may put a packet on a link; a pop from or an
        append to a channel that is no FIFO is a read and a write; the history monitors'
        slots and the hosts' parts they read."""
        moved = (fp.pops | fp.appends) & self._rewritten
        if moved:
            fp = Footprint(fp.reads | moved, fp.writes | moved, fp.appends - moved, fp.pops - moved, fp.guard, fp.adds)
        fp = self._history_reads(event, fp)
        if self._down < 0:
            return fp
        kind = type(event)
        if (kind in _SENDERS or (kind.__name__ == "Standin" and getattr(event, "kind", None) == "tie")
                or (kind is HostReceive and event.host in self.net.hosts.atomic_answers)):  # type: ignore[attr-defined]
            return Footprint(fp.reads | {self._down}, fp.writes, fp.appends, fp.pops, fp.guard, fp.adds)
        return fp

    def _history_reads(self, event: Hashable, fp: Footprint) -> Footprint:
        """``fp`` with what the monitors that keep history make ``event`` read and write (see
        the module docstring)."""
        history, expired = self._history, self._expired
        if history < 0 and expired < 0:
            return fp
        kind = type(event)
        standin = getattr(event, "kind", None) if kind.__name__ == "Standin" else None
        reads: set[int] = set()
        writes: set[int] = set()
        if kind in _SWITCH_STEPS or standin == "tie":  # a packet-in
            if history >= 0:
                reads.add(history)
                writes.add(history)
            if expired >= 0:
                reads |= self._all_receives | {expired}
        elif kind is SwitchEntryExpires or standin == "expiry":
            if expired >= 0:
                reads |= self._all_sends | self._all_receives | {expired}
                writes.add(expired)
        elif kind in (HostSend, HostAnswer, HostReceive) and expired >= 0:
            reads |= self._all_receives | {expired}  # marking a packet sent
            if kind is HostReceive:  # a packet arrived: its flow is established again
                writes.add(expired)
        if not reads and not writes:
            return fp
        return Footprint(fp.reads | reads, fp.writes | writes, fp.appends, fp.pops, fp.guard, fp.adds)

    def expand(self, state: Sequence[int], named: Any) -> Any:
        """``named`` enablers (or :class:`~nice_attendre.por.Alternatives` of them) with a
        switch's command step, under batched channels, standing for every command event of
        the switch enabled in ``state`` (each takes another command)."""
        if named is None or not self._batched:
            return named
        if type(named) is Alternatives:
            return Alternatives(self.expand(state, option) for option in named)
        if not any(type(event) is SwitchProcessCommand for event in named):
            return named
        now_state, enabled = self.fps._now
        if now_state is not state:
            enabled = tuple(self.net.enabled(state))
        found = list(named)
        dpids = {event.dpid for event in named if type(event) is SwitchProcessCommand}
        found.extend(event for event in enabled if type(event) is SwitchProcessCommand and event.dpid in dpids
                     and event not in named)
        return tuple(found)

    def commands(self, state: Sequence[int], dpid: int) -> tuple[Any, ...]:
        """The commands in switch ``dpid``'s channel in ``state``: a FIFO's in order, a
        batched channel's batch after batch (the refinements read them as a set: which
        entries they may add, which packets they may release, whether one deletes)."""
        value = self.net.value(state, f"cmdq:{dpid}")
        if not self._batched:
            return value  # type: ignore[no-any-return]
        return tuple(msg for batch in value for msg in batch)

    def widen_bounded(self, fp: Footprint) -> Footprint:
        """A command step's bounded footprint with what its packet-ins (when it may send to
        the controller) make it read and write under the history monitors, and whether a
        link is down (a packet it sends is lost then); a channel that is no FIFO read and
        written."""
        moved = (fp.pops | fp.appends) & self._rewritten
        if moved:
            fp = Footprint(fp.reads | moved, fp.writes | moved, fp.appends - moved, fp.pops - moved, fp.guard, fp.adds)
        if self._down >= 0:
            fp = Footprint(fp.reads | {self._down}, fp.writes, fp.appends, fp.pops, fp.guard, fp.adds)
        if (self._history < 0 and self._expired < 0) or not fp.appends & self._ctrlqs:
            return fp
        return self._history_reads(SwitchProcessCommand(0), fp)

    def feeders(self) -> tuple[Hashable, ...]:
        """Events that act as the controller does, besides its own: a switch's restart runs
        the app's ``on_switch_join`` (it may send any command to any switch), after emptying
        the switch's table and command channel."""
        if self.faults is None or not self.faults.budgets[KINDS.index("restart")]:
            return ()
        return tuple(SwitchRestart(dpid) for dpid in self.net.topology.switches)

    def messengers(self, dpid: int) -> tuple[Hashable, ...]:
        """The options' events that may send switch ``dpid``'s controller a message besides
        the switch's own steps: a link change at one of its ports (a port-status)."""
        if self.faults is None or not self.faults.budgets[KINDS.index("link")]:
            return ()
        net = self.net
        found = []
        for end in self.faults.ends:
            peer = net.topology.links[end]
            if end[0] == dpid or (not peer.is_host and peer.node == dpid):
                found.extend(LinkChange(end[0], end[1], up) for up in (False, True))
        return tuple(found)

    def footprint(self, event: Hashable) -> Footprint | None:
        """The footprint of an option's own event, or None (not one); :meth:`adjust` is
        applied to it too."""
        kind = type(event)
        if kind not in _FAULT_EVENTS:
            return None
        net = self.net
        fps = self.fps
        adds = fps._adds
        if kind is LinkFault:
            slot = self.faults._slot_of[event.at]  # type: ignore[union-attr, attr-defined]
            budget = self._budget[event.kind]  # type: ignore[attr-defined]
            return _fp(reads=(slot, budget), writes=(slot, budget), guard=(slot, budget), adds=adds)
        if kind is LinkChange:
            end = (event.dpid, event.port)  # type: ignore[attr-defined]
            peer = net.topology.links[end]
            budget = self._budget["link"]
            queues = {net.slot_port[end]}
            ctrlqs = {net.slot_ctrlq[event.dpid]}  # type: ignore[attr-defined]
            reads = {budget, self._down}
            if peer.is_host:
                queues.add(net.slot_inbox[peer.node])
                if peer.node in net.slot_where:
                    reads.add(net.slot_where[peer.node])
            else:
                queues.add(net.slot_port[(peer.node, peer.port)])
                ctrlqs.add(net.slot_ctrlq[peer.node])
            return _fp(reads=reads | queues, writes=queues | {budget, self._down}, appends=ctrlqs,
                       guard=(budget, self._down), adds=adds)
        budget = self._budget["control" if kind is ControlLoss else "restart"]
        if kind is ControlLoss:
            queue = net.slot_cmdq[event.dpid] if event.to_switch else net.slot_ctrlq[event.dpid]  # type: ignore[attr-defined]
            return _fp(reads=(budget,), writes=(budget,), pops=(queue,), guard=(queue, budget), adds=adds)
        dpid = event.dpid  # type: ignore[attr-defined]
        own = {net.slot_table[dpid], net.slot_buffer[dpid], net.slot_ext[dpid], net.slot_cmdq[dpid]}
        controller = {net.slot_app, net.slot_platform}
        return _fp(reads=controller | {budget}, writes=own | controller | {budget}, appends=fps._cmdqs,
                   guard=(budget,), adds=adds)

    def started(self, state: Sequence[int] | None) -> bool:
        """--joins-first: whether a host has acted in ``state`` (then hosts may act in it and
        in every state reachable from it); True without --joins-first."""
        if self.startup is None:
            return True
        if state is None:
            return False
        for slot, initial in self.startup:
            if state[slot] != initial:
                return True
        return False

    def at_startup(self, state: Sequence[int] | None, event: Hashable, fp: Footprint) -> Footprint:
        """``fp``, the footprint of ``event``, in ``state`` under --joins-first: before a host
        acted, a host's event is enabled only once every control channel is empty, and the
        first host event changes that for all: it reads (and is guarded by) every control
        channel and every host's parts."""
        if type(event) not in _HOST_EVENTS or self.started(state):
            return fp
        found = self._at_startup.get(event)
        if found is None:
            extra = self._startup_reads
            found = self._at_startup[event] = Footprint(
                fp.reads | extra, fp.writes, fp.appends, fp.pops, None if fp.guard is None else fp.guard | extra,
                fp.adds)
        return found

    def disabled_by(self, state: Sequence[int], event: Hashable) -> frozenset[int] | None:
        """For an option's event not enabled in ``state``: what keeps it disabled, or None
        (not one of the options' events, or its footprint's guard): a fault whose budget is
        spent never happens again; under --joins-first, before a host acted, a host's event
        may wait for the control channels (a host's send too, not only once its stream is
        sent)."""
        kind = type(event)
        if kind in _HOST_EVENTS and not self.started(state):
            return self.fps.footprint(state, event).guarded
        if kind not in _FAULT_EVENTS:
            return None
        left = self.faults.state(state).left  # type: ignore[union-attr]
        name = (event.kind if kind is LinkFault else "link" if kind is LinkChange  # type: ignore[attr-defined]
                else "control" if kind is ControlLoss else "restart")
        return frozenset() if left[KINDS.index(name)] == 0 else None

    def slots(self, locations: Iterable[int]) -> tuple[int, ...] | None:
        """The slots holding ``locations`` (sorted), or None when one is a host's part."""
        count = len(self.net.slot_names)
        found = set()
        for location in locations:
            if location < count:
                found.add(location)
                continue
            for slot, parts in self.parts.items():
                if location in parts:
                    found.add(slot)
                    break
            else:
                return None
        return tuple(sorted(found))

    def locations(self, slots: Iterable[int], declared: frozenset[int]) -> set[int]:
        """``slots`` (observed) with each split slot replaced by its locations among
        ``declared`` (a transition that touched the slot touched those at most)."""
        found = set()
        for slot in slots:
            parts = self.parts.get(slot)
            if parts is None:
                found.add(slot)
            else:
                found |= parts & declared
        return found
