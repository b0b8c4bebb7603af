"""The documented view has what users' properties need (issue 29, section 4): the topology,
whether each link is up, and the messages OpenFlow-B holds at the platform. Users wrote their
most useful properties through the undocumented ``view.net``; that keeps working."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import networkx as nx

from nice_attendre import verify
from nice_attendre.models.view import HeldMessages, Link, View
from nice_attendre.properties.custom import always, at_quiescence

README = Path(__file__).resolve().parents[2] / "README.md"


def square() -> nx.Graph:
    """h1 - s1, two paths s1 - s2 - s4 and s1 - s3 - s4, s4 - h2."""
    graph = nx.Graph()
    graph.add_edges_from([("h1", "s1"), ("s1", "s2"), ("s2", "s4"), ("s1", "s3"), ("s3", "s4"), ("s4", "h2")])
    return graph


def collect(seen: list[Any], read: Any) -> Any:
    """An always-property that records ``read(view)`` in every state and holds."""
    def predicate(view: View) -> bool:
        seen.append(read(view))
        return True
    return always("collect", predicate)


def test_the_topology_is_on_the_view() -> None:
    seen: list[Any] = []
    assert verify("route-flow", topology="linear:2", packets=1,
                  properties=[collect(seen, lambda v: v.topology)]).ok
    topology = seen[0]
    assert topology.switches == (1, 2) and topology.hosts == ("h1", "h2")
    assert topology.path(1, "h2") == [(1, 2), (2, 2)]
    assert topology.host_port["h1"] == (1, 1)


def test_links_and_their_state() -> None:
    seen: list[Any] = []

    def read(view: View) -> tuple[Any, ...]:
        for link in view.links:  # the three ways of asking agree
            for end in (link.a, link.b):
                if end.startswith("s"):
                    dpid, port = map(int, end[1:].split(":"))
                    assert view.link_up(dpid, port) == link.up
                    other = link.b if end == link.a else link.a
                    assert view.attached(dpid, port) == (other if link.up else None)
        return view.links, view.faults_left

    result = verify("route-flow", topology=square(), packets=1, faults={"link": 1},
                    properties=[collect(seen, read)])
    assert result.ok
    links = {links for links, _left in seen}
    everything_up = (Link("s1:1", "h1", True), Link("s1:2", "s2:1", True), Link("s1:3", "s3:1", True),
                     Link("s2:2", "s4:1", True), Link("s3:2", "s4:2", True), Link("s4:3", "h2", True))
    assert everything_up in links
    one_down = {tuple(link for link in state if not link.up) for state in links} - {()}
    assert {down[0].a for down in one_down} == {"s1:1", "s1:2", "s1:3", "s2:2", "s3:2", "s4:3"}
    assert {left["link"] for _links, left in seen} == {0, 1}
    assert all(view_left.keys() >= {"loss", "link", "restart"} for _l, view_left in seen)


def test_no_faults_no_budgets_and_every_link_up() -> None:
    seen: list[Any] = []
    assert verify("route-flow", topology="linear:2", packets=1,
                  properties=[collect(seen, lambda v: (v.faults_left, v.links, v.link_up(1, 9)))]).ok
    assert {(tuple(left.items()), links, nine) for left, links, nine in seen} == {
        ((), (Link("s1:1", "h1", True), Link("s1:2", "s2:1", True), Link("s2:2", "h2", True)), False)}


def test_the_messages_openflow_b_holds() -> None:
    seen: list[Any] = []
    assert verify("route-flow", topology="linear:3", packets=1, protocol="openflow-b",
                  properties=[collect(seen, lambda v: v.held)]).ok
    held = {h for state in seen for h in state}
    assert held, "OpenFlow-B holds the first hop's messages while barriers are awaited"
    assert all(isinstance(h, HeldMessages) for h in held)
    # h1's packet at s1 (s2's and s3's barrier replies awaited, in either order), h2's answer at s3
    assert {(h.dpid, h.waiting) for h in held} == {(1, (2, 3)), (1, (2,)), (1, (3,)), (3, (1, 2)), (3, (1,)),
                                                  (3, (2,))}
    (message,) = {m for h in held if h.dpid == 1 for m in h.messages}
    assert str(message).startswith("flow-mod/packet-out {exact h1->h2}")
    plain: list[Any] = []
    assert verify("route-flow", topology="linear:3", packets=1, properties=[collect(plain, lambda v: v.held)]).ok
    assert set(plain) == {()}


def test_a_property_over_held_messages_and_links_from_a_file(tmp_path: Path) -> None:
    """What users wrote through view.net, written on the documented view: 'no held message
    is for a switch whose link to the controller path is down' (a user's OpenFlow-B check)."""
    source = tmp_path / "props.py"
    source.write_text(
        "from nice_attendre.properties.custom import at_quiescence\n"
        "def nothing_held(view):\n"
        "    return not view.held and all(link.up or view.faults_left['link'] == 0 for link in view.links)\n"
        "NOTHING_HELD = at_quiescence('nothing-held', nothing_held)\n")
    result = verify("route-flow", topology="linear:3", packets=1, protocol="openflow-b",
                    properties=[f"{source}:NOTHING_HELD"])
    assert result.ok and result.complete


def test_view_net_still_works() -> None:
    """A user's property written against the undocumented view.net (before the view had
    these) keeps working."""
    def old_style(view: View) -> bool:
        return view.net.value(view.state, "platform").held == () or view.quiescent is False

    assert verify("route-flow", topology="linear:3", packets=1, protocol="openflow-b",
                  properties=[at_quiescence("old-style", old_style)]).ok


def test_every_public_attribute_of_the_view_is_documented() -> None:
    """The README's view table and the module docstring name everything a View offers."""
    public = {name for name in dir(View) if not name.startswith("_") and name not in ("net", "state")}
    text = README.read_text()
    table = text[text.index("| `view.` | what |"):]
    table = table[:table.index("\n\n")]
    documented = set(re.findall(r"`([a-z_]+)[`\[(.]", table))
    assert public <= documented, sorted(public - documented)
    from nice_attendre.models import view as module

    assert all(f"view.{name}" in (module.__doc__ or "") for name in public), \
        sorted(n for n in public if f"view.{n}" not in (module.__doc__ or ""))
