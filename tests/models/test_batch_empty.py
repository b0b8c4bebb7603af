"""Batched flow-mods (papers/004, 3.1 and Algorithm 1): the switch stores a flow-mod only if
its match fields and actions are not empty; otherwise the message is dropped."""
from __future__ import annotations

import pytest

from nice_attendre import verify
from nice_attendre.apps.route_flow import RouteFlow
from nice_attendre.models.events import SwitchProcessCommand
from nice_attendre.models.messages import FlowMod
from nice_attendre.models.network import Network
from nice_attendre.models.packet import Match, Output, Packet
from nice_attendre.models.scenario import Scenario, host_header
from nice_attendre.models.topology import load_topology
from nice_attendre.properties.custom import always
from tests_data_apps import path

HDR = host_header("h1", "h2")
FORWARD = FlowMod(Match.exact(HDR), (Output(2),))
DROP = FlowMod(Match.of(eth_src="h2", eth_dst="h1"), ())  # OpenFlow's drop entry: no actions
EVERYTHING = FlowMod(Match.of(), (Output(2),))  # no field, no in-port: matches every packet


def network(protocol: str = "batch:threshold=1") -> Network:
    return Network(Scenario.ping(load_topology("linear:1"), 1), RouteFlow(), protocol)


def process(net: Network, *commands: FlowMod) -> tuple[int, ...]:
    state = net.encode({"cmdq:1": commands})
    for _ in commands:
        state = net.apply(state, SwitchProcessCommand(1))
    return state


@pytest.mark.parametrize("mod,empty", [
    (DROP, "action list"), (EVERYTHING, "match"),
    (FlowMod(Match.of(eth_dst="h1"), (), command="modify"), "action list"),
    (FlowMod(Match.of(), (Output(1),), command="modify"), "match")])
def test_a_flow_mod_with_an_empty_match_or_action_list_is_dropped(mod: FlowMod, empty: str) -> None:
    for protocol in ("batch:threshold=1", "batch:threshold=2"):
        net = network(protocol)
        state = process(net, mod)
        assert net.value(state, "ext:1") == () and net.value(state, "table:1") == ()
        (note,) = net.narrate(net.encode({"cmdq:1": (mod,)}), SwitchProcessCommand(1))[1]
        assert note == (f"s1 drops {mod}: its {empty} is empty (the batching switch stores only flow-mods with "
                        "match fields and actions)")


def test_the_others_are_stored_and_applied_around_it() -> None:
    net = network("batch:threshold=2")
    state = process(net, FORWARD, DROP)
    assert net.value(state, "ext:1") == (FORWARD,)  # the drop entry never counted towards the batch
    state = process(net, FORWARD, DROP, FlowMod(Match.exact(HDR.reversed()), (Output(1),)))
    assert net.value(state, "ext:1") == () and len(net.value(state, "table:1")) == 2


def test_a_delete_has_no_actions_and_still_counts() -> None:
    net = network("batch:threshold=1")
    delete = FlowMod(Match.of(), (), command="delete")
    state = process(net, FORWARD, delete)
    assert net.value(state, "table:1") == ()


def test_a_dropped_flow_mod_packet_out_leaves_its_packet_buffered() -> None:
    net = network("batch:threshold=1")
    held = Packet(HDR, "h1", 0, trail=((1, 1),))
    state = net.encode({"buffer:1": ((("h1", 0, 0), 1, held),),
                        "cmdq:1": (FlowMod(Match.exact(HDR), (), buffer_id=("h1", 0, 0)),)})
    after = net.apply(state, SwitchProcessCommand(1))
    assert len(net.value(after, "buffer:1")) == 1 and net.value(after, "table:1") == ()


def test_plain_openflow_installs_them() -> None:
    net = network("openflow")
    state = process(net, DROP, EVERYTHING)
    assert len(net.value(state, "table:1")) == 2


NO_DROP_ENTRY = always("no-drop-entry", lambda view: all(entry.actions for switch in view.switches.values()
                                                        for entry in switch.table),
                       "no switch holds an entry with no actions")


def test_a_firewall_s_drop_rule_never_reaches_a_batching_switch() -> None:
    """The firewall installs its deny rule (no actions) at switch join: under OpenFlow a
    switch holds it; a batching switch drops the flow-mod."""
    firewall = path("firewall.py", "Firewall")
    options = dict(topology="linear:2", packets=1, properties=[NO_DROP_ENTRY])
    (held,) = verify(firewall, protocol="openflow", **options).discoveries
    assert held.property == "no-drop-entry"
    batched = verify(firewall, protocol="batch", **options)
    assert batched.ok and batched.complete


def test_route_flow_counts_do_not_change() -> None:
    """route-flow sends no such flow-mod: its pinned batch counts stay (tests/models/test_variant_counts.py)."""
    assert verify("route-flow", topology="linear:2", packets=2, protocol="batch",
                  properties=[]).stats.counts() == (2574, 1079, 1496, 36)
