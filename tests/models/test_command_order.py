"""Command order at a switch: FIFO (the paper's assumption) or any order no barrier forbids.

OpenFlow 1.0 (section 5.3.7) and 1.3 (section 6.2) let a switch execute the messages it has
received in any order unless a barrier separates them. ``--command-order any`` explores every
such order; a threaded controller scopes barriers to the batch of the call that sent them.
"""
from __future__ import annotations

import pytest

from nice_attendre import verify
from nice_attendre.models.app import App, Out
from nice_attendre.models.events import ControllerHandle, HostSend, SwitchProcessCommand, SwitchProcessPacket
from nice_attendre.models.messages import BarrierReply, BarrierRequest, FlowMod, PacketIn
from nice_attendre.models.network import Network, Options
from nice_attendre.models.packet import Match, Output
from nice_attendre.models.scenario import Scenario
from nice_attendre.models.topology import load_topology
from nice_attendre.trace import Trace


class TwoEntries(App[None]):
    """Installs two entries at the packet-in switch, then (``fence``) a barrier, then a third."""

    def __init__(self, fence: bool = False) -> None:
        self.fence = fence

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        out.flow_mod(ev.dpid, Match.of(eth_dst="h1"), [Output(1)])
        out.flow_mod(ev.dpid, Match.of(eth_dst="h9"), [Output(1)])
        if self.fence:
            out.barrier(ev.dpid, xid="fence")
        out.flow_mod(ev.dpid, Match.of(eth_dst="h2"), [Output(2)], buffer_id=ev.buffer_id)
        return state


def after_packet_in(app: App, order: str, threaded: bool = False) -> tuple[Network, tuple[int, ...]]:
    net = Network(Scenario.ping(load_topology("linear:1"), 1), app, "openflow",
                  Options(command_order=order, threaded_controller=threaded))
    state = Trace.from_events(net, [HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1)]).final
    return net, state


def command_events(net: Network, state: tuple[int, ...]) -> list[SwitchProcessCommand]:
    return [e for e in net.enabled(state) if isinstance(e, SwitchProcessCommand)]


def test_fifo_offers_the_head_command_only() -> None:
    net, state = after_packet_in(TwoEntries(), "fifo")
    assert command_events(net, state) == [SwitchProcessCommand(1)]


def test_any_order_offers_every_pending_command() -> None:
    net, state = after_packet_in(TwoEntries(), "any")
    events = command_events(net, state)
    assert len(events) == 3
    taken = {net.narrate(state, event)[1][0] for event in events}
    assert len(taken) == 3  # each event executes a different command
    # The order inside the channel carries no meaning: it is kept sorted, so two switches that
    # got the same commands in different orders are in the same state.
    (batch,) = net.value(state, "cmdq:1")
    assert {m.match for m in batch} == {Match.of(eth_dst=h) for h in ("h1", "h9", "h2")}


def test_a_barrier_holds_back_what_follows_it_and_waits_for_what_precedes_it() -> None:
    net, state = after_packet_in(TwoEntries(fence=True), "any")
    before = command_events(net, state)
    assert len(before) == 2  # the two entries before the barrier, in either order
    for event in before:
        state = net.apply(state, command_events(net, state)[0])
    (barrier,) = command_events(net, state)  # now only the barrier
    assert isinstance(net.value(state, "cmdq:1")[0][0], BarrierRequest)
    state = net.apply(state, barrier)
    assert net.value(state, "ctrlq:1") == (BarrierReply(1, ("app", "fence")),)
    (last,) = command_events(net, state)
    state = net.apply(state, last)
    assert net.value(state, "cmdq:1") == ()


def test_the_app_gets_its_own_barrier_reply_with_its_xid() -> None:
    replies: list[object] = []

    class Recorder(TwoEntries):
        def on_barrier_reply(self, state: None, ev: BarrierReply, out: Out) -> None:
            replies.append(ev)
            return state

    net, state = after_packet_in(Recorder(fence=True), "fifo")
    for _ in range(3):
        state = net.apply(state, SwitchProcessCommand(1))
    net.apply(state, ControllerHandle(1))
    assert replies == [BarrierReply(1, "fence")] * 2  # (called again with the same input: determinism.py)


def test_threaded_barrier_orders_only_its_own_batch() -> None:
    """Two handler calls' batches: a barrier in one does not wait for the other's commands."""
    net = Network(Scenario.ping(load_topology("linear:1"), 2), TwoEntries(fence=True), "openflow",
                  Options(command_order="any", threaded_controller="any"))
    state = Trace.from_events(net, [HostSend("h1"), HostSend("h1"), SwitchProcessPacket(1, 1),
                                    SwitchProcessPacket(1, 1), ControllerHandle(1), ControllerHandle(1)]).final
    assert len(net.value(state, "cmdq:1")) == 2
    assert len(command_events(net, state)) == 4  # two choices before each batch's barrier
    fence = BarrierRequest(("app", "fence"))
    one, two = (FlowMod(Match.of(eth_dst=h), (Output(1),)) for h in ("h1", "h9"))
    state = net.encode({"cmdq:1": ((fence, one), (one, two, fence, two))}, state)
    taken = [net.value(state, "cmdq:1")[e.batch][e.pick] for e in command_events(net, state)]
    # The first batch's barrier may run although the second batch's commands wait: they may
    # have arrived after it. The second batch's barrier waits for its own two commands.
    assert sorted(map(str, taken)) == sorted(map(str, [fence, one, two]))
def test_threaded_controller_handles_one_switchs_messages_in_either_order() -> None:
    net = Network(Scenario.ping(load_topology("linear:1"), 2), TwoEntries(), "openflow",
                  Options(threaded_controller="any"))
    state = Trace.from_events(net, [HostSend("h1"), HostSend("h1"), SwitchProcessPacket(1, 1),
                                    SwitchProcessPacket(1, 1)]).final
    handles = [e for e in net.enabled(state) if isinstance(e, ControllerHandle)]
    assert handles == [ControllerHandle(1, 0), ControllerHandle(1, 1)]
    assert net.apply(state, handles[0]) != net.apply(state, handles[1])


def test_the_header_states_the_command_order() -> None:
    from click.testing import CliRunner

    from nice_attendre.frontend.cli import main

    result = CliRunner().invoke(main, ["verify", "route-flow", "-t", "linear:1", "--command-order", "any"])
    assert "  channels       any: switches run commands in any order barriers allow; single-threaded controller" \
        in result.stdout.splitlines()


# ---- verdicts of the shipped apps under `any` ----------------------------------------------

@pytest.mark.parametrize("protocol", ["openflow", "openflow-b", "attendre"])
def test_mac_learning_needs_barriers_under_any_order(protocol: str) -> None:
    """The shipped MAC-learning app relies on FIFO command order; with barriers it does not."""
    fifo = verify("mac-learning", packets=2, protocol=protocol)
    unfenced = verify("mac-learning", packets=2, protocol=protocol, command_order="any", keep_going=True)
    fenced = verify("mac-learning", packets=2, protocol=protocol, command_order="any",
                    app_options={"barriers": True})
    assert fifo.ok and fifo.complete
    assert {d.property for d in unfenced.discoveries} == {"no-stale-routes", "strict-direct-paths"}
    assert fenced.ok and fenced.complete


@pytest.mark.parametrize("protocol", ["openflow", "openflow-b", "attendre"])
def test_route_flow_holds_under_any_order(protocol: str) -> None:
    """One flow-mod per switch per call: no order of them matters."""
    result = verify("route-flow", topology="linear:3", packets=1, protocol=protocol, command_order="any")
    assert result.ok and result.complete
