"""Delivery: what hosts sent reaches whom it was meant for, and nobody else (NICE's NoDrop).

A packet is meant for the host it is addressed to, and an answer for the host whose packet
it answers (the ``reply`` of its flow), whatever address it carries: behind a NAT or a
virtual IP an answer is addressed to the public address, which is no host's, and only this
pairing tells whom it is for. Packets are judged by identity (origin host and sequence
number), so headers rewritten on the way do not matter.
"""
from __future__ import annotations

from typing import Any

from nice_attendre.models.network import Network
from nice_attendre.property import Property

DESCRIPTION = ("when nothing more can happen, every packet a host sent to another host reached it (an answer: "
               "the host whose packet it answers, whatever address it carries), and no host got a packet "
               "meant for another")


def _label(origin: str, seq: int, answers: dict[tuple[str, int], tuple[str, int]]) -> str:
    """``h3#0``, or ``h3#0 (the answer to h1#0)`` for an answer."""
    request = answers.get((origin, seq))
    return f"{origin}#{seq}" if request is None else f"{origin}#{seq} (the answer to {request[0]}#{request[1]})"


def _problems(net: Network, state: Any) -> list[str]:
    """Every packet a host sent to another host that it never received, then every packet a
    host received that was meant for another (by identity: a header rewritten on the way
    does not matter)."""
    hosts = net.topology.hosts
    values = {h: net.value(state, f"host:{h}") for h in hosts}
    received = {h: {(origin, seq) for _hdr, origin, seq in values[h].received} for h in hosts}
    meant: dict[tuple[str, int], str] = {}
    answers: dict[tuple[str, int], tuple[str, int]] = {}
    for host in hosts:
        hs = values[host]
        for seq, requester, request in hs.answer_to:
            answers[(host, seq)] = (requester, request)
        for seq, hdr, _kind in hs.sent_log:
            to = hs.addressee(seq, hdr, net.host_of_mac)
            if to is not None and to != host:
                meant[(host, seq)] = to
    missing = [f"{_label(origin, seq, answers)} never reached {to}"
               for (origin, seq), to in meant.items() if (origin, seq) not in received[to]]
    wrong = [f"{host} received {_label(origin, seq, answers)}, meant for {meant[(origin, seq)]}"
             for host in hosts for _hdr, origin, seq in values[host].received
             if meant.get((origin, seq), host) != host]
    return missing + wrong


def delivery(net: Network) -> Property:
    """When nothing more can happen, every packet a host sent to another host reached it (an
    answer: the host whose packet it answers, whatever address it carries), and no host got
    a packet meant for another."""
    alerts_slot = net.slot_alerts
    alert_values = net.interned(alerts_slot)
    host_slots = tuple(net.slot_host[h] for h in net.topology.hosts)
    verdicts: dict[tuple[int, ...], bool] = {}

    def misdelivered(state: Any) -> list[str]:
        return [detail for kind, detail in alert_values[state[alerts_slot]] if kind == "delivery"]

    def holds(state: Any) -> bool:
        key = tuple(state[slot] for slot in host_slots)
        verdict = verdicts.get(key)
        if verdict is None:
            verdict = verdicts[key] = not _problems(net, state)
        return verdict and not misdelivered(state)

    def explain(state: Any) -> str:
        return "; ".join(misdelivered(state) + _problems(net, state))

    return Property.at_quiescence("delivery", holds, DESCRIPTION, explain)
