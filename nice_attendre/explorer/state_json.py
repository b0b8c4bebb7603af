"""One network state as JSON for the explorer's page, read through
:class:`~nice_attendre.models.view.View` (the names a property sees), with every object shown
as the traces show it (its ``str``) and every string :func:`printable`.

:func:`layout` places the topology once (it never changes): a chain of switches on a line,
any other graph by a seeded spring layout (the same picture every time).
"""
from __future__ import annotations

from typing import Any

from nice_attendre.frontend.report import printable


def _texts(items: Any) -> list[str]:
    return [printable(str(item)) for item in items]


def _end(text: str) -> tuple[str, int | None]:
    """``"s2:1"`` -> ``("s2", 1)``; a host name -> ``(name, None)``."""
    if text.startswith("s") and ":" in text:
        node, port = text.split(":", 1)
        return node, int(port)
    return text, None


def app_json(value: Any, before: Any = None, has_before: bool = False) -> dict[str, Any]:
    """The app's state: ``fields`` (name and value, for a dataclass, named tuple or mapping),
    ``text`` (the whole value) and ``changes`` (what the last step changed, as traces say it)."""
    import dataclasses

    from nice_attendre.models.app_diff import plain, state_changes

    fields: list[list[str]] = []
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = [[f.name, printable(repr(plain(getattr(value, f.name))))] for f in dataclasses.fields(value)]
    elif isinstance(value, tuple) and hasattr(value, "_fields"):
        fields = [[name, printable(repr(plain(item)))] for name, item in zip(value._fields, value)]
    elif isinstance(value, dict):
        fields = [[printable(repr(key)), printable(repr(plain(item)))] for key, item in value.items()]
    changes = state_changes(before, value) if has_before and before != value else []
    return {"text": printable(repr(plain(value))), "fields": fields, "changes": [printable(line) for line in changes]}


def state_json(net: Any, state: Any, before: Any = None) -> dict[str, Any]:
    """``state`` of network ``net``: switches (flow table, buffer, pending commands, messages
    to the controller), hosts, links (up or down, and the packets in flight towards each
    end), the app's state (with what changed since ``before``, the previous state, if given),
    the platform's held messages and the alerts."""
    from nice_attendre.models.view import View

    view = View(net, state)
    switches = []
    for dpid, switch in view.switches.items():
        buffered = _texts(switch.buffered)
        switches.append({"id": f"s{dpid}", "dpid": dpid, "table": _texts(switch.table), "buffered": buffered,
                         "pending": _texts(switch.pending), "to_controller": _texts(view.to_controller[dpid])})
    hosts = []
    for name, host in view.hosts.items():
        hosts.append({"id": name, "location": f"s{host.location[0]}:{host.location[1]}",
                      "sent": [f"#{s.seq} {s.kind} to {s.to}" for s in host.sent],
                      "received": [f"{r.origin}#{r.seq}" for r in host.received]})
    flying: dict[str, list[str]] = {}
    for item in view.in_flight:
        flying.setdefault(item.at, []).append(printable(str(item.packet)))
    links = []
    for link in view.links:
        a_node, a_port = _end(link.a)
        b_node, b_port = _end(link.b)
        links.append({"a": link.a, "b": link.b, "a_node": a_node, "b_node": b_node, "a_port": a_port,
                      "b_port": b_port, "up": link.up,
                      "to_a": flying.pop(link.a, []), "to_b": flying.pop(link.b, [])})
    before_app = net.value(before, "app") if before is not None else None
    return {
        "switches": switches,
        "hosts": hosts,
        "links": links,
        "in_flight_elsewhere": [{"at": at, "packets": packets} for at, packets in flying.items()],
        "app": app_json(view.app, before_app, before is not None),
        "held": [{"switch": f"s{h.dpid}", "waiting": [f"s{d}" for d in h.waiting], "messages": _texts(h.messages)}
                 for h in view.held],
        "alerts": [printable(f"{kind}: {detail}") for kind, detail in net.alerts(state)],
        "faults_left": dict(view.faults_left),
    }


def layout(net: Any) -> dict[str, Any]:
    """Where the page draws each node: ``nodes`` ({id, kind, x, y}, coordinates in 0..1) and
    ``links`` (the topology's, once each). Switches in a chain go on a line in order; other
    graphs get a spring layout with a fixed seed. Hosts sit next to their switch."""
    import math

    import networkx as nx

    topology = net.topology
    graph = nx.Graph()
    graph.add_nodes_from(topology.switches)
    for (dpid, _port), peer in topology.links.items():
        if not peer.is_host:
            graph.add_edge(dpid, peer.node)
    where: dict[Any, tuple[float, float]] = {}
    degrees = dict(graph.degree())
    count = len(topology.switches)
    chain = count >= 1 and nx.is_connected(graph) and (count == 1 or (
        graph.number_of_edges() == count - 1 and max(degrees.values()) <= 2))
    if chain:
        ends = [node for node in topology.switches if degrees[node] <= 1]
        order = list(nx.dfs_preorder_nodes(graph, ends[0])) if count > 1 else list(topology.switches)
        for position, node in enumerate(order):
            where[node] = ((position + 1) / (count + 1), 0.8)
    else:
        placed = nx.spring_layout(graph, seed=7)
        xs = [float(p[0]) for p in placed.values()] or [0.0]
        ys = [float(p[1]) for p in placed.values()] or [0.0]
        span_x, span_y = (max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0
        for node, (x, y) in placed.items():
            where[node] = (0.15 + 0.7 * (float(x) - min(xs)) / span_x, 0.15 + 0.7 * (float(y) - min(ys)) / span_y)
    nodes = [{"id": f"s{dpid}", "kind": "switch", "x": where[dpid][0], "y": where[dpid][1]}
             for dpid in topology.switches]
    cx = sum(x for x, _y in where.values()) / max(len(where), 1)
    cy = sum(y for _x, y in where.values()) / max(len(where), 1)
    by_switch: dict[int, list[str]] = {}
    for host in topology.hosts:
        by_switch.setdefault(topology.host_port[host][0], []).append(host)
    for dpid, hosts in by_switch.items():
        x, y = where[dpid]
        base = math.atan2(y - cy, x - cx) if (x, y) != (cx, cy) else -math.pi / 2
        if chain and count > 1:
            base = math.pi if x == min(p[0] for p in where.values()) else (
                0.0 if x == max(p[0] for p in where.values()) else math.pi / 2)
        for k, host in enumerate(hosts):
            angle = base + (k - (len(hosts) - 1) / 2) * 0.7
            radius = 0.12 if count > 1 else 0.3
            nodes.append({"id": host, "kind": "host", "x": x + radius * math.cos(angle),
                          "y": y + radius * math.sin(angle) * (1.6 if chain else 1.0)})
    return {"nodes": nodes}
