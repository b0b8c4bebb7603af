"""Switch buffers (Li et al.: ``papers/003``): a finite packet buffer, and flow-granularity buffering.

``granularity=packet`` (OpenFlow's buffer, the paper's "default buffer mechanism", IV): each
missed packet takes one buffer unit and its packet-in carries its buffer id. The buffer holds
at most ``capacity`` packets per switch (the paper's buffer-16 and buffer-256; 0 is its
no-buffer setting). When it is full the packet is not buffered: as OpenFlow specifies, the
packet-in then carries the whole packet and no buffer id, and the controller must send the
packet back in its packet-out (or lose it). An OpenFlow 1.3 output to the controller that
buffers obeys the same capacity.

``granularity=flow`` (the paper's flow-granularity buffer, V, Algorithms 1 and 2): the buffer
id of a missed packet is derived from its flow's 5-tuple (source and destination IP
address and port; the model has one transport protocol). The first missed packet of a flow
is buffered under that id and causes a packet-in carrying it; a miss for a flow already
buffered here queues the packet under the same id, without a packet-in. A packet-out or
flow-mod/packet-out naming the id releases every packet of the flow, in arrival order, with
its actions (Algorithm 2; the flow-mod's entry only serves later packets). The capacity
counts packets here too; when the buffer is full, a missed packet travels whole in a
packet-in without buffer id. Algorithm 1's timeout (lines 12-13: a packet of a flow
already buffered sends another packet-in when the flow has waited too long) is a
nondeterministic event with ``timeout=event`` (:class:`FlowBufferTimeout`, an alternative
way of processing such a packet: queued and a packet-in sent), absent with
``timeout=never`` (the default).

Flow granularity models OpenFlow 1.0 switches and native apps: apps speaking OpenFlow 1.3,
and Ryu apps (whose buffer ids are 32-bit numbers made from packet identities), are refused.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping, Sequence

from nice_attendre.errors import InputError
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Header, Packet, format_actions
from nice_attendre.models.protocols.lookahead import head_events, head_miss
from nice_attendre.models.protocols.openflow import OpenFlow, SwitchEvents
from nice_attendre.models.protocols.params import Param

if TYPE_CHECKING:
    from nice_attendre.models.network import Network, Tx

FlowBufferId = tuple[str, str, int, str, int, int]  # ("flow", ip_src, tp_src, ip_dst, tp_dst, ip_proto)
#: A switch's flow buffers (the ``ext:D`` slot): (buffer id, ((in_port, packet), ...) in
#: arrival order), sorted by buffer id.
FlowBuffers = tuple[tuple[FlowBufferId, tuple[tuple[int, Packet], ...]], ...]

#: ``tx.choice`` of the timeout event.
TIMEOUT = "timeout"


def show_flow_id(buffer_id: FlowBufferId) -> str:
    """A flow buffer's id as people write a 5-tuple: ``10.0.0.1:0->10.0.0.2:0`` (``tcp``/``udp``
    or ``proto N`` in front when the IP protocol is set)."""
    _, ip_src, tp_src, ip_dst, tp_dst, proto = buffer_id
    kind = {6: "tcp ", 17: "udp "}.get(proto, f"proto {proto} " if proto else "")
    return f"{kind}{ip_src}:{tp_src}->{ip_dst}:{tp_dst}"


def flow_buffer_id(hdr: Header) -> FlowBufferId:
    """The buffer id of a flow: its 5-tuple (addresses, transport ports and IP protocol)."""
    return ("flow", hdr.ip_src, hdr.tp_src, hdr.ip_dst, hdr.tp_dst, hdr.ip_proto)


@dataclass(frozen=True, slots=True)
class FlowBufferTimeout:
    """Algorithm 1 lines 12-13: switch ``dpid`` takes the head packet of port ``port``, a packet
    of a flow it already buffers, and the flow's timeout has expired: the packet is queued
    and another packet-in is sent."""

    dpid: int
    port: int
    rank: ClassVar[int] = 7

    def __str__(self) -> str:
        return f"s{self.dpid} processes the packet from port {self.port} after its flow's buffer timed out"


def _is_ryu(app: Any) -> bool:
    return any(klass.__name__ == "RyuAdapter" for klass in type(app).__mro__)


class Buffer(OpenFlow):
    """Switch buffers (Li et al.): finite capacity; packet or flow granularity (one packet-in per flow)."""

    name = "buffer"
    params = (
        Param("granularity", "choice", "packet", "buffer each missed packet, as OpenFlow does, or each flow "
              "with one packet-in per flow", choices=("packet", "flow")),
        Param("capacity", "int", 16, "packets a switch's buffer holds: the paper's buffer-16; 0 is no buffer",
              low=0, high=256),
        Param("timeout", "choice", "never", "at flow granularity, a buffered flow's timeout sends its "
              "packet-in again, as a nondeterministic event; or never", choices=("never", "event")),
    )

    def __init__(self, net: "Network", settings: Mapping[str, Any] | None = None) -> None:
        super().__init__(net, settings)
        self.capacity: int = self.settings["capacity"]
        self.flow = self.settings["granularity"] == "flow"
        if self.flow and self.version == "1.3":
            raise InputError(f"protocol buffer:granularity=flow models OpenFlow 1.0 switches; "
                             f"{net.app.describe()} speaks OpenFlow 1.3")
        if self.flow and _is_ryu(net.app):
            raise InputError(f"protocol buffer:granularity=flow gives buffer ids made from 5-tuples, which "
                             f"the Ryu adapter cannot hand to {net.app.describe()}")
        if self.settings["timeout"] == "event" and not self.flow:
            raise InputError("protocol buffer: timeout=event needs granularity=flow")
        self._timeouts: dict[tuple[int, int, int, int, int], bool] = {}

    def event_handlers(self) -> dict[type, Callable[["Tx", Any], None]]:
        handlers = super().event_handlers()
        if self.settings["timeout"] == "event":
            handlers[FlowBufferTimeout] = self.timeout
        return handlers

    def alternatives(self) -> dict[Any, type]:
        """(``timeout=event``) the timeout is an alternative way of processing a packet that
        joins its flow's buffer."""
        return {TIMEOUT: FlowBufferTimeout} if self.settings["timeout"] == "event" else {}

    def initial_switch_state(self, dpid: int) -> FlowBuffers:
        return ()

    def held_packets(self, ext: FlowBuffers) -> tuple[Packet, ...]:
        return tuple(packet for _bid, queue in ext for _port, packet in queue)

    def used(self, tx: "Tx", dpid: int) -> int:
        """Buffer units in use at ``dpid``: packets in its packet buffer and flow buffers."""
        net = self.net
        return len(tx.get(net.slot_buffer[dpid])) + sum(len(queue) for _bid, queue in tx.get(net.slot_ext[dpid]))

    # ---- packet granularity ------------------------------------------------------------

    def buffer_packet(self, tx: "Tx", dpid: int, in_port: int, packet: Packet) -> Any:
        """OpenFlow's buffering while a unit is free; None (the packet is not kept) when full."""
        if self.used(tx, dpid) >= self.capacity:
            return None
        return super().buffer_packet(tx, dpid, in_port, packet)

    def table_miss(self, tx: "Tx", dpid: int, in_port: int, packet: Packet, table_id: int) -> None:
        """Buffer the packet (by packet or by flow) and send a packet-in, or, at flow
        granularity, queue it behind its flow's earlier packets."""
        if self.version == "1.3":
            super().table_miss(tx, dpid, in_port, packet, table_id)
            return
        if self.flow:
            self._flow_miss(tx, dpid, in_port, packet, table_id)
            return
        buffer_id = self.buffer_packet(tx, dpid, in_port, packet)
        if buffer_id is None:
            tx.note(lambda: f"s{dpid}: table miss for {packet} from port {in_port}; no free buffer "
                    f"unit (capacity {self.capacity}): the packet-in carries the whole packet")
        else:
            tx.note(lambda: f"s{dpid}: table miss for {packet} from port {in_port}; buffered, packet-in sent")
        self.send_packet_in(tx, PacketIn(dpid, in_port, buffer_id, packet, table_id))

    # ---- flow granularity (Algorithm 1) ------------------------------------------------

    def _flow_miss(self, tx: "Tx", dpid: int, in_port: int, packet: Packet, table_id: int) -> None:
        slot = self.net.slot_ext[dpid]
        buffers: FlowBuffers = tx.get(slot)
        bid = flow_buffer_id(packet.hdr)
        queues = dict(buffers)
        if self.used(tx, dpid) >= self.capacity:
            tx.note(lambda: f"s{dpid}: table miss for {packet} from port {in_port}; no free buffer "
                    f"unit (capacity {self.capacity}): the packet-in carries the whole packet")
            self.send_packet_in(tx, PacketIn(dpid, in_port, None, packet, table_id))
            return
        first = bid not in queues
        if not first:
            self.ties.reach(TIMEOUT)  # where FlowBufferTimeout is an alternative (see Ties.reach)
        queues[bid] = queues.get(bid, ()) + ((in_port, packet),)
        tx.put(slot, tuple(sorted(queues.items())))
        if first:
            tx.note(lambda: f"s{dpid}: table miss for {packet} from port {in_port}; first packet of its flow: "
                    "buffered under the flow's id, packet-in sent")
        elif tx.choice == TIMEOUT:
            tx.note(lambda: f"s{dpid}: table miss for {packet} from port {in_port}; queued behind its flow, whose "
                    "timeout expired: packet-in sent again")
        else:
            tx.note(lambda: f"s{dpid}: table miss for {packet} from port {in_port}; queued behind its flow "
                    "(no packet-in)")
            return
        self.send_packet_in(tx, PacketIn(dpid, in_port, bid, packet, table_id))

    # ---- release (Algorithm 2) ---------------------------------------------------------

    def release_buffered(self, tx: "Tx", dpid: int, buffer_id: Any, actions: tuple[Any, ...],
                         transform: Callable[[Packet], Packet] | None = None) -> None:
        """Packet granularity: OpenFlow's. Flow granularity: every packet buffered under the
        flow's id, in arrival order, gets ``actions``."""
        if not self.flow:
            super().release_buffered(tx, dpid, buffer_id, actions, transform)
            return
        slot = self.net.slot_ext[dpid]
        queues = dict(tx.get(slot))
        queue = queues.pop(buffer_id, ())
        if not queue:
            tx.note(lambda: f"s{dpid}: flow buffer {show_flow_id(buffer_id)} is empty; nothing to release")
            return
        tx.put(slot, tuple(sorted(queues.items())))
        tx.note(lambda: f"s{dpid} releases the {len(queue)} packet{'s' if len(queue) > 1 else ''} of flow buffer "
                f"{show_flow_id(buffer_id)} with {format_actions(actions)}")
        for in_port, packet in queue:
            if transform is not None:
                packet = transform(packet)
            goto = self.execute(tx, dpid, in_port, packet, actions)
            if goto is not None:
                self.pipeline(tx, dpid, in_port, packet, goto)

    # ---- the timeout event -------------------------------------------------------------

    def switch_events(self) -> tuple[SwitchEvents, ...]:
        """(``timeout=event``) a timeout for each port whose head packet would join its flow's
        buffer (by switch, port): decided by the switch's own slots."""
        if self.settings["timeout"] != "event":
            return ()
        return (SwitchEvents(("ext", "table", "ports"), self._timeout_events),)

    def _timeout_events(self, state: Sequence[int], dpid: int) -> tuple[FlowBufferTimeout, ...]:
        slot = self.net.slot_ext[dpid]
        ext = state[slot]
        if not self.net._values[slot][ext]:
            return ()  # no flow buffered
        return head_events(self.net, state, dpid, ext, self._joins_flow, FlowBufferTimeout)

    def _joins_flow(self, state: Sequence[int], dpid: int, port: int, table: int, ext: int, queue: int) -> bool:
        """Whether the head packet of ``dpid``:``port`` would miss and join a buffered flow
        (cached per table, flow buffers and queue; the packet buffer is empty at flow
        granularity, so the capacity check only reads the flow buffers)."""
        key = (dpid, port, table, ext, queue)
        found = self._timeouts.get(key)
        if found is None:
            missed = head_miss(self.net, state, dpid, port)
            buffers: FlowBuffers = self.net._values[self.net.slot_ext[dpid]][ext]
            found = (missed is not None and flow_buffer_id(missed[0].hdr) in dict(buffers)
                     and sum(len(q) for _bid, q in buffers) < self.capacity)
            self._timeouts[key] = found
        return found

    def timeout(self, tx: "Tx", ev: FlowBufferTimeout) -> None:
        """The switch processes the head packet after its flow's timeout expired."""
        tx.choice = TIMEOUT
        self.switch_packet(tx, ev.dpid, ev.port)
