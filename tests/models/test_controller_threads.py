"""A multi-threaded controller: commands of different handler calls race (type-3 races)."""
from __future__ import annotations

import pytest

from nice_attendre import verify
from nice_attendre.apps.route_flow import RouteFlow
from nice_attendre.checker import dfs
from nice_attendre.errors import InputError
from nice_attendre.models.events import (ControllerHandle, HostSend, SwitchProcessCommand,
                                         SwitchProcessPacket)
from nice_attendre.models.messages import BarrierRequest, FlowMod
from nice_attendre.models.network import Network, Options
from nice_attendre.models.scenario import Scenario
from nice_attendre.models.topology import load_topology
from nice_attendre.property import Property
from nice_attendre.trace import Trace


def network(protocol: str = "openflow", topology: str = "linear:2", packets: int = 1) -> Network:
    return Network(Scenario.ping(load_topology(topology), packets), RouteFlow(), protocol,
                   Options(threaded_controller=True))


def test_type_3_race_commands_of_two_packet_ins_reach_a_switch_in_either_order() -> None:
    """Fig. 1(b)/2(b), q7: s2 sent a redundant packet-in; its flow-mod/packet-out and the first
    flow-mod race to s2."""
    net = network()
    state = Trace.from_events(net, [HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1),
                                    SwitchProcessCommand(1), SwitchProcessPacket(2, 1),
                                    ControllerHandle(2)]).final
    batches = net.value(state, "cmdq:2")
    assert len(batches) == 2
    assert sorted(len(b) for b in batches) == [1, 1]
    assert {b[0].buffer_id for b in batches} == {None, ("h1", 0, 0)}
    assert [e for e in net.enabled(state) if isinstance(e, SwitchProcessCommand)] == [
        SwitchProcessCommand(2, 0), SwitchProcessCommand(2, 1)]
    first = net.apply(state, SwitchProcessCommand(2, 0))
    second = net.apply(state, SwitchProcessCommand(2, 1))
    assert first != second


def test_commands_of_one_call_keep_their_order() -> None:
    net = network("openflow-b", topology="linear:3")
    state = Trace.from_events(net, [HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1)]).final
    (batch,) = net.value(state, "cmdq:2")
    assert isinstance(batch[0], FlowMod) and isinstance(batch[1], BarrierRequest)
    assert [e for e in net.enabled(state) if isinstance(e, SwitchProcessCommand) and e.dpid == 2] == [
        SwitchProcessCommand(2, 0)]


THREADED = {  # (protocol, switches, packets) -> counts with a threaded controller (per-switch)
    ("openflow", 1, 2): (80, 50, 31, 18),
    ("openflow", 2, 1): (68, 41, 28, 16),
    ("openflow", 2, 2): (2396, 897, 1500, 30),
    ("openflow-b", 2, 2): (281, 161, 121, 34),
}


@pytest.mark.parametrize("protocol,switches,packets", sorted(THREADED))
def test_type_3_races_grow_openflow(protocol: str, switches: int, packets: int) -> None:
    """Per-switch threads: calls for one switch are sequential, so one switch (linear:1) has
    no type-3 race, nor OpenFlow-B's route-flow (one packet-in switch per flow); calls for
    two switches race (models/test_links_threads.py pins the ``any`` threads)."""
    single = verify("route-flow", topology=f"linear:{switches}", packets=packets, protocol=protocol)
    threaded = verify("route-flow", topology=f"linear:{switches}", packets=packets, protocol=protocol,
                      threaded_controller=True)
    assert threaded.ok and threaded.complete
    assert threaded.stats.counts() == THREADED[(protocol, switches, packets)]
    assert threaded.stats.transitions >= single.stats.transitions
    if protocol == "openflow" and switches > 1:
        assert threaded.stats.transitions > single.stats.transitions


@pytest.mark.parametrize("switches,packets", [(1, 1), (1, 2), (2, 1), (2, 2), (3, 2), (1, 3)])
def test_attendre_has_no_type_3_race(switches: int, packets: int) -> None:
    """One packet-in per flow: no two calls ever send commands for one flow to one switch."""
    checked = ["one-packet-in-per-flow", "no-forgotten-packets"]
    single = verify("route-flow", topology=f"linear:{switches}", packets=packets, protocol="attendre",
                    properties=checked)
    threaded = verify("route-flow", topology=f"linear:{switches}", packets=packets, protocol="attendre",
                      threaded_controller=True, properties=checked)
    assert threaded.ok and threaded.stats.counts() == single.stats.counts()


def test_at_most_one_batch_per_switch_under_attendre() -> None:
    net = Network(Scenario.ping(load_topology("linear:3"), 2), RouteFlow(), "attendre", Options(threaded_controller=True))

    def one_batch(state: tuple[int, ...]) -> bool:
        return all(len(net.value(state, f"cmdq:{d}")) <= 1 for d in (1, 2, 3))

    assert dfs(net, [Property.always("one batch", one_batch)]).ok


def test_unknown_command_order_is_an_input_error() -> None:
    with pytest.raises(InputError, match="unknown command order 'lifo'"):
        Options(command_order="lifo")
