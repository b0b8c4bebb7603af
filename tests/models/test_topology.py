"""Topologies: port numbering, routes, graph files, Python factories, and clear errors."""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import networkx as nx
import pytest

from nice_attendre.errors import TopologyError
from nice_attendre.models.topology import Peer, Topology, from_graph, linear_graph, load_topology

DATA = Path(__file__).resolve().parent.parent / "data" / "topologies"


def links(topo: Topology) -> dict[tuple[int, int], str]:
    """The link map with peers as text (``s2:1`` or a host name), for exact comparisons."""
    return {hop: str(peer) for hop, peer in topo.links.items()}


def all_paths(topo: Topology, host: str) -> list[list[tuple[int, int]]]:
    return [topo.path(dpid, host) for dpid in topo.switches]


# ---- linear:N ----------------------------------------------------------------------------

def test_linear_3_ports_links_and_hosts() -> None:
    topo = load_topology("linear:3")
    assert topo.name == "linear:3"
    assert topo.switches == (1, 2, 3)
    assert dict(topo.switch_names) == {1: "s1", 2: "s2", 3: "s3"}
    assert topo.hosts == ("h1", "h2")
    assert dict(topo.ports) == {1: (1, 2), 2: (1, 2), 3: (1, 2)}
    # port 1 towards h1 (the sender), port 2 towards h2 (the replier), on every switch
    assert links(topo) == {(1, 1): "h1", (1, 2): "s2:1",
                           (2, 1): "s1:2", (2, 2): "s3:1",
                           (3, 1): "s2:2", (3, 2): "h2"}
    assert topo.links[(1, 1)] == Peer(True, "h1", 0)
    assert topo.links[(2, 2)] == Peer(False, 3, 1)
    assert dict(topo.host_port) == {"h1": (1, 1), "h2": (3, 2)}
    assert dict(topo.spare_ports) == {}
    assert topo.describe() == "linear:3 (3 switches, hosts h1, h2)"


def test_linear_1_single_switch() -> None:
    topo = load_topology("linear:1")
    assert topo.switches == (1,)
    assert links(topo) == {(1, 1): "h1", (1, 2): "h2"}
    assert topo.path(1, "h2") == [(1, 2)]
    assert topo.path(1, "h1") == [(1, 1)]


def test_linear_routes_next_port_and_path() -> None:
    topo = load_topology("linear:4")
    assert [topo.next_port(d, "h2") for d in topo.switches] == [2, 2, 2, 2]
    assert [topo.next_port(d, "h1") for d in topo.switches] == [1, 1, 1, 1]
    assert topo.path(1, "h2") == [(1, 2), (2, 2), (3, 2), (4, 2)]
    assert topo.path(3, "h2") == [(3, 2), (4, 2)]
    assert topo.path(4, "h1") == [(4, 1), (3, 1), (2, 1), (1, 1)]
    assert topo.path(2, "h1") == [(2, 1), (1, 1)]


def test_unknown_host_has_no_route() -> None:
    topo = load_topology("linear:2")
    assert topo.next_port(1, "h9") is None
    assert topo.path(1, "h9") == []


def test_disconnected_host_has_no_route() -> None:
    graph = nx.Graph([("h1", "s1"), ("s1", "h2"), ("h3", "s2")])
    topo = from_graph(graph, "split")
    assert topo.path(1, "h2") == [(1, 2)]
    assert topo.next_port(1, "h3") is None
    assert topo.path(1, "h3") == []
    assert topo.path(2, "h3") == [(2, 1)]


def test_linear_spec_is_stripped_and_accepts_leading_zeros() -> None:
    assert load_topology("  linear:02 ").switches == (1, 2)


def test_dpids_follow_natural_order_of_switch_names() -> None:
    graph = nx.Graph([("h1", "s10"), ("s10", "s2"), ("s2", "s1"), ("s1", "h2")])
    topo = from_graph(graph, "natural")
    assert dict(topo.switch_names) == {1: "s1", 2: "s2", 3: "s10"}
    assert dict(topo.host_port) == {"h1": (3, 1), "h2": (1, 2)}
    assert topo.path(3, "h2") == [(3, 2), (2, 2), (1, 2)]


# ---- a non-linear graph: deterministic tie-breaking ---------------------------------------

DIAMOND_EDGE_LIST_LINKS = {
    (1, 1): "h1", (1, 2): "s2:1", (1, 3): "s3:1",
    (2, 1): "s1:2", (2, 2): "s4:1",
    (3, 1): "s1:3", (3, 2): "s4:2",
    (4, 1): "s2:2", (4, 2): "s3:2", (4, 3): "h2",
}


def test_diamond_edge_list_ports_and_routes() -> None:
    topo = load_topology(str(DATA / "diamond.edges"))
    assert topo.name == "diamond.edges"
    assert topo.hosts == ("h1", "h2")
    assert dict(topo.ports) == {1: (1, 2, 3), 2: (1, 2), 3: (1, 2), 4: (1, 2, 3)}
    assert links(topo) == DIAMOND_EDGE_LIST_LINKS
    assert dict(topo.host_port) == {"h1": (1, 1), "h2": (4, 3)}
    # Two shortest paths s1-s2-s4 and s1-s3-s4: the tie goes through s2 both ways (s2 is on
    # the lower port of s1 and of s4, so the search from either end reaches it first).
    assert all_paths(topo, "h2") == [[(1, 2), (2, 2), (4, 3)], [(2, 2), (4, 3)], [(3, 2), (4, 3)], [(4, 3)]]
    assert all_paths(topo, "h1") == [[(1, 1)], [(2, 1), (1, 1)], [(3, 1), (1, 1)], [(4, 1), (2, 1), (1, 1)]]


def test_diamond_tie_break_follows_port_order_of_the_search() -> None:
    # The same diamond, but s1 lists s3 before s2 (so s3 is on s1's port 2) while s4 lists s2
    # first: the route to h2 (search from s4) goes via s2, the route to h1 (search from s1)
    # via s3. Asserting both shows the rule, not just one lucky outcome.
    graph = nx.Graph()
    graph.add_edges_from([("h1", "s1"), ("s1", "s3"), ("s1", "s2"), ("s2", "s4"), ("s3", "s4"), ("s4", "h2")])
    topo = from_graph(graph, "diamond")
    assert links(topo)[(1, 2)] == "s3:1" and links(topo)[(1, 3)] == "s2:1"
    assert links(topo)[(4, 1)] == "s2:2" and links(topo)[(4, 2)] == "s3:2"
    assert topo.path(1, "h2") == [(1, 3), (2, 2), (4, 3)]
    assert topo.path(4, "h1") == [(4, 2), (3, 1), (1, 1)]
    # Same graph, same answer on every call and for a freshly built topology.
    again = from_graph(graph, "diamond")
    assert all_paths(again, "h2") == all_paths(topo, "h2") == all_paths(topo, "h2")


def test_routes_are_shortest_on_a_ring() -> None:
    # h1 on s1, h2 on s4 of a ring s1-s2-s3-s4-s5-s6-s1: s1 reaches s4 in 3 hops either way
    # (tie), s2 via s3 (2 hops) and s6 via s5 (2 hops).
    ring = ["s1", "s2", "s3", "s4", "s5", "s6"]
    graph = nx.Graph([("h1", "s1")] + list(zip(ring, ring[1:] + ring[:1])) + [("s4", "h2")])
    topo = from_graph(graph, "ring")
    # ports: s1 h1,s2,s6; s2 s1,s3; s3 s2,s4; s4 s3,s5,h2; s5 s4,s6; s6 s5,s1
    assert [len(topo.path(d, "h2")) for d in topo.switches] == [4, 3, 2, 1, 2, 3]
    assert topo.path(1, "h2") == [(1, 2), (2, 2), (3, 2), (4, 3)]  # the tie goes via s3 (s4's port 1)
    assert topo.path(2, "h2") == [(2, 2), (3, 2), (4, 3)]
    assert topo.path(6, "h2") == [(6, 1), (5, 1), (4, 3)]
    assert topo.path(4, "h1") == [(4, 1), (3, 1), (2, 1), (1, 1)]  # the tie goes via s2 (s1's port 2)


# ---- graph files --------------------------------------------------------------------------

def test_graphml_with_host_attributes() -> None:
    topo = load_topology(str(DATA / "diamond_hosts.graphml"))
    assert topo.name == "diamond_hosts.graphml"
    assert topo.hosts == ("alice", "bob")
    assert dict(topo.switch_names) == {1: "sw1", 2: "sw2", 3: "sw3", 4: "sw4"}
    # ports in the order of the file's edges (sw1: alice, sw3, sw2; sw4: sw2, sw3, bob)
    assert links(topo) == {(1, 1): "alice", (1, 2): "s3:1", (1, 3): "s2:1",
                           (2, 1): "s1:3", (2, 2): "s4:1",
                           (3, 1): "s1:2", (3, 2): "s4:2",
                           (4, 1): "s2:2", (4, 2): "s3:2", (4, 3): "bob"}
    assert dict(topo.host_port) == {"alice": (1, 1), "bob": (4, 3)}
    assert topo.path(1, "bob") == [(1, 3), (2, 2), (4, 3)]
    assert topo.path(4, "alice") == [(4, 2), (3, 1), (1, 1)]
    assert topo.describe() == "diamond_hosts.graphml (4 switches, hosts alice, bob)"


def test_gml_tree_with_a_host_marked_by_type() -> None:
    topo = load_topology(DATA / "tree.gml")  # a Path works too
    assert topo.name == "tree.gml"
    assert topo.hosts == ("h1", "h2", "printer")
    assert dict(topo.switch_names) == {1: "s1", 2: "s2", 3: "s3"}
    assert links(topo) == {(1, 1): "s2:1", (1, 2): "s3:1", (1, 3): "printer",
                           (2, 1): "s1:1", (2, 2): "h1",
                           (3, 1): "s1:2", (3, 2): "h2"}
    assert dict(topo.host_port) == {"h1": (2, 2), "h2": (3, 2), "printer": (1, 3)}
    assert all_paths(topo, "h2") == [[(1, 2), (3, 2)], [(2, 1), (1, 2), (3, 2)], [(3, 2)]]
    assert topo.path(3, "printer") == [(3, 1), (1, 3)]


def test_networkx_graph_and_topology_are_accepted_as_is() -> None:
    topo = load_topology(linear_graph(2))
    assert topo.name == "graph"
    assert links(topo) == {(1, 1): "h1", (1, 2): "s2:1", (2, 1): "s1:2", (2, 2): "h2"}
    assert load_topology(topo) is topo


def test_directed_graph_is_taken_as_undirected() -> None:
    topo = from_graph(nx.DiGraph([("h1", "s1"), ("s1", "s2"), ("s2", "h2")]), "directed")
    assert links(topo) == {(1, 1): "h1", (1, 2): "s2:1", (2, 1): "s1:2", (2, 2): "h2"}


def test_parallel_links_count_once() -> None:
    graph = nx.MultiGraph([("h1", "s1"), ("s1", "s2"), ("s1", "s2"), ("s2", "h2")])
    topo = from_graph(graph, "multi")
    assert dict(topo.ports) == {1: (1, 2), 2: (1, 2)}


def test_host_attribute_wins_over_the_name() -> None:
    graph = nx.Graph([("h1", "h5"), ("h5", "h2")])
    graph.nodes["h5"]["type"] = "switch"
    topo = from_graph(graph, "named")
    assert topo.hosts == ("h1", "h2")
    assert dict(topo.switch_names) == {1: "h5"}


# ---- Python factories ---------------------------------------------------------------------

def test_factory_from_a_file() -> None:
    spec = f"{DATA / 'topology_factories.py'}:diamond"
    topo = load_topology(spec)
    assert topo.name == spec
    assert links(topo) == DIAMOND_EDGE_LIST_LINKS
    assert topo.path(1, "h2") == [(1, 2), (2, 2), (4, 3)]


def test_factory_from_a_module_on_sys_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(DATA))
    monkeypatch.delitem(sys.modules, "topology_factories", raising=False)
    topo = load_topology("topology_factories:diamond")
    assert topo.name == "topology_factories:diamond"
    assert links(topo) == DIAMOND_EDGE_LIST_LINKS
    sys.modules.pop("topology_factories", None)


def test_factory_with_integer_nodes_and_kind_attribute() -> None:
    topo = load_topology(f"{DATA / 'topology_factories.py'}:integer_nodes")
    assert topo.hosts == ("10", "20")
    assert dict(topo.switch_names) == {1: "1", 2: "2"}
    assert dict(topo.host_port) == {"10": (1, 1), "20": (2, 2)}
    assert topo.path(1, "20") == [(1, 2), (2, 2)]


# ---- errors -------------------------------------------------------------------------------

def error_of(spec) -> str:
    with pytest.raises(TopologyError) as info:
        load_topology(spec)
    assert isinstance(info.value, ValueError)  # InputError is a ValueError too
    return str(info.value)


@pytest.mark.parametrize("spec", ["linear:0", "linear:x", "linear:", "linear:-1", "linear:1.5", "linear:\u00b2"])
def test_bad_linear_spec(spec: str) -> None:
    assert error_of(spec) == f"bad topology {spec!r}: linear:N needs a whole number 1 <= N <= 1000"


def test_missing_graph_file() -> None:
    missing = DATA / "no_such_topology.graphml"
    assert error_of(str(missing)) == f"topology file {str(missing)!r} not found"


def test_missing_factory_file() -> None:
    missing = DATA / "no_such_factories.py"
    assert error_of(f"{missing}:diamond") == f"topology factory file {str(missing)!r} not found"


def test_unrecognised_spec() -> None:
    assert error_of("ring") == ("bad topology 'ring': expected linear:N, a .graphml/.gml/edge-list file, "
                                "or path/to/file.py:factory")


def test_directory_is_not_a_graph_file() -> None:
    assert error_of(str(DATA)) == f"bad topology {str(DATA)!r}: a directory, not a graph file"


def test_graphml_that_fails_to_parse() -> None:
    path = str(DATA / "broken.graphml")
    assert error_of(path).startswith(f"cannot read topology file {path!r}: ParseError: mismatched tag")


def test_gml_that_fails_to_parse() -> None:
    path = str(DATA / "broken.gml")
    assert error_of(path).startswith(f"cannot read topology file {path!r}: NetworkXError: expected ']'")


def test_host_with_two_links() -> None:
    assert error_of(str(DATA / "host_two_links.edges")) == (
        "host 'h1' must have exactly one link, to a switch (it has 2: s1, s2)")


def test_host_linked_to_a_host() -> None:
    graph = nx.Graph([("h1", "h3"), ("h2", "s1"), ("s1", "h4")])
    with pytest.raises(TopologyError, match=r"^host 'h1' is linked to host 'h3'; a host must be linked to a switch$"):
        from_graph(graph, "g")


def test_host_without_link() -> None:
    graph = nx.Graph([("h1", "s1"), ("s1", "h2")])
    graph.add_node("h3")
    with pytest.raises(TopologyError, match=r"^host 'h3' must have exactly one link, to a switch \(it has 0\)$"):
        from_graph(graph, "g")


def test_fewer_than_two_hosts() -> None:
    assert error_of(str(DATA / "one_host.edges")) == (
        "topology 'one_host.edges' needs at least two hosts, found 1 "
        "(mark hosts with a 'host' attribute or name them h1, h2, ...)")


def test_no_switches() -> None:
    assert error_of(str(DATA / "no_switch.edges")) == "topology 'no_switch.edges' has no switches"


def test_empty_graph() -> None:
    assert error_of(nx.Graph()) == "topology 'graph' has no nodes"


def test_self_loop() -> None:
    graph = nx.Graph([("h1", "s1"), ("s1", "s1"), ("s1", "h2")])
    with pytest.raises(TopologyError, match=r"^topology 'loopy' has a self-loop at 's1'$"):
        from_graph(graph, "loopy")


def test_factory_that_raises() -> None:
    spec = f"{DATA / 'topology_factories.py'}:broken"
    assert error_of(spec) == f"topology factory {spec!r} raised RuntimeError: no graph today"


def test_factory_returning_a_non_graph() -> None:
    spec = f"{DATA / 'topology_factories.py'}:not_a_graph"
    assert error_of(spec) == f"topology factory {spec!r} returned list, not a networkx graph"


def test_factory_name_not_in_file() -> None:
    path = str(DATA / "topology_factories.py")
    assert error_of(f"{path}:ring") == f"{path!r} has no callable 'ring'"


def test_factory_module_that_cannot_be_imported() -> None:
    assert error_of("no_such_topology_module:ring") == (
        "cannot import topology factory module 'no_such_topology_module': "
        "No module named 'no_such_topology_module'")


def test_factory_module_that_raises_on_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "raising_topology_module.py").write_text("1 / 0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert error_of("raising_topology_module:f") == (
        "importing topology factory module 'raising_topology_module' failed: ZeroDivisionError: division by zero")


def test_factory_file_that_raises_on_import(tmp_path: Path) -> None:
    path = tmp_path / "raising_factory.py"
    path.write_text("raise ImportError('needs a missing library')\n")
    assert error_of(f"{path}:f") == (f"importing topology factory file {str(path)!r} failed: "
                                     "ImportError: needs a missing library")
    assert not [name for name, module in sys.modules.items()
                if getattr(module, "__file__", None) == str(path)]  # no half-imported module left


def test_very_long_name_is_an_input_error() -> None:
    assert error_of("x" * 5000).startswith("bad topology 'xxx")


# ---- derived topologies -------------------------------------------------------------------

def test_with_spare_port() -> None:
    topo = load_topology("linear:2")
    moved = topo.with_spare_port(2)
    assert dict(moved.ports) == {1: (1, 2), 2: (1, 2, 3)}
    assert dict(moved.spare_ports) == {2: (3,)}
    assert (2, 3) not in moved.links  # nothing attached yet
    assert links(moved) == links(topo)
    twice = moved.with_spare_port(2).with_spare_port(1)
    assert dict(twice.ports) == {1: (1, 2, 3), 2: (1, 2, 3, 4)}
    assert dict(twice.spare_ports) == {1: (3,), 2: (3, 4)}
    # the original is unchanged and routes are unaffected
    assert dict(topo.ports) == {1: (1, 2), 2: (1, 2)} and dict(topo.spare_ports) == {}
    assert twice.path(1, "h2") == topo.path(1, "h2") == [(1, 2), (2, 2)]


def test_with_spare_port_on_a_switch_without_links() -> None:
    graph = nx.Graph([("h1", "s1"), ("s1", "h2")])
    graph.add_node("s2")
    topo = from_graph(graph, "lonely")
    assert topo.ports[2] == ()
    moved = topo.with_spare_port(2)
    assert moved.ports[2] == (1,)
    assert dict(moved.spare_ports) == {2: (1,)}


def test_with_spare_port_unknown_dpid() -> None:
    with pytest.raises(TopologyError, match=r"^topology 'linear:2' has no switch with dpid 7 \(dpids: 1, 2\)$"):
        load_topology("linear:2").with_spare_port(7)


def test_replace_does_not_share_the_route_cache() -> None:
    topo = load_topology("linear:2")
    assert topo.path(1, "h2") == [(1, 2), (2, 2)]  # fills the cache
    # the same switches with the hosts swapped: h2 now on s1 port 1
    swapped = dataclasses.replace(topo, host_port={"h1": (2, 2), "h2": (1, 1)},
                                  links={**topo.links, (1, 1): Peer(True, "h2"), (2, 2): Peer(True, "h1")})
    assert swapped.path(1, "h2") == [(1, 1)]
    assert swapped.path(1, "h1") == [(1, 2), (2, 2)]
    assert topo.path(1, "h2") == [(1, 2), (2, 2)]
