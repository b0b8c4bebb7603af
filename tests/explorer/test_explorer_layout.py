"""Where the explorer draws the topology: a chain on a line in order, hosts at its ends; any
other graph by a seeded spring layout, inside the picture and the same every time."""
from __future__ import annotations

import pytest

from nice_attendre.frontend.explorer.state_json import layout
from nice_attendre.frontend.api import build


def _nodes(topology: str) -> dict[str, dict[str, float]]:
    return {node["id"]: node for node in layout(build("route-flow", topology=topology).network)["nodes"]}


def test_a_chain_on_a_line_with_the_hosts_at_its_ends() -> None:
    nodes = _nodes("linear:3")
    assert [nodes[n]["kind"] for n in ("s1", "s2", "s3", "h1", "h2")] == ["switch"] * 3 + ["host"] * 2
    xs = [nodes[n]["x"] for n in ("h1", "s1", "s2", "s3", "h2")]
    assert xs == sorted(xs) and len(set(xs)) == 5
    assert len({nodes[n]["y"] for n in nodes}) == 1


@pytest.mark.parametrize("topology", ["star:4", "paths:2,3"])
def test_other_graphs_inside_the_picture_and_the_same_every_time(topology: str) -> None:
    nodes = _nodes(topology)
    assert nodes == _nodes(topology)
    assert all(0 <= node["x"] <= 1 and 0.2 <= node["y"] <= 1 for node in nodes.values())  # the controller above
    assert len({(round(n["x"], 3), round(n["y"], 3)) for n in nodes.values()}) == len(nodes)
