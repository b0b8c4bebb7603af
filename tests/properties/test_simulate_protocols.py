"""Random walks (``--simulate``, issue 31) checked as a user would: an app of our own, correct
and buggy, under every protocol. The correct learning switch never says OK (walks are not a
proof) and reports no violation; the one-way one is caught, with a shrunk trace that replays
and still breaks the property."""
from __future__ import annotations

import pytest

from nice_attendre import verify
from nice_attendre.frontend.api import build, search
from tests_data_apps import path

PROTOCOLS = ["openflow", "openflow-b", "attendre"]
SWITCH = path("learning_switch.py", "LearningSwitch")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_correct_learning_switch_walks_without_a_violation(protocol: str) -> None:
    result = verify(SWITCH, topology="linear:2", packets=2, protocol=protocol, simulate=True, seed=5, walks=300)
    assert not result.discoveries and not result.ok and not result.complete
    coverage = result.simulation
    assert coverage is not None and coverage.walks == 300 and coverage.distinct_states > 1
    assert "strict-direct-paths" in coverage.checked


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_one_way_learning_switch_is_caught_with_a_trace_that_replays(protocol: str) -> None:
    run = build(SWITCH, topology="linear:2", packets=2, protocol=protocol, app_options={"bug": "one-way"})
    result = search(run, simulate=True, seed=5, walks=2000)
    (found,) = result.discoveries
    assert found.property == "strict-direct-paths"
    assert found.unshrunk_length is not None and len(found.trace) <= found.unshrunk_length
    final = found.trace.replay(run.network)  # every step runs again: the trace is the model's
    (prop,) = [p for p in run.properties if p.name == "strict-direct-paths"]
    assert not prop.holds(final), found.trace
