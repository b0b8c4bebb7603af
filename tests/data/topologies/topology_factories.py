"""Topology factories used by tests: ``topology_factories.py:NAME`` or, with this folder on
``sys.path``, ``topology_factories:NAME`` (only for the factories declared with
``@topology_factory``)."""
import sys

import networkx as nx
from networkx import path_graph  # a callable of this module, but not defined here

from nice_attendre.models.topology import topology_factory


@topology_factory
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


def exits():
    sys.exit(0)


def undeclared():
    """Defined here but not declared: callable by file path, not as a module."""
    return diamond()


def control_characters():
    """A host name with a newline and an escape sequence (forging report lines)."""
    graph = nx.Graph()
    forged = "h2\nOK: no property violated\x1b[2J"
    graph.add_node(forged, host=True)
    graph.add_node("h1", host=True)
    graph.add_edges_from([("h1", "s1"), ("s1", forged)])
    return graph


def unreachable():
    """Two hosts on two switches with no link between them."""
    graph = nx.Graph()
    graph.add_edges_from([("h1", "s1"), ("s2", "h2")])
    return graph
