"""Properties of the installed forwarding state."""
from __future__ import annotations

from typing import Any

from nice_attendre.models.flowtable import lookup
from nice_attendre.models.messages import TABLE
from nice_attendre.models.network import Network
from nice_attendre.models.packet import Flood, GotoTable, Header, Output, SetField, ToController
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
    whose link is down, or brings it back to a port it came in by is a stale route.
    """
    start = net.value(state, f"host:{src}").location
    pending = [(start[0], start[1], (), 0, hdr)]
    while pending:
        dpid, in_port, seen, table_id, hdr = pending.pop()
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
                pending.append((dpid, in_port, seen, action.table_id, hdr))
                handled = True
            elif isinstance(action, SetField):
                hdr = hdr._replace(**{action.field: action.value})
        if not ports and not handled:
            return f"s{dpid} drops packets {hdr} (entry [{table[index]}])"
        for port in ports:
            peer = net.attached(state, dpid, port)
            if peer is None:
                where = ("whose link is down" if net.faults is not None and net.faults.is_down(state, dpid, port)
                         else "where nothing is attached")
                return f"s{dpid} sends packets {hdr} out of port {port}, {where} (entry [{table[index]}])"
            if isinstance(peer, Peer):
                pending.append((peer.node, peer.port, seen, 0, hdr))
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


def intended_paths(net: Network) -> Property:
    """Every packet follows the path its app chose for its flow (apps that choose paths say
    which through an ``intended_path(app_state, header)`` method, e.g. energy-te)."""
    from nice_attendre.errors import InputError

    app = net.app
    intended = getattr(app, "intended_path", None)
    if intended is None:
        raise InputError(f"property intended-paths needs an app with an intended_path(state, header) "
                         f"method; {app.describe()} has none")
    slots = [net.slot_index[name] for name in net.slot_names if name.startswith(("port:", "inbox:"))]
    app_slot = net.slot_app
    verdicts: dict[tuple[int, int, int], str] = {}

    def deviation(state: Any, slot: int) -> str:
        key = (slot, state[slot], state[app_slot])
        found = verdicts.get(key)
        if found is None:
            found = ""
            app_state = net.value(state, "app")
            for packet in net.value(state, net.slot_names[slot]):
                path = intended(app_state, packet.hdr)
                crossed = tuple(dpid for dpid, _port in packet.trail)
                if path is not None and crossed != tuple(path[:len(crossed)]):
                    found = (f"{packet.label()} [{packet.hdr}] crossed " + " ".join(f"s{d}" for d in crossed)
                             + " but the app chose " + " ".join(f"s{d}" for d in path))
                    break
            verdicts[key] = found
        return found

    def holds(state: Any) -> bool:
        return not any(deviation(state, slot) for slot in slots)

    def explain(state: Any) -> str:
        return "; ".join(found for slot in slots if (found := deviation(state, slot)))

    return Property.always("intended-paths", holds, "every packet follows the path its app chose for its flow",
                           explain)
