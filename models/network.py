"""The network system: hosts, switches, controller and channels as one :class:`System`.

Configuration (topology, host scripts, the app, the protocol variant) is held by
:class:`Network`, with caches that never change what a state means (interning tables,
lookup results); the state is a tuple of interned ids, one per *slot*:

* ``host:H`` (:class:`HostState`) and ``inbox:H`` (the link into host H, a FIFO);
* per switch: ``table:D`` (flow table), ``buffer:D`` (packet buffer: buffer id -> packet),
  ``ext:D`` (the protocol variant's switch state), ``cmdq:D`` (commands from the
  controller, a FIFO; with several controller threads, a sorted tuple of FIFO batches) and
  ``port:D:P`` (one FIFO per input port);
* controller: ``app`` (the app's state), ``platform`` (the variant's platform state) and
  ``ctrlq:D`` (messages from switch D, a FIFO);
* ``alerts``: what monitors observed on transitions (loops, black holes, packet-ins that
  break direct paths, app exceptions); empty in every correct state;
* ``history`` (only with the one-packet-in-per-flow monitor): flows that caused a
  packet-in; ``load`` (only when counting control-plane load): message counters.

Queues hold ids of interned items (packets and messages). Every transition copies the
tuple of slot ids and rebuilds only the slots it changes (structural sharing).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from nice_attendre.errors import InputError, ModelError
from nice_attendre.models.app import App
from nice_attendre.models.events import (ControllerHandle, ControllerStats, Event, HostMove,
                                         HostReceive, HostSend, SwitchProcessCommand,
                                         SwitchProcessPacket)
from nice_attendre.models import flowtable
from nice_attendre.models.fingerprints import Fingerprinter
from nice_attendre.models.intern import Interner
from nice_attendre.models.packet import BROADCAST, Header, Packet
from nice_attendre.models.scenario import HostState, Scenario, reply_to
from nice_attendre.models.topology import Topology

#: Monitors a network can run, named after the property that reads their alerts (see
#: :meth:`Tx.alert`). A monitor that is not run records nothing, so the state space is the
#: same as without it except that states with an alert are violations (and not expanded).
#: ``app-exception`` is always run. Two keep history in the state while they run:
#: ``one-packet-in-per-flow`` (flows that caused a packet-in) and ``strict-direct-paths``
#: (``Packet.late``: sent after its hosts had exchanged packets both ways).
MONITORS = ("no-forwarding-loops", "no-black-holes", "direct-paths", "strict-direct-paths",
            "one-packet-in-per-flow")

#: Control-plane counters kept in the ``load`` slot when counting load.
LOAD_COUNTERS = ("packet_ins", "flow_mods", "packet_outs", "barriers")


class Tx:
    """One transition under construction: a mutable copy of the slot ids.

    Handlers read slot values with :meth:`get` (or ids from ``s``), write them with
    :meth:`put` or :meth:`set_id` (never by assigning to ``s``: every write is recorded in
    ``dirty``, from which fingerprints are updated), and use the queue helpers;
    :meth:`Network.apply` turns the result back into a tuple. With ``notes`` a list,
    handlers narrate what happens (for traces); otherwise :meth:`note` does nothing.
    """

    __slots__ = ("net", "s", "notes", "outbox", "dirty")

    def __init__(self, net: "Network", state: Sequence[int], notes: list[str] | None = None) -> None:
        self.net = net
        self.s = list(state)
        self.notes = notes
        self.outbox: dict[int, list[Any]] | None = None  # a threaded controller's commands, per switch
        self.dirty: dict[int, None] = {}  # slots written (keys; a dict is an ordered set)

    def get(self, slot: int) -> Any:
        """The value in ``slot``."""
        return self.net._values[slot][self.s[slot]]

    def put(self, slot: int, value: Any) -> None:
        """Store ``value`` in ``slot``."""
        self.s[slot] = self.net._intern[slot](value)
        self.dirty[slot] = None

    def set_id(self, slot: int, value_id: int) -> None:
        """Store the already interned value ``value_id`` in ``slot``."""
        self.s[slot] = value_id
        self.dirty[slot] = None

    def pop(self, slot: int) -> Any:
        """Remove and return the first item of queue ``slot``."""
        net = self.net
        queue = net._queues.values[self.s[slot]]
        self.s[slot] = net._queues.intern(queue[1:])
        self.dirty[slot] = None
        return net._items.values[queue[0]]

    def push(self, slot: int, item: Any) -> None:
        """Append ``item`` to queue ``slot``."""
        net = self.net
        queue = net._queues.values[self.s[slot]]
        self.s[slot] = net._queues.intern(queue + (net._items.intern(item),))
        self.dirty[slot] = None

    def alert(self, kind: str, detail: str) -> None:
        """Record that a monitor of ``kind`` observed ``detail`` on this transition."""
        alerts = self.get(self.net.slot_alerts)
        record = (kind, detail)
        if record not in alerts:
            self.put(self.net.slot_alerts, tuple(sorted(alerts + (record,))))
        self.note(lambda: f"ALERT {kind}: {detail}")

    def count(self, counter: int, amount: int = 1) -> None:
        """Add ``amount`` to control-plane counter ``counter`` (when counting load)."""
        slot = self.net.slot_load
        if slot >= 0:
            load = list(self.get(slot))
            load[counter] += amount
            self.put(slot, tuple(load))

    def note(self, text: Callable[[], str]) -> None:
        """Narrate ``text()`` when building a trace description; otherwise do nothing.

        ``text`` is a function so that the hot path never formats strings.
        """
        if self.notes is not None:
            self.notes.append(text())


@dataclass(frozen=True)
class Options:
    """Model options that are configuration.

    * ``monitors``: the monitors to run (see :data:`MONITORS`);
    * ``count_load``: keep control-plane message counters in the state (a larger state
      space: states that differ only in their counts are distinct);
    * ``instant_stats``: port statistics requests are answered at once by the controller
      (NICE's InstantStats): one event per load class instead of a round trip;
    * ``controller_threads``: above 1, the controller handles messages in parallel threads,
      so the commands of different handler calls race on the way to a switch (the paper's
      type-3 race); those of one call keep their order. The number of threads is not
      bounded otherwise: any calls may race.
    """

    monitors: frozenset[str] = frozenset()
    count_load: bool = False
    instant_stats: bool = False
    controller_threads: int = 1

    def __post_init__(self) -> None:
        if self.controller_threads < 1:
            raise InputError(f"controller_threads must be at least 1, got {self.controller_threads}")


class Network:
    """The network system (a :class:`nice_attendre.System`).

    Build it with a scenario, an app and a protocol name (``openflow``, ``openflow-b``,
    ``attendre``) or protocol class. ``enabled`` returns events in the order
    host sends, host receives, host moves, switch packets (by dpid, port), switch
    commands, controller handling, instant statistics.
    """

    def __init__(self, scenario: Scenario, app: App[Any], protocol: str | type = "openflow",
                 options: Options = Options()) -> None:
        from nice_attendre.models.protocols import protocol_class  # registry of variants

        unknown = sorted(set(options.monitors) - set(MONITORS))
        if unknown:
            raise InputError(f"unknown monitor {unknown[0]!r} (known: {', '.join(MONITORS)})")
        self.scenario = scenario
        self.topology: Topology = scenario.topology
        self.app = app
        self.options = options
        self.specs = {spec.name: spec for spec in scenario.hosts}
        self._layout()
        self._fingerprints = Fingerprinter(self)
        self._lookup_cache: dict[Any, int] = {}
        self._move_cache: dict[tuple[str, int], tuple[HostMove, ...]] = {}
        cls = protocol_class(protocol) if isinstance(protocol, str) else protocol
        self.protocol = cls(self)
        self._handlers: dict[type, Callable[[Tx, Any], None]] = {
            HostSend: self._host_send,
            HostReceive: self._host_receive,
            HostMove: self._host_move,
            SwitchProcessPacket: lambda tx, ev: self.protocol.switch_packet(tx, ev.dpid, ev.port),
            SwitchProcessCommand: lambda tx, ev: self.protocol.switch_command(tx, ev.dpid, ev.batch),
            ControllerHandle: lambda tx, ev: self.protocol.controller_handle(tx, ev.dpid),
            ControllerStats: lambda tx, ev: self.protocol.controller_stats(tx, ev.dpid, ev.load),
        }
        self._initial = self._make_initial()

    # ---- layout ------------------------------------------------------------------------

    def _layout(self) -> None:
        topo = self.topology
        self._queues: Interner[tuple[int, ...]] = Interner("queue", ())
        self._items: Interner[Any] = Interner("item")
        kinds: dict[str, Interner[Any]] = {}
        self.slot_names: list[str] = []
        slot_interners: list[Interner[Any]] = []

        def slot(name: str, kind: str) -> int:
            if kind == "queue":
                interner = self._queues
            else:
                interner = kinds.setdefault(kind, Interner(kind))
            self.slot_names.append(name)
            slot_interners.append(interner)
            return len(self.slot_names) - 1

        self.slot_host = {h: slot(f"host:{h}", "host") for h in topo.hosts}
        self.slot_inbox = {h: slot(f"inbox:{h}", "queue") for h in topo.hosts}
        self.slot_table = {d: slot(f"table:{d}", "table") for d in topo.switches}
        self.slot_buffer = {d: slot(f"buffer:{d}", "buffer") for d in topo.switches}
        self.slot_ext = {d: slot(f"ext:{d}", "ext") for d in topo.switches}
        self.slot_cmdq = {d: slot(f"cmdq:{d}", "queue") for d in topo.switches}
        self.slot_port = {(d, p): slot(f"port:{d}:{p}", "queue")
                          for d in topo.switches for p in topo.ports[d]}
        self.slot_app = slot("app", "app")
        self.slot_platform = slot("platform", "platform")
        self.slot_ctrlq = {d: slot(f"ctrlq:{d}", "queue") for d in topo.switches}
        self.slot_alerts = slot("alerts", "alerts")
        self.slot_history = slot("history", "history") if "one-packet-in-per-flow" in self.options.monitors else -1
        self.slot_load = slot("load", "load") if self.options.count_load else -1
        self._slot_interners = slot_interners
        self._values = [interner.values for interner in slot_interners]
        self._intern = [interner.intern for interner in slot_interners]
        self.slot_index = {name: index for index, name in enumerate(self.slot_names)}
        self.mobile = tuple(h for h in topo.hosts if self.specs.get(h) and self.specs[h].moves)
        self.host_of_mac = {h: h for h in topo.hosts}
        # Event sources in enabled() order.
        host_values = self._values[self.slot_host[topo.hosts[0]]]
        self._senders = tuple((self.slot_host[h], HostSend(h), host_values, len(self.specs[h].script))
                              for h in topo.hosts if h in self.specs and self.specs[h].script)
        self._receivers = tuple((self.slot_inbox[h], HostReceive(h)) for h in topo.hosts)
        self._movers = tuple((self.slot_host[h], h) for h in self.mobile)
        packet_sources = tuple((self.slot_port[(d, p)], SwitchProcessPacket(d, p))
                               for d in topo.switches for p in topo.ports[d])
        command_sources = tuple((self.slot_cmdq[d], SwitchProcessCommand(d)) for d in topo.switches)
        controller_sources = tuple((self.slot_ctrlq[d], ControllerHandle(d)) for d in topo.switches)
        self.threaded = self.options.controller_threads > 1
        if self.threaded:  # command queues hold batches: one event per distinct batch
            self._switch_sources = packet_sources
            self._batched = tuple((self.slot_cmdq[d], d) for d in topo.switches)
            self._controller_sources = controller_sources
        else:
            self._switch_sources = packet_sources + command_sources + controller_sources
            self._batched = ()
            self._controller_sources = ()
        self._batch_events: dict[tuple[int, int], tuple[SwitchProcessCommand, ...]] = {}

    def _make_initial(self) -> tuple[int, ...]:
        topo = self.topology
        state = [0] * len(self.slot_names)
        tx = Tx(self, state)
        for host in topo.hosts:
            tx.put(self.slot_host[host], HostState(0, (), topo.host_port[host]))
        for dpid in topo.switches:
            tx.put(self.slot_table[dpid], ())
            tx.put(self.slot_buffer[dpid], ())
            tx.put(self.slot_ext[dpid], self.protocol.initial_switch_state(dpid))
        tx.put(self.slot_platform, self.protocol.initial_platform_state())
        tx.put(self.slot_alerts, ())
        if self.slot_history >= 0:
            tx.put(self.slot_history, ())
        if self.slot_load >= 0:
            tx.put(self.slot_load, (0,) * len(LOAD_COUNTERS))
        try:
            tx.put(self.slot_app, self.app.initial_state())
        except Exception as exc:  # an app bug is a finding: the run starts in a violating state
            tx.put(self.slot_app, None)
            tx.alert("app-exception", f"{type(self.app).__name__}.initial_state raised "
                     f"{type(exc).__name__}: {exc}")
            return tuple(tx.s)
        self.protocol.switches_join(tx)
        return tuple(tx.s)

    # ---- System ------------------------------------------------------------------------

    def initial_states(self) -> tuple[tuple[int, ...], ...]:
        """The single initial state: nothing sent, empty tables, switches joined."""
        return (self._initial,)

    def enabled(self, state: tuple[int, ...]) -> list[Event]:
        """Events possible in ``state``, in the fixed order of the class docstring."""
        events: list[Event] = []
        for slot, event, hosts, length in self._senders:
            if hosts[state[slot]].sent < length:
                events.append(event)
        for slot, event in self._receivers:
            if state[slot]:
                events.append(event)
        for slot, host in self._movers:
            moves = self._moves(host, state[slot])
            # A host unplugs only once its frames on the wire have reached the switch.
            if moves and not state[self.slot_port[self._values[slot][state[slot]].location]]:
                events.extend(moves)
        for slot, event in self._switch_sources:
            if state[slot]:
                events.append(event)
        if self._batched:
            for slot, dpid in self._batched:
                if state[slot]:
                    events.extend(self._command_events(dpid, state[slot]))
            for slot, event in self._controller_sources:
                if state[slot]:
                    events.append(event)
        extra = self.protocol.extra_events(state)
        if extra:
            events.extend(extra)
        return events

    def apply(self, state: tuple[int, ...], event: Event) -> tuple[int, ...]:
        """The state after ``event``; ``state`` is not changed."""
        tx = Tx(self, state)
        self._handlers[type(event)](tx, event)
        return tuple(tx.s)

    def narrate(self, state: tuple[int, ...], event: Event) -> tuple[tuple[int, ...], list[str]]:
        """Apply ``event`` and say what happened, one line per step (for traces)."""
        notes: list[str] = []
        tx = Tx(self, state, notes)
        handler = self._handlers.get(type(event))
        if handler is None:
            raise ModelError(f"not an event of this network: {event!r}")
        handler(tx, event)
        return tuple(tx.s), notes

    # ---- stable fingerprints (models/fingerprints.py) and shipping (models/shipping.py) --

    def fingerprint(self, state: tuple[int, ...]) -> int:
        """The stable 64-bit fingerprint of ``state``: the same in every process and run."""
        return self._fingerprints.of(state)

    def apply_fingerprinted(self, state: tuple[int, ...], fingerprint: int,
                            event: Event) -> tuple[tuple[int, ...], int]:
        """``apply`` and the new state's fingerprint, updated from the slots written only."""
        tx = Tx(self, state)
        self._handlers[type(event)](tx, event)
        new = tuple(tx.s)
        weights = self._fingerprints.weights
        updated = fingerprint
        try:
            for slot in tx.dirty:
                table = weights[slot]
                updated += table[new[slot]] - table[state[slot]]
        except KeyError:  # a component not yet met in that slot: the slow path
            return new, self._fingerprints.update(fingerprint, state, new, tx.dirty)
        return new, updated & 0xFFFFFFFFFFFFFFFF

    def state_codec(self) -> Any:
        """A codec that moves this network's states between processes (hashes, and only
        the components a peer has not been sent yet)."""
        from nice_attendre.models.shipping import NetworkCodec

        return NetworkCodec(self._fingerprints)

    # ---- command channels --------------------------------------------------------------

    def _command_events(self, dpid: int, value: int) -> tuple[SwitchProcessCommand, ...]:
        """Threaded controller: one event per distinct batch waiting at switch ``dpid``."""
        key = (dpid, value)
        cached = self._batch_events.get(key)
        if cached is None:
            batches = self._queues.values[value]
            cached = self._batch_events[key] = tuple(
                SwitchProcessCommand(dpid, index) for index, batch in enumerate(batches)
                if batch not in batches[:index])
        return cached

    def send_commands(self, tx: Tx, dpid: int, messages: Sequence[Any]) -> None:
        """Queue ``messages`` (one handler call's commands, in order) to switch ``dpid``.

        With one controller thread the channel is one FIFO; with several, the call's
        commands form a batch that races with other calls' batches. Batches are kept
        sorted, so the channel's state does not depend on the order they were sent in.
        """
        slot = self.slot_cmdq[dpid]
        if not self.threaded:
            for message in messages:
                tx.push(slot, message)
            return
        queues = self._queues
        batch = tuple(self._items.intern(message) for message in messages)
        tx.set_id(slot, queues.intern(tuple(sorted(queues.values[tx.s[slot]] + (batch,)))))  # type: ignore[arg-type]

    def take_command(self, tx: Tx, dpid: int, batch: int) -> Any:
        """Remove and return the next command of ``batch`` at switch ``dpid`` (0 when FIFO)."""
        slot = self.slot_cmdq[dpid]
        if not self.threaded:
            return tx.pop(slot)
        queues = self._queues
        batches = queues.values[tx.s[slot]]
        chosen = batches[batch]
        rest = batches[:batch] + batches[batch + 1:]
        if len(chosen) > 1:  # type: ignore[arg-type]
            rest = tuple(sorted(rest + (chosen[1:],)))  # type: ignore[index, operator]
        tx.set_id(slot, queues.intern(rest))
        return self._items.values[chosen[0]]  # type: ignore[index]

    # ---- hosts -------------------------------------------------------------------------

    def _moves(self, host: str, value: int) -> tuple[HostMove, ...]:
        """The move ``host`` can make next: it walks its list of moves in order, once each.

        (``enabled`` also waits until the switch has taken every frame the host sent from
        where it is: a host does not unplug with frames still on its cable. Without that, an
        old frame could reach the switch after the host announced its new place, and no
        controller could tell which place is current.)"""
        key = (host, value)
        cached = self._move_cache.get(key)
        if cached is None:
            location = self._values[self.slot_host[host]][value].location
            moves = self.specs[host].moves
            index = moves.index(location) + 1 if location in moves else 0
            cached = self._move_cache[key] = tuple(HostMove(host, d, p) for d, p in moves[index:index + 1])
        return cached

    def _host_send(self, tx: Tx, ev: HostSend) -> None:
        slot = self.slot_host[ev.host]
        hs: HostState = tx.get(slot)
        hdr, kind = self.specs[ev.host].script[hs.sent]
        packet = Packet(hdr, ev.host, hs.sent, kind, late=self._exchanged(tx, hdr))
        tx.put(slot, hs._replace(sent=hs.sent + 1))
        dpid, port = hs.location
        tx.note(lambda: f"{ev.host} sends {packet} to s{dpid}:{port}")
        tx.push(self.slot_port[(dpid, port)], packet)

    def _host_receive(self, tx: Tx, ev: HostReceive) -> None:
        host = ev.host
        packet: Packet = tx.pop(self.slot_inbox[host])
        if packet.hdr.eth_dst not in (host, BROADCAST):
            tx.note(lambda: f"{host} ignores {packet} (not addressed to it)")
            return
        slot = self.slot_host[host]
        hs: HostState = tx.get(slot)
        received = hs.received + ((packet.hdr, packet.origin, packet.seq),)
        spec = self.specs.get(host)
        if spec is not None and spec.replies and packet.hdr.eth_dst == host:
            reply = reply_to(packet, host, hs.sent)
            reply = reply._replace(late=self._exchanged(tx, reply.hdr, received))
            tx.put(slot, HostState(hs.sent + 1, received, hs.location))
            dpid, port = hs.location
            tx.note(lambda: f"{host} receives {packet} and answers with {reply} to s{dpid}:{port}")
            tx.push(self.slot_port[(dpid, port)], reply)
        else:
            tx.put(slot, hs._replace(received=received))
            tx.note(lambda: f"{host} receives {packet}")

    def _exchanged(self, tx: Tx, hdr: Header, src_received: tuple[Any, ...] | None = None) -> bool:
        """For the strict-direct-paths monitor: whether the hosts of ``hdr`` have exchanged
        unicast packets both ways (``src_received``: the sender's deliveries, if just updated).
        Always False when that monitor is off, so packets carry no history then."""
        if "strict-direct-paths" not in self.options.monitors:
            return False
        src, dst = self.host_of_mac.get(hdr.eth_src), self.host_of_mac.get(hdr.eth_dst)
        if src is None or dst is None:
            return False
        if src_received is None:
            src_received = tx.get(self.slot_host[src]).received
        return (any(d[0].eth_src == dst and d[0].eth_dst == src for d in src_received)
                and any(d[0].eth_src == src and d[0].eth_dst == dst for d in tx.get(self.slot_host[dst]).received))

    def _host_move(self, tx: Tx, ev: HostMove) -> None:
        """The host moves and announces itself from its new port (a broadcast frame, like a
        gratuitous ARP), so that the network can learn where it is now."""
        slot = self.slot_host[ev.host]
        hs: HostState = tx.get(slot)
        announce = Packet(Header(ev.host, BROADCAST, ev.host, BROADCAST), ev.host, hs.sent, "announce")
        tx.put(slot, HostState(hs.sent + 1, hs.received, (ev.dpid, ev.port)))
        tx.note(lambda: f"{ev.host} moves from s{hs.location[0]}:{hs.location[1]} to s{ev.dpid}:{ev.port} "
                f"and announces itself ({announce})")
        tx.push(self.slot_port[(ev.dpid, ev.port)], announce)

    # ---- helpers for the protocol variants ---------------------------------------------

    def deliver(self, tx: Tx, dpid: int, port: int, packet: Packet) -> bool:
        """Put ``packet`` on the link out of ``dpid``:``port``; False if nothing is attached."""
        for host in self.mobile:
            if tx.get(self.slot_host[host]).location == (dpid, port):
                tx.note(lambda: f"s{dpid} sends {packet} out of port {port} to {host}")
                tx.push(self.slot_inbox[host], packet)
                return True
        peer = self.topology.links.get((dpid, port))
        if peer is None:
            return False
        if peer.is_host:
            if peer.node in self.mobile:  # it moved away
                return False
            tx.note(lambda: f"s{dpid} sends {packet} out of port {port} to {peer.node}")
            tx.push(self.slot_inbox[peer.node], packet)
        else:
            tx.note(lambda: f"s{dpid} sends {packet} out of port {port} to s{peer.node}:{peer.port}")
            tx.push(self.slot_port[(peer.node, peer.port)], packet)
        return True

    def attached(self, state: Sequence[int], dpid: int, port: int) -> Any:
        """What is at ``dpid``:``port`` in ``state``: a host name, a switch :class:`Peer`, or None."""
        for host in self.mobile:
            if self._values[self.slot_host[host]][state[self.slot_host[host]]].location == (dpid, port):
                return host
        peer = self.topology.links.get((dpid, port))
        if peer is None or (peer.is_host and peer.node in self.mobile):
            return None
        return peer.node if peer.is_host else peer

    def lookup(self, tx: Tx, dpid: int, table_id: int, packet: Packet, in_port: int) -> int:
        """Index in switch ``dpid``'s table of the entry the packet hits in ``table_id``, or -1
        (cached per table value, table id, header and in-port)."""
        table_slot = self.slot_table[dpid]
        key = (tx.s[table_slot], table_id, packet.hdr, in_port)
        cache = self._lookup_cache
        found = cache.get(key)
        if found is None:
            found = cache[key] = flowtable.lookup(tx.get(table_slot), table_id, packet.hdr, in_port)
        return found

    # ---- state access (reports, properties, tests) -------------------------------------

    def value(self, state: Sequence[int], name: str) -> Any:
        """The value of slot ``name`` in ``state``; queues as tuples of items."""
        slot = self.slot_index[name]
        value = self._values[slot][state[slot]]
        if self._slot_interners[slot] is self._queues:
            if self.threaded and name.startswith("cmdq:"):
                return tuple(tuple(self._items.values[i] for i in batch) for batch in value)
            return tuple(self._items.values[i] for i in value)
        return value

    def decode(self, state: Sequence[int]) -> dict[str, Any]:
        """Every slot of ``state`` by name (queues as tuples of items)."""
        return {name: self.value(state, name) for name in self.slot_names}

    def encode(self, values: Mapping[str, Any], base: Sequence[int] | None = None) -> tuple[int, ...]:
        """A state with the named slots set to ``values`` (queues given as tuples of items; a
        threaded controller's command queues as tuples of batches of items), the others taken
        from ``base`` (default: the initial state)."""
        state = list(self._initial if base is None else base)
        for name, value in values.items():
            if name not in self.slot_index:
                raise KeyError(f"no slot {name!r}")
            slot = self.slot_index[name]
            if self.threaded and name.startswith("cmdq:"):
                value = tuple(sorted(tuple(self._items.intern(item) for item in batch) for batch in value))
            elif self._slot_interners[slot] is self._queues:
                value = tuple(self._items.intern(item) for item in value)
            state[slot] = self._intern[slot](value)
        return tuple(state)

    def buffered_packets(self, state: Sequence[int]) -> list[tuple[int, Packet]]:
        """Every packet a switch holds in ``state`` (packet buffer and variant buffers)."""
        held: list[tuple[int, Packet]] = []
        for dpid in self.topology.switches:
            for _bid, _port, packet in self._values[self.slot_buffer[dpid]][state[self.slot_buffer[dpid]]]:
                held.append((dpid, packet))
            ext = self._values[self.slot_ext[dpid]][state[self.slot_ext[dpid]]]
            held.extend((dpid, packet) for packet in self.protocol.held_packets(ext))
        return held

    def interned(self, slot: int) -> list[Any]:
        """The values of ``slot``'s interner, indexed by id (``state[slot]`` is such an id).

        For predicates that cache their verdict per component id.
        """
        return self._values[slot]

    def alerts(self, state: Sequence[int]) -> tuple[tuple[str, str], ...]:
        """The alerts recorded in ``state``."""
        return self._values[self.slot_alerts][state[self.slot_alerts]]

    def received(self, state: Sequence[int], host: str) -> tuple[Any, ...]:
        """What ``host`` received, in order, as (header, origin, seq)."""
        return self._values[self.slot_host[host]][state[self.slot_host[host]]].received

    def describe(self) -> str:
        """One line: app, protocol, topology."""
        return f"{self.app.describe()} under {self.protocol.name} on {self.topology.describe()}"

    def stored_values(self) -> int:
        """How many distinct component values are interned (a memory measure)."""
        return sum(len(i) for i in {id(i): i for i in self._slot_interners}.values()) + len(self._items)
