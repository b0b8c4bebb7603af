"""Faults on purpose: lost, duplicated and reordered packets, links going down and up, lost
control messages, switches restarting.

Each kind of fault has a budget (``--fault KIND=N``; all 0 by default, and then nothing here
runs and the state space is the one without faults). While a kind's budget lasts, each place
where it can happen is an event of its own (named in traces), so the search explores every
moment and place for every fault within the budget:

* ``loss``: the packet at the head of a link (into a switch port or a host) is lost;
* ``duplicate``: it is duplicated (the copy follows it);
* ``reorder``: the first two packets on a link swap;
* ``link``: a link goes down (each end's switch sends a port-status to the controller:
  ``on_port_status``) and, while down, what a switch sends over it is lost; or a link that
  is down comes up again (port-status messages again). Each change uses one of the budget:
  ``link=1`` lets one link fail for good, ``link=2`` also lets it recover;
* ``control``: the next message on a switch's control channel (either direction) is lost;
* ``restart``: a switch restarts: its flow table, packet buffer, protocol state and the
  commands queued to it are gone; it connects again and the app's ``on_switch_join`` runs.

Properties are checked as usual. Some can be violated by a fault alone, whatever the app
does: ``delivery`` (a lost packet), ``no-duplicates`` (``duplicate``), ``no-reordering``
(``reorder``), ``no-black-holes`` (a switch sends into a link that is down),
``no-forgotten-packets`` (a lost packet-out leaves its packet buffered), ``direct-paths``
and ``strict-direct-paths`` (a restart forgets entries). Others, such as
``no-stale-routes`` at the end of an execution, say whether the app recovers.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Mapping, NamedTuple

from nice_attendre.errors import InputError

if TYPE_CHECKING:
    from nice_attendre.models.network import Network, Tx

#: The kinds of faults, in the order of their budgets.
KINDS = ("loss", "duplicate", "reorder", "link", "control", "restart")
#: The most faults of one kind a run may inject (the state space grows fast with them).
MAX_BUDGET = 20


def check_budgets(budgets: Mapping[str, int] | None) -> tuple[int, ...]:
    """The budgets as a tuple in :data:`KINDS` order; :class:`InputError` for an unknown kind
    or a value that is not a whole number from 0 to :data:`MAX_BUDGET`."""
    budgets = dict(budgets or {})
    unknown = sorted(set(budgets) - set(KINDS))
    if unknown:
        raise InputError(f"unknown fault {unknown[0]!r} (known: {', '.join(KINDS)})")
    for kind, value in budgets.items():
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_BUDGET:
            raise InputError(f"fault budget {kind}={value!r}: give a whole number from 0 to {MAX_BUDGET}")
    return tuple(budgets.get(kind, 0) for kind in KINDS)


def parse_budgets(items: list[str] | tuple[str, ...]) -> dict[str, int]:
    """``["loss=1", "link=2"]`` (the command line's ``--fault``) -> ``{"loss": 1, "link": 2}``."""
    budgets: dict[str, int] = {}
    for item in items:
        kind, sep, value = item.partition("=")
        if not sep:
            kind, value = item, "1"
        if not value.strip().isdecimal():
            raise InputError(f"--fault {item!r}: expected KIND=N, e.g. loss=1 (kinds: {', '.join(KINDS)})")
        budgets[kind.strip()] = int(value)
    check_budgets(budgets)
    return budgets


def describe_budgets(budgets: tuple[int, ...]) -> str:
    """One line for report headers: ``loss 1, link 1`` or ``none``."""
    return ", ".join(f"{kind} {n}" for kind, n in zip(KINDS, budgets) if n) or "none"


class FaultState(NamedTuple):
    """The fault budgets left (in :data:`KINDS` order) and the links that are down, each as
    its lower (dpid, port) end, sorted."""

    left: tuple[int, ...]
    down: tuple[tuple[int, int], ...] = ()


# ---- events -----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class LinkFault:
    """``kind`` (loss, duplicate, reorder) hits the link into ``at`` (``"s2:1"`` or a host)."""

    kind: str
    at: str
    rank: ClassVar[int] = 8

    def __str__(self) -> str:
        what = {"loss": "loses its head packet", "duplicate": "duplicates its head packet",
                "reorder": "swaps its first two packets"}[self.kind]
        return f"FAULT: the link into {self.at} {what}"


@dataclass(frozen=True, slots=True)
class LinkChange:
    """The link at switch port ``dpid``:``port`` goes down (``up=False``) or comes back up."""

    dpid: int
    port: int
    up: bool
    rank: ClassVar[int] = 8

    def __str__(self) -> str:
        return f"FAULT: the link at s{self.dpid}:{self.port} goes {'up' if self.up else 'down'}"


@dataclass(frozen=True, slots=True)
class ControlLoss:
    """The next message to (``to_switch``) or from switch ``dpid`` is lost."""

    dpid: int
    to_switch: bool
    rank: ClassVar[int] = 8

    def __str__(self) -> str:
        way = f"controller -> s{self.dpid}" if self.to_switch else f"s{self.dpid} -> controller"
        return f"FAULT: the next message {way} is lost"


@dataclass(frozen=True, slots=True)
class SwitchRestart:
    """Switch ``dpid`` restarts with an empty table and connects again."""

    dpid: int
    rank: ClassVar[int] = 8

    def __str__(self) -> str:
        return f"FAULT: s{self.dpid} restarts"


FaultEvent = LinkFault | LinkChange | ControlLoss | SwitchRestart


# ---- the faults of one network ------------------------------------------------------------

class Faults:
    """Fault events and transitions of one network with fault budgets (see the module doc)."""

    def __init__(self, net: "Network", budgets: tuple[int, ...]) -> None:
        self.net = net
        self.budgets = budgets
        topo = net.topology
        self.links = tuple((f"s{d}:{p}", net.slot_port[(d, p)]) for d in topo.switches for p in topo.ports[d]) + \
            tuple((h, net.slot_inbox[h]) for h in topo.hosts)
        self._slot_of = dict(self.links)
        # Each physical link once, by its lower end (switch-switch links; switch-host links by the switch).
        ends = []
        for (dpid, port), peer in sorted(topo.links.items()):
            if peer.is_host or (dpid, port) < (peer.node, peer.port):
                ends.append((dpid, port))
        self.ends = tuple(ends)

    def initial(self) -> FaultState:
        return FaultState(self.budgets)

    def state(self, tx_or_state: Any) -> FaultState:
        net = self.net
        if hasattr(tx_or_state, "get"):
            return tx_or_state.get(net.slot_faults)
        return net.interned(net.slot_faults)[tx_or_state[net.slot_faults]]

    def events(self, state: tuple[int, ...], events: list[Any]) -> None:
        """Append the faults possible in ``state`` (budgets left, places where they can happen)."""
        faults: FaultState = self.state(state)
        loss, duplicate, reorder, link, control, restart = faults.left
        queues = self.net._queues.values
        if loss or duplicate or reorder:
            for at, slot in self.links:
                queue = queues[state[slot]]
                if queue:
                    if loss:
                        events.append(LinkFault("loss", at))
                    if duplicate:
                        events.append(LinkFault("duplicate", at))
                    if reorder and len(queue) > 1 and queue[0] != queue[1]:
                        events.append(LinkFault("reorder", at))
        if link:
            down = set(faults.down)
            for dpid, port in self.ends:
                events.append(LinkChange(dpid, port, (dpid, port) in down))
        if control:
            net = self.net
            for dpid in net.topology.switches:
                if state[net.slot_cmdq[dpid]]:
                    events.append(ControlLoss(dpid, True))
                if state[net.slot_ctrlq[dpid]]:
                    events.append(ControlLoss(dpid, False))
        if restart:
            events.extend(SwitchRestart(dpid) for dpid in self.net.topology.switches)

    def _spend(self, tx: "Tx", kind: str, down: tuple[tuple[int, int], ...] | None = None) -> None:
        faults: FaultState = tx.get(self.net.slot_faults)
        left = list(faults.left)
        left[KINDS.index(kind)] -= 1
        tx.put(self.net.slot_faults, FaultState(tuple(left), faults.down if down is None else down))

    # ---- transitions ----------------------------------------------------------------------

    def link_fault(self, tx: "Tx", ev: LinkFault) -> None:
        net = self.net
        slot = self._slot_of[ev.at]
        queues = net._queues
        queue = queues.values[tx.s[slot]]
        if ev.kind == "loss":
            rest = queue[1:]
        elif ev.kind == "duplicate":
            rest = queue[:1] + queue
        else:
            rest = (queue[1], queue[0]) + queue[2:]
        head = net._items.values[queue[0]]
        tx.set_id(slot, queues.intern(rest))
        tx.note(lambda: f"FAULT: the link into {ev.at} {'loses' if ev.kind == 'loss' else ev.kind + 's'} {head}")
        self._spend(tx, ev.kind)

    def link_change(self, tx: "Tx", ev: LinkChange) -> None:
        net = self.net
        faults: FaultState = tx.get(net.slot_faults)
        end = (ev.dpid, ev.port)
        down = tuple(sorted(set(faults.down) - {end})) if ev.up else tuple(sorted(faults.down + (end,)))
        self._spend(tx, "link", down)
        tx.note(lambda: f"FAULT: the link at s{ev.dpid}:{ev.port} goes {'up' if ev.up else 'down'}")
        from nice_attendre.models.messages import PortStatus

        peer = net.topology.links[end]
        for dpid, port in ((ev.dpid, ev.port),) + (() if peer.is_host else ((peer.node, peer.port),)):
            net.to_controller(tx, dpid, PortStatus(dpid, port, ev.up))
            tx.note(lambda d=dpid, p=port: f"s{d} tells the controller: port {p} {'up' if ev.up else 'down'}")

    def control_loss(self, tx: "Tx", ev: ControlLoss) -> None:
        net = self.net
        if ev.to_switch:
            lost = net.take_command(tx, ev.dpid, 0, 0)
        else:
            lost = net.from_switch(tx, ev.dpid, 0)
        way = f"controller -> s{ev.dpid}" if ev.to_switch else f"s{ev.dpid} -> controller"
        tx.note(lambda: f"FAULT: {lost} ({way}) is lost")
        self._spend(tx, "control")

    def restart(self, tx: "Tx", ev: SwitchRestart) -> None:
        net = self.net
        dpid = ev.dpid
        tx.put(net.slot_table[dpid], ())
        tx.put(net.slot_buffer[dpid], ())
        tx.put(net.slot_ext[dpid], net.protocol.initial_switch_state(dpid))
        tx.set_id(net.slot_cmdq[dpid], net._queues.intern(()))
        tx.note(lambda: f"FAULT: s{dpid} restarts: its table, buffer and pending commands are gone")
        self._spend(tx, "restart")
        net.protocol.switch_join(tx, dpid)

    # ---- what the switches see ------------------------------------------------------------

    def down(self, tx: "Tx", dpid: int, port: int) -> bool:
        """Whether the link at ``dpid``:``port`` is down (in the transition under way)."""
        faults: FaultState = tx.get(self.net.slot_faults)
        if not faults.down:
            return False
        end = (dpid, port)
        peer = self.net.topology.links.get(end)
        if peer is not None and not peer.is_host and (peer.node, peer.port) < end:
            end = (peer.node, peer.port)
        return end in faults.down
