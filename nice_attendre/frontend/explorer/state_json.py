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
    end; ``vacant``: a host's link it has moved away from, and its link at the new place), the app's state (with what changed since ``before``, the previous state, if given),
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
                      "sent": [printable(f"{s.kind} {name}#{s.seq} [{s.header}]") for s in host.sent],
                      "received": [printable(f"{r.origin}#{r.seq} [{r.header}]") for r in host.received]})
    flying: dict[str, list[str]] = {}
    for item in view.in_flight:
        flying.setdefault(item.at, []).append(printable(str(item.packet)))
    links = []
    ends = [(link.a, link.b, link.up) for link in view.links]
    # a host that moved (a mobile host) is on the link at its new place, not its old one
    here = {(f"s{host.location[0]}:{host.location[1]}", name) for name, host in view.hosts.items()}
    ends += [(a, b, True) for a, b in sorted(here - {(a, b) for a, b, _up in ends})]
    for a, b, up in ends:
        a_node, a_port = _end(a)
        b_node, b_port = _end(b)
        vacant = b_node in view.hosts and (a, b) not in here  # the host left that port
        links.append({"a": a, "b": b, "a_node": a_node, "b_node": b_node, "a_port": a_port,
                      "b_port": b_port, "up": up, "vacant": vacant,
                      "to_a": flying.pop(a, []), "to_b": [] if vacant else flying.pop(b, [])})
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
    """Where the page draws each node: ``nodes`` ({id, kind, x, y}, coordinates in 0..1, the
    controller drawn above y = 0.2). A chain of switches goes on a line in order, with the
    hosts at its ends or under their switch; any other graph (hosts included) gets a spring
    layout with a fixed seed, so the picture is the same every time."""
    import networkx as nx

    topology = net.topology
    graph = nx.Graph()
    graph.add_nodes_from(f"s{dpid}" for dpid in topology.switches)
    for (dpid, _port), peer in topology.links.items():
        if not peer.is_host:
            graph.add_edge(f"s{dpid}", f"s{peer.node}")
    count = len(topology.switches)
    degrees = dict(graph.degree())
    chain = (count >= 2 and nx.is_connected(graph) and graph.number_of_edges() == count - 1
             and max(degrees.values()) <= 2)
    kinds = {node: "switch" for node in graph}
    where: dict[str, tuple[float, float]] = {}
    hosts = sorted(topology.hosts, key=lambda host: (topology.host_port[host], host))
    if chain:
        ends = sorted((node for node in graph if degrees[node] == 1), key=lambda node: int(node[1:]))
        order = list(nx.dfs_preorder_nodes(graph, ends[0]))
        for position, node in enumerate(order):
            where[node] = ((position + 1) / (count + 1), 0.7)
        by_switch: dict[str, list[str]] = {}
        for host in hosts:
            by_switch.setdefault(f"s{topology.host_port[host][0]}", []).append(host)
        step = 0.5 / (count + 1)
        for node, attached in by_switch.items():
            x, y = where[node]
            for k, host in enumerate(attached):
                kinds[host] = "host"
                if node == order[0] and k == 0:
                    where[host] = (x - step, y)
                elif node == order[-1] and k == len(attached) - 1:
                    where[host] = (x + step, y)
                else:
                    where[host] = (x + (k - (len(attached) - 1) / 2) * step * 0.8, y + 0.25)
    else:
        for host in hosts:
            kinds[host] = "host"
            graph.add_edge(host, f"s{topology.host_port[host][0]}")
        placed = nx.spring_layout(graph, seed=7)
        xs = [float(p[0]) for p in placed.values()]
        ys = [float(p[1]) for p in placed.values()]
        span_x, span_y = (max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0
        for node, (x, y) in placed.items():
            where[node] = (0.08 + 0.84 * (float(x) - min(xs)) / span_x, 0.3 + 0.65 * (float(y) - min(ys)) / span_y)
    nodes = [{"id": f"s{dpid}", "kind": "switch", "x": where[f"s{dpid}"][0], "y": where[f"s{dpid}"][1]}
             for dpid in topology.switches]
    nodes += [{"id": host, "kind": "host", "x": where[host][0], "y": where[host][1]} for host in topology.hosts]
    return {"nodes": nodes}
