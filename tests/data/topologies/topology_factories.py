"""Topology factories used by tests: ``topology_factories.py:NAME`` or, with this folder on
``sys.path``, ``topology_factories:NAME``."""
import networkx as nx


def diamond():
    """The diamond of diamond.edges, built in code (hosts by name)."""
    graph = nx.Graph()
    graph.add_edges_from([("h1", "s1"), ("s1", "s2"), ("s1", "s3"), ("s2", "s4"), ("s3", "s4"), ("s4", "h2")])
    return graph


def integer_nodes():
    """Switches and hosts named by integers; hosts marked by a ``kind`` attribute."""
    graph = nx.Graph()
    graph.add_node(10, kind="host")
    graph.add_node(20, kind="host")
    graph.add_edges_from([(10, 1), (1, 2), (2, 20)])
    return graph


def broken():
    raise RuntimeError("no graph today")


def not_a_graph():
    return [("h1", "s1"), ("s1", "h2")]
