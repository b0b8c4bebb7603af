"""``verify --simulate`` on an app whose executions may never end, as a user meets it: the
livelocking timed router (tests/data/apps/resubmitting_router.py) fails ``termination`` (on by
default) with a lasso trace that reads as the depth-first search's and replays with
``nice-attendre replay``, the same under any hash seed and number of workers; the correct
router ends INCOMPLETE with termination among the properties checked; ``--shrink`` takes a
depth-first search's lasso too."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from conftest import child_preexec
from tests_data_apps import path

from nice_attendre.frontend.cli import main

ROUTER = path("resubmitting_router.py", "ResubmittingRouter")
COMMAND = shutil.which("nice-attendre", path=str(Path(sys.executable).parent)) or "nice-attendre"


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args))


def test_a_walk_that_comes_back_fails_termination_and_its_lasso_replays(tmp_path: Path) -> None:
    out, report = tmp_path / "lasso.json", tmp_path / "report.json"
    result = invoke("verify", ROUTER, "-t", "linear:2", "-n", "1", "--simulate", "--seed", "1", "--trace-out",
                    str(out), "--trace-format", "json", "--json", str(report))
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert lines[-1] == "FAILED: termination"
    assert "VIOLATION 1: termination (termination)" in lines
    reason = lines[lines.index("VIOLATION 1: termination (termination)") + 1]
    assert reason.startswith("  an execution that never ends: from the state after step ")
    assert reason.endswith("Every event enabled on the cycle is one of its steps: it needs no unfair scheduler.")
    assert any(line.startswith("  trace (lasso: a path, then a cycle that repeats for ever; ") and "shrunk from" in line
               for line in lines)
    assert any("-- back to the state after step" in line for line in lines)
    data = json.loads(report.read_text())
    (violation,) = data["violations"]
    assert violation["expectation"] == "termination" and 0 <= violation["cycle_start"] < len(violation["trace"])
    assert violation["unshrunk_length"] > len(violation["trace"])
    assert "termination" in data["simulation"]["properties_checked"]
    assert data["simulation"]["ends"] == {"violation": 1}
    saved = json.loads(out.read_text())
    replayed = invoke("replay", str(out), "--app", ROUTER)
    assert replayed.exit_code == 1, replayed.output
    events = len(saved["events"])
    assert replayed.output.splitlines()[-1].startswith(
        f"trace reproduced: property termination violated: step {events} leads back to the state after step "
        f"{saved['cycle_start']}")


def test_the_lasso_is_the_same_under_any_hash_seed_and_number_of_workers(tmp_path: Path) -> None:
    reports = []
    for hash_seed, workers in (("1", "1"), ("2", "2")):
        out = tmp_path / f"r{hash_seed}.json"
        proc = subprocess.run([COMMAND, "verify", ROUTER, "-t", "linear:2", "-n", "2", "--simulate", "--seed", "7",
                               "--workers", workers, "--json", str(out)],
                              capture_output=True, text=True, timeout=300, preexec_fn=child_preexec(),
                              env={**os.environ, "PYTHONHASHSEED": hash_seed})
        assert proc.returncode == 1, proc.stderr
        data = json.loads(out.read_text())
        reports.append((data["violations"], data["transitions"], data["simulation"]["walks"]))
    assert reports[0] == reports[1]
    assert reports[0][0][0]["property"] == "termination" and reports[0][0][0]["cycle_start"] is not None


def test_the_correct_router_checks_termination_and_ends_incomplete() -> None:
    result = invoke("verify", ROUTER, "-t", "linear:3", "-n", "1", "-o", "forget_expired=true", "--simulate",
                    "--seed", "2", "--walks", "100")
    assert result.exit_code == 3, result.output
    lines = result.output.splitlines()
    assert lines[-1] == "INCOMPLETE: no violation in 100 walks (not a proof; ran the walks asked for)"
    checked = next(line for line in lines if line.startswith("  properties     checked: "))
    assert "termination" in checked and "not checked" not in result.output


def test_shrink_takes_a_depth_first_lasso(tmp_path: Path) -> None:
    out = tmp_path / "lasso.json"
    plain = invoke("verify", ROUTER, "-t", "linear:2", "-n", "1", "-p", "termination")
    shrunk = invoke("verify", ROUTER, "-t", "linear:2", "-n", "1", "-p", "termination", "--shrink", "--trace-out",
                    str(out), "--trace-format", "json")
    assert plain.exit_code == shrunk.exit_code == 1, shrunk.output
    assert "trace (lasso: a path, then a cycle that repeats for ever; 20 events):" in plain.output
    line = next(line for line in shrunk.output.splitlines() if line.startswith("  trace (lasso"))
    assert line.endswith("shrunk from 20):") and int(line.split("; ")[1].split()[0]) < 20, line
    replayed = invoke("replay", str(out), "--app", ROUTER)
    assert replayed.exit_code == 1 and "property termination violated" in replayed.output


def test_a_batch_timer_that_never_fires_is_no_livelock_for_walks_either() -> None:
    """MirrorBelow under batch resubmits a packet until the batch timer fires (main's
    tests/properties/test_fairness_apps.py): the depth-first search's termination (weak
    fairness) passes it, termination-any-scheduler fails it; walks judge their cycles alike."""
    from nice_attendre import verify

    mirror = path("equal_priority.py", "MirrorBelow")
    fair = verify(mirror, packets=2, protocol="batch", properties=["termination"], simulate=True, seed=1, walks=300)
    assert fair.discoveries == () and fair.verdict == "incomplete"
    assert fair.simulation.ends.get("cycle", 0) > 0  # walks did go round the resubmission cycle
    unfair = verify(mirror, packets=2, protocol="batch", properties=["termination-any-scheduler"], simulate=True,
                    seed=1, walks=300)
    found = unfair.discovery("termination-any-scheduler")
    assert found is not None and found.trace.is_lasso
    found.trace.replay(unfair.system)
