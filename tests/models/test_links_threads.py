"""Links, controller threads and link faults as real networks have them (issue 29).

* A link that goes down loses the packets already on it, in both directions, and what a
  host sends into it while it is down.
* ``--fault link=N:SCOPE`` limits the links that may fail; ``no-stale-routes`` says when a
  route leads into a link that is down.
"""
from __future__ import annotations

import networkx as nx
import pytest
from click.testing import CliRunner

from nice_attendre import InputError, verify
from nice_attendre.frontend.api import build
from nice_attendre.frontend.cli import main
from nice_attendre.models.events import HostReceive, HostSend
from nice_attendre.models.faults import LinkChange, parse_budgets, split_budgets
from nice_attendre.models.packet import Header, Packet
from nice_attendre.trace import Trace
from tests_data_apps import path


def square() -> nx.Graph:
    """h1 - s1, two paths s1 - s2 - s4 and s1 - s3 - s4, s4 - h2."""
    graph = nx.Graph()
    graph.add_edges_from([("h1", "s1"), ("s1", "s2"), ("s2", "s4"), ("s1", "s3"), ("s3", "s4"), ("s4", "h2")])
    return graph


def link_network(**options: object):  # type: ignore[no-untyped-def]
    return build("route-flow", topology="linear:2", packets=1, faults={"link": 1}, properties=[],
                 **options).network  # type: ignore[arg-type]


def packet(src: str, dst: str, seq: int = 0) -> Packet:
    return Packet(Header(src, dst, f"ip-{src}", f"ip-{dst}"), src, seq)


# ---- a link that fails loses what is on it -------------------------------------------------

def test_a_failing_switch_link_loses_the_packets_on_it_both_ways() -> None:
    net = link_network()
    state = net.encode({"port:1:2": (packet("h2", "h1"),), "port:2:1": (packet("h1", "h2"), packet("h1", "h2", 1))})
    down = net.apply(state, LinkChange(1, 2, False))
    assert net.value(down, "port:1:2") == () and net.value(down, "port:2:1") == ()
    notes = net.narrate(state, LinkChange(1, 2, False))[1]
    assert any(line.startswith("FAULT: lost with the link: ") for line in notes)


def test_a_failing_host_link_loses_the_packets_on_it_both_ways() -> None:
    net = link_network()
    state = net.encode({"port:2:2": (packet("h2", "h1"),), "inbox:h2": (packet("h1", "h2"),)})
    down = net.apply(state, LinkChange(2, 2, False))
    assert net.value(down, "port:2:2") == () and net.value(down, "inbox:h2") == ()
    assert HostReceive("h2") not in net.enabled(down)
    # the other links keep theirs
    other = net.apply(state, LinkChange(1, 2, False))
    assert len(net.value(other, "inbox:h2")) == 1 and len(net.value(other, "port:2:2")) == 1


def test_a_host_sending_into_a_link_that_is_down_loses_the_packet() -> None:
    net = link_network()
    state = Trace.from_events(net, [LinkChange(1, 1, False), HostSend("h1")]).final
    assert net.value(state, "port:1:1") == ()
    assert [seq for seq, _hdr, _kind in net.value(state, "host:h1").sent_log] == [0]  # it was sent
    notes = net.narrate(net.apply(net.initial_states()[0], LinkChange(1, 1, False)), HostSend("h1"))[1]
    assert notes[-1].endswith("is lost") and "link to s1:1 is down" in notes[-1]


def test_a_packet_on_a_failed_link_is_never_delivered() -> None:
    """Every execution in which the link into h2 fails while a packet is on it ends with the
    packet undelivered (before: the packet was still delivered)."""
    net = link_network()
    state = net.encode({"inbox:h2": (packet("h1", "h2"),)})
    down = net.apply(state, LinkChange(2, 2, False))
    assert not any(isinstance(event, HostReceive) for event in net.enabled(down))


# ---- the scope of link faults ---------------------------------------------------------------

@pytest.mark.parametrize("scope,ends", [
    ("all", [(1, 1), (1, 2), (2, 2)]), ("switches", [(1, 2)]), ("hosts", [(1, 1), (2, 2)])])
def test_the_scope_chooses_the_links_that_may_fail(scope: str, ends: list[tuple[int, int]]) -> None:
    net = build("route-flow", topology="linear:2", packets=1, faults={"link": f"1:{scope}"},
                properties=[]).network
    changes = [(e.dpid, e.port) for e in net.enabled(net.initial_states()[0]) if isinstance(e, LinkChange)]
    assert changes == ends
    assert net.options.link_scope == scope


def test_budgets_with_a_scope_parse_and_check() -> None:
    assert parse_budgets(["link=1:switches", "loss=1"]) == {"link": "1:switches", "loss": 1}
    assert split_budgets({"link": "2:hosts"}) == ((0, 0, 0, 2, 0, 0), "hosts")
    assert split_budgets({"link": 1}) == ((0, 0, 0, 1, 0, 0), "all")
    for bad, message in ((["link=1:cables"], "unknown link fault scope 'cables'"),
                         (["loss=1:switches"], "expected KIND=N"), (["link=x:switches"], "expected KIND=N")):
        with pytest.raises(InputError, match=message):
            parse_budgets(bad)
    with pytest.raises(InputError, match="link='one:hosts'"):
        split_budgets({"link": "one:hosts"})


def test_a_scoped_link_budget_from_the_command_line() -> None:
    result = CliRunner().invoke(main, ["verify", "route-flow", "-t", "linear:2", "--fault", "link=1:switches",
                                       "-p", "no-forwarding-loops"])
    assert result.exit_code == 0, result.output
    assert "  faults         link 1 (links between switches only)" in result.stdout.splitlines()
    bad = CliRunner().invoke(main, ["verify", "route-flow", "--fault", "link=1:cables"])
    assert bad.exit_code == 2
    assert bad.stderr == "Error: unknown link fault scope 'cables' (known: all, switches, hosts)\n"


def test_only_switch_links_fail_so_no_host_is_cut_off() -> None:
    """route-flow computes paths once: a failed switch link is a stale route; a failed host
    link is one too with scope all, never with scope switches (linear:2 has one switch link)."""
    everywhere = verify("route-flow", topology="linear:2", packets=1, faults={"link": 1},
                        properties=["no-stale-routes"], keep_going=True)
    switches = verify("route-flow", topology="linear:2", packets=1, faults={"link": "1:switches"},
                      properties=["no-stale-routes"], keep_going=True)
    cut = [d for d in everywhere.discoveries if any(e in (LinkChange(1, 1, False), LinkChange(2, 2, False))
                                                   for e in d.trace.events)]
    assert cut
    assert all(LinkChange(1, 2, False) in d.trace.events for d in switches.discoveries)
    assert switches.stats.transitions < everywhere.stats.transitions


def test_no_stale_routes_says_the_link_is_down() -> None:
    app = path("rerouting.py", "Rerouting")
    stuck = verify(app, app_options={"bug": "ignore-failures"}, faults={"link": "1:switches"}, topology=square(),
                   packets=1)
    (found,) = stuck.discoveries
    assert found.property == "no-stale-routes"
    assert "whose link is down" in found.reason and "nothing is attached" not in found.reason
