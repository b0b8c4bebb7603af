"""Partial-order reduction with the network's options (models/footprints_options.py): the
checks of test_footprints.py (every transition within its declared footprint as the memo
records it, declared-independent events commute, dormant events stay disabled, command
steps within their bounded footprints) and of test_por_occurrence.py (occurrences commute,
arrivals, named enablers one step and on paths) on every transition of small scenarios with
faults of each kind, command order any, a threaded controller, --joins-first, the monitors
that keep history, and bugs; the same verdicts and quiescent states with and without --por,
and the reduced search's traces replay."""
from __future__ import annotations

from typing import Any

import pytest

from pinned import load_test_module

BASE = load_test_module("models/test_footprints.py")
TABLE_MISS = f"{BASE.DATA}/table_miss_switch.py:TableMissSwitch"
TIMEOUTS = f"{BASE.DATA}/timeout_routing.py:TimeoutRouting"
PROPS = list(BASE.PROPERTIES)
HISTORY = ["direct-paths", "strict-direct-paths", "one-packet-in-per-flow"]

SCENARIOS = [
    pytest.param("route-flow", "linear:2", 1, {"faults": {"loss": 1}}, id="route-flow-loss"),
    pytest.param("route-flow", "linear:2", 2, {"faults": {"duplicate": 1}}, id="route-flow-duplicate"),
    pytest.param("route-flow", "linear:2", 2, {"faults": {"reorder": 1}}, id="route-flow-reorder"),
    pytest.param("route-flow", "linear:2", 1, {"faults": {"link": 2}}, id="route-flow-link"),
    pytest.param("route-flow", "linear:2", 1, {"faults": {"control": 1}}, id="route-flow-control"),
    pytest.param("route-flow", "linear:2", 1, {"faults": {"restart": 1}}, id="route-flow-restart"),
    pytest.param("mac-learning", "linear:1", 2, {"faults": {"restart": 1}}, id="mac-learning-restart"),
    pytest.param("mac-learning", "linear:1", 2, {"faults": {"control": 1}}, id="mac-learning-control"),
    pytest.param("mac-learning", "linear:1", 2, {"faults": {"reorder": 1}}, id="mac-learning-reorder"),
    pytest.param("mac-learning", "linear:2", 1, {"faults": {"link": 1, "loss": 1}, "bug": "host-unreachable"},
                 id="mac-learning-bug-link-loss"),
    # command order any: batched command channels, any command a barrier does not hold back
    pytest.param("route-flow", "linear:2", 2, {"command_order": "any"}, id="route-flow-any-order"),
    pytest.param("route-flow", "linear:2", 2, {"command_order": "any", "protocol": "openflow-b"},
                 id="route-flow-b-any-order"),
    pytest.param("mac-learning", "linear:2", 1, {"command_order": "any", "bug": "host-unreachable"},
                 id="mac-learning-bug-any-order"),
    pytest.param("route-flow", "linear:2", 1, {"command_order": "any", "faults": {"control": 1, "restart": 1}},
                 id="route-flow-any-order-control-restart"),
    # a threaded controller: each handler call's commands a batch of their own
    pytest.param("route-flow", "linear:2", 2, {"threaded_controller": "per-switch"}, id="route-flow-threaded"),
    pytest.param("route-flow", "linear:2", 1, {"threaded_controller": "any"}, id="route-flow-threaded-any"),
    pytest.param("mac-learning", "linear:2", 1, {"threaded_controller": "any", "command_order": "any"},
                 id="mac-learning-threaded-any-order"),
    pytest.param("route-flow", "linear:2", 1, {"threaded_controller": "per-switch", "bug": "forget-last-hop",
                                               "faults": {"restart": 1}}, id="route-flow-bug-threaded-restart"),
    # --joins-first: hosts act once every control channel is empty (the table-miss entries
    # the app installs at join)
    pytest.param(TABLE_MISS, "linear:2", 1, {"joins_first": True}, id="table-miss-joins-first"),
    pytest.param(TABLE_MISS, "linear:3", 2, {"joins_first": True, "bug": "no-flood"}, id="table-miss-bug-joins-first"),
    pytest.param(TABLE_MISS, "linear:1", 2, {"joins_first": True, "faults": {"restart": 1}},
                 id="table-miss-joins-first-restart"),
    pytest.param("mac-learning", "linear:2", 2, {"joins_first": True}, id="mac-learning-joins-first"),
    # the monitors that keep history: host slots read from switch steps, history, expired
    pytest.param("mac-learning", "linear:2", 2, {"properties": PROPS + ["direct-paths"]}, id="mac-learning-direct"),
    pytest.param("mac-learning", "linear:2", 2, {"properties": PROPS + ["strict-direct-paths"]},
                 id="mac-learning-strict"),
    pytest.param("route-flow", "linear:2", 2, {"properties": PROPS + ["one-packet-in-per-flow"]},
                 id="route-flow-one-packet-in"),
    pytest.param(TIMEOUTS, "linear:2", 2, {"properties": PROPS + HISTORY}, id="timeouts-history"),
    pytest.param("mac-learning", "linear:2", 1, {"properties": PROPS + HISTORY, "bug": "delayed-direct-path"},
                 id="mac-learning-bug-history"),
    pytest.param("mac-learning", "linear:1", 2, {"properties": PROPS + HISTORY, "faults": {"restart": 1}},
                 id="mac-learning-history-restart"),
]

CHECKS = ["test_transitions_stay_within_their_footprints", "test_independent_events_commute",
          "test_dormant_events_stay_disabled_until_their_guard_changes",
          "test_command_steps_stay_within_their_bounded_footprint",
          "test_dormant_events_stay_disabled_without_their_enablers",
          # test_por_occurrence.py's: occurrences, arrivals, named enablers on paths
          "test_an_occurrence_declared_independent_commutes",
          "test_arrivals_cover_every_packet_before_the_controller_acts",
          "test_dormant_events_stay_disabled_on_paths_without_their_enablers"]

OCCURRENCE = load_test_module("models/test_por_occurrence.py")
_paths = OCCURRENCE._without


def _without(net: Any, start: Any, most: int, left_out: Any = lambda event: False, controller: bool = False) -> list[Any]:
    """test_por_occurrence.py's paths, a restart counting as the controller's (it runs the app)."""
    if controller:
        return _paths(net, start, most, left_out, True)  # type: ignore[no-any-return]
    return _paths(net, start, most, lambda event: left_out(event) or type(event).__name__ == "SwitchRestart")  # type: ignore[no-any-return]


OCCURRENCE._without = _without


#: The checks the default run makes on every scenario (what a transition reads and writes, and
#: commutation: they caught every break of an option's footprints); -m slow makes the others too
#: (dormant events and their enablers), to keep the default run under ten minutes
_DEFAULT_CHECKS = CHECKS[:2] + ["test_command_steps_stay_within_their_bounded_footprint"]


@pytest.mark.parametrize("check", [pytest.param(check, marks=[] if check in _DEFAULT_CHECKS else [pytest.mark.slow])
                                   for check in CHECKS])
@pytest.mark.parametrize("app, topology, packets, options", SCENARIOS)
def test_footprint_checks(app: str, topology: str, packets: int, options: dict[str, Any], check: str) -> None:
    if check == "test_command_steps_stay_within_their_bounded_footprint":
        net = BASE._network(app, topology, packets, options)
        if not net._footprints().options.refined:  # turned off
            state = net.initial_states()[0]
            assert all(net.bounded(state, event) is None for event in net.enabled(state))
            assert all(net.enablers(state, event) is None for event in net.dormant(state, net.enabled(state)))
            return
    module = BASE if hasattr(BASE, check) else OCCURRENCE
    refined = module is BASE or BASE._network(app, topology, packets, options)._footprints().options.refined
    if not refined:  # the refinements are turned off: no arrivals, no named enablers
        return
    getattr(module, check)(app, topology, packets, options)


AGREEMENT = [
    pytest.param("route-flow", "linear:2", 2, {"faults": {"loss": 1}}, id="route-flow-loss"),
    pytest.param("route-flow", "linear:2", 2, {"faults": {"duplicate": 1}}, id="route-flow-duplicate"),
    pytest.param("route-flow", "linear:3", 2, {"faults": {"reorder": 1}}, id="route-flow-reorder"),
    pytest.param("route-flow", "linear:2", 2, {"faults": {"link": "2:switches"}}, id="route-flow-link"),
    pytest.param("route-flow", "linear:2", 2, {"faults": {"control": 1}}, id="route-flow-control"),
    pytest.param("route-flow", "linear:2", 2, {"faults": {"restart": 1}}, id="route-flow-restart"),
    pytest.param("mac-learning", "linear:2", 1, {"faults": {"restart": 1, "control": 1}}, id="mac-learning-restart"),
    pytest.param("mac-learning", "linear:2", 2, {"faults": {"restart": 1, "control": 1}}, id="mac-learning-restart-2",
                 marks=pytest.mark.slow),
    pytest.param("mac-learning", "linear:1", 2, {"faults": {"reorder": 1, "loss": 1}}, id="mac-learning-reorder"),
    pytest.param("route-flow", "linear:2", 1, {"faults": {"link": 1}, "bug": "forget-last-hop"}, id="route-flow-bug"),
    pytest.param("route-flow", "linear:2", 2, {"command_order": "any"}, id="route-flow-any-order"),
    pytest.param("route-flow", "linear:3", 1, {"command_order": "any", "protocol": "openflow-b"},
                 id="route-flow-b-any-order"),
    pytest.param("mac-learning", "linear:2", 1, {"command_order": "any", "bug": "host-unreachable"},
                 id="mac-learning-bug-any-order"),
    pytest.param("route-flow", "linear:2", 2, {"command_order": "any", "faults": {"control": 1}},
                 id="route-flow-any-order-control"),
    pytest.param("route-flow", "linear:2", 2, {"threaded_controller": "per-switch"}, id="route-flow-threaded"),
    pytest.param("route-flow", "linear:2", 2, {"threaded_controller": "any"}, id="route-flow-threaded-any"),
    pytest.param("mac-learning", "linear:2", 1, {"threaded_controller": "any", "bug": "host-unreachable"},
                 id="mac-learning-bug-threaded-any"),
    pytest.param("route-flow", "linear:2", 1, {"threaded_controller": "per-switch", "protocol": "openflow-b",
                                               "faults": {"control": 1}}, id="route-flow-b-threaded-control"),
    pytest.param(TABLE_MISS, "linear:3", 2, {"joins_first": True}, id="table-miss-joins-first"),
    pytest.param(TABLE_MISS, "linear:2", 2, {"joins_first": True, "bug": "no-flood", "threaded_controller": True},
                 id="table-miss-bug-joins-first-threaded"),
    pytest.param(TABLE_MISS, "linear:2", 2, {"joins_first": True, "faults": {"restart": 1}},
                 id="table-miss-joins-first-restart"),
    pytest.param("mac-learning", "linear:2", 2, {"joins_first": True}, id="mac-learning-joins-first"),
    pytest.param("mac-learning", "linear:2", 2, {"properties": PROPS + HISTORY}, id="mac-learning-history"),
    pytest.param("route-flow", "linear:3", 2, {"properties": PROPS + ["one-packet-in-per-flow"]},
                 id="route-flow-one-packet-in"),
    pytest.param(TIMEOUTS, "linear:2", 2, {"properties": PROPS + HISTORY}, id="timeouts-history"),
    pytest.param("mac-learning", "linear:2", 2, {"properties": PROPS + HISTORY, "bug": "delayed-direct-path"},
                 id="mac-learning-bug-history"),
    pytest.param("mac-learning", "linear:2", 2, {"properties": PROPS + HISTORY, "bug": "excess-flooding",
                                                 "faults": {"loss": 1}}, id="mac-learning-bug-history-loss"),
]


def _explore(app: str, topology: str, packets: int, options: dict[str, Any], por: bool) -> tuple[Any, set[int], Any]:
    """A full or reduced depth-first search of every state, collecting the quiescent ones."""
    from nice_attendre.checker import dfs
    from nice_attendre.frontend.api import build
    from nice_attendre.property import Property

    options = dict(options)
    built = {key: options.pop(key) for key in BASE.BUILD_OPTIONS if key in options}
    built.setdefault("properties", BASE.PROPERTIES)
    built["protocol"] = options.pop("protocol", "openflow")
    run = build(app, topology=topology, packets=packets, app_options=options, **built)
    net = run.network
    quiet: set[int] = set()
    collect = Property.at_quiescence("collect", lambda state: quiet.add(net.fingerprint(state)) is None)
    result = dfs(net, run.properties + (collect,), keep_going=True, por=por)
    assert result.complete
    return result, quiet, net


@pytest.mark.parametrize("app, topology, packets, options", AGREEMENT)
def test_reduced_search_agrees(app: str, topology: str, packets: int, options: dict[str, Any]) -> None:
    """The same verdicts and quiescent states (by fingerprint) with and without --por; the
    reduced search's traces replay."""
    full, full_quiet, _net = _explore(app, topology, packets, options, False)
    reduced, reduced_quiet, net = _explore(app, topology, packets, options, True)
    assert reduced_quiet == full_quiet
    assert {d.property for d in reduced.discoveries} == {d.property for d in full.discoveries}
    assert reduced.stats.unique_states <= full.stats.unique_states
    for found in reduced.discoveries[:5]:
        if found.trace is not None:
            found.trace.replay(net)
