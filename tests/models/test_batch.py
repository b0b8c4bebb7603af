"""Batched flow-mods (papers/004, Cui et al.), branch by branch: the sequential storage table,
the quantity and time conditions, the batch as one step, and what happens to
flow-mod/packet-outs, packet-outs and barriers."""
from __future__ import annotations

from nice_attendre import verify
from nice_attendre.apps.route_flow import RouteFlow
from nice_attendre.models.events import HostSend, SwitchProcessCommand, SwitchProcessPacket
from nice_attendre.models import flowtable
from nice_attendre.models.flowtable import make_entry
from nice_attendre.models.messages import DEFAULT_PRIORITY, BarrierReply, BarrierRequest, FlowMod, PacketOut
from nice_attendre.models.network import Network
from nice_attendre.models.packet import Match, Output, Packet
from nice_attendre.models.protocols.batch import BatchTimerFires
from nice_attendre.models.scenario import Scenario, host_header
from nice_attendre.models.topology import load_topology

HDR = host_header("h1", "h2")
FORWARD = FlowMod(Match.exact(HDR), (Output(2),))
REVERSE = FlowMod(Match.exact(HDR.reversed()), (Output(1),))
THIRD = FlowMod(Match.of(eth_dst="h3"), (Output(2),))


def network(protocol: str = "batch", topology: str = "linear:1") -> Network:
    return Network(Scenario.ping(load_topology(topology), 1), RouteFlow(), protocol)


def entry(mod: FlowMod) -> flowtable.Entry:
    return make_entry(0, DEFAULT_PRIORITY, mod.match, mod.actions)


def commands(net: Network, state: tuple[int, ...], count: int) -> tuple[int, ...]:
    for _ in range(count):
        state = net.apply(state, SwitchProcessCommand(1))
    return state


def timers(net: Network, state: tuple[int, ...]) -> list[object]:
    return [e for e in net.enabled(state) if isinstance(e, BatchTimerFires)]


def test_a_flow_mod_below_the_threshold_is_stored_not_applied() -> None:
    net = network("batch:threshold=3")
    state = commands(net, net.encode({"cmdq:1": (FORWARD, REVERSE)}), 2)
    assert net.value(state, "ext:1") == (FORWARD, REVERSE)
    assert net.value(state, "table:1") == ()
    assert timers(net, state) == [BatchTimerFires(1)]
    assert net.narrate(net.encode({"cmdq:1": (FORWARD,)}), SwitchProcessCommand(1))[1] == [
        "s1 stores flow-mod {exact h1->h2} -> output:2 (1 of 3 for a batch)"]


def test_the_flow_mod_reaching_the_threshold_applies_the_batch_in_one_step() -> None:
    net = network("batch:threshold=3")
    state = commands(net, net.encode({"cmdq:1": (FORWARD, REVERSE, THIRD)}), 3)
    assert net.value(state, "ext:1") == ()
    table: tuple = ()
    for mod in (FORWARD, REVERSE, THIRD):
        table = flowtable.put(table, entry(mod))
    assert net.value(state, "table:1") == table
    assert timers(net, state) == []


def test_the_batch_applies_its_flow_mods_in_storage_order() -> None:
    net = network("batch:threshold=2")
    delete = FlowMod(Match.exact(HDR), (), command="delete")
    state = commands(net, net.encode({"cmdq:1": (FORWARD, delete)}), 2)
    assert net.value(state, "table:1") == ()  # added, then deleted: in this order
    state = commands(net, net.encode({"cmdq:1": (delete, FORWARD)}), 2)
    assert net.value(state, "table:1") == (entry(FORWARD),)


def test_the_timer_applies_what_is_stored() -> None:
    net = network("batch:threshold=3")
    state = commands(net, net.encode({"cmdq:1": (FORWARD,)}), 1)
    fired = net.apply(state, BatchTimerFires(1))
    assert net.value(fired, "ext:1") == () and net.value(fired, "table:1") == (entry(FORWARD),)
    assert timers(net, fired) == []
    assert net.narrate(state, BatchTimerFires(1))[1][0] == "s1: the batch timer fires"
    assert str(BatchTimerFires(1)) == "s1's batch timer fires"


def test_without_the_timer_only_the_quantity_condition_applies() -> None:
    net = network("batch:threshold=2,timer=never")
    state = commands(net, net.encode({"cmdq:1": (FORWARD,)}), 1)
    assert timers(net, state) == [] and net.value(state, "ext:1") == (FORWARD,)
    result = verify("route-flow", topology="linear:2", packets=1, protocol="batch:threshold=2,timer=never",
                    properties=["no-forgotten-packets"])
    assert [d.property for d in result.discoveries] == ["no-forgotten-packets"]  # one flow-mod per switch waits


def test_threshold_one_is_openflow() -> None:
    for app, topology, packets in (("route-flow", "linear:3", 2), ("mac-learning", "linear:1", 2)):
        plain = verify(app, topology=topology, packets=packets, protocol="openflow", properties=[])
        batched = verify(app, topology=topology, packets=packets, protocol="batch:threshold=1", properties=[])
        assert batched.stats.counts() == plain.stats.counts()


def test_a_flow_mod_packet_out_releases_its_packet_when_the_batch_is_applied_after_every_entry() -> None:
    net = network("batch:threshold=2", topology="linear:2")
    held = Packet(HDR, "h1", 0, trail=((1, 1),))
    with_packet = FlowMod(Match.exact(HDR), (Output(2),), buffer_id=("h1", 0, 0))
    state = net.encode({"buffer:1": ((("h1", 0, 0), 1, held),), "cmdq:1": (with_packet, REVERSE)})
    stored = net.apply(state, SwitchProcessCommand(1))
    assert net.value(stored, "buffer:1") == ((("h1", 0, 0), 1, held),)  # still held: the entry is not in place
    assert net.value(stored, "port:2:1") == ()
    applied = net.apply(stored, SwitchProcessCommand(1))
    assert net.value(applied, "buffer:1") == ()
    assert [p.uid for p in net.value(applied, "port:2:1")] == [("h1", 0)]
    assert net.narrate(stored, SwitchProcessCommand(1))[1] == [
        "s1 stores flow-mod {exact h2->h1} -> output:1; 2 flow-mods reach the threshold",
        "s1 applies a batch of 2 flow-mods",
        "s1 installs [prio 32768 {exact h1->h2} -> output:2]",
        "s1 installs [prio 32768 {exact h2->h1} -> output:1]",
        "s1 applies output:2 to buffered data h1#0 [h1->h2]",
        "s1 sends data h1#0 [h1->h2] out of port 2 to s2:1",
    ]


def test_a_packet_out_is_processed_at_once_against_the_table_in_force() -> None:
    net = network("batch:threshold=3", topology="linear:2")
    packet = Packet(HDR, "h1", 0, trail=((1, 1),))
    state = net.encode({"cmdq:1": (FORWARD, PacketOut((Output(-1),), None, 1, packet))})  # output:table
    state = commands(net, state, 2)
    assert net.value(state, "ext:1") == (FORWARD,)  # the flow-mod still waits
    (msg,) = net.value(state, "ctrlq:1")  # so the resubmitted packet misses: a packet-in
    assert msg.packet.uid == ("h1", 0)


def test_a_barrier_applies_the_stored_batch_before_answering() -> None:
    net = network("batch:threshold=3")
    state = commands(net, net.encode({"cmdq:1": (FORWARD, BarrierRequest(("app", 7)))}), 2)
    assert net.value(state, "ext:1") == () and net.value(state, "table:1") == (entry(FORWARD),)
    assert net.value(state, "ctrlq:1") == (BarrierReply(1, ("app", 7)),)
    empty = commands(net, net.encode({"cmdq:1": (BarrierRequest(("app", 8)),)}), 1)
    assert net.value(empty, "ctrlq:1") == (BarrierReply(1, ("app", 8)),)


def test_route_flow_with_batches_delivers_everything() -> None:
    result = verify("route-flow", topology="linear:2", packets=2, protocol="batch",
                    properties=["delivery", "no-forgotten-packets"])
    assert result.ok and result.complete


def test_stored_flow_mods_leave_no_packet_behind_at_quiescence_with_the_timer() -> None:
    net = network("batch:threshold=5", topology="linear:2")
    state = net.encode({"cmdq:1": (FORWARD,)})
    state = net.apply(state, SwitchProcessCommand(1))
    assert net.enabled(state)  # the timer is still to fire: not quiescent
    assert HostSend("h1") in net.enabled(state) and SwitchProcessPacket(1, 1) not in net.enabled(state)
