"""Large networks compute their enabled events incrementally and are stored under a key
updated from the slots written (models/network.py, nice_attendre/visited.py KeyedStates).
That changes the speed only: forced on for every pinned scenario (with a table of remembered
states so small that parents are forgotten all the time), the counts, verdicts and traces
are those of the plain search, and in every state of a search the incremental events equal
the ones computed in full.
"""
from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any, Iterator

import pytest

from nice_attendre import verify
from nice_attendre.frontend.api import build
from nice_attendre.models import network
from nice_attendre.visited import KeyedStates
from pinned import load_test_module

TESTS = Path(__file__).resolve().parents[1]
DATA_APPS = TESTS / "data" / "apps"


PINNED = load_test_module("models/test_memo_pinned.py")


@pytest.fixture
def incremental(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every network built in the test is incremental and remembers 3 states only."""
    monkeypatch.setattr(network, "INCREMENTAL_SLOTS", 0)
    monkeypatch.setattr(network, "REMEMBERED_STATES", 3)
    yield


@pytest.mark.parametrize("app,topology,packets,protocol,extra", PINNED.scenarios())
def test_incremental_networks_change_no_result(app: str, topology: str, packets: int, protocol: str, extra: dict,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    options = dict(topology=topology, packets=packets, protocol=protocol, **extra)
    plain = verify(app, **options)
    assert not plain.system.incremental
    monkeypatch.setattr(network, "INCREMENTAL_SLOTS", 0)
    monkeypatch.setattr(network, "REMEMBERED_STATES", 3)
    for memo in (True, False):
        large = verify(app, memo=memo, **options)
        assert large.system.incremental and large.system.large_states
        assert PINNED.outcome(large) == PINNED.outcome(plain)
    if not extra.get("keep_going"):
        printed = verify(app, fingerprint=True, **options)
        assert printed.stats.counts()[:2] == plain.stats.counts()[:2]


CHECKED = [
    ("route-flow", "linear:3", 2, "openflow", {}),
    ("route-flow", "linear:2", 2, "openflow", {"threaded_controller": True, "command_order": "any"}),
    ("route-flow", "linear:2", 2, "openflow", {"command_order": "any"}),
    ("route-flow", "linear:2", 1, "openflow", {"faults": {"loss": 1, "duplicate": 1, "link": 1, "control": 1}}),
    ("route-flow", "linear:2", 2, "openflow", {"faults": {"reorder": 1, "restart": 1, "control": 2}}),
    ("mac-learning", "linear:1", 3, "openflow", {}),
    ("route-flow", "linear:2", 2, "attendre", {}),
    ("route-flow", "linear:2", 2, "pif:action=drop,expire=event", {}),
    ("route-flow", "linear:2", 2, "pif:action=rate-limit,expire=event", {}),
    ("route-flow", "linear:2", 2, "batch", {}),
    ("route-flow", "linear:2", 2, "buffer:granularity=flow,timeout=event", {}),
    ("energy-te", "paths:2,3", 2, "openflow", {}),
    (f"{DATA_APPS / 'timeout_routing.py'}:TimeoutRouting", "linear:1", 2, "attendre", {}),
]


@pytest.mark.parametrize("fingerprint", [False, True], ids=["exact", "fingerprint"])
@pytest.mark.parametrize("app,topology,packets,protocol,extra", CHECKED,
                         ids=[f"{Path(c[0]).name}-{c[1]}-{c[3]}-{len(c[4])}" for c in CHECKED])
def test_incremental_events_equal_the_full_ones_in_every_state(app: str, topology: str, packets: int, protocol: str,
                                                               extra: dict, fingerprint: bool,
                                                               incremental: None) -> None:
    """(With fingerprints a successor is built only when new, by the network's
    ``build_successor``, which notes the transition for the incremental events.)"""
    from nice_attendre.checker import dfs

    run = build(app, topology=topology, packets=packets, protocol=protocol, properties=[], **extra)
    net = run.network
    assert net.incremental
    full_enabled = network.Network.enabled.__get__(net)
    checked = []
    met: set[int] = set()

    def enabled(state: tuple[int, ...]) -> list[Any]:
        found = full_enabled(state)  # incremental (the network's own method)
        net.incremental = False
        try:
            expected = full_enabled(state)
        finally:
            net.incremental = True
        assert found == expected, net.decode(state)
        checked.append(len(found))
        for kind, switch_events in enumerate(net._switch_kinds):
            if any(switch_events.events(state, dpid) for dpid in net.topology.switches):
                met.add(kind)
        return found

    net.enabled = enabled  # type: ignore[method-assign]
    result = dfs(net, run.properties, fingerprint=fingerprint)
    assert result.complete and len(checked) == result.stats.unique_states > 50
    assert max(checked) > 1
    if net._switch_kinds:  # the variant's per-switch events were met, each kind of them
        assert met == set(range(len(net._switch_kinds)))


def test_per_switch_variant_events_cost_what_a_transition_writes() -> None:
    """On a large network a variant's per-switch events are recomputed for the switches whose
    slots a transition wrote, not for every switch in every state: here at most four kinds'
    worth per transition besides the initial state's full pass, where a scan would make
    2 x 120 calls per state."""
    from nice_attendre.checker import Limits
    from nice_attendre.frontend.api import search

    run = build("route-flow", topology="linear:120", packets=2, protocol="pif:action=rate-limit,expire=event")
    net = run.network
    assert net.incremental and len(net._switch_kinds) == 2
    calls = [0]
    met = set()
    for index, events_of in list(net._kind_events.items()):
        def counted(state: Any, events_of: Any = events_of, kind: int = (index - net._extra_sources) // 120) -> Any:
            calls[0] += 1
            found = events_of(state)
            if found:
                met.add(kind)
            return found
        net._kind_events[index] = counted
    result = search(run, limits=Limits(max_transitions=3000))
    transitions = result.stats.transitions
    assert transitions == 3000 and result.stats.unique_states > 300
    full_pass = 2 * 120
    assert full_pass < calls[0] <= full_pass + 4 * transitions
    assert met == {0, 1}  # both kinds had events: meter drops and expiries


def test_timers_are_found_incrementally(incremental: None) -> None:
    from nice_attendre.models.events import SwitchEntryExpires

    run = build(f"{DATA_APPS / 'timeout_routing.py'}:TimeoutRouting", topology="linear:1", packets=1, properties=[])
    net = run.network
    seen = set()
    stack = [net.initial_states()[0]]
    visited = set(stack)
    while stack:
        state = stack.pop()
        for event in net.enabled(state):
            seen.add(type(event))
            after = net.apply(state, event)
            if after not in visited:
                visited.add(after)
                stack.append(after)
    assert SwitchEntryExpires in seen


def test_keyed_states_are_exact() -> None:
    table = KeyedStates()
    assert table.add((7, ("a",))) and not table.add((7, ("a",)))
    assert table.add((7, ("b",)))  # the same key, another state: both kept
    assert not table.add((7, ("b",))) and table.add((7, ("c",)))
    assert table.add((8, ("a",)))
    assert len(table) == 4 and (7, ("c",)) in table and (7, ("d",)) not in table and (9, ("a",)) not in table
    assert sorted(table) == [("a",), ("a",), ("b",), ("c",)]
    again = pickle.loads(pickle.dumps(table))
    assert len(again) == 4 and (7, ("b",)) in again and not again.add((8, ("a",)))


def test_state_keys_are_updated_from_the_slots_written(incremental: None) -> None:
    run = build("mac-learning", topology="linear:2", packets=2, properties=[])
    net = run.network
    state = net.initial_states()[0]
    key = net.state_key(state)
    for _ in range(12):
        event = net.enabled(state)[-1]
        state, key = net.apply_keyed(state, key, event)
        assert key == net.state_key(state)


def test_a_large_network_is_incremental_by_default() -> None:
    small = build("route-flow", topology="linear:3", packets=1).network
    large = build("route-flow", topology="linear:300", packets=1).network
    assert not small.incremental and large.incremental
    assert len(large.slot_names) >= network.INCREMENTAL_SLOTS > len(small.slot_names)
    result = verify("route-flow", topology="linear:300", packets=1, max_transitions=3000)
    assert result.stats.transitions == 3000 and result.stop_reason == "max-transitions"


def test_checkpoint_and_resume_of_a_keyed_search(tmp_path: Path, incremental: None) -> None:
    options = dict(topology="linear:2", packets=2, protocol="openflow")
    whole = verify("route-flow", **options)
    saved = tmp_path / "search.ckpt"
    first = verify("route-flow", max_transitions=500, checkpoint=saved, **options)
    assert not first.complete
    resumed = verify("route-flow", resume=saved, **options)
    assert resumed.complete and resumed.stats.counts()[:3] == whole.stats.counts()[:3]


def test_fault_events_cost_what_a_transition_writes() -> None:
    """On a large network the places where faults can happen (each link's queue, each
    switch's control channels) are recomputed when a transition writes their slots, the
    budgets applied when a state's events are listed: after the initial state's full pass,
    at most six recomputations per transition, where a scan reads every link and switch in
    every state."""
    from nice_attendre.checker import Limits
    from nice_attendre.frontend.api import search
    from nice_attendre.models.faults import ControlLoss, LinkFault

    run = build("route-flow", topology="linear:120", packets=2, faults={"loss": 1, "duplicate": 1, "control": 1},
                properties=[])
    net = run.network
    assert net.incremental
    places = len(net.faults.links) + 120
    calls = [0]
    kinds: set[type] = set()
    for index, events_of in list(net._kind_events.items()):
        def counted(state: Any, events_of: Any = events_of) -> Any:
            calls[0] += 1
            found = events_of(state)
            kinds.update(type(event) for event in found)
            return found
        net._kind_events[index] = counted
    result = search(run, limits=Limits(max_transitions=3000))
    transitions = result.stats.transitions
    assert transitions == 3000 and result.stats.unique_states > 300
    assert places < calls[0] <= places + 6 * transitions
    assert kinds == {LinkFault, ControlLoss}
