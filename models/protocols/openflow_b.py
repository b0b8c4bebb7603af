"""OpenFlow-B (paper III.C): OpenFlow with barriers to the following switches of a path.

For a path install the platform sends each following switch its flow-mod followed by a
barrier request, and holds the messages for the first switch (the flow-mod/packet-out for
the packet-in switch) until every following switch has answered its barrier. Switches are
plain OpenFlow switches (they answer a barrier once every earlier command is processed,
which in our FIFO command channel is when they reach it). This removes type-2 races; type-1
races (later packets at the packet-in switch) remain.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from nice_attendre.models.app import InstallPathRequest, Request
from nice_attendre.models.messages import BarrierReply, BarrierRequest, PacketIn
from nice_attendre.models.order import sorted_values
from nice_attendre.models.protocols.openflow import OpenFlow, PlatformState

if TYPE_CHECKING:
    from nice_attendre.models.network import Tx


class Held(NamedTuple):
    """Messages for switch ``dpid`` held until barrier replies from ``waiting`` arrive.

    ``xid`` names the path install (``("openflow-b", first switch, its buffer id or match)``):
    an identity, not a counter; the tag keeps it apart from the app's own barriers.
    """

    xid: tuple[Any, ...]
    waiting: tuple[int, ...]
    dpid: int
    messages: tuple[Any, ...]


class OpenFlowB(OpenFlow):
    """OpenFlow-B: barriers after the following switches' flow-mods; the first switch waits."""

    name = "openflow-b"

    def dispatch(self, tx: "Tx", requests: list[Request], context: PacketIn | None) -> None:
        """Like OpenFlow, but a path's first-hop messages wait for the following hops' barriers."""
        for request in requests:
            if type(request) is not InstallPathRequest or len(request.hops) < 2:
                super().dispatch(tx, [request], context)
                continue
            first = request.hops[0]
            xid = ("openflow-b", (first.dpid, request.buffer_id if request.buffer_id is not None else first.match))
            following = request.hops[1:]
            for index, hop in enumerate(following, start=1):
                self.send(tx, hop.dpid, request.flow_mod(index))
                self.send(tx, hop.dpid, BarrierRequest(xid))
            held_msg = request.flow_mod(0, request.buffer_id)
            platform: PlatformState = tx.get(self.net.slot_platform)
            waiting = tuple(sorted({hop.dpid for hop in following}))
            carried = (request.carried,) if request.carried is not None else ()
            held = Held(xid, waiting, first.dpid, (held_msg, *carried))
            tx.put(self.net.slot_platform, platform._replace(held=sorted_values(platform.held + (held,))))
            tx.note(lambda: f"controller holds {held_msg} for s{first.dpid} until barrier replies from "
                    + ", ".join(f"s{d}" for d in waiting))

    def barrier_reply(self, tx: "Tx", msg: BarrierReply) -> None:
        """A barrier reply for a held path install releases it once it is the last awaited."""
        platform: PlatformState = tx.get(self.net.slot_platform)
        for index, held in enumerate(platform.held):
            if held.xid == msg.xid and msg.dpid in held.waiting:
                waiting = tuple(d for d in held.waiting if d != msg.dpid)
                rest = platform.held[:index] + platform.held[index + 1:]
                if waiting:
                    rest = sorted_values(rest + (held._replace(waiting=waiting),))
                    tx.put(self.net.slot_platform, platform._replace(held=rest))
                    tx.note(lambda: f"controller: barrier reply from s{msg.dpid}; still waiting for "
                            + ", ".join(f"s{d}" for d in waiting))
                    return
                tx.put(self.net.slot_platform, platform._replace(held=rest))
                tx.note(lambda: f"controller: last barrier reply (s{msg.dpid}) arrived; releasing held messages")
                for held_msg in held.messages:
                    self.send(tx, held.dpid, held_msg)
                self.flush(tx)
                return
        super().barrier_reply(tx, msg)
