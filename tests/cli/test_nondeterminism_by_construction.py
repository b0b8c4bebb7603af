"""A router choosing its path from random, time.time() or os.urandom exits 4 in ten runs out
of ten, with and without a planted bug, naming the handler, what it read and the step, with
the trace; deterministic routers never exit 4 (issue 29, section 3). Before, the same
command ended 0, 1 or 4 from one run to the next, and hash(object()) was never caught."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from nice_attendre.frontend.cli import main
from tests_data_apps import path

ROUTERS = "random_router.py"
READS = {
    "RandomRouter": "read the random module's shared generator (random.randrange) at random_router.py:",
    "ClockRouter": "read the clock (time.time) at random_router.py:",
    "UrandomRouter": "read the system's randomness (os.urandom) at random_router.py:",
}


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


def _default_signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def script(*args: str, seed: str = "0") -> subprocess.CompletedProcess[str]:
    """The console script in a child process, with hash seed ``seed``."""
    found = shutil.which("nice-attendre", path=str(Path(sys.executable).parent))
    assert found is not None
    return subprocess.run([found, *args], capture_output=True, text=True, timeout=120, preexec_fn=_default_signals,
                          env={**os.environ, "PYTHONHASHSEED": seed})


def check_report(stdout: str, name: str, read: str) -> None:
    """The report names the handler, what it read, the step and the trace to it."""
    lines = stdout.splitlines()
    start = lines.index("VIOLATION 1: app-nondeterminism (always)")
    assert lines[start + 1].startswith(f"  {name}.on_packet_in {read}")
    assert lines[start + 1].endswith(" (handling packet-in(s1, port 1, h1#0))")
    assert lines[start + 2] == "  trace (5 events):"
    assert lines[start + 3] == "  1. h1 sends data h1#0 [h1->h2] to s1:1"
    assert lines[start + 7].startswith(f"  5. ALERT app-nondeterminism: {name}.on_packet_in {read}")
    assert lines[-1] == ("NONDETERMINISTIC: an app handler is not a function of its input (app-nondeterminism), "
                         "so what the search finds depends on the run")


@pytest.mark.parametrize("bug", [[], ["--bug", "black-hole"]], ids=["correct", "planted-bug"])
@pytest.mark.parametrize("name", sorted(READS))
def test_a_router_reading_randomness_or_the_clock_exits_4_in_ten_runs_of_ten(name: str, bug: list[str]) -> None:
    outcomes = set()
    for _ in range(10):
        result = cli("verify", path(ROUTERS, name), "-n", "2", *bug)
        outcomes.add(result.exit_code)
        assert result.exit_code == 4, result.output
        check_report(result.stdout, name, READS[name])
    assert outcomes == {4}


@pytest.mark.parametrize("name, read", [
    ("HashRouter", "read hash() of an object (hashed by its address, which differs from run to run) at "),
    ("IdRouter", "read id() (an object's address, which differs from run to run) at "),
    ("StringHashRouter", "read hash() of a str (it varies with PYTHONHASHSEED) at "),
])
def test_addresses_and_string_hashes_exit_4_under_any_hash_seed(name: str, read: str) -> None:
    for seed in ("0", "1", "12345"):
        for bug in ([], ["--bug", "black-hole"]):
            proc = script("verify", path(ROUTERS, name), "-n", "2", *bug, seed=seed)
            assert proc.returncode == 4, (proc.stdout, proc.stderr)
            assert "Traceback" not in proc.stderr
            check_report(proc.stdout, name, read)


@pytest.mark.parametrize("extra", [["--keep-going"], ["--fingerprint"], ["--shortest"], ["--workers", "2"],
                                   ["--no-memo"], ["-P", "attendre"], ["-P", "openflow-b"]])
def test_every_search_reports_it(extra: list[str], tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = cli("verify", path(ROUTERS, "RandomRouter"), "-n", "2", "--bug", "black-hole", "--json", str(out),
                 *extra)
    assert result.exit_code == 4, result.output
    assert "VIOLATION 1: app-nondeterminism (always)" in result.stdout
    data = json.loads(out.read_text())
    assert data["verdict"] == "nondeterministic" and data["ok"] is False
    assert data["violations"][0]["property"] == "app-nondeterminism"
    assert data["violations"][0]["reason"].startswith("RandomRouter.on_packet_in read the random module's shared ")


def test_keep_going_reports_the_other_violations_too() -> None:
    """A nondeterministic app's other violations are listed, and the verdict stays 4."""
    result = cli("verify", path(ROUTERS, "NumberedRouter"), "-n", "1", "--bug", "black-hole", "--keep-going")
    assert result.exit_code == 4, result.output
    assert result.stdout.splitlines()[-1].startswith("NONDETERMINISTIC: ")


@pytest.mark.parametrize("name", ["ChoosingRouter", "SeededRouter", "ReseedingRouter", "StableHashRouter",
                                  "LookupRouter"])
def test_deterministic_routers_never_exit_4(name: str) -> None:
    assert cli("verify", path(ROUTERS, name), "-n", "2").exit_code == 0
    buggy = cli("verify", path(ROUTERS, name), "-n", "2", "--bug", "black-hole")
    assert buggy.exit_code == 1, buggy.output
    assert buggy.stdout.splitlines()[-1] == "FAILED: no-forgotten-packets, delivery"


def test_compare_exits_4_too() -> None:
    result = cli("compare", path(ROUTERS, "ClockRouter"), "-n", "1", "--protocols", "openflow,attendre")
    assert result.exit_code == 4, result.output


def test_list_names_the_check() -> None:
    result = cli("list")
    assert any(line.startswith("  app-nondeterminism ") for line in result.stdout.splitlines())


@pytest.mark.slow
@pytest.mark.parametrize("bug", [[], ["--bug", "black-hole"]], ids=["correct", "planted-bug"])
@pytest.mark.parametrize("name", sorted(READS))
def test_ten_processes_of_ten_exit_4(name: str, bug: list[str]) -> None:
    """The issue's measurement, as a user runs it: ten processes (hash seeds and addresses
    differ), every one exit 4 with the same report."""
    reports = set()
    for run in range(10):
        proc = script("verify", path(ROUTERS, name), "-n", "2", *bug, seed=str(run))
        assert proc.returncode == 4, (proc.stdout, proc.stderr)
        check_report(proc.stdout, name, READS[name])
        reports.add("\n".join(line for line in proc.stdout.splitlines() if "transitions/s" not in line))
    assert len(reports) == 1


def test_a_step_whose_replay_agrees_is_told_as_the_search_found_it() -> None:
    """The report replays the trace to narrate it; a handler whose two calls disagreed in the
    search may agree then. Before, the report was refused (one line: 'replaying a reported
    trace gave another state'); now the step is told as found, with what the replay saw."""
    result = cli("verify", path(ROUTERS, "FirstCallsRouter"), "-n", "1")
    assert result.exit_code == 4, result.output
    lines = result.stdout.splitlines()
    step = next(i for i, line in enumerate(lines) if line.startswith("  3. ALERT app-nondeterminism: "))
    assert lines[step].startswith("  3. ALERT app-nondeterminism: FirstCallsRouter.on_packet_in asked for two "
                                  "things for the same input: request 1 was ")
    assert lines[step + 1] == ("     (replayed for this report, the handler's two calls happened to agree: what it "
                               "does depends on the run)")
    assert result.stderr == ""


def test_the_readme_shows_what_verify_prints() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text().splitlines()
    command = "$ nice-attendre verify tests/data/apps/random_router.py:RandomRouter --packets 1"
    start = readme.index(command) + 1
    shown = [line for line in readme[start:readme.index("```", start)] if line != "..."]
    result = cli("verify", path(ROUTERS, "RandomRouter"), "--packets", "1")
    assert result.exit_code == 4
    printed = result.stdout.splitlines()
    assert printed[-len(shown):] == shown


def test_what_neither_check_sees_in_the_search_still_exits_4_when_narrated() -> None:
    """LaterCallsRouter's two calls of each input agree; the report's replay shows it."""
    result = cli("verify", path(ROUTERS, "LaterCallsRouter"), "-n", "1", "--bug", "black-hole")
    assert result.exit_code == 4, result.output
    assert result.stderr.startswith("Error: the app is not deterministic: replaying a reported trace gave another "
                                    "state at step ")
