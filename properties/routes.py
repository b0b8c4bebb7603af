"""Properties of the installed forwarding state."""
from __future__ import annotations

from typing import Any

from nice_attendre.models.flowtable import lookup
from nice_attendre.models.messages import TABLE
from nice_attendre.models.network import Network
from nice_attendre.models.packet import Flood, GotoTable, Header, Output, ToController
from nice_attendre.models.topology import Peer
from nice_attendre.property import Property


def _flows(net: Network) -> list[tuple[str, Header]]:
    """(source host, header) of every flow the scenario's hosts send, answers included."""
    flows: list[tuple[str, Header]] = []
    for spec in net.scenario.hosts:
        for hdr, _kind in spec.script:
            for flow in ((spec.name, hdr), (hdr.eth_dst, hdr.reversed())):
                if flow not in flows and flow[0] in net.topology.hosts:
                    flows.append(flow)
    return flows


def stale_route(net: Network, state: Any, src: str, hdr: Header) -> str | None:
    """Why the flow tables would lose a packet ``hdr`` sent by ``src`` now, or None.

    The packet is followed from ``src``'s current attachment through the tables. A table
    miss or a send-to-controller is fine (the controller decides); reaching the destination
    is fine; an entry that drops it, sends it out of a port where nothing is attached or
    brings it back to a port it came in by is a stale route.
    """
    start = net.value(state, f"host:{src}").location
    pending = [(start[0], start[1], (), 0)]
    while pending:
        dpid, in_port, seen, table_id = pending.pop()
        if (dpid, in_port, table_id) in seen:
            return f"packets {hdr} loop through s{dpid} port {in_port}"
        seen = seen + ((dpid, in_port, table_id),)
        table = net.value(state, f"table:{dpid}")
        index = lookup(table, table_id, hdr, in_port)
        if index < 0 or table[index].actions is None:
            continue
        ports: list[int] = []
        handled = False
        for action in table[index].actions:
            if isinstance(action, Output):
                if action.port == TABLE:
                    handled = True
                elif action.port != in_port:
                    ports.append(action.port)
            elif isinstance(action, Flood):
                handled = True  # flooding loses nothing a learning app will not fix
                ports.extend(p for p in net.topology.ports[dpid] if p != in_port and net.attached(state, dpid, p))
            elif isinstance(action, ToController):
                handled = True
            elif isinstance(action, GotoTable):
                pending.append((dpid, in_port, seen, action.table_id))
                handled = True
        if not ports and not handled:
            return f"s{dpid} drops packets {hdr} (entry [{table[index]}])"
        for port in ports:
            peer = net.attached(state, dpid, port)
            if peer is None:
                return (f"s{dpid} sends packets {hdr} out of port {port}, where nothing is attached "
                        f"(entry [{table[index]}])")
            if isinstance(peer, Peer):
                pending.append((peer.node, peer.port, seen, 0))
    return None


def no_stale_routes(net: Network) -> Property:
    """When nothing more can happen, the flow tables never drop or loop a packet of a flow."""
    flows = _flows(net)

    def problems(state: Any) -> list[str]:
        return [found for src, hdr in flows if (found := stale_route(net, state, src, hdr)) is not None]

    return Property.at_quiescence(
        "no-stale-routes", lambda state: not problems(state),
        "when nothing more can happen, the flow tables deliver every flow of the scenario or "
        "send it to the controller (never drop or loop it)",
        lambda state: "; ".join(problems(state)))
