"""The counts of every scenario the benchmarks run (benchmarks/perf.py, scaling.py,
memory.py), pinned: a change in one is a change of the model's semantics, and the figures
measured on it before and after are no longer comparable.

The check that every scenario has a pin (and that a name means the same scenario in every
benchmark) is fast; running the scenarios takes minutes and is marked ``slow``
(``pytest -m slow tests/test_benchmark_counts.py``).
"""
from __future__ import annotations

import importlib.util

import pytest

from nice_attendre import verify
from nice_attendre.benchmarks import memory, perf, scaling

#: scenario name -> (transitions, unique states) of the search the benchmark makes (capped
#: where perf.py caps it), with the app's default properties (route-flow's keep no history:
#: its counts are the bare state space's, the paper grid's where the grid has the cell)
PINNED: dict[str, tuple[int, int]] = {
    "openflow-linear5-2pkt": (2_366_988, 584_647),
    "openflow-linear6-2pkt-5M": (5_000_000, 1_075_733),
    "openflow-linear8-1pkt": (952_227, 195_544),
    "openflow-b-linear6-2pkt": (2_063_684, 361_734),
    "attendre-linear5-5pkt": (247_996, 50_138),
    "mac-learning-linear1-4pkt": (347_283, 127_115),
    "ryu-switch10-linear5-4pkt": (1_521_488, 457_261),
    "native-switch-linear5-4pkt": (1_521_488, 457_261),
    "mac-learning-linear2-4pkt": (6_745_172, 2_002_006),
    "openflow-b-linear4-3pkt": (864_066, 195_368),
    "attendre-linear7-5pkt": (2_324_745, 381_610),
    "openflow-b-linear7-2pkt": (21_234_084, 3_101_116),
}


def scenarios() -> dict[str, tuple[str, str, int, str, int | None]]:
    """Every benchmark scenario by name: (app, topology, packets, protocol, transition cap)."""
    found: dict[str, tuple[str, str, int, str, int | None]] = {}
    for name, (app, topology, packets, protocol, extra, cap) in perf.SCENARIOS.items():
        assert not extra, f"{name}: pin the counts of a scenario with build options in this test"
        found[name] = (app, topology, packets, protocol, cap)
    for table in (scaling.SCENARIOS, memory.SCENARIOS):
        for name, (app, topology, packets, protocol) in table.items():
            known = found.setdefault(name, (app, topology, packets, protocol, None))
            assert known == (app, topology, packets, protocol, None), f"{name} names two scenarios"
    return found


def test_every_benchmark_scenario_has_its_counts_pinned() -> None:
    assert sorted(scenarios()) == sorted(PINNED)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_pinned_counts(name: str) -> None:
    app, topology, packets, protocol, cap = scenarios()[name]
    if name.startswith("ryu-") and importlib.util.find_spec("os_ken") is None:
        pytest.skip("the Ryu example needs the ryu extra (os-ken)")
    result = verify(app, topology=topology, packets=packets, protocol=protocol, max_transitions=cap,
                    fingerprint=True)
    assert not result.discoveries  # every benchmark scenario is of a correct app
    assert result.complete == (cap is None)
    assert (result.stats.transitions, result.stats.unique_states) == PINNED[name]
