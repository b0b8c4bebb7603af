"""Each property on a hand-built state that satisfies it and one that violates it.

Monitor-based properties read alerts that transitions record, so their violating states are
built by applying the transition a monitor watches to a hand-built state.
"""
from __future__ import annotations

import pytest

from nice_attendre import properties as registry
from nice_attendre import verify
from nice_attendre.apps.route_flow import RouteFlow
from nice_attendre.errors import UnknownNameError
from nice_attendre.models.events import HostSend, SwitchProcessCommand, SwitchProcessPacket
from nice_attendre.models.flowtable import make_entry
from nice_attendre.models.messages import PacketOut
from nice_attendre.models.network import Network, Options
from nice_attendre.models.packet import Flood, Match, Output, Packet
from nice_attendre.models.scenario import HostState, Scenario, host_header
from nice_attendre.models.topology import load_topology

H12 = host_header("h1", "h2")
H21 = host_header("h2", "h1")


def setup(name: str, topology: str = "linear:2") -> tuple[Network, object]:
    monitors = registry.monitors_for([name])
    net = Network(Scenario.ping(load_topology(topology), 2), RouteFlow(), "openflow", Options(monitors=monitors))
    (prop,) = [p for p in registry.build(net, [name]) if p.name == name]
    return net, prop


def pkt(seq: int, trail: tuple = (), hdr=H12, origin: str = "h1") -> Packet:
    return Packet(hdr, origin, seq, trail=trail)


def test_no_forwarding_loops() -> None:
    net, prop = setup("no-forwarding-loops")
    fine = net.apply(net.encode({"port:2:1": (pkt(0, ((1, 1),)),)}), SwitchProcessPacket(2, 1))
    assert prop.holds(fine)
    looped = net.apply(net.encode({"port:2:1": (pkt(0, ((1, 1), (2, 1), (1, 2))),)}), SwitchProcessPacket(2, 1))
    assert not prop.holds(looped)
    assert "came to s2 port 1 again" in prop.why(looped)


def after_entry(net: Network, *actions: object) -> tuple[int, ...]:
    """s1 takes h1#0 from port 1 with an entry for it that has ``actions``."""
    entry = make_entry(0, 1, Match.of(eth_dst="h2"), tuple(actions))
    return net.apply(net.encode({"table:1": (entry,), "port:1:1": (pkt(0),)}), SwitchProcessPacket(1, 1))


def test_no_black_holes() -> None:
    net, prop = setup("no-black-holes")
    assert prop.holds(after_entry(net, Output(2)))
    # An output to a port where nothing is attached loses the packet: a black hole.
    spare = Network(Scenario.ping(load_topology("linear:2").with_spare_port(1), 1), RouteFlow(), "openflow",
                    Options(monitors=frozenset({"no-black-holes"})))
    (spare_prop,) = [p for p in registry.build(spare, ["no-black-holes"]) if p.name == "no-black-holes"]
    lost = after_entry(spare, Output(3))
    assert not spare_prop.holds(lost)
    assert spare_prop.why(lost) == "s1 dropped h1#0 [h1->h2] on its way to h2: nothing is attached to port 3"
    # So does an output to a port the switch does not have, or to the packet's in-port.
    no_port = after_entry(net, Output(7))
    assert not prop.holds(no_port) and prop.why(no_port).endswith("s1 has no port 7")
    back = after_entry(net, Output(1))
    assert not prop.holds(back) and "its in-port" in prop.why(back)


def test_a_deliberate_drop_is_not_a_black_hole() -> None:
    """A firewall's drop entry (no actions) and a flood with nowhere to go lose nothing by mistake."""
    net, prop = setup("no-black-holes")
    assert prop.holds(after_entry(net))
    single = Network(Scenario.ping(load_topology("linear:1"), 1), RouteFlow(), "openflow",
                     Options(monitors=frozenset({"no-black-holes"})))
    (single_prop,) = [p for p in registry.build(single, ["no-black-holes"]) if p.name == "no-black-holes"]
    flood = make_entry(0, 1, Match.of(eth_dst="h2"), (Flood(),))
    # h2 is gone from the only other port: the flood reaches nobody, and that is no black hole.
    state = single.encode({"table:1": (flood,), "port:1:1": (pkt(0),)})
    assert single_prop.holds(single.apply(state, SwitchProcessPacket(1, 1)))


def test_no_forgotten_packets() -> None:
    net, prop = setup("no-forgotten-packets")
    assert prop.expectation.value == "at_quiescence"
    assert prop.holds(net.encode({}))
    held = net.encode({"buffer:2": ((("h1", 0, 0), 1, pkt(0, ((1, 1), (2, 1)))),)})
    assert not prop.holds(held) and prop.why(held) == "s2 still holds data h1#0 [h1->h2]"
    # A packet-out releasing it makes the switch empty again.
    released = net.apply(net.encode({"cmdq:2": (PacketOut((Output(2),), ("h1", 0, 0)),)}, held),
                         SwitchProcessCommand(2))
    assert prop.holds(released)


def test_direct_paths() -> None:
    net, prop = setup("direct-paths")
    h2_got_first = HostState((), ((H12, "h1", 0),), (2, 2))
    # The monitor marks what a host sends once a packet of the flow reached the destination.
    before = net.apply(net.encode({}), HostSend("h1"))
    assert not net.value(before, "port:1:1")[0].followup
    after = net.apply(net.encode({"host:h2": h2_got_first}), HostSend("h1"))
    assert net.value(after, "port:1:1")[0].followup
    # A packet-in for a flow nothing of which arrived yet is fine.
    fine = net.apply(net.encode({"port:1:1": (pkt(1),)}), SwitchProcessPacket(1, 1))
    assert prop.holds(fine)
    # So is one for a packet that was on its way before the first delivery: no app avoids it.
    in_flight = net.apply(net.encode({"host:h2": h2_got_first, "port:1:1": (pkt(1),)}), SwitchProcessPacket(1, 1))
    assert prop.holds(in_flight)
    # A packet-in for a packet sent after the flow's first packet reached h2 is not.
    bad = net.apply(net.encode({"host:h2": h2_got_first, "port:1:1": (pkt(1)._replace(followup=True),)}),
                    SwitchProcessPacket(1, 1))
    assert not prop.holds(bad) and "after an earlier packet of the flow had reached h2" in prop.why(bad)


def test_strict_direct_paths() -> None:
    net, prop = setup("strict-direct-paths")
    h2_got = HostState((), ((H12, "h1", 0),), (2, 2))
    h1_got = HostState((1,), ((H21, "h2", 0),), (1, 1))
    # The monitor marks what a host sends once the two hosts exchanged packets both ways.
    sent_early = net.apply(net.encode({"host:h2": h2_got}), HostSend("h1"))
    assert not net.value(sent_early, "port:1:1")[0].late
    sent_late = net.apply(net.encode({"host:h2": h2_got, "host:h1": h1_got}), HostSend("h1"))
    assert net.value(sent_late, "port:1:1")[0].late
    # A packet sent before the exchange may still go to the controller (it was in flight)...
    in_flight = net.apply(net.encode({"host:h2": h2_got, "host:h1": h1_got, "port:1:1": (pkt(1),)}),
                          SwitchProcessPacket(1, 1))
    assert prop.holds(in_flight)
    # ...one sent after it may not.
    late = pkt(1)._replace(late=True)
    both_ways = net.apply(net.encode({"host:h2": h2_got, "host:h1": h1_got, "port:1:1": (late,)}),
                          SwitchProcessPacket(1, 1))
    assert not prop.holds(both_ways) and "had exchanged packets both ways" in prop.why(both_ways)


def test_one_packet_in_per_flow() -> None:
    net, prop = setup("one-packet-in-per-flow")
    first = net.apply(net.encode({"port:1:1": (pkt(0),)}), SwitchProcessPacket(1, 1))
    assert prop.holds(first)
    assert net.value(first, "history") == (H12,)
    second = net.apply(net.encode({"port:2:1": (pkt(0, ((1, 1),)),)}, first), SwitchProcessPacket(2, 1))
    assert not prop.holds(second) and "second packet-in for flow" in prop.why(second)


def received(*seqs: int) -> HostState:
    return HostState((), tuple((H12, "h1", seq) for seq in seqs), (2, 2))


def test_no_reordering() -> None:
    net, prop = setup("no-reordering")
    assert prop.holds(net.encode({"host:h2": received(0, 1)}))
    swapped = net.encode({"host:h2": received(1, 0)})
    assert not prop.holds(swapped) and prop.why(swapped) == "h2 received h1#0 after h1#1 (h1#1, h1#0)"
    # A second copy of an earlier packet is a duplicate, not a reordering.
    assert prop.holds(net.encode({"host:h2": received(0, 1, 0)}))


def test_no_duplicates() -> None:
    net, prop = setup("no-duplicates")
    assert prop.holds(net.encode({"host:h2": received(0, 1)}))
    twice = net.encode({"host:h2": received(0, 1, 0)})
    assert not prop.holds(twice) and prop.why(twice) == "h2 received h1#0 twice (h1#0, h1#1, h1#0)"


def test_delivery() -> None:
    net, prop = setup("delivery")
    assert prop.expectation.value == "at_quiescence"
    h1_sent = HostState((2,), (), (1, 1), sent_log=((0, H12, "data"), (1, H12, "data")))
    assert prop.holds(net.encode({"host:h1": h1_sent, "host:h2": received(0, 1)}))
    lost = net.encode({"host:h1": h1_sent, "host:h2": received(1)})
    assert not prop.holds(lost) and prop.why(lost) == "h1#0 never reached h2"
    # A switch that hands a unicast frame to the wrong host misdelivers it (the monitor's alert).
    three = Network(Scenario.ping(load_topology(triangle_hosts()), 1), RouteFlow(), "openflow",
                    Options(monitors=frozenset({"delivery"})))
    (three_prop,) = [p for p in registry.build(three, ["delivery"]) if p.name == "delivery"]
    to_h3 = make_entry(0, 1, Match.of(eth_dst="h2"), (Output(three.topology.host_port["h3"][1]),))
    state = three.apply(three.encode({"table:1": (to_h3,), "port:1:1": (pkt(0),)}), SwitchProcessPacket(1, 1))
    assert not three_prop.holds(state)
    assert "s1 sent h1#0 [h1->h2], addressed to h2, to h3" in three_prop.why(state)
    # A flood reaching the other hosts too is no misdelivery.
    flood = make_entry(0, 1, Match.of(eth_dst="h2"), (Flood(),))
    state = three.apply(three.encode({"table:1": (flood,), "port:1:1": (pkt(0),)}), SwitchProcessPacket(1, 1))
    assert three.alerts(state) == ()


def triangle_hosts() -> object:
    """One switch with three hosts."""
    import networkx as nx

    graph = nx.Graph()
    graph.add_edges_from([("s1", "h1"), ("s1", "h2"), ("s1", "h3")])
    return graph


def test_app_exception_is_always_checked() -> None:
    net, _ = setup("no-reordering")
    names = [p.name for p in registry.build(net, ["no-reordering"])]
    assert names == ["no-reordering", "app-exception", "app-nondeterminism"]
    (prop,) = [p for p in registry.build(net, []) if p.name == "app-exception"]
    assert prop.holds(net.encode({}))
    assert not prop.holds(net.encode({"alerts": (("app-exception", "X.on_packet_in raised KeyError"),)}))
    (prop,) = [p for p in registry.build(net, []) if p.name == "app-nondeterminism"]
    assert prop.holds(net.encode({"alerts": (("app-exception", "X.on_packet_in raised KeyError"),)}))
    assert not prop.holds(net.encode({"alerts": (("app-nondeterminism", "X.on_packet_in read the clock"),)}))


def test_unknown_property_names_the_known_ones() -> None:
    with pytest.raises(UnknownNameError, match="unknown property 'no-loops'.*known: no-forwarding-loops"):
        registry.check_names(["no-loops"])


def test_monitors_do_not_change_the_state_space_of_a_correct_app() -> None:
    """Alert monitors only record violations: without one, the counts are the same."""
    base = verify("route-flow", topology="linear:3", packets=2, properties=[])
    monitored = verify("route-flow", topology="linear:3", packets=2,
                       properties=["no-forwarding-loops", "no-black-holes", "no-forgotten-packets", "delivery",
                                   "no-duplicates"])
    assert base.stats.counts() == monitored.stats.counts()


def test_history_keeping_monitors_add_state_only_when_checked() -> None:
    """direct-paths marks packets sent after their flow's first delivery, strict-direct-paths
    those sent after an exchange, one-packet-in-per-flow keeps the flows that caused a
    packet-in: checking them splits states, so the counts grow."""
    base = verify("route-flow", topology="linear:3", packets=2, properties=[])
    for name in ("direct-paths", "strict-direct-paths", "one-packet-in-per-flow"):
        checked = verify("route-flow", topology="linear:3", packets=2, protocol="attendre", properties=[name])
        plain = verify("route-flow", topology="linear:3", packets=2, protocol="attendre", properties=[])
        assert checked.ok and checked.stats.transitions >= plain.stats.transitions
    strict = verify("route-flow", topology="linear:3", packets=2, properties=["strict-direct-paths"])
    assert strict.ok and strict.stats.counts() == (13203, 4982, 8222, 40) != base.stats.counts()
