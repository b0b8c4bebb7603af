"""Discovered packets as traffic: flows, a scenario, the TOML file ``--scenario`` reads.

Each packet becomes a one-packet flow from the host that sends it (no answer:
``reply=none``); the app's default traffic (its ping, or the flows of its own scenario)
comes first, as flows too, so that ``verify --scenario FILE`` with the written file checks
what ``verify --discover`` checks.
"""
from __future__ import annotations

from typing import Any, Sequence

from nice_attendre.models.addresses import IP_BROADCAST, default_ip, is_address
from nice_attendre.models.flows import BROADCAST_NAME, PROTOCOLS, Flow
from nice_attendre.models.packet import BROADCAST

_NAMES = {number: name for name, number in PROTOCOLS.items()}
#: How a scripted packet's kind is answered, as a flow's reply.
_REPLIES = {"data": "echo", "oneway": "none", "syn": "tcp"}


def default_flows(scenario: Any) -> tuple[tuple[Flow, ...], str | None]:
    """The flows of the app's default traffic ``scenario``, and why some of it is not
    expressible as flows (None: all of it is)."""
    moves = [f"{spec.name}'s moves" for spec in scenario.hosts if spec.moves]
    if scenario.flows:
        return tuple(scenario.flows), ("not expressible as flows: " + ", ".join(moves)) if moves else None
    flows: list[Flow] = []
    lost: list[str] = list(moves)
    for spec in scenario.hosts:
        index = 0
        while index < len(spec.script):
            hdr, kind = spec.script[index]
            end = index
            while end < len(spec.script) and spec.script[end] == (hdr, kind):
                end += 1
            flow = _flow(spec.name, hdr, kind, end - index)
            if flow is None:
                lost.append(f"{spec.name}'s {kind} packets to {hdr.eth_dst}")
            else:
                flows.append(flow)
            index = end
    return tuple(flows), ("not expressible as flows: " + ", ".join(lost)) if lost else None


def _flow(src: str, hdr: Any, kind: str, count: int) -> Flow | None:
    reply = _REPLIES.get(kind)
    if reply is None or hdr.eth_src != src:
        return None
    if hdr.eth_dst == BROADCAST:
        dst, own_dst = BROADCAST_NAME, IP_BROADCAST
    else:
        dst = hdr.eth_dst
        own_dst = dst if is_address(dst) else default_ip(dst)
    flow = Flow(src, dst, count, _NAMES.get(hdr.ip_proto), hdr.tp_src, hdr.tp_dst,
                None if hdr.ip_src == default_ip(src) else hdr.ip_src, None if hdr.ip_dst == own_dst else hdr.ip_dst,
                reply)
    return flow if flow.header() == hdr else None


def toml_text(flows: Sequence[Flow], comments: Sequence[str | None] = ()) -> str:
    """The TOML scenario of ``flows`` (see :mod:`nice_attendre.models.flows`), each flow after
    its comment (``comments[i]``, when given)."""
    out = ["# Written by `nice-attendre discover`: the app's default traffic, then one flow per",
           "# discovered packet. Verify with: nice-attendre verify APP --scenario THIS_FILE", ""]
    for index, flow in enumerate(flows):
        comment = comments[index] if index < len(comments) else None
        if comment:
            out.append(f"# {comment}")
        out.append("[[flow]]")
        out.append(f"from = {_quote(flow.src)}")
        out.append(f"to = {_quote(flow.dst)}")
        out.append(f"packets = {flow.packets}")
        if flow.proto is not None:
            out.append(f"proto = {_quote(flow.proto)}")
        if flow.sport:
            out.append(f"sport = {flow.sport}")
        if flow.dport:
            out.append(f"dport = {flow.dport}")
        for name in ("ip_src", "ip_dst", "target"):
            if getattr(flow, name) is not None:
                out.append(f"{name} = {_quote(getattr(flow, name))}")
        out.append(f"reply = {_quote(flow.reply)}")
        out.append("")
    return "\n".join(out)


def _quote(text: str) -> str:
    """A TOML basic string."""
    import json

    return json.dumps(text)
