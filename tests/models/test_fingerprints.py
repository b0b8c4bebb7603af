"""Network fingerprints: updated incrementally from the slots a transition writes, equal to
the full computation, the same in every process and hash seed, and giving the exact counts."""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest

from nice_attendre import verify
from nice_attendre.frontend.api import build

SCENARIOS = [
    dict(app="route-flow", topology="linear:3", packets=2, protocol="openflow"),
    dict(app="route-flow", topology="linear:3", packets=2, protocol="openflow-b"),
    dict(app="route-flow", topology="linear:3", packets=2, protocol="attendre"),
    dict(app="route-flow", topology="linear:2", packets=2, protocol="openflow", threaded_controller=True),
    dict(app="route-flow", topology="linear:2", packets=2, protocol="openflow-b", threaded_controller=True),
    dict(app="mac-learning", topology="linear:2", packets=2, protocol="openflow",
         properties=["one-packet-in-per-flow", "strict-direct-paths"]),
    dict(app="mac-learning", topology="linear:1", packets=2, protocol="attendre"),
    dict(app="energy-te", topology="paths:2,3", packets=2, protocol="openflow", count_load=True),
]


def _network(spec: dict):
    spec = dict(spec)
    return build(spec.pop("app"), **spec).network


def walk(net, steps: int, seed: int) -> list[tuple[tuple[int, ...], int]]:
    """(state, incremental fingerprint) along seeded random paths (restarting at path ends)."""
    rng = random.Random(seed)
    state = net.initial_states()[0]
    fp = net.fingerprint(state)
    seen = [(state, fp)]
    for _ in range(steps):
        events = net.enabled(state)
        if not events:
            state = net.initial_states()[0]
            fp = net.fingerprint(state)
            continue
        state, fp = net.apply_fingerprinted(state, fp, rng.choice(events))
        seen.append((state, fp))
    return seen


@pytest.mark.parametrize("spec", SCENARIOS, ids=lambda s: "-".join(str(v) for v in s.values())[:60])
def test_incremental_fingerprint_equals_the_full_one_and_writes_are_recorded(spec: dict) -> None:
    net = _network(spec)
    for state, fp in walk(net, 600, seed=3):
        assert fp == net.fingerprint(state)
    # every slot that changed was recorded by the Tx (no write bypasses it)
    rng = random.Random(5)
    state = net.initial_states()[0]
    from nice_attendre.models.network import TrackingTx as Tx

    for _ in range(400):
        events = net.enabled(state)
        if not events:
            state = net.initial_states()[0]
            continue
        event = rng.choice(events)
        tx = Tx(net, state)
        net._handlers[type(event)](tx, event)
        new = tuple(tx.s)
        assert set(net._fingerprints.changed_slots(state, new)) <= set(tx.dirty)
        assert new == net.apply(state, event)
        state = new


def test_fingerprints_do_not_depend_on_the_order_components_were_interned() -> None:
    spec = SCENARIOS[0]
    explored = _network(spec)
    verify_first = walk(explored, 300, seed=11)  # interns components in one order
    fresh = _network(spec)
    walk(fresh, 300, seed=99)  # another order
    for state, fp in verify_first:
        values = explored.decode(state)
        assert fresh.fingerprint(fresh.encode(values)) == fp


def test_distinct_states_get_distinct_fingerprints() -> None:
    net = _network(SCENARIOS[0])
    states = {state for state, _fp in walk(net, 3000, seed=1)}
    assert len({net.fingerprint(s) for s in states}) == len(states)


CHILD = """
import json, random, sys
sys.path.insert(0, {tests!r})
from test_fingerprints import SCENARIOS, _network, walk
out = []
for spec in SCENARIOS:
    net = _network(spec)
    out.append([fp for _state, fp in walk(net, 200, seed=4)])
print(json.dumps(out))
"""


@pytest.mark.parametrize("seed", ["0", "1", "random"])
def test_the_same_states_have_the_same_fingerprints_in_other_processes_and_hash_seeds(seed: str) -> None:
    here = [[fp for _state, fp in walk(_network(spec), 200, seed=4)] for spec in SCENARIOS]
    env = {**os.environ, "PYTHONHASHSEED": seed}
    child = CHILD.format(tests=os.path.dirname(__file__))
    out = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == here


PINNED_SAMPLE = [  # (app, switches, packets, protocol, threads): a sample of the pinned scenarios
    ("route-flow", 3, 2, "openflow", 1), ("route-flow", 3, 2, "openflow-b", 1), ("route-flow", 3, 2, "attendre", 1),
    ("route-flow", 2, 2, "openflow", 2), ("mac-learning", 2, 2, "openflow", 1), ("mac-learning", 2, 2, "attendre", 1),
]


@pytest.mark.parametrize("app,switches,packets,protocol,threads", PINNED_SAMPLE)
def test_fingerprint_mode_gives_the_exact_counts(app: str, switches: int, packets: int, protocol: str,
                                                 threads: int) -> None:
    exact = verify(app, topology=f"linear:{switches}", packets=packets, protocol=protocol,
                   threaded_controller=threads > 1)
    compact = verify(app, topology=f"linear:{switches}", packets=packets, protocol=protocol,
                     threaded_controller=threads > 1, fingerprint=True)
    assert compact.stats.counts() == exact.stats.counts() and compact.ok == exact.ok
    assert exact.collision_probability is None
    assert 0 < compact.collision_probability < 1e-9


def test_fingerprint_mode_reports_the_same_violation_and_trace() -> None:
    exact = verify("route-flow", topology="linear:2", app_options={"bug": "forget-last-hop"})
    compact = verify("route-flow", topology="linear:2", app_options={"bug": "forget-last-hop"}, fingerprint=True)
    assert not compact.ok
    assert compact.discoveries[0].trace.events == exact.discoveries[0].trace.events
    compact.discoveries[0].trace.replay(compact.system)
