"""Executions that never end, on a network: the livelocking timed router fails ``termination``
with a lasso trace (issue 29, section 2), its correct version passes, and users' ``eventually``
properties see the same executions.

The router (tests/data/apps/resubmitting_router.py) resubmits a routed flow's packet-in to the
switch's table (``Output(TABLE)`` in a packet-out). Without flow-removed messages it never
learns that an entry expired: the packet misses, goes to the controller, is resubmitted,
misses again, for ever. Every at-quiescence property passes (the execution never reaches
quiescence); before ``termination`` so did the default property set (exit 0).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from nice_attendre import verify
from nice_attendre.frontend.cli import main
from nice_attendre.frontend.exit_codes import ExitCode
from nice_attendre.models.events import ControllerHandle, SwitchProcessCommand
from nice_attendre.properties import DEFAULT_PROPERTIES
from nice_attendre.properties.custom import eventually
from nice_attendre.property import Expectation
from tests_data_apps import path

ROUTER = path("resubmitting_router.py", "ResubmittingRouter")
FIXED = {"forget_expired": True}

#: h1 hears back from h2 on every execution (an eventually-property of a user)
ANSWERED = eventually("h1-answered", lambda view: bool(view.hosts["h1"].received_from("h2")),
                      "h1 gets an answer from h2", lambda view: f"h1 received {len(view.hosts['h1'].received)}")


def run(*args: str) -> object:
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize("shortest", [False, True])
def test_the_livelocking_router_fails_termination_with_a_lasso(shortest: bool) -> None:
    result = verify(ROUTER, topology="linear:2", packets=1, properties=["termination"], shortest=shortest)
    found = result.discovery("termination")
    assert found is not None and found.expectation is Expectation.TERMINATION
    trace = found.trace
    assert trace.is_lasso
    trace.replay(result.system)  # every step as recorded, and the cycle closes
    # the cycle: the controller handles the packet-in and resubmits; the switch misses again
    assert sorted(type(step.event).__name__ for step in trace.cycle) == ["ControllerHandle", "SwitchProcessCommand"]
    assert {step.event.dpid for step in trace.cycle if isinstance(step.event, (ControllerHandle,
                                                                                SwitchProcessCommand))} == {1}
    assert found.reason.startswith("an execution that never ends: from the state after step ")
    # every other entry expired on the lasso: nothing is left waiting, no unfair scheduler needed
    assert found.reason.endswith("Every event enabled on the cycle is one of its steps: it needs no unfair scheduler.")


def test_termination_is_on_by_default_and_the_router_fails_it() -> None:
    assert "termination" in DEFAULT_PROPERTIES
    result = verify(ROUTER, topology="linear:2", packets=1, keep_going=True)
    assert result.discovery("termination") is not None
    # the at-quiescence properties (the defaults before termination) see nothing wrong
    quiet = verify(ROUTER, topology="linear:2", packets=1,
                   properties=["no-forwarding-loops", "no-black-holes", "no-forgotten-packets", "delivery"])
    assert quiet.ok


@pytest.mark.parametrize("topology", ["linear:2", pytest.param("linear:3", marks=pytest.mark.slow)])  # linear:3: ~7 s
def test_the_correct_router_terminates(topology: str) -> None:
    result = verify(ROUTER, topology=topology, packets=1, properties=["termination", ANSWERED], app_options=FIXED,
                    fingerprint=True)
    assert result.ok, result.discoveries


def test_counts_do_not_change_with_termination() -> None:
    """The property looks only at the edges the search follows."""
    kwargs = dict(topology="linear:3", packets=2, protocol="openflow")
    with_it = verify("route-flow", **kwargs)  # the defaults
    without = verify("route-flow", properties=[p for p in DEFAULT_PROPERTIES if p != "termination"], **kwargs)
    assert with_it.ok and without.ok
    assert with_it.stats.counts() == without.stats.counts() == (13_107, 4_934, 8_174, 40)


def test_a_users_eventually_property_sees_the_livelock() -> None:
    result = verify(ROUTER, topology="linear:2", packets=1, properties=[ANSWERED])
    found = result.discovery("h1-answered")
    assert found is not None and found.expectation is Expectation.EVENTUALLY
    assert found.trace.is_lasso
    found.trace.replay(result.system)
    assert found.reason.startswith("an execution that never ends and where h1-answered never holds (h1 received 0):")


def test_the_cli_prints_the_lasso_and_saves_it_for_replay(tmp_path: Path) -> None:
    out = tmp_path / "lasso.json"
    result = run("verify", ROUTER, "-t", "linear:2", "-n", "1", "-p", "termination", "--trace-out", str(out),
                 "--trace-format", "json")
    assert result.exit_code == ExitCode.VIOLATION, result.output
    lines = result.output.splitlines()
    assert lines[-1] == "FAILED: termination"
    assert "VIOLATION 1: termination (termination)" in lines
    assert any(line.startswith("  trace (lasso: a path, then a cycle that repeats for ever; ") for line in lines)
    saved = json.loads(out.read_text())
    start, events = saved["cycle_start"], len(saved["events"])
    assert saved["fingerprints"][start] == saved["fingerprints"][-1]
    assert f"      -- the cycle: steps {start + 1}-{events} lead back here and repeat for ever --" in lines
    assert lines[-3] == f"      -- back to the state after step {start}: the cycle repeats for ever --"
    replayed = run("replay", str(out), "--app", ROUTER)
    assert replayed.exit_code == ExitCode.VIOLATION, replayed.output
    assert replayed.output.splitlines()[-1] == (
        f"trace reproduced: property termination violated: step {events} leads back to the state after step "
        f"{start}, so steps {start + 1}-{events} can repeat for ever")


def test_replay_of_a_lasso_that_no_longer_closes_diverges(tmp_path: Path) -> None:
    out = tmp_path / "lasso.json"
    run("verify", ROUTER, "-t", "linear:2", "-n", "1", "-p", "termination", "--trace-out", str(out),
        "--trace-format", "json")
    saved = json.loads(out.read_text())
    saved["cycle_start"] -= 1  # the cycle now claims to start one state earlier: it does not close
    out.write_text(json.dumps(saved))
    replayed = run("replay", str(out), "--app", ROUTER)
    assert replayed.exit_code == ExitCode.NONDETERMINISTIC, replayed.output
    assert "the cycle does not close" in replayed.output.splitlines()[-1]
    saved["cycle_start"] = len(saved["events"])  # not a state before the last one
    out.write_text(json.dumps(saved))
    refused = run("replay", str(out), "--app", ROUTER)
    assert refused.exit_code == ExitCode.INPUT, refused.output
    assert "cycle_start must be the index of a state before the last one" in refused.output


def test_the_json_report_gives_the_cycle(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run("verify", ROUTER, "-t", "linear:2", "-n", "1", "-p", "termination", "--json", str(out))
    assert result.exit_code == ExitCode.VIOLATION
    data = json.loads(out.read_text())
    violation = data["violations"][0]
    assert violation["expectation"] == "termination"
    assert 0 <= violation["cycle_start"] < len(violation["trace"])
    assert data["not_checked"] == []


def test_the_partitioned_search_says_it_leaves_termination_out(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run("verify", "route-flow", "-t", "linear:2", "--workers", "2", "--json", str(out))
    assert result.exit_code == ExitCode.OK, result.output
    lines = result.output.splitlines()
    assert lines[-1] == "OK: no property violated (not checked: termination)"
    assert any(line.startswith("  not checked     termination  (the partitioned search") for line in lines)
    assert json.loads(out.read_text())["not_checked"][0]["property"] == "termination"
    named = run("verify", "route-flow", "-t", "linear:2", "--workers", "2", "-p", "termination")
    assert named.exit_code == ExitCode.INPUT
    assert "termination: the partitioned search (--workers, --engine ray) cannot see cycles" in named.output


@pytest.mark.parametrize("app, options", [
    ("mac-learning", dict(topology="linear:2", packets=2)),  # the replier moves once
    ("route-flow", dict(topology="linear:2", packets=1, faults={"link": 2, "loss": 1})),
    ("route-flow", dict(topology="linear:2", packets=1, faults={"restart": 1, "duplicate": 1})),
])
def test_host_moves_and_faults_make_no_cycle(app: str, options: dict) -> None:
    """A host walks its places once each and every fault spends a budget: a state after a move
    or a fault never comes back, so neither is part of a cycle (docs/termination.md)."""
    result = verify(app, properties=["termination"], **options)
    assert result.complete and not result.discoveries
