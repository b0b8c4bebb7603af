"""Partial-order reduction on the network: with and without ``por`` the same verdicts, the
same quiescent states (by fingerprint) and traces that replay, on the shipped apps, their
bugs, an app with timeouts and one with equal-priority ties; what it does not support is
refused with one line (exit 2 on the command line)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nice_attendre.checker import dfs
from nice_attendre.errors import InputError
from nice_attendre.frontend.api import build, verify
from nice_attendre.property import Property
from children import console

DATA = Path(__file__).resolve().parents[1] / "data" / "apps"

PROPERTIES = ["no-forwarding-loops", "no-black-holes", "no-forgotten-packets", "delivery"]

SCENARIOS = [
    ("route-flow", "linear:2", 2, {}),
    ("route-flow", "linear:3", 2, {}),
    ("route-flow", "linear:3", 1, {"bug": "forget-last-hop"}),
    ("mac-learning", "linear:2", 2, {}),
    ("mac-learning", "linear:2", 2, {"bug": "host-unreachable"}),
    ("mac-learning", "linear:2", 2, {"bug": "delayed-direct-path"}),
    ("mac-learning", "linear:2", 1, {"bug": "excess-flooding"}),
    ("energy-te", None, 1, {}),
    ("energy-te", None, 1, {"bug": "drop-first-packet"}),
    ("energy-te", None, 1, {"bug": "first-hop-always-on"}),
    (f"{DATA}/timeout_routing.py:TimeoutRouting", "linear:2", 1, {}),
    (f"{DATA}/equal_priority.py:MirrorEth", None, 1, {}),
    (f"{DATA}/equal_priority.py:MirrorBelow", None, 1, {}),
    ("route-flow", "linear:3", 2, {"protocol": "openflow-b"}),
    ("route-flow", "linear:3", 1, {"bug": "forget-last-hop", "protocol": "openflow-b"}),
    ("mac-learning", "linear:2", 2, {"bug": "host-unreachable", "protocol": "openflow-b"}),
    (f"{DATA}/ryu_openflow12.py:QuarantineAfter12", "linear:2", 2, {}),
    (f"{DATA}/ryu_versions.py:LearningSwitch14", "linear:2", 2, {}),
]


def _explore(app: str, topology: str | None, packets: int, options: dict[str, Any], por: bool,
             fingerprint: bool = False) -> tuple[Any, set[int], Any]:
    options = dict(options)
    protocol = options.pop("protocol", "openflow")
    run = build(app, topology=topology, packets=packets, properties=PROPERTIES, app_options=options,
                protocol=protocol)
    net = run.network
    quiet: set[int] = set()
    collect = Property.at_quiescence("collect", lambda state: quiet.add(net.fingerprint(state)) is None)
    result = dfs(net, run.properties + (collect,), keep_going=True, por=por, fingerprint=fingerprint)
    assert result.complete
    return result, quiet, net


@pytest.mark.parametrize("app, topology, packets, options", SCENARIOS)
def test_same_verdicts_and_quiescent_states(app: str, topology: str | None, packets: int,
                                            options: dict[str, Any]) -> None:
    full, full_quiet, _net = _explore(app, topology, packets, options, False)
    reduced, reduced_quiet, net = _explore(app, topology, packets, options, True)
    assert {d.property for d in reduced.discoveries} == {d.property for d in full.discoveries}
    assert reduced_quiet == full_quiet
    assert reduced.stats.unique_states <= full.stats.unique_states
    assert reduced.stats.transitions <= full.stats.transitions
    for found in reduced.discoveries[:5]:
        if found.trace is not None:
            found.trace.replay(net)
    if topology == "linear:3" and not options:  # the reduction does reduce
        assert reduced.stats.unique_states < full.stats.unique_states


def test_fingerprinted_reduced_search_agrees() -> None:
    full, full_quiet, _net = _explore("route-flow", "linear:3", 2, {}, False)
    reduced, reduced_quiet, _net = _explore("route-flow", "linear:3", 2, {}, True, fingerprint=True)
    assert reduced_quiet == full_quiet and not reduced.discoveries and not full.discoveries


def test_verify_reports_the_reduction_and_checks_termination_depth_first_only() -> None:
    result = verify("route-flow", topology="linear:2", packets=1, por=True)
    assert result.reduction == "partial-order"
    assert not result.unchecked  # the depth-first search decides termination (test_por_termination.py)
    assert result.verdict == "ok"
    shortest = verify("route-flow", topology="linear:2", packets=1, por=True, shortest=True)
    assert [name for name, _why in shortest.unchecked] == ["termination"]
    assert verify("route-flow", topology="linear:2", packets=1).reduction is None


@pytest.mark.parametrize("options, message", [
    ({"properties": ["termination"], "shortest": True}, "termination"),
    ({"properties": ["no-reordering"]}, "not known to be stable"),
    ({"protocol": "attendre", "faults": {"loss": 1}}, "protocol attendre with faults"),
    ({"protocol": "pif", "command_order": "any"}, "protocol pif with command order any"),
    ({"simulate": True}, "random walks"),
])
def test_what_is_not_supported_is_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        verify("route-flow", topology="linear:2", packets=1, por=True, **options)


def test_command_line() -> None:
    here = Path(__file__).resolve().parent
    done = console("verify", "route-flow", "-t", "linear:2", "-n", "1", "--por", cwd=here)
    assert done.returncode == 0, done.stderr
    assert "reduction      partial-order" in done.stdout
    assert "termination" in done.stdout and "not checked" not in done.stdout
    refused = console("verify", "route-flow", "-t", "linear:2", "--por", "-p", "no-reordering", cwd=here)
    assert refused.returncode == 2
    assert len(refused.stderr.strip().splitlines()) == 1
    assert refused.stderr.startswith("Error: --por does not support property 'no-reordering'")


def test_a_dormant_controller_step_waits_for_a_packet_that_may_miss() -> None:
    """Route-flow, linear:3, 2 packets: a dormant controller step of a switch is enabled only
    by the controller's other events and by the switch's steps that may send it a message
    (its packet steps at ports where a packet may miss), a dormant packet step at a port linked
    to a switch only by the steps of that switch that may forward there, and a switch's tie
    choices and expiries by its command step or by the controller, whichever costs less:
    1,249 reduced states (1,312 when the seeds were tried in the order of the enabled events;
    2,212 with neither; 2,355 when every header could arrive at every
    port linked to a switch; 2,666 when a flow-mod adding an entry already there counted as
    a write of the table; 3,143 when every step of the switch was an enabler; 4,934 in
    full)."""
    full, full_quiet, _net = _explore("route-flow", "linear:3", 2, {}, False)
    reduced, reduced_quiet, net = _explore("route-flow", "linear:3", 2, {}, True)
    assert reduced_quiet == full_quiet
    assert full.stats.unique_states == 4934
    assert reduced.stats.unique_states <= 1249


@pytest.mark.parametrize("app, topology, packets, options", [s for s in SCENARIOS if s[1] != "linear:3" or s[3]])
def test_breadth_first_reduced_search_agrees(app: str, topology: str | None, packets: int,
                                             options: dict[str, Any]) -> None:
    """--shortest --por: the breadth-first search over stubborn sets (with its proviso)
    reaches the quiescent states and verdicts of the full search, and its traces replay."""
    from nice_attendre.breadth_first import bfs

    protocol = options.get("protocol", "openflow")
    run = build(app, topology=topology, packets=packets, properties=PROPERTIES,
                app_options={k: v for k, v in options.items() if k != "protocol"}, protocol=protocol)
    net = run.network
    quiet: set[int] = set()
    collect = Property.at_quiescence("collect", lambda state: quiet.add(net.fingerprint(state)) is None)
    reduced = bfs(net, run.properties + (collect,), keep_going=True, por=True)
    assert reduced.complete
    full, full_quiet, _net = _explore(app, topology, packets, options, False)
    assert quiet == full_quiet
    assert {d.property for d in reduced.discoveries} == {d.property for d in full.discoveries}
    assert reduced.stats.unique_states <= full.stats.unique_states
    for found in reduced.discoveries[:5]:
        found.trace.replay(net)


def test_verify_shortest_por() -> None:
    result = verify("mac-learning", topology="linear:2", packets=2, por=True, shortest=True,
                    properties=PROPERTIES)
    assert result.reduction == "partial-order" and result.verdict == "violated"
    full = verify("mac-learning", topology="linear:2", packets=2, shortest=True, properties=PROPERTIES)
    assert result.stats.unique_states < full.stats.unique_states
