"""What a switch would do with the head packet of an input port: for variants whose events
are alternative ways of processing that packet (a meter dropping it, a timeout firing).

Such an event is enabled exactly when the ordinary processing of the packet reaches the
point where the variant makes its choice (a table miss, for the variants here). This module
predicts that point from the state, without applying anything: a pure function of the
switch's flow table and the packet, so variants cache it per (table, queue) value.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

from nice_attendre.models import flowtable
from nice_attendre.models.packet import GotoTable, Packet, rewritten

if TYPE_CHECKING:
    from nice_attendre.models.network import Network


def head_packet(net: "Network", state: Sequence[int], dpid: int, port: int) -> Packet | None:
    """The head packet of switch ``dpid``'s input port ``port`` in ``state``, if any."""
    queue = net._queues.values[state[net.slot_port[(dpid, port)]]]
    return net._items.values[queue[0]] if queue else None


def head_miss(net: "Network", state: Sequence[int], dpid: int, port: int) -> tuple[Packet, int] | None:
    """If the ordinary processing of the head packet of ``dpid``:``port`` in ``state``
    (:meth:`~nice_attendre.models.protocols.openflow.OpenFlow.switch_packet`) ends in a table
    miss: (the packet as the miss sees it, the table of the miss); otherwise None.

    It follows the pipeline as OpenFlow does: a looping packet is dropped before matching;
    a hit goes on only through the entry's goto action, with the packet its set-field actions
    rewrote (its other actions never change the packet or the table). At a tie of
    equal-priority entries it takes the first, as the ordinary processing does (the other
    choices are :mod:`~nice_attendre.models.protocols.ties`'). An entry with Attendre fields
    ends the walk (no variant that uses this has them)."""
    packet = head_packet(net, state, dpid, port)
    if packet is None:
        return None
    hop = (dpid, port)
    if hop in packet.trail:
        return None
    slot = net.slot_table[dpid]
    table = net._values[slot][state[slot]]
    table_id = 0
    while True:
        index = flowtable.lookup(table, table_id, packet.hdr, port)
        if index < 0:
            return packet._replace(ac=None, trail=packet.trail + (hop,)), table_id
        entry = table[index]
        if entry.buffer is not None or entry.encap is not None:
            return None
        gotos = [action.table_id for action in entry.actions or () if type(action) is GotoTable]
        if not gotos:
            return None
        packet = rewritten(packet, entry.actions or ())  # the next table sees its set-fields
        table_id = gotos[-1]


#: ``decides(state, dpid, port, table, ext, queue)``: whether a variant's event is enabled for
#: the head packet of ``dpid``:``port`` (``table``, ``ext`` and ``queue`` are the ids of the
#: switch's flow table, its variant state and the port's queue in ``state``).
HeadDecision = Callable[[Sequence[int], int, int, int, int, int], bool]


def head_events(net: "Network", state: Sequence[int], dpid: int, ext: int, decides: HeadDecision,
                make: Callable[[int, int], Any]) -> tuple[Any, ...]:
    """``make(dpid, port)`` for each input port of switch ``dpid``, in port order, whose queue
    is not empty and whose head packet ``decides`` enables the event (``ext``: the id of
    the switch's variant state in ``state``). Reads the switch's table and port queues only."""
    table = state[net.slot_table[dpid]]
    found = []
    for port in net.topology.ports[dpid]:
        queue = state[net.slot_port[(dpid, port)]]
        if queue and decides(state, dpid, port, table, ext, queue):
            found.append(make(dpid, port))
    return tuple(found)
