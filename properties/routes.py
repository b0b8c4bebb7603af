"""Properties of the installed forwarding state."""
from __future__ import annotations

from typing import Any

from nice_attendre.models.flowtable import Entry, candidates
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
    whose link is down, or brings it back to a port it came in by is a stale route. Where
    entries of equal priority tie (:func:`~nice_attendre.models.flowtable.candidates`), the
    switch may choose any of them: each is followed. OpenFlow 1.0's exact-match-first rule
    applies as the switches apply it.
    """
    exact_first = net.protocol.version == "1.0"
    start = net.value(state, f"host:{src}").location
    pending = [(start[0], start[1], (), 0, hdr)]
    while pending:
        dpid, in_port, seen, table_id, hdr = pending.pop()
        if (dpid, in_port, table_id) in seen:
            return f"packets {hdr} loop through s{dpid} port {in_port}"
        seen = seen + ((dpid, in_port, table_id),)
        table = net.value(state, f"table:{dpid}")
        hit = candidates(table, table_id, hdr, in_port, exact_first)
        for index in (hit,) if isinstance(hit, int) else hit:
            if index >= 0 and table[index].actions is not None:
                found = _follow_entry(net, state, dpid, in_port, seen, hdr, table[index], pending)
                if found is not None:
                    return found
    return None


def _follow_entry(net: Network, state: Any, dpid: int, in_port: int, seen: tuple[Any, ...], hdr: Header,
                  entry: Entry, pending: list[Any]) -> str | None:
    """:func:`stale_route` at one entry a packet ``hdr`` hits at ``dpid`` (in by ``in_port``):
    why it loses the packet, or None after adding where the packet goes next to ``pending``."""
    ports: list[int] = []
    handled = False
    for action in entry.actions:
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
        return f"s{dpid} drops packets {hdr} (entry [{entry}])"
    for port in ports:
        peer = net.attached(state, dpid, port)
        if peer is None:
            where = ("whose link is down" if net.faults is not None and net.faults.is_down(state, dpid, port)
                     else "where nothing is attached")
            return f"s{dpid} sends packets {hdr} out of port {port}, {where} (entry [{entry}])"
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


# ---- the stricter check: ask the controller ---------------------------------------------

#: The sequence number of the probe packet (no host's packet has it: seqs start at 0).
PROBE_SEQ = -1
#: Most steps a probe may take before it counts as never settling.
PROBE_STEPS = 1000


def _followed() -> dict[type, int]:
    """The events a probe follows, by preference: the controller's answer takes effect before
    the packet moves on (handle, then the switches' commands, then a variant's own timers),
    then the packet moves, then hosts take it. Choices that are not the packet's journey
    (faults, expiries, new sends, statistics outcomes, meter drops) are never taken."""
    from nice_attendre.models.events import ControllerHandle, HostReceive, SwitchProcessCommand, SwitchProcessPacket
    from nice_attendre.models.protocols.batch import BatchTimerFires
    from nice_attendre.models.protocols.buffer import FlowBufferTimeout

    return {ControllerHandle: 0, SwitchProcessCommand: 1, BatchTimerFires: 2, FlowBufferTimeout: 2,
            SwitchProcessPacket: 3, HostReceive: 4}


def _reachable(net: Network, state: Any, src: str, dst: str) -> bool:
    """Whether a path of links that are up joins ``src`` to ``dst`` in ``state``."""
    start = net.value(state, f"host:{src}").location
    if net.attached(state, *start) != src:
        return False
    seen, pending = {start[0]}, [start[0]]
    while pending:
        dpid = pending.pop()
        for port in net.topology.ports[dpid]:
            peer = net.attached(state, dpid, port)
            if peer == dst:
                return True
            if isinstance(peer, Peer) and peer.node not in seen:
                seen.add(peer.node)
                pending.append(peer.node)
    return False


def probe(net: Network, state: Any, src: str, hdr: Header, narrate: bool = False) -> tuple[bool, list[str]]:
    """Send one more packet ``hdr`` from ``src`` in quiescent ``state`` and follow it through
    the network (the app runs for its packet-ins; the commands it sends take effect before the
    packet moves on): whether it reaches the host it is addressed to (any other host, for an
    address no host has), and with ``narrate`` what happened, one line per step."""
    from nice_attendre.models.packet import Packet

    followed = _followed()
    location = net.value(state, f"host:{src}").location
    link = f"port:{location[0]}:{location[1]}"
    packet = Packet(hdr, src, PROBE_SEQ, "probe")
    current = net.encode({link: net.value(state, link) + (packet,)}, base=state)
    lines: list[str] = []
    for _step in range(PROBE_STEPS):
        events = [event for event in net.enabled(current) if type(event) in followed]
        if not events:
            break
        event = min(events, key=lambda e: followed[type(e)])  # stable: the first of its kind
        if narrate:
            current, notes = net.narrate(current, event)
            lines.extend(notes)
        else:
            current = net.apply_uncached(current, event)
    else:
        lines.append(f"(still going after {PROBE_STEPS} steps)")
    label = f"{src}#{PROBE_SEQ}"
    lines = [line.replace(f"buffered probe {label}", "the buffered probe").replace(f"probe {label}", "the probe")
             .replace(label, "the probe") for line in lines]
    dst = net.host_of_mac.get(hdr.eth_dst)
    reached = [host for host in net.topology.hosts if host != src
               and any(origin == src and seq == PROBE_SEQ for _h, origin, seq in net.received(current, host))]
    return (dst in reached if dst is not None else bool(reached)), lines


def strict_no_stale_routes(net: Network) -> Property:
    """When nothing more can happen, every flow of the scenario sent again reaches its
    destination (when a path of live links leads there): through the flow tables, or where
    they miss through what the controller then does (the app runs for the packet-in, its
    commands take effect before the packet moves on), so a controller that sends the packet
    into a dead link fails. Stricter than no-stale-routes, which accepts any table miss."""
    flows = _flows(net)
    skip = {net.slot_alerts, net.slot_history, net.slot_expired, net.slot_load,
            *net.slot_host.values()}
    slots = tuple(slot for slot in range(len(net.slot_names)) if slot not in skip)
    host_slots = tuple(net.slot_host[h] for h in net.topology.hosts)
    host_values = net.interned(host_slots[0]) if host_slots else []
    verdicts: dict[Any, tuple[str, ...]] = {}

    def problems(state: Any, narrate: bool = False) -> tuple[str, ...]:
        key = (tuple(state[slot] for slot in slots), tuple(host_values[state[slot]].location for slot in host_slots))
        found = None if narrate else verdicts.get(key)
        if found is None:
            listed = []
            for src, hdr in flows:
                stale = stale_route(net, state, src, hdr)
                if stale is not None:
                    listed.append(stale)
                    continue
                dst = net.host_of_mac.get(hdr.eth_dst)
                if dst is not None and not _reachable(net, state, src, dst):
                    continue  # no app could deliver it now
                reached, lines = probe(net, state, src, hdr, narrate)
                if not reached:
                    where = dst if dst is not None else "any host"
                    told = [line for line in lines if "the probe" in line or line.startswith(("controller sends",
                                                                                             "ALERT", "(still"))]
                    listed.append(f"a packet [{hdr}] sent by {src} now would not reach {where}"
                                  + (": " + "; ".join(told) if told else ""))
            found = verdicts[key] = tuple(listed)
        return found

    return Property.at_quiescence(
        "strict-no-stale-routes", lambda state: not problems(state),
        "when nothing more can happen, every flow of the scenario sent again reaches its destination where "
        "a path of live links leads there, through the tables or, where they miss, what the controller then "
        "does (a packet the controller sends into a dead link fails)",
        lambda state: "; ".join(problems(state, narrate=True)))


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
