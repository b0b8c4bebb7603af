"""Faults on purpose: each kind as an event within its budget, and an app bug only a fault reveals."""
from __future__ import annotations

import networkx as nx
import pytest
from click.testing import CliRunner

from nice_attendre import InputError, verify
from nice_attendre.frontend.api import build
from nice_attendre.frontend.cli import main
from nice_attendre.models.events import HostSend, SwitchProcessPacket
from nice_attendre.models.faults import ControlLoss, LinkChange, LinkFault, SwitchRestart, parse_budgets
from nice_attendre.models.messages import PortStatus
from nice_attendre.trace import Trace
from tests_data_apps import path

PROTOCOLS = ["openflow", "openflow-b", "attendre"]


def square() -> nx.Graph:
    """h1 - s1, two paths s1 - s2 - s4 and s1 - s3 - s4, s4 - h2."""
    graph = nx.Graph()
    graph.add_edges_from([("h1", "s1"), ("s1", "s2"), ("s2", "s4"), ("s1", "s3"), ("s3", "s4"), ("s4", "h2")])
    return graph


def test_without_budgets_nothing_changes() -> None:
    plain = verify("route-flow", topology="linear:3", packets=2)
    zero = verify("route-flow", topology="linear:3", packets=2, faults={"loss": 0})
    assert plain.stats.counts() == zero.stats.counts()
    assert build("route-flow", faults={"loss": 0}).network.faults is None


def test_each_fault_is_an_event_within_its_budget() -> None:
    net = build("route-flow", topology="linear:2", packets=2,
                faults={"loss": 1, "duplicate": 1, "reorder": 1, "link": 1, "control": 1, "restart": 1},
                properties=[]).network
    state = Trace.from_events(net, [HostSend("h1"), HostSend("h1")]).final
    events = net.enabled(state)
    assert LinkFault("loss", "s1:1") in events and LinkFault("duplicate", "s1:1") in events
    assert LinkFault("reorder", "s1:1") in events  # two packets on the link: they may swap
    assert LinkChange(1, 2, False) in events and SwitchRestart(2) in events
    lost = net.apply(state, LinkFault("loss", "s1:1"))
    assert [p.uid for p in net.value(lost, "port:1:1")] == [("h1", 1)]
    assert net.value(lost, "faults").left == (0, 1, 1, 1, 1, 1)
    assert LinkFault("loss", "s1:1") not in net.enabled(lost)  # the budget is spent
    doubled = net.apply(state, LinkFault("duplicate", "s1:1"))
    assert [p.uid for p in net.value(doubled, "port:1:1")] == [("h1", 0), ("h1", 0), ("h1", 1)]
    swapped = net.apply(state, LinkFault("reorder", "s1:1"))
    assert [p.uid for p in net.value(swapped, "port:1:1")] == [("h1", 1), ("h1", 0)]


def test_a_link_going_down_tells_the_controller_and_loses_what_crosses_it() -> None:
    net = build("route-flow", topology="linear:2", packets=1, faults={"link": 1}, properties=[]).network
    state = net.apply(net.initial_states()[0], LinkChange(1, 2, False))
    assert net.value(state, "ctrlq:1") == (PortStatus(1, 2, False),)
    assert net.value(state, "ctrlq:2") == (PortStatus(2, 1, False),)
    assert LinkChange(1, 2, True) not in net.enabled(state)  # link=1: it stays down


def test_a_restarted_switch_forgets_its_table_and_joins_again() -> None:
    joins: list[int] = []
    from nice_attendre.models.app import App, Out

    class Proactive(App[None]):
        def on_switch_join(self, state: None, dpid: int, out: Out) -> None:
            joins.append(dpid)
            return state

    net = build(Proactive(), topology="linear:1", faults={"restart": 1}, properties=[]).network
    state = net.encode({"table:1": ("anything",)})
    joins.clear()
    state = net.apply(state, SwitchRestart(1))
    assert net.value(state, "table:1") == () and joins == [1]


def test_control_loss_drops_a_packet_in() -> None:
    net = build("route-flow", topology="linear:1", packets=1, faults={"control": 1}, properties=[]).network
    state = Trace.from_events(net, [HostSend("h1"), SwitchProcessPacket(1, 1)]).final
    state = net.apply(state, ControlLoss(1, False))
    assert net.value(state, "ctrlq:1") == ()
    assert [p.uid for _, p in net.buffered_packets(state)] == [("h1", 0)]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_only_a_link_failure_reveals_an_app_that_never_reroutes(protocol: str) -> None:
    app = path("rerouting.py", "Rerouting")
    options = dict(topology=square(), packets=1, protocol=protocol)
    assert verify(app, app_options={"bug": "ignore-failures"}, packets=2, topology=square(), protocol=protocol).ok
    stuck = verify(app, app_options={"bug": "ignore-failures"}, faults={"link": 1}, **options)
    (found,) = stuck.discoveries
    assert found.property == "no-stale-routes" and "whose link is down" in found.reason
    assert any(str(event).startswith("FAULT: the link at") for event in found.trace.events)
    rerouted = verify(app, faults={"link": 1}, **options)
    if protocol != "openflow-b":
        assert rerouted.ok and rerouted.complete
    else:
        # OpenFlow-B's platform holds a path's first flow-mod/packet-out until barrier replies
        # come back: one computed before the failure is released after the app reacted to it,
        # and reinstalls a route into the dead link. No app can see or cancel it.
        (held,) = rerouted.discoveries
        assert held.property == "no-stale-routes"
        notes = [line for step in held.trace.steps for line in
                 rerouted.system.narrate(_before(held.trace, step), step.event)[1]]
        assert any("releasing held messages" in line for line in notes)


def _before(trace: Trace, step: object) -> object:
    states = list(trace.states())
    return states[list(trace.steps).index(step)]


def test_faults_from_the_command_line() -> None:
    result = CliRunner().invoke(main, ["verify", "route-flow", "-t", "linear:2", "--fault", "loss=1",
                                       "-p", "delivery"])
    assert result.exit_code == 1, result.output
    assert "  faults         loss 1" in result.stdout.splitlines()
    assert "FAULT: the link into" in result.stdout


@pytest.mark.parametrize("items,message", [
    (["loss=x"], "expected KIND=N"), (["melt=1"], "unknown fault 'melt'"), (["loss=99"], "from 0 to 20")])
def test_bad_fault_budgets_are_input_errors(items: list[str], message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_budgets(items)
