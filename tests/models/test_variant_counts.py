"""Pinned counts of the other papers' variants (pif, buffer, batch) on small scenarios, their
control-plane load, and the counts of the paper's three variants unchanged by the open
protocol interface. A changed count is a change of semantics: explain it in the commit."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from nice_attendre import verify
from nice_attendre.apps.route_flow import RouteFlow
from nice_attendre.models.network import Network
from nice_attendre.models.scenario import Scenario
from nice_attendre.models.topology import load_topology

#: (app, topology, packets, protocol) -> (transitions, unique states, revisits, max depth, search):
#: the bare state space (no property checked; app exceptions still end a search).
COUNTS = {
    ("route-flow", "linear:2", 2, "pif"): (1836, 811, 1026, 30, "complete"),
    ("route-flow", "linear:2", 2, "pif:action=drop"): (1805, 811, 995, 28, "complete"),
    ("route-flow", "linear:2", 2, "pif:action=flood"): (3356, 1341, 2016, 28, "complete"),
    ("route-flow", "linear:2", 2, "pif:action=drop,expire=never"): (363, 204, 160, 24, "complete"),
    ("route-flow", "linear:2", 2, "pif:action=flood,expire=never"): (924, 447, 478, 24, "complete"),
    ("route-flow", "linear:2", 2, "pif:remove=never"): (23143, 6239, 16905, 34, "complete"),
    ("route-flow", "linear:2", 2, "pif:expire=never,remove=never"): (1942, 992, 951, 30, "complete"),
    ("route-flow", "linear:2", 2, "buffer:capacity=0"): (1608, 794, 815, 37, "complete"),
    ("route-flow", "linear:2", 2, "buffer:capacity=1"): (1362, 666, 697, 33, "complete"),
    ("route-flow", "linear:2", 2, "buffer:granularity=flow"): (337, 181, 157, 24, "complete"),
    ("route-flow", "linear:2", 2, "buffer:granularity=flow,capacity=1"): (1362, 666, 697, 33, "complete"),
    ("route-flow", "linear:2", 2, "buffer:granularity=flow,timeout=event"): (5874, 2269, 3606, 29, "complete"),
    ("route-flow", "linear:2", 2, "batch"): (2574, 1079, 1496, 36, "complete"),
    ("route-flow", "linear:2", 2, "batch:threshold=3"): (3147, 1326, 1822, 38, "complete"),
    ("route-flow", "linear:2", 2, "batch:timer=never"): (271, 160, 112, 31, "complete"),
    ("route-flow", "linear:3", 2, "pif:action=drop,expire=never"): (3155, 1327, 1829, 35, "complete"),
    ("route-flow", "linear:3", 2, "pif:action=flood,expire=never"): (9240, 3435, 5806, 34, "complete"),
    ("route-flow", "linear:3", 2, "buffer:capacity=0"): (18816, 7115, 11702, 48, "complete"),
    ("route-flow", "linear:3", 2, "buffer:capacity=1"): (17794, 6691, 11104, 45, "complete"),
    ("route-flow", "linear:3", 2, "buffer:granularity=flow"): (2927, 1189, 1739, 34, "complete"),
    ("route-flow", "linear:3", 2, "buffer:granularity=flow,capacity=1"): (17794, 6691, 11104, 45, "complete"),
    ("route-flow", "linear:3", 2, "batch:timer=never"): (2770, 1285, 1486, 45, "complete"),
    ("mac-learning", "linear:1", 2, "pif"): (16643, 5248, 11396, 29, "complete"),
    ("mac-learning", "linear:1", 2, "pif:action=drop"): (16378, 5248, 11131, 28, "complete"),
    ("mac-learning", "linear:1", 2, "pif:action=flood"): (27015, 8536, 18480, 27, "complete"),
    ("mac-learning", "linear:1", 2, "pif:action=drop,expire=never"): (1424, 689, 736, 26, "complete"),
    ("mac-learning", "linear:1", 2, "pif:action=flood,expire=never"): (3239, 1568, 1672, 26, "complete"),
    ("mac-learning", "linear:1", 2, "pif:remove=never"): (32648, 9474, 23175, 32, "complete"),
    ("mac-learning", "linear:1", 2, "pif:expire=never,remove=never"): (3141, 1465, 1677, 28, "complete"),
    ("mac-learning", "linear:1", 2, "buffer:capacity=0"): (3540, 1658, 1883, 30, "complete"),
    ("mac-learning", "linear:1", 2, "buffer:capacity=1"): (5526, 2576, 2951, 29, "complete"),
    ("mac-learning", "linear:1", 2, "buffer:granularity=flow"): (2270, 1057, 1214, 25, "complete"),
    ("mac-learning", "linear:1", 2, "buffer:granularity=flow,capacity=1"): (5526, 2576, 2951, 29, "complete"),
    ("mac-learning", "linear:1", 2, "buffer:granularity=flow,timeout=event"): (4196, 1830, 2367, 25, "complete"),
    ("mac-learning", "linear:1", 2, "batch"): (4495, 1879, 2617, 29, "complete"),
    ("mac-learning", "linear:1", 2, "batch:threshold=3"): (5448, 2267, 3182, 30, "complete"),
    ("mac-learning", "linear:1", 2, "batch:timer=never"): (2364, 1140, 1225, 28, "complete"),
    ("energy-te", "paths:2,3", 1, "pif"): (274, 142, 133, 24, "complete"),
    ("energy-te", "paths:2,3", 1, "pif:action=drop"): (274, 142, 133, 24, "complete"),
    ("energy-te", "paths:2,3", 1, "pif:action=flood"): (274, 142, 133, 24, "complete"),
    ("energy-te", "paths:2,3", 1, "pif:action=drop,expire=never"): (156, 99, 58, 24, "complete"),
    ("energy-te", "paths:2,3", 1, "pif:action=flood,expire=never"): (156, 99, 58, 24, "complete"),
    ("energy-te", "paths:2,3", 1, "pif:remove=never"): (6055, 1580, 4476, 32, "complete"),
    ("energy-te", "paths:2,3", 1, "pif:expire=never,remove=never"): (377, 266, 112, 28, "complete"),
    ("energy-te", "paths:2,3", 1, "buffer:capacity=0"): (192, 121, 72, 29, "complete"),
    ("energy-te", "paths:2,3", 1, "buffer:capacity=1"): (156, 99, 58, 24, "complete"),
    ("energy-te", "paths:2,3", 1, "buffer:granularity=flow"): (156, 99, 58, 24, "complete"),
    ("energy-te", "paths:2,3", 1, "buffer:granularity=flow,capacity=1"): (156, 99, 58, 24, "complete"),
    ("energy-te", "paths:2,3", 1, "buffer:granularity=flow,timeout=event"): (156, 99, 58, 24, "complete"),
    ("energy-te", "paths:2,3", 1, "batch"): (468, 230, 239, 28, "complete"),
    ("energy-te", "paths:2,3", 1, "batch:threshold=3"): (549, 271, 279, 31, "complete"),
    ("energy-te", "paths:2,3", 1, "batch:timer=never"): (21, 16, 6, 7, "complete"),
}
#: The same, over 20,000 transitions each (run with -m slow).
SLOW_COUNTS = {
    ("route-flow", "linear:3", 2, "pif"): (22498, 7829, 14670, 41, "complete"),
    ("route-flow", "linear:3", 2, "pif:action=drop"): (22241, 7829, 14413, 41, "complete"),
    ("route-flow", "linear:3", 2, "pif:action=flood"): (42257, 13585, 28673, 41, "complete"),
    ("route-flow", "linear:3", 2, "pif:expire=never,remove=never"): (50012, 19722, 30291, 44, "complete"),
    ("route-flow", "linear:3", 2, "batch"): (59675, 17791, 41885, 52, "complete"),
    ("route-flow", "linear:3", 2, "batch:threshold=3"): (92562, 27139, 65424, 57, "complete"),
    ("route-flow", "linear:3", 2, "pif:remove=never"): (933055, 180127, 752929, 48, "complete"),
    ("route-flow", "linear:3", 2, "buffer:granularity=flow,timeout=event"): (511188, 143360, 367829, 47, "complete"),
}

#: Counts of the paper's three variants (also pinned elsewhere): the open interface changed none.
PAPER_COUNTS = {
    ("route-flow", "linear:3", 2, "openflow"): (13107, 4934, 8174, 40, "complete"),
    ("route-flow", "linear:3", 2, "openflow-b"): (2131, 864, 1268, 50, "complete"),
    ("route-flow", "linear:3", 2, "attendre"): (430, 185, 246, 26, "complete"),
    ("mac-learning", "linear:1", 2, "openflow"): (2759, 1276, 1484, 28, "complete"),
    ("mac-learning", "linear:1", 2, "attendre"): (2333, 1083, 1251, 28, "complete"),
    ("energy-te", "paths:2,3", 1, "openflow-b"): (77, 60, 18, 26, "complete"),
}


def counts(app: str, topology: str, packets: int, protocol: str) -> tuple[object, ...]:
    result = verify(app, topology=topology, packets=packets, protocol=protocol, properties=[])
    return (*result.stats.counts(), "complete" if result.complete else result.stop_reason)


@pytest.mark.parametrize("cell", list(COUNTS) + list(PAPER_COUNTS), ids=lambda c: "-".join(map(str, c)))
def test_pinned_counts(cell: tuple[str, str, int, str]) -> None:
    assert counts(*cell) == {**COUNTS, **PAPER_COUNTS}[cell]


@pytest.mark.slow
@pytest.mark.parametrize("cell", list(SLOW_COUNTS), ids=lambda c: "-".join(map(str, c)))
def test_pinned_counts_slow(cell: tuple[str, str, int, str]) -> None:
    assert counts(*cell) == SLOW_COUNTS[cell]


def test_neutral_settings_are_openflow() -> None:
    """The buffer's default (16 packets) never fills in these scenarios, and batches of one
    flow-mod are OpenFlow's flow-mods: both explore exactly OpenFlow's state space."""
    for app, topology, packets in (("route-flow", "linear:3", 2), ("mac-learning", "linear:1", 2),
                                   ("energy-te", "paths:2,3", 1)):
        plain = counts(app, topology, packets, "openflow")
        assert counts(app, topology, packets, "buffer") == plain
        assert counts(app, topology, packets, "batch:threshold=1") == plain


#: route-flow on one switch, 3 packets: per protocol, (min, max) packet-ins and flow-mods per
#: complete execution.
LOAD = {
    "openflow": ((2, 6), (2, 6)),
    "pif": ((2, 6), (2, 6)),                             # entries may expire before the answer
    "pif:action=drop,expire=never": ((2, 2), (2, 2)),    # one packet-in per flow (002's claim)
    "pif:action=flood,expire=never": ((2, 2), (2, 2)),
    "buffer:capacity=1": ((2, 6), (2, 6)),               # a full buffer: packet-ins carry the packet
    "buffer:granularity=flow": ((2, 2), (2, 2)),         # one packet-in per flow (003's claim)
    "batch": ((2, 6), (2, 6)),
    "attendre": ((2, 2), (2, 2)),
}


@pytest.mark.parametrize("protocol", list(LOAD))
def test_control_plane_load_at_the_packet_in_switch(protocol: str) -> None:
    result = verify("route-flow", topology="linear:1", packets=3, protocol=protocol, properties=[], count_load=True)
    assert result.complete
    assert (result.metrics["packet_ins"], result.metrics["flow_mods"]) == LOAD[protocol]


@pytest.mark.parametrize("packets", [2, 3, 4, 5])
def test_flow_buffering_on_one_switch_explores_attendres_state_space(packets: int) -> None:
    """At the packet-in switch a flow buffer does what Attendre's buffer entry does."""
    assert counts("route-flow", "linear:1", packets, "buffer:granularity=flow") == \
        counts("route-flow", "linear:1", packets, "attendre")


@pytest.mark.slow
def test_papers_sizes_pif_drop_and_flow_buffer_on_mac_learning() -> None:
    """Table II's largest one-switch cell (docs/results.md)."""
    assert counts("mac-learning", "linear:1", 4, "pif:action=drop,expire=never")[0] == 40179
    assert counts("mac-learning", "linear:1", 4, "buffer:granularity=flow")[0] == 105403
    assert counts("mac-learning", "linear:1", 4, "attendre")[0] == 75705


def test_following_switches_still_race_under_every_switch_mechanism() -> None:
    """002's and 003's mechanisms act at the packet-in switch: on a path the type-2 race
    (a packet ahead of its flow-mod at the next switch) still causes a second packet-in."""
    for protocol in ("pif:action=drop,expire=never", "buffer:granularity=flow", "batch"):
        result = verify("route-flow", topology="linear:2", packets=1, protocol=protocol,
                        properties=["one-packet-in-per-flow"])
        assert [d.property for d in result.discoveries] == ["one-packet-in-per-flow"], protocol
        assert "s2 sent a second packet-in for flow [h1->h2]" in result.discoveries[0].reason


SEED_SCRIPT = """
from nice_attendre import verify
for protocol in ("pif", "buffer:granularity=flow,timeout=event", "batch:threshold=2"):
    r = verify("route-flow", topology="linear:2", packets=2, protocol=protocol, properties=[])
    print(protocol, r.stats.counts())
"""


def test_variant_counts_do_not_depend_on_the_hash_seed() -> None:
    outputs = set()
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", SEED_SCRIPT], env=env, capture_output=True, text=True, check=True)
        outputs.add(done.stdout)
    assert len(outputs) == 1
    assert "pif (1836, 811, 1026, 30)" in outputs.pop()


def test_the_variants_explore_in_a_fixed_order() -> None:
    """Two networks of the same configuration enable the same events, in the same order."""
    for protocol in ("pif", "buffer:granularity=flow,timeout=event", "batch"):
        first, second = (Network(Scenario.ping(load_topology("linear:2"), 2), RouteFlow(), protocol)
                         for _ in range(2))
        state_a, state_b = first.initial_states()[0], second.initial_states()[0]
        for _ in range(12):
            events_a, events_b = first.enabled(state_a), second.enabled(state_b)
            assert events_a == events_b
            if not events_a:
                break
            state_a, state_b = first.apply(state_a, events_a[-1]), second.apply(state_b, events_b[-1])
