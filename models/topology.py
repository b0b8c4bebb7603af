"""Topologies: a networkx graph of switches and hosts, precomputed into port maps and routes.

A :class:`Topology` is configuration, never state. Switches get datapath ids 1..K in the
natural order of their names (s1, s2, ..., s10); each switch numbers its ports 1, 2, ...
in the order its links appear in the graph (the order of the file's edges, for GraphML, GML
and edge lists), so ``linear:N`` has port 1 towards the sender and port 2 towards the
replier. Routes are shortest paths. Ties break the same way on every run: the routes to a
host form the tree of a breadth-first search from the host's switch that visits each
switch's ports in ascending order, and a switch forwards to the neighbour that reached it
first in that search.
"""
from __future__ import annotations

import inspect
import io
import os
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Hashable, Iterator, Mapping

import networkx as nx

from nice_attendre.errors import TopologyError
from nice_attendre.importing import import_target, is_dir, is_file, names_file
from nice_attendre.input_files import TOPOLOGY_BYTES, read_bounded


@dataclass(frozen=True, slots=True)
class Peer:
    """What is at the other end of a switch port: a switch port or a host."""

    is_host: bool
    node: Any  # dpid (int) of a switch or host name (str)
    port: int = 0  # the peer switch's port; 0 for a host

    def __str__(self) -> str:
        return str(self.node) if self.is_host else f"s{self.node}:{self.port}"


def natural_key(name: Any) -> tuple[Any, ...]:
    """Sort key that orders ``s2`` before ``s10``."""
    parts = re.split(r"(\d+)", str(name))
    return tuple(int(p) if p.isdigit() else p for p in parts)


@dataclass(frozen=True)
class Topology:
    """Switches, hosts and links, with precomputed port maps and shortest routes.

    * ``switches``: datapath ids in order; ``switch_names[dpid]`` the graph node name;
    * ``hosts``: host names in natural order;
    * ``ports[dpid]``: the switch's port numbers, ascending;
    * ``links[(dpid, port)]``: the :class:`Peer` at the other end;
    * ``host_port[host]``: the (dpid, port) the host is attached to;
    * ``spare_ports[dpid]``: ports with nothing attached (where a mobile host may move).
    """

    name: str
    switches: tuple[int, ...]
    switch_names: Mapping[int, str]
    hosts: tuple[str, ...]
    ports: Mapping[int, tuple[int, ...]]
    links: Mapping[tuple[int, int], Peer]
    host_port: Mapping[str, tuple[int, int]]
    spare_ports: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    # A lazily filled cache, never an argument: dataclasses.replace() must not share it.
    _routes: dict[tuple[int, str], int] = field(default_factory=dict, init=False, repr=False,
                                                compare=False)
    _tree: dict[str, frozenset[tuple[int, int]]] = field(default_factory=dict, init=False, repr=False,
                                                         compare=False)

    def __hash__(self) -> int:
        return hash((self.name, self.switches, self.hosts))

    # ---- routes ---------------------------------------------------------------------

    def next_port(self, dpid: int, host: str) -> int | None:
        """The port of ``dpid`` on a shortest path to ``host`` (``None`` if unreachable)."""
        if not self._routes:
            self._compute_routes()
        return self._routes.get((dpid, host))

    def path(self, dpid: int, host: str) -> list[tuple[int, int]]:
        """The shortest path from switch ``dpid`` to ``host`` as (dpid, out_port) hops.

        Empty when ``host`` is unknown or unreachable.
        """
        hops: list[tuple[int, int]] = []
        current = dpid
        while True:
            port = self.next_port(current, host)
            if port is None or len(hops) > len(self.switches):
                return []
            hops.append((current, port))
            peer = self.links[(current, port)]
            if peer.is_host:
                return hops if peer.node == host else []
            current = peer.node

    def _tree_links(self, root: int, seen: set[int]) -> Iterator[tuple[int, int, Peer]]:
        """Breadth-first from switch ``root`` (neighbours in port order) over switches not in
        ``seen``: each (dpid, port, peer switch) link that reaches a new switch. Fills ``seen``."""
        seen.add(root)
        queue = deque([root])
        while queue:
            dpid = queue.popleft()
            for port in self.ports[dpid]:
                peer = self.links.get((dpid, port))
                if peer is None or peer.is_host or peer.node in seen:
                    continue
                seen.add(peer.node)
                queue.append(peer.node)
                yield dpid, port, peer

    def _compute_routes(self) -> None:
        # Built aside and stored in one step: an interrupted computation (a time limit hit
        # inside an app handler that asked for a route) leaves the cache empty, not partial.
        routes: dict[tuple[int, str], int] = {}
        for host, (dpid0, port0) in self.host_port.items():
            routes[(dpid0, host)] = port0
            for _dpid, _port, peer in self._tree_links(dpid0, set()):
                routes[(peer.node, host)] = peer.port
        self._routes.update(routes)

    def connected(self, host_a: str, host_b: str) -> bool:
        """Whether a packet from ``host_a`` can reach ``host_b`` over the links (the hosts
        where the topology attaches them)."""
        if host_a not in self.host_port or host_b not in self.host_port:
            return False
        start, target = self.host_port[host_a][0], self.host_port[host_b][0]
        seen: set[int] = set()
        if start == target:
            return True
        return any(peer.node == target for _d, _p, peer in self._tree_links(start, seen))

    def flood_ports(self, dpid: int) -> tuple[int, ...]:
        """The ports of ``dpid`` on a spanning tree of the switches (a breadth-first tree from
        the lowest dpid, neighbours in port order), plus every port not linked to a switch.
        Flooding only there never loops, whatever cycles the topology has."""
        if "tree" not in self._tree:
            tree: set[tuple[int, int]] = set()
            seen: set[int] = set()
            for root in self.switches:
                if root not in seen:
                    for current, port, peer in self._tree_links(root, seen):
                        tree.update(((current, port), (peer.node, peer.port)))
            self._tree["tree"] = frozenset(tree)
        tree = self._tree["tree"]

        def on_tree(port: int) -> bool:
            peer = self.links.get((dpid, port))
            return peer is None or peer.is_host or (dpid, port) in tree

        return tuple(port for port in self.ports[dpid] if on_tree(port))

    # ---- derived topologies ---------------------------------------------------------

    def with_spare_port(self, dpid: int) -> "Topology":
        """This topology with one more, unconnected port on ``dpid`` (a place to move to).

        The new port is numbered after the switch's highest port (1 on a switch without
        links). Raises :class:`TopologyError` for an unknown ``dpid``.
        """
        if dpid not in self.ports:
            raise TopologyError(f"topology {self.name!r} has no switch with dpid {dpid!r} "
                                f"(dpids: {', '.join(map(str, self.switches))})")
        new_port = max(self.ports[dpid], default=0) + 1
        ports = dict(self.ports)
        ports[dpid] = self.ports[dpid] + (new_port,)
        spare = dict(self.spare_ports)
        spare[dpid] = tuple(spare.get(dpid, ())) + (new_port,)
        return Topology(self.name, self.switches, self.switch_names, self.hosts, ports,
                        self.links, self.host_port, spare)

    def describe(self) -> str:
        """One line: name, switch count, hosts."""
        count = len(self.switches)
        return f"{self.name} ({count} switch{'es' if count != 1 else ''}, hosts {', '.join(self.hosts)})"


def _is_host(graph: nx.Graph, node: Hashable) -> bool:
    data = graph.nodes[node]
    for key in ("host", "is_host"):
        if key in data:
            value = data[key]
            return value if isinstance(value, bool) else str(value).lower() in ("1", "true", "yes")
    for key in ("type", "kind", "role"):
        if key in data:
            return str(data[key]).lower() == "host"
    return bool(re.fullmatch(r"h\d+", str(node)))


def check_name(node: Hashable, kind: str, topology: str) -> None:
    """Refuse a node name that is empty or has a control or other unprintable character
    (a newline could forge report lines, an escape sequence drive the terminal)."""
    text = str(node)
    if not text or not text.isprintable():
        raise TopologyError(f"topology {topology!r}: {kind} name {text!r} is empty or has a control or "
                            "unprintable character")


MAX_SWITCHES = 1000
"""Most switches a generated topology (``linear:N``, ``paths:A,D``) may have: the state space
of even ten switches is beyond any search, and a huge N would only exhaust memory."""


def topology_factory(function: Callable[[], Any]) -> Callable[[], Any]:
    """Declare ``function`` a topology factory, so ``--topology package.module:function`` may
    call it (a module's other callables are refused: ``os:abort`` is not a topology)."""
    function.__nice_attendre_topology__ = True  # type: ignore[attr-defined]
    return function


def from_graph(graph: nx.Graph, name: str = "graph") -> Topology:
    """Build a :class:`Topology` from an undirected networkx graph.

    Hosts are nodes with a true ``host`` attribute, or ``type``/``kind``/``role`` equal to
    ``"host"``, or (without such attributes) nodes named ``h`` followed by digits; every
    other node is a switch. Each host must have exactly one link, to a switch; there must be
    a switch and at least two hosts. Parallel links between two nodes count as one link, and
    a directed graph is taken as undirected. Raises :class:`TopologyError` otherwise.
    """
    if graph.is_directed():
        graph = graph.to_undirected()
    if graph.number_of_nodes() == 0:
        raise TopologyError(f"topology {name!r} has no nodes")
    for node in graph.nodes:
        check_name(node, "host" if _is_host(graph, node) else "switch", name)
    hosts = sorted((n for n in graph.nodes if _is_host(graph, n)), key=natural_key)
    switch_nodes = sorted((n for n in graph.nodes if not _is_host(graph, n)), key=natural_key)
    if not switch_nodes:
        raise TopologyError(f"topology {name!r} has no switches")
    if len(hosts) < 2:
        raise TopologyError(f"topology {name!r} needs at least two hosts, found {len(hosts)}"
                            " (mark hosts with a 'host' attribute or name them h1, h2, ...)")
    loops = [n for n in graph.nodes if graph.has_edge(n, n)]
    if loops:
        raise TopologyError(f"topology {name!r} has a self-loop at {loops[0]!r}")
    dpid_of = {node: index for index, node in enumerate(switch_nodes, start=1)}
    ports: dict[int, tuple[int, ...]] = {}
    port_of: dict[tuple[Hashable, Hashable], int] = {}
    for node in switch_nodes:
        neighbours = list(graph.adj[node])
        ports[dpid_of[node]] = tuple(range(1, len(neighbours) + 1))
        for number, neighbour in enumerate(neighbours, start=1):
            port_of[(node, neighbour)] = number
    links: dict[tuple[int, int], Peer] = {}
    host_port: dict[str, tuple[int, int]] = {}
    for host in hosts:
        neighbours = list(graph.adj[host])
        if len(neighbours) != 1:
            raise TopologyError(f"host {str(host)!r} must have exactly one link, to a switch "
                                f"(it has {len(neighbours)}"
                                + (f": {', '.join(map(str, neighbours))})" if neighbours else ")"))
        if _is_host(graph, neighbours[0]):
            raise TopologyError(f"host {str(host)!r} is linked to host {str(neighbours[0])!r}; "
                                "a host must be linked to a switch")
        switch = neighbours[0]
        host_port[str(host)] = (dpid_of[switch], port_of[(switch, host)])
    for node in switch_nodes:
        for neighbour in graph.adj[node]:
            port = port_of[(node, neighbour)]
            if neighbour in dpid_of:
                links[(dpid_of[node], port)] = Peer(False, dpid_of[neighbour], port_of[(neighbour, node)])
            else:
                links[(dpid_of[node], port)] = Peer(True, str(neighbour))
    return Topology(name, tuple(dpid_of.values()), {d: str(n) for n, d in dpid_of.items()},
                    tuple(str(h) for h in hosts), ports, links, host_port)


def linear_graph(switches: int) -> nx.Graph:
    """``h1 - s1 - ... - sN - h2``: the sender, N switches in a line, the replier."""
    graph = nx.Graph()
    chain = ["h1"] + [f"s{i}" for i in range(1, switches + 1)] + ["h2"]
    nx.add_path(graph, chain)
    return graph


def star_graph(hosts: int) -> nx.Graph:
    """One switch ``s1`` with hosts ``h1`` .. ``hN`` on its ports 1 .. N."""
    graph = nx.Graph()
    graph.add_edges_from(("s1", f"h{i}") for i in range(1, hosts + 1))
    return graph


def two_paths_graph(always_on: int, on_demand: int) -> nx.Graph:
    """``h1 - s1 ... h2``: two disjoint paths of ``always_on`` and ``on_demand`` switches
    between the sender h1 and the replier h2, sharing only their first and last switch.

    The first switch is s1, the last s2; the shorter path's inner switches come next, then
    the longer one's (the paper's energy-TE topologies are ``paths:2,3`` and ``paths:3,4``).
    """
    graph = nx.Graph()
    inner_a = [f"s{i}" for i in range(3, always_on + 1)]
    inner_d = [f"s{i}" for i in range(always_on + 1, always_on + on_demand - 1)]
    graph.add_edge("h1", "s1")
    nx.add_path(graph, ["s1", *inner_a, "s2"])
    nx.add_path(graph, ["s1", *inner_d, "s2"])
    graph.add_edge("s2", "h2")
    return graph


def _refuse_doctype(data: bytes, path: Path) -> None:
    """Refuse an XML file (its bytes ``data``) with a document type declaration (and so with
    entity declarations) before networkx parses it: entity expansion can make a small file
    huge (the "billion laughs"), and GraphML needs none. The scan stops at the declaration."""
    from xml.parsers import expat

    def refuse(*_args: Any) -> None:
        raise TopologyError(f"topology file {str(path)!r} has a DOCTYPE or entity declaration, which "
                            "GraphML does not need; remove it")

    parser = expat.ParserCreate()
    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    try:
        parser.Parse(data, True)
    except expat.ExpatError:
        pass  # malformed XML: networkx reports it with its own message


def _is_special(path: Path) -> bool:
    """Whether ``path`` exists but is neither a regular file nor a directory (a device such
    as ``/dev/zero``, a FIFO, a socket): a graph file's name that :func:`read_bounded` refuses."""
    try:
        return os.path.exists(path) and not path.is_dir()
    except (OSError, ValueError):
        return False


def _load_factory(spec: str) -> Callable[[], Any]:
    """The factory named by ``file.py:function`` (a function of that file, or one it declares
    with :func:`topology_factory`) or ``package.module:function`` (declared with
    :func:`topology_factory`): never an arbitrary callable such as ``os:abort``."""
    target, _, attr = spec.rpartition(":")
    from_file = names_file(target)
    module = import_target(target, "topology factory", TopologyError)
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise TopologyError(f"{target!r} has no callable {attr!r}")
    declared = getattr(factory, "__nice_attendre_topology__", False) is True
    defined_there = inspect.isfunction(factory) and factory.__module__ == module.__name__
    if not (declared or (from_file and defined_there)):
        where = "defined in that file" if from_file else "declared with @nice_attendre.models.topology.topology_factory"
        raise TopologyError(f"{spec!r} is not a topology factory: give a function {where}")
    return factory


def load_topology(spec: str | nx.Graph | Topology) -> Topology:
    """Build a topology from a spec.

    Accepted: a :class:`Topology`; a networkx graph; ``linear:N`` (N >= 1); ``star:N`` (one
    switch, hosts h1..hN, 2 <= N <= 254); ``paths:A,D``; the path of a
    GraphML (``.graphml``), GML (``.gml``) or edge-list file (any other suffix: one
    ``u v`` pair per line, ``#`` comments); ``path/to/file.py:factory`` or
    ``package.module:factory`` naming a function that returns a networkx graph.
    Raises :class:`TopologyError` with the reason when the spec cannot be used.
    """
    if isinstance(spec, Topology):
        return spec
    if isinstance(spec, nx.Graph):
        return from_graph(spec)
    text = str(spec).strip()
    match = re.fullmatch(r"linear:(.*)", text)
    if match:
        count = match.group(1)
        if not count.isdecimal() or not 1 <= int(count) <= MAX_SWITCHES:
            raise TopologyError(f"bad topology {text!r}: linear:N needs a whole number 1 <= N <= {MAX_SWITCHES}")
        return from_graph(linear_graph(int(count)), text)
    match = re.fullmatch(r"star:(.*)", text)
    if match:
        count = match.group(1)
        if not count.isdecimal() or not 2 <= int(count) <= 254:
            raise TopologyError(f"bad topology {text!r}: star:N needs a whole number N from 2 to 254")
        return from_graph(star_graph(int(count)), text)
    match = re.fullmatch(r"paths:(.*)", text)
    if match:
        parts = match.group(1).split(",")
        if (len(parts) != 2 or not all(p.strip().isdecimal() for p in parts)
                or not 2 <= int(parts[0]) < int(parts[1]) <= MAX_SWITCHES):
            raise TopologyError(f"bad topology {text!r}: paths:A,D needs whole numbers 2 <= A < D <= {MAX_SWITCHES}")
        return from_graph(two_paths_graph(int(parts[0]), int(parts[1])), text)
    path = Path(text)
    if is_file(path) or _is_special(path):
        # A regular file only (not /dev/zero, a FIFO), of at most TOPOLOGY_BYTES, read once.
        data = read_bounded(path, "topology file", TOPOLOGY_BYTES, TopologyError)
        try:
            if path.suffix == ".graphml":
                _refuse_doctype(data, path)
                # As a multigraph, each node's links keep the order of the file's edges (a
                # simple Graph would be rebuilt node by node, numbering ports in node order).
                graph = nx.read_graphml(io.BytesIO(data), force_multigraph=True)
            elif path.suffix == ".gml":
                graph = nx.read_gml(io.BytesIO(data))
            else:
                graph = nx.read_edgelist(io.BytesIO(data), comments="#", data=False)
        except TopologyError:
            raise
        except Exception as exc:  # networkx raises many kinds of parse errors
            raise TopologyError(f"cannot read topology file {text!r}: {type(exc).__name__}: {exc}") from exc
        return from_graph(graph, path.name)
    if is_dir(path):
        raise TopologyError(f"bad topology {text!r}: a directory, not a graph file")
    target, sep, attr = text.rpartition(":")
    if sep and attr.isidentifier() and (target.endswith(".py") or re.fullmatch(r"[\w.]+", target)):
        factory = _load_factory(text)
        try:
            graph = factory()
        except SystemExit as exc:
            raise TopologyError(f"topology factory {text!r} called sys.exit({exc.code!r})") from exc
        except MemoryError:
            raise
        except Exception as exc:
            raise TopologyError(f"topology factory {text!r} raised {type(exc).__name__}: {exc}") from exc
        if not isinstance(graph, nx.Graph):
            raise TopologyError(f"topology factory {text!r} returned {type(graph).__name__}, not a networkx graph")
        return from_graph(graph, text)
    if not sep and (path.suffix or "/" in text or "\\" in text):
        raise TopologyError(f"topology file {text!r} not found")
    raise TopologyError(f"bad topology {text!r}: expected linear:N, a .graphml/.gml/edge-list file, "
                        "or path/to/file.py:factory")
