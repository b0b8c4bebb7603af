"""Faults on purpose: lost, duplicated and reordered packets, links going down and up, lost
control messages, switches restarting.

Each kind of fault has a budget (``--fault KIND=N``; all 0 by default, and then nothing here
runs and the state space is the one without faults). While a kind's budget lasts, each place
where it can happen is an event of its own (named in traces), so the search explores every
moment and place for every fault within the budget:

* ``loss``: the packet at the head of a link (into a switch port or a host) is lost;
* ``duplicate``: it is duplicated (the copy follows it);
* ``reorder``: the first two packets on a link swap;
* ``link``: a link goes down: the packets on it, in both directions, are lost (the FIFO
  into each end: a switch port's input queue, a host's inbox), each end's switch sends a
  port-status to the controller (``on_port_status``), and while it is down what a switch
  or host sends over it is lost; or a link that is down comes up again (port-status
  messages again). Each change uses one of the budget: ``link=1`` lets one link fail for
  good, ``link=2`` also lets it recover. A scope limits the links that may fail
  (``--fault link=1:switches``, :data:`LINK_SCOPES`): ``all`` (the default), ``switches``
  (links between two switches: no host is ever cut off) or ``hosts`` (a host's link);
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
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping, NamedTuple, Sequence

from nice_attendre.errors import InputError

if TYPE_CHECKING:
    from nice_attendre.models.network import Network, Tx

#: The kinds of faults, in the order of their budgets.
KINDS = ("loss", "duplicate", "reorder", "link", "control", "restart")
#: The most faults of one kind a run may inject (the state space grows fast with them).
MAX_BUDGET = 20
#: Which links a ``link`` fault may hit: every link, the links between two switches, or the
#: links of hosts (``--fault link=N:SCOPE``; ``all`` by default).
LINK_SCOPES = ("all", "switches", "hosts")


def check_link_scope(scope: str) -> str:
    """``scope`` if it is one of :data:`LINK_SCOPES`; otherwise :class:`InputError`."""
    if scope not in LINK_SCOPES:
        raise InputError(f"unknown link fault scope {scope!r} (known: {', '.join(LINK_SCOPES)})")
    return scope


def check_budgets(budgets: Mapping[str, Any] | None) -> tuple[int, ...]:
    """The budgets as a tuple in :data:`KINDS` order; :class:`InputError` for an unknown kind
    or a value that is not a whole number from 0 to :data:`MAX_BUDGET`. A ``link`` budget
    may carry its scope, ``"N:SCOPE"`` (see :func:`split_budgets`)."""
    return split_budgets(budgets)[0]


def split_budgets(budgets: Mapping[str, Any] | None) -> tuple[tuple[int, ...], str]:
    """The budgets as a tuple in :data:`KINDS` order and the scope of ``link`` faults.

    Values are whole numbers; the ``link`` one may also be ``"N"`` or ``"N:SCOPE"`` (SCOPE
    one of :data:`LINK_SCOPES`: ``{"link": "1:switches"}``), as the command line gives it.
    :class:`InputError` for an unknown kind or scope, or a bad number."""
    budgets = dict(budgets or {})
    unknown = sorted(set(budgets) - set(KINDS))
    if unknown:
        raise InputError(f"unknown fault {unknown[0]!r} (known: {', '.join(KINDS)})")
    scope = "all"
    link = budgets.get("link")
    if isinstance(link, str):
        number, colon, scope = link.partition(":")
        scope = check_link_scope(scope.strip()) if colon else "all"
        if not number.strip().isdecimal():
            raise InputError(f"fault budget link={link!r}: give N or N:SCOPE with N a whole number "
                             f"from 0 to {MAX_BUDGET} (scopes: {', '.join(LINK_SCOPES)})")
        budgets["link"] = int(number)
    for kind, value in budgets.items():
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_BUDGET:
            raise InputError(f"fault budget {kind}={value!r}: give a whole number from 0 to {MAX_BUDGET}")
    return tuple(budgets.get(kind, 0) for kind in KINDS), scope


def parse_budgets(items: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """``["loss=1", "link=2:switches"]`` (the command line's ``--fault``) -> ``{"loss": 1,
    "link": "2:switches"}`` (a scoped ``link`` budget stays text: :func:`split_budgets`
    reads it)."""
    budgets: dict[str, Any] = {}
    for item in items:
        kind, sep, value = item.partition("=")
        if not sep:
            kind, value = item, "1"
        kind = kind.strip()
        number, colon, scope = value.partition(":")
        if not number.strip().isdecimal() or (colon and kind != "link"):
            raise InputError(f"--fault {item!r}: expected KIND=N, e.g. loss=1, or link=N:SCOPE "
                             f"(kinds: {', '.join(KINDS)}; scopes: {', '.join(LINK_SCOPES)})")
        budgets[kind] = f"{int(number)}:{scope.strip()}" if colon else int(number)
    split_budgets(budgets)
    return budgets


def describe_budgets(budgets: tuple[int, ...], link_scope: str = "all") -> str:
    """One line for report headers: ``loss 1, link 1`` or ``none`` (a scoped link budget:
    ``link 1 (links between switches only)``)."""
    scoped = {"all": "", "switches": " (links between switches only)", "hosts": " (hosts' links only)"}
    return ", ".join(f"{kind} {n}" + (scoped[link_scope] if kind == "link" else "")
                     for kind, n in zip(KINDS, budgets) if n) or "none"


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

#: A place where faults can happen: the slots read, and the fault events possible there as a
#: function of the state (if their budgets last).
Source = tuple[tuple[int, ...], Callable[[Sequence[int]], tuple[Any, ...]]]

_KIND_INDEX = {kind: index for index, kind in enumerate(KINDS)}
_LINK = KINDS.index("link")  # the kinds before it happen on a link's queue
_CONTROL = KINDS.index("control")


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
        # Each physical link once, by its lower end (switch-switch links; switch-host links by
        # the switch), within the scope of link faults.
        scope = net.options.link_scope
        ends = []
        for (dpid, port), peer in sorted(topo.links.items()):
            if peer.is_host or (dpid, port) < (peer.node, peer.port):
                if scope == "all" or (scope == "hosts") == peer.is_host:
                    ends.append((dpid, port))
        #: The links a ``link`` fault may take down (or up), by their lower ends.
        self.ends = tuple(ends)
        #: The link fault kinds (indices into KINDS) this run has a budget for, in KINDS order.
        self._link_kinds = tuple(kind for kind in range(_LINK) if budgets[kind])
        self._link_cache: dict[tuple[str, int], tuple[LinkFault, ...]] = {}

    def initial(self) -> FaultState:
        return FaultState(self.budgets)

    def state(self, tx_or_state: Any) -> FaultState:
        net = self.net
        if hasattr(tx_or_state, "get"):
            return tx_or_state.get(net.slot_faults)
        return net.interned(net.slot_faults)[tx_or_state[net.slot_faults]]

    def sources(self) -> tuple[list[Source], list[Source]]:
        """Where faults can happen, for a large network's incremental events (see
        ``Network._layout_sources``): per link (in :attr:`links` order) and per switch (in
        dpid order), the slots read and a function of the state giving the fault events
        possible there *if their budgets last*: a link's loss, duplicate and reorder (of the
        kinds this run has a budget for) while its queue is not empty, a switch's control
        losses while a channel holds a message. :meth:`listed` applies the budgets left."""
        net = self.net
        links: list[Source] = [((slot,), partial(self._link_faults, at, slot)) for at, slot in self.links]
        controls: list[Source] = [((net.slot_cmdq[dpid], net.slot_ctrlq[dpid]), partial(self._control_losses, dpid))
                                  for dpid in net.topology.switches] if self.budgets[_CONTROL] else []
        return links, controls

    def events(self, state: Sequence[int], events: list[Any]) -> None:
        """Append the faults possible in ``state`` (budgets left, places where they can happen)."""
        faults: FaultState = self.state(state)
        left = faults.left
        links = [self._link_faults(at, slot, state) for at, slot in self.links if state[slot]] \
            if any(left[:_LINK]) else ()
        net = self.net
        controls = [self._control_losses(dpid, state) for dpid in net.topology.switches
                    if state[net.slot_cmdq[dpid]] or state[net.slot_ctrlq[dpid]]] if left[_CONTROL] else ()
        self._list(faults, links, controls, events)

    def listed(self, state: Sequence[int], links: Sequence[tuple[LinkFault, ...]],
               controls: Sequence[tuple[ControlLoss, ...]], events: list[Any]) -> None:
        """Append the faults possible in ``state``, in a fixed order (each link's, every link
        change, each switch's control losses, every restart), from ``links`` and ``controls``:
        what :meth:`sources` gives there (any subset that holds every non-empty one, in order)."""
        self._list(self.state(state), links, controls, events)

    def _list(self, faults: FaultState, links: Sequence[tuple[LinkFault, ...]],
              controls: Sequence[tuple[ControlLoss, ...]], events: list[Any]) -> None:
        """:meth:`listed` with the state's fault budgets ``faults`` already read."""
        left = faults.left
        loss, duplicate, reorder, link, control, restart = left
        if links and (loss or duplicate or reorder):
            if all(left[kind] for kind in self._link_kinds):
                for found in links:
                    events.extend(found)
            else:
                for found in links:
                    events.extend(fault for fault in found if left[_KIND_INDEX[fault.kind]])
        if link:
            down = set(faults.down)
            for dpid, port in self.ends:
                events.append(LinkChange(dpid, port, (dpid, port) in down))
        if control:
            for found in controls:
                events.extend(found)
        if restart:
            events.extend(SwitchRestart(dpid) for dpid in self.net.topology.switches)

    def _link_faults(self, at: str, slot: int, state: Sequence[int]) -> tuple[LinkFault, ...]:
        """The link faults of the link into ``at`` (queue slot ``slot``) if budgets last."""
        value = state[slot]
        if not value:
            return ()
        key = (at, value)
        found = self._link_cache.get(key)
        if found is None:
            queue = self.net._queues.values[value]
            found = self._link_cache[key] = tuple(
                LinkFault(KINDS[kind], at) for kind in self._link_kinds
                if KINDS[kind] != "reorder" or (len(queue) > 1 and queue[0] != queue[1]))
        return found

    def _control_losses(self, dpid: int, state: Sequence[int]) -> tuple[ControlLoss, ...]:
        """The control losses of switch ``dpid``'s channels if the budget lasts."""
        net = self.net
        to_switch, from_switch = state[net.slot_cmdq[dpid]], state[net.slot_ctrlq[dpid]]
        if to_switch and from_switch:
            return (ControlLoss(dpid, True), ControlLoss(dpid, False))
        if to_switch:
            return (ControlLoss(dpid, True),)
        return (ControlLoss(dpid, False),) if from_switch else ()

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
        if not ev.up:
            self._lose_in_flight(tx, end, peer)
        for dpid, port in ((ev.dpid, ev.port),) + (() if peer.is_host else ((peer.node, peer.port),)):
            net.to_controller(tx, dpid, PortStatus(dpid, port, ev.up))
            tx.note(lambda d=dpid, p=port: f"s{d} tells the controller: port {p} {'up' if ev.up else 'down'}")

    def _lose_in_flight(self, tx: "Tx", end: tuple[int, int], peer: Any) -> None:
        """The link at switch port ``end`` (whose other end is ``peer``) went down: the packets
        on it in both directions are lost: those queued into ``end``'s input port, and those
        queued into the other end (the peer switch's input port, or the inbox of the host
        attached there now; a mobile host that moved away keeps its inbox)."""
        net = self.net
        slots = [net.slot_port[end]]
        if not peer.is_host:
            slots.append(net.slot_port[(peer.node, peer.port)])
        else:
            where = net.slot_where.get(peer.node)
            if where is None or tx.get(where) == end:
                slots.append(net.slot_inbox[peer.node])
        queues, items = net._queues, net._items
        for slot in slots:
            queue = queues.values[tx.s[slot]]
            if queue:
                lost = [items.values[item] for item in queue]
                tx.set_id(slot, queues.intern(()))
                tx.note(lambda lost=lost: "FAULT: lost with the link: " + ", ".join(map(str, lost)))

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

    def is_down(self, state: Sequence[int], dpid: int, port: int) -> bool:
        """Whether the link at ``dpid``:``port`` is down in ``state`` (for properties)."""
        net = self.net
        faults: FaultState = net._values[net.slot_faults][state[net.slot_faults]]
        if not faults.down:
            return False
        end = (dpid, port)
        peer = net.topology.links.get(end)
        if peer is not None and not peer.is_host and (peer.node, peer.port) < end:
            end = (peer.node, peer.port)
        return end in faults.down
