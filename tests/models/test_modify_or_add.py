"""OpenFlow 1.0's OFPFC_MODIFY (the native ``command="modify-or-add"``) that finds no entry adds
one as an add would: with the flow-mod's timeouts, its flow-removed request and its cookie
(before, the entry it added had none: it never expired, a behaviour real switches have)."""
from __future__ import annotations

from nice_attendre import verify
from nice_attendre.models.app import App, Out
from nice_attendre.models.messages import FlowRemoved, PacketIn
from nice_attendre.models.packet import Match, Output


class ModifyRouter(App[None]):
    """Installs each hop's entry with a 1.0 modify (no entry is there yet: each adds one),
    expiring after 5 idle seconds and telling the app; ``on_flow_removed`` raises, so the
    expiry is reported as an app exception with its trace."""

    default_properties = ("no-forgotten-packets",)

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        hdr = ev.packet.hdr
        (port,) = [p for d, p in out.topology.path(ev.dpid, hdr.eth_dst) if d == ev.dpid]
        out.flow_mod(ev.dpid, Match.exact(hdr), [Output(port)], command="modify-or-add", idle_timeout=5,
                     notify_removed=True, cookie=0x77, buffer_id=ev.buffer_id)
        return state

    def on_flow_removed(self, state: None, ev: FlowRemoved, out: Out) -> None:
        raise RuntimeError(f"entry of cookie {ev.timeouts.cookie:#x} expired at s{ev.dpid}")


def test_a_modify_that_adds_gives_the_entry_its_timeouts_notice_and_cookie() -> None:
    result = verify(ModifyRouter(), topology="linear:1", packets=1, keep_going=True)
    reasons = [d.reason for d in result.discoveries if d.property == "app-exception"]
    assert reasons and any("entry of cookie 0x77 expired at s1" in reason for reason in reasons), result.discoveries
