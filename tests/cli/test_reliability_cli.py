"""Issue 11 (sections 1-5) and issue 8 item 6, as a hostile or careless user meets them.

Each test names the failure it guards against; each failed on the main branch before the
fix (exit code 0 with nothing checked, a traceback, a hang, a lost report or a forged line).
Signals and ``sys.exit`` are tried in a child process (the console script), never in the
test process. No test asserts wall-clock time: a hang shows up as a subprocess timeout.
"""
from __future__ import annotations

import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from children import console, within_seconds
from conftest import child_preexec
import nice_attendre.frontend.api
from nice_attendre.frontend.cli import main

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
CARELESS = DATA / "apps" / "careless.py"
FACTORIES = DATA / "topologies" / "topology_factories.py"
BUGGY = ["verify", "route-flow", "--topology", "linear:2", "--bug", "forget-last-hop"]
PINNED = ["verify", "route-flow", "--topology", "linear:3", "--packets", "2", "--protocol", "openflow"]
PINNED_COUNTS = (13107, 4934, 8174, 40)


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def script(*args: str, cwd: Path, timeout: float = 120, limit_memory: int | None = None,
           preloaded: bool = False) -> subprocess.CompletedProcess[str]:
    """The console script in a child process (``limit_memory``: its address space, bytes;
    ``preloaded``: see :data:`children.PRELOADED`), with SIGINT's default disposition."""
    def limit() -> None:
        if limit_memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit_memory, limit_memory))

    return console(*args, cwd=cwd, timeout=timeout, preloaded=preloaded, preexec=limit)


def app(name: str) -> str:
    return f"{CARELESS}:{name}"


def counts(data: dict) -> tuple[int, int, int, int]:
    return (data["transitions"], data["unique_states"], data["revisits"], data["max_depth"])


def one_error(result: Result | subprocess.CompletedProcess[str]) -> str:
    """The single stderr line of a clean failure (no traceback)."""
    stderr = result.stderr
    assert "Traceback" not in stderr, stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


# ---- 1. no silent pass: sys.exit in user code ------------------------------------------------

@pytest.mark.parametrize("where", ["handler", "initial_state", "join"])
def test_sys_exit_in_an_app_handler_is_an_app_exception(tmp_path: Path, where: str) -> None:
    out = tmp_path / "r.json"
    proc = run("verify", app("Exits"), "-o", f"where={where}", "--json", str(out))
    assert proc.exit_code == 1, (proc.stdout, proc.stderr)  # was 0, with no report and no JSON
    handler = {"handler": "on_packet_in", "initial_state": "initial_state", "join": "on_switch_join"}[where]
    assert f"Exits.{handler} called sys.exit(0)" in proc.stdout
    assert proc.stdout.rstrip().endswith("FAILED: app-exception")
    data = json.loads(out.read_text())
    assert (data["verdict"], data["ok"]) == ("violated", False)
    assert data["violations"][0]["property"] == "app-exception"


@pytest.mark.parametrize("spec, message", [
    (f"{CARELESS}:Exits", "Error: cannot create Exits: its constructor called sys.exit(0)"),
    (f"{DATA / 'apps' / 'exits_at_import.py'}:Never",
     f"Error: importing app file {str(DATA / 'apps' / 'exits_at_import.py')!r} failed: it called sys.exit(0)"),
])
def test_sys_exit_while_loading_the_app_is_bad_input(tmp_path: Path, spec: str, message: str) -> None:
    extra = ["-o", "where=constructor"] if spec.endswith(":Exits") else []
    proc = run("verify", spec, *extra)
    assert proc.exit_code == 2, (proc.stdout, proc.stderr)
    assert one_error(proc) == message
    assert proc.stdout == ""


@pytest.mark.parametrize("part, message", [
    ("scenario", "BadScenario.scenario raised RuntimeError: no traffic today"),
    ("not-a-scenario", "BadScenario.scenario returned list, not a Scenario"),
    ("describe", "BadScenario.describe raised KeyError: 'name'"),
])
def test_the_apps_own_setup_code_failing_is_bad_input_not_an_internal_error(part: str, message: str) -> None:
    result = run("verify", app("BadScenario"), "-o", f"part={part}")
    assert result.exit_code == 2, (result.output, result.exception)
    assert one_error(result) == f"Error: {message}"


def test_topology_sys_exit_is_refused() -> None:
    proc = run("verify", "route-flow", "--topology", "sys:exit")
    assert proc.exit_code == 2, (proc.stdout, proc.stderr)
    assert one_error(proc) == ("Error: 'sys:exit' is not a topology factory: give a function declared with "
                               "@nice_attendre.models.topology.topology_factory")


def test_topology_factory_file_calling_sys_exit_is_bad_input(tmp_path: Path) -> None:
    spec = f"{FACTORIES}:exits"
    proc = run("verify", "route-flow", "--topology", spec)
    assert proc.exit_code == 2
    assert one_error(proc) == f"Error: topology factory {spec!r} called sys.exit(0)"


# ---- 1. no silent pass: interrupted and incomplete runs ---------------------------------------

@pytest.mark.parametrize("name, code, said", [("SIGINT", 130, "Ctrl-C"), ("SIGTERM", 143, "SIGTERM"),
                                              ("SIGHUP", 129, "SIGHUP")])
def test_a_signal_during_the_search_writes_the_partial_report(tmp_path: Path, name: str, code: int,
                                                              said: str) -> None:
    # The app sends the signal to its own process on its third packet-in, as `timeout`,
    # CI cancellation or `docker stop` would (SIGTERM used to kill the run with no report).
    out = tmp_path / "r.json"
    proc = script("verify", app("Signals"), "-o", f"name={name}", "-t", "linear:3", "-n", "2",
                  "--json", str(out), cwd=tmp_path)
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    lines = proc.stdout.splitlines()
    assert f"  search           INCOMPLETE  (interrupted by {said})" in lines
    assert lines[-1] == ("INTERRUPTED: no violation in the part explored, but the search was not complete "
                         f"(interrupted by {said})")
    assert "OK" not in proc.stdout.split()
    data = json.loads(out.read_text())
    assert (data["verdict"], data["ok"], data["complete"], data["stop_reason"], data["signal"]) == (
        "interrupted", False, False, "interrupted", said)
    assert data["transitions"] > 0


@pytest.mark.slow
def test_sigterm_stops_the_same_search_at_the_same_place(tmp_path: Path) -> None:
    # The signal comes inside a handler: the search stops before that transition counts.
    found = []
    for index in range(2):
        out = tmp_path / f"r{index}.json"
        proc = script("verify", app("Signals"), "-o", "name=SIGTERM", "-t", "linear:3", "-n", "2",
                      "--json", str(out), cwd=tmp_path)
        assert proc.returncode == 143
        found.append(counts(json.loads(out.read_text())))
    assert found[0] == found[1]


@pytest.mark.parametrize("where", ["import", "join"])
def test_ctrl_c_before_the_search_exits_130(tmp_path: Path, where: str) -> None:
    # Click used to turn it into "Aborted!" with exit code 1, the code of a violation.
    spec = (f"{DATA / 'apps' / 'interrupts_at_import.py'}:Never" if where == "import" else app("Signals"))
    extra = ["-o", "join=true"] if where == "join" else []
    proc = script("verify", spec, *extra, cwd=tmp_path)
    assert proc.returncode == 130, (proc.stdout, proc.stderr)
    assert one_error(proc) == "interrupted (Ctrl-C)"
    assert proc.stdout == ""


def test_ctrl_c_while_the_command_line_is_read_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    # Click turned it into "Aborted!" and exit 1, the code of a violation.
    from nice_attendre.frontend import cli

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli._Group, "format_commands", interrupted)  # while --help is written
    result = run("--help")
    assert result.exit_code == 130, (result.output, result.exception)
    assert result.stderr == "interrupted (Ctrl-C)\n"


def test_sigterm_before_the_search_exits_143(tmp_path: Path) -> None:
    proc = script("verify", app("Signals"), "-o", "join=true", "-o", "name=SIGTERM", cwd=tmp_path)
    assert proc.returncode == 143, (proc.stdout, proc.stderr)
    assert one_error(proc) == "interrupted (SIGTERM)"


def test_ctrl_c_while_writing_the_report_keeps_the_violation(monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Path) -> None:
    import nice_attendre.frontend.report

    def interrupted(*args: object, **kwargs: object) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(nice_attendre.frontend.report, "text_report", interrupted)
    result = run(*BUGGY)
    assert result.exit_code == 1, (result.output, result.exception)  # the violation is not lost
    assert result.stdout == "FAILED: no-forgotten-packets, delivery\n"
    assert result.stderr == "interrupted (Ctrl-C) while writing the report\n"
    result = run("verify", "route-flow")
    assert result.exit_code == 130, (result.output, result.exception)
    assert result.stdout == "OK: no property violated\n"


def test_incomplete_search_exits_3_and_never_says_ok(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = run(*PINNED, "--max-transitions", "500", "--json", str(out))
    assert result.exit_code == 3, result.output  # was 0: a CI gate went green on a cut search
    assert result.stdout.splitlines()[-1].startswith("INCOMPLETE: no violation in the part explored")
    data = json.loads(out.read_text())
    assert (data["verdict"], data["ok"]) == ("incomplete", False)  # was "ok": true


def test_a_violation_wins_over_a_limit() -> None:
    result = run(*BUGGY, "--keep-going", "--max-transitions", "10")
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines()[-1] == "FAILED: no-forgotten-packets, delivery"


def test_unreachable_receiver_is_refused() -> None:
    spec = f"{FACTORIES}:unreachable"
    result = run("verify", "route-flow", "--topology", spec)
    assert result.exit_code == 2, result.output  # was accepted, and could give OK
    assert one_error(result) == (f"Error: host h1 cannot reach h2 in topology {spec!r}: no path of links "
                                 "between them")


NARRATION_SIGNALS = """
import os
import signal
import sys

from nice_attendre.apps.route_flow import RouteFlow


def narrating() -> bool:
    frame = sys._getframe()
    while frame is not None:
        if frame.f_code.co_name == "narrate_trace":
            return True
        frame = frame.f_back
    return False


class SignalsWhileNarrated(RouteFlow):
    \"\"\"route-flow with a lost last hop, which sends its own process signal ``name`` when
    its packet-in handler runs again to narrate a trace after the search.\"\"\"

    def __init__(self, name: str = "SIGINT") -> None:
        super().__init__(bug="forget-last-hop")
        self.signum = getattr(signal, name)

    def on_packet_in(self, state, ev, out):
        if narrating():
            os.kill(os.getpid(), self.signum)
        return super().on_packet_in(state, ev, out)
"""


@pytest.mark.parametrize("name, said", [("SIGINT", "Ctrl-C"), ("SIGTERM", "SIGTERM")])
def test_a_signal_while_a_trace_is_narrated_keeps_the_violations(tmp_path: Path, name: str, said: str) -> None:
    # Issue 34: the run exited 130 (143) with no FAILED line and no JSON, hiding the violations
    # the search had found; now the report is written with the narration cut short, exit 1.
    spec = tmp_path / "narrated.py"
    spec.write_text(NARRATION_SIGNALS)
    out = tmp_path / "r.json"
    proc = script("verify", f"{spec}:SignalsWhileNarrated", "-o", f"name={name}", "-t", "linear:2",
                  "--keep-going", "--json", str(out), cwd=tmp_path)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert proc.stderr == (f"interrupted ({said}) while narrating the traces; the report follows without the "
                           "rest\n")
    lines = proc.stdout.splitlines()
    assert lines[-1] == "FAILED: no-forgotten-packets, delivery"
    assert f"(narration interrupted by {said}: later steps show their events only)" in lines
    assert "VIOLATION 1: no-forgotten-packets (at quiescence)" in lines
    data = json.loads(out.read_text())
    assert (data["verdict"], data["narration"]) == ("violated", f"interrupted by {said}")
    assert sorted({v["property"] for v in data["violations"]}) == ["delivery", "no-forgotten-packets"]
    steps = [step for v in data["violations"] for step in v["trace"]]
    assert steps and any(step["effects"] == [] for step in steps)  # cut short: events without effects


# ---- 2. bounded time ---------------------------------------------------------------------------

@pytest.mark.parametrize("workers", ["1", "2"])
def test_max_seconds_bounds_a_run_whose_handler_sleeps(tmp_path: Path, workers: str) -> None:
    # Each packet-in sleeps 120 s; the clock used to be read every 1024 transitions only
    # (376 s under --max-seconds 1). The subprocess timeout would catch a hang. In worker
    # processes, the coordinator's stop reaches the handler through the worker's watchdog.
    out = tmp_path / "r.json"
    proc, _ = within_seconds("verify", app("Sleeps"), "-o", "seconds=120", "-t", "linear:3", "-n", "2",
                          "--json", str(out), "--workers", workers, cwd=tmp_path)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert "  search           INCOMPLETE  (stopped by --max-seconds)" in proc.stdout.splitlines()
    data = json.loads(out.read_text())
    assert (data["stop_reason"], data["verdict"]) == ("max-seconds", "incomplete")
    assert data["transitions"] < 10  # at most one handler call ran to its end


def test_max_seconds_covers_building_the_network(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = script("verify", app("Sleeps"), "-o", "join=true", "-o", "seconds=30", "--max-seconds", "0.5",
                  "--max-handler-seconds", "60", "--json", str(out), cwd=tmp_path, timeout=60)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert proc.stdout == ("INCOMPLETE: --max-seconds reached while building the network (importing the app, "
                           "switch joins); nothing was explored\n")
    data = json.loads(out.read_text())
    assert (data["verdict"], data["stop_reason"], data["transitions"]) == ("incomplete", "max-seconds", 0)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_bench_max_seconds_bounds_the_whole_run(tmp_path: Path, jobs: str) -> None:
    # Issue 34: bench had no --max-seconds. Route-flow on 5 switches with 2 packets is millions
    # of transitions: no machine finishes that cell in half a second, so the limit cuts it
    # (or, with --jobs, the cells the workers start after it), and the run is never complete.
    out = tmp_path / "cells.csv"
    result = run("bench", "route-flow", "--switches", "5-8", "--packets", "2-3", "--protocols", "openflow",
                 "--max-seconds", "0.5", "--csv", str(out), "--jobs", jobs)
    assert result.exit_code == 3, (result.output, result.exception)  # incomplete, never 0
    lines = result.stdout.splitlines()
    assert lines[-2] == "limits: --max-seconds 0.5 (the whole run)"
    cut, not_run = (int(n) for n in re.fullmatch(
        r"INCOMPLETE: --max-seconds reached: (\d+) cells? cut short \(counts marked > are lower bounds\), "
        r"(\d+) not run \(-\)", lines[-1]).groups())  # type: ignore[union-attr]
    assert cut + not_run >= 1
    counts = [line.split()[2] for line in lines[3:11]]
    assert all(count == "-" or count.startswith(">") for count in counts), counts  # no cell complete
    statuses = [row.split(",")[-1] for row in out.read_text().splitlines()[1:]]
    assert "complete" not in statuses and any(status.endswith("(max-seconds)") for status in statuses)


def test_bench_max_memory_and_bad_limits(tmp_path: Path) -> None:
    result = run("bench", "route-flow", "--switches", "1", "--packets", "1", "--protocols", "openflow",
                 "--max-memory", "1M", "-q")
    assert result.exit_code == 3, (result.output, result.exception)  # this process already uses more
    assert result.stdout.splitlines()[-2:] == ["limits: --max-memory 1,048,576 bytes (each cell)",
                                                "INCOMPLETE: --max-memory reached: 0 cells cut short (counts marked "
                                                "> are lower bounds), 1 not run (-)"]
    for bad in (["--max-seconds", "nan"], ["--max-seconds", "0"], ["--max-memory", "lots"]):
        refused = run("bench", "paper", *bad)
        assert refused.exit_code == 2 and "Invalid value" in refused.stderr, bad
    fine = run("bench", "route-flow", "--switches", "1", "--packets", "1", "--max-seconds", "600", "-q")
    assert fine.exit_code == 0, fine.output
    assert fine.stdout.splitlines()[-1] == "limits: --max-seconds 600 (the whole run)"


def test_a_limit_that_stopped_the_build_does_not_stop_its_report(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    # Found on a busy machine: after --max-seconds stopped the build, the watchdog's timer
    # went on raising the stop at every tick, so a report slower than a tick (here: its JSON
    # takes half a second) was cut: no JSON, and "reached before the search" on stderr.
    import nice_attendre.frontend.report

    real = nice_attendre.frontend.report.json_report

    def slow(*args: object, **kwargs: object) -> object:
        time.sleep(0.5)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(nice_attendre.frontend.report, "json_report", slow)
    out = tmp_path / "r.json"
    result = run("verify", app("Sleeps"), "-o", "join=true", "-o", "seconds=30", "--max-seconds", "0.2",
                 "--max-handler-seconds", "60", "--json", str(out))
    assert result.exit_code == 3, (result.output, result.exception)
    assert result.stderr == ""
    assert json.loads(out.read_text())["stop_reason"] == "max-seconds"


def test_a_limit_reached_between_the_build_and_the_search(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The same race: the limit came after the network was built but before the search
    # started (here: half a second passes in between); the stop escaped the command (no JSON)
    # and the library (a StopRequest, not a result).
    from nice_attendre import verify

    real = nice_attendre.frontend.api.search

    def late(*args: object, **kwargs: object) -> object:
        time.sleep(0.5)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(nice_attendre.frontend.api, "search", late)
    out = tmp_path / "r.json"
    result = run("verify", "route-flow", "--max-seconds", "0.2", "--json", str(out))
    assert result.exit_code == 3, (result.output, result.exception)
    assert result.stderr == ""
    assert result.stdout.startswith("INCOMPLETE: --max-seconds reached")
    assert json.loads(out.read_text())["stop_reason"] == "max-seconds"
    cut = verify("route-flow", max_seconds=0.2)
    assert (cut.verdict, cut.stop_reason, cut.stats.transitions) == ("incomplete", "max-seconds", 0)


def test_compare_when_a_limit_stops_the_build(tmp_path: Path) -> None:
    out = tmp_path / "c.json"
    proc = script("compare", app("Sleeps"), "-o", "join=true", "-o", "seconds=30", "--max-seconds", "0.3",
                  "--max-handler-seconds", "60", "--protocols", "openflow", "--json", str(out), cwd=tmp_path,
                  timeout=60)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert "  traffic      (not built)" in proc.stdout.splitlines()
    data = json.loads(out.read_text())
    assert data["verdict"] == "incomplete"
    assert [(p["verdict"], p["stop_reason"], p["transitions"]) for p in data["protocols"]] == [
        ("incomplete", "max-seconds", 0)]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1"])
def test_max_seconds_must_be_finite(value: str) -> None:
    result = run(*PINNED, "--max-seconds", value)
    assert result.exit_code == 2, result.output  # nan used to switch the limit off
    assert "Invalid value for '--max-seconds'" in result.stderr


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_handler_stuck_in_a_loop_is_an_app_exception_with_its_trace(tmp_path: Path, workers: str) -> None:
    """Also in worker processes (each has its own watchdog on its copy of the app)."""
    out = tmp_path / "r.json"
    proc = script("verify", app("Loops"), "--max-handler-seconds", "0.3", "--json", str(out), "--workers", workers,
                  cwd=tmp_path, timeout=60)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)  # used to hang for ever
    reason = ("Loops.on_packet_in did not return within 0.3 s (stuck in a loop or waiting?) "
              "(handling packet-in(s1, port 1, h1#0))")
    lines = proc.stdout.splitlines()
    start = lines.index("VIOLATION 1: app-exception (always)")
    assert lines[start + 1:start + 3] == [f"  {reason}", "  trace (3 events):"]
    assert lines[-1] == "FAILED: app-exception"
    assert json.loads(out.read_text())["violations"][0]["reason"] == reason


CARELESS_PROPERTIES = DATA / "properties" / "careless_properties.py"


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_property_stuck_in_a_loop_violates_itself_with_its_trace(tmp_path: Path, workers: str) -> None:
    """A user's predicate is user code, bounded like a handler (in workers too)."""
    out = tmp_path / "r.json"
    proc = script("verify", "route-flow", "-t", "linear:2", "-p", f"{CARELESS_PROPERTIES}:SPINS",
                  "--max-handler-seconds", "0.3", "--json", str(out), "--workers", workers, cwd=tmp_path, timeout=60)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)  # used to hang for ever
    reason = "the property 'spins' did not return within 0.3 s (stuck in a loop or waiting?)"
    lines = proc.stdout.splitlines()
    start = lines.index("VIOLATION 1: spins (always)")
    assert lines[start + 1] == f"  {reason}"
    assert lines[start + 2].startswith("  trace (") and lines[-1] == "FAILED: spins"
    violation = json.loads(out.read_text())["violations"][0]
    assert violation["reason"] == reason and violation["trace"]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_max_seconds_and_sigterm_stop_a_search_inside_a_property(tmp_path: Path, workers: str) -> None:
    """--max-seconds stopped nothing while a predicate slept (the loop never got control
    back), and one SIGTERM only asked for a clean stop that never came."""
    proc, _ = within_seconds("verify", "route-flow", "-t", "linear:2", "-p", f"{CARELESS_PROPERTIES}:SLEEPS",
                          "--max-handler-seconds", "120", "--workers", workers, cwd=tmp_path)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)  # the predicate sleeps 60 s: the timeout catches a hang
    assert "  search           INCOMPLETE  (stopped by --max-seconds)" in proc.stdout.splitlines()
    assert "Traceback" not in proc.stderr
    # SIGTERM once the predicate sleeps (it says so in a file: no guess of how long the
    # child takes to get there on a busy machine).
    sleeping = tmp_path / "sleeping"
    predicate = tmp_path / "announces.py"
    predicate.write_text(f"""import time
from pathlib import Path

from nice_attendre.properties.custom import always


def _sleeps(view) -> bool:
    if view.hosts["h2"].received_from("h1"):
        Path({str(sleeping)!r}).touch()
        time.sleep(60)
    return True


SLEEPS = always("sleeps", _sleeps, "sleeps for a minute after the first delivery, and says so")
""")
    found = shutil.which("nice-attendre", path=str(Path(sys.executable).parent))
    assert found is not None
    child = subprocess.Popen([found, "verify", "route-flow", "-t", "linear:2", "-p", f"{predicate}:SLEEPS",
                              "--max-handler-seconds", "120", "--workers", workers], cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=child_preexec())
    try:
        for _ in range(6000):  # five minutes at most: a busy machine, not a fixed guess
            if sleeping.exists() or child.poll() is not None:
                break
            time.sleep(0.05)
        assert sleeping.exists(), child.poll()
    finally:
        child.send_signal(signal.SIGTERM)
    stdout, stderr = child.communicate(timeout=120)
    assert child.returncode == 143, (stdout, stderr)
    assert "INTERRUPTED: no violation in the part explored" in stdout, (stdout, stderr)


def test_an_explanation_stuck_in_a_loop_is_reported_not_waited_for(tmp_path: Path) -> None:
    proc = script("verify", "route-flow", "-t", "linear:2", "-p", f"{CARELESS_PROPERTIES}:NEVER_DONE_EXPLAINING",
                  "--max-handler-seconds", "0.3", cwd=tmp_path, timeout=60)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert ("  (its explanation did not return within 0.3 s (stuck in a loop or waiting?))"
            in proc.stdout.splitlines())


# ---- 2. bounded memory --------------------------------------------------------------------------

def test_max_memory_ends_the_search_cleanly(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = run("verify", "route-flow", "-t", "linear:6", "-n", "2", "--max-memory", "1M", "--json", str(out))
    assert result.exit_code == 3, result.output
    assert "  search           INCOMPLETE  (stopped by --max-memory)" in result.stdout.splitlines()
    data = json.loads(out.read_text())
    assert (data["verdict"], data["stop_reason"]) == ("incomplete", "max-memory")


@pytest.mark.parametrize("size", ["lots", "0", "-5M", "1.5X"])
def test_max_memory_needs_a_size(size: str) -> None:
    result = run(*PINNED, "--max-memory", size)
    assert result.exit_code == 2
    assert "Invalid value for '--max-memory'" in result.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="address-space limit")
def test_a_memory_error_ends_the_search_like_ctrl_c(tmp_path: Path) -> None:
    # Under a 2 GiB address-space limit the app's 8 GiB allocation fails: the run used to
    # report it as the app's exception (or die with a MemoryError traceback and keep nothing).
    out = tmp_path / "r.json"
    proc = script("verify", app("Hogs"), "-t", "linear:3", "--json", str(out), cwd=tmp_path,
                  limit_memory=2 << 30)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert "  search           INCOMPLETE  (out of memory)" in proc.stdout.splitlines()
    data = json.loads(out.read_text())
    assert (data["verdict"], data["stop_reason"], data["violations"]) == ("incomplete", "out-of-memory", [])


# ---- 2. huge numbers: clear errors, no traceback ------------------------------------------------

@pytest.mark.parametrize("args, expected", [
    (["verify", "route-flow", "--packets", "99999999999999999999"], "Invalid value for '--packets'"),
    (["verify", "route-flow", "--topology", "linear:1000000000000"], "linear:N needs a whole number 1 <= N <= 1000"),
    (["bench", "route-flow", "--switches", "1-1000000000000"], "--switches: values must be at most 1,000"),
    (["bench", "route-flow", "--packets", "5,99999999999999999999"], "--packets: values must be at most 1,000"),
    (["delay", "--n-switches", "100000"], "the grid would have 6^100000 = more than 10^100 RTT combinations"),
    (["delay", "--monte-carlo", "1000000000"], "1,000,000,000 samples x 6 switches x 4 controller delays"),
])
def test_huge_numbers_are_clear_errors(args: list[str], expected: str) -> None:
    result = run(*args)
    assert result.exit_code == 2, (result.output, result.exception)
    assert isinstance(result.exception, SystemExit)
    assert expected in result.stderr
    assert "Traceback" not in result.output


# ---- 3. nothing lost: outputs ---------------------------------------------------------------------

@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_failed_json_write_never_hides_the_violation() -> None:
    result = run(*BUGGY, "--json", "/dev/full")
    assert result.exit_code == 1, result.output  # was 2, the code of bad input
    assert result.stdout.splitlines()[-1] == "FAILED: no-forgotten-packets, delivery"
    assert one_error(result) == "Error: cannot write --json '/dev/full': No space left on device"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_failed_json_write_of_a_passing_run_is_exit_74() -> None:
    # Issue 34: a full disk is lost output (74), not bad input (2: the path was fine).
    result = run("verify", "route-flow", "--json", "/dev/full")
    assert result.exit_code == 74, result.output
    assert result.stdout.splitlines()[-1] == "OK: no property violated"


@pytest.mark.skipif(not Path("/sys").is_dir(), reason="needs a folder nobody may write")
def test_an_unwritable_output_folder_fails_before_the_search() -> None:
    result = run(*PINNED, "--json", "/sys/report.json")
    assert result.exit_code == 2, result.output
    assert result.stdout == ""  # the search never ran: the error cannot come after a verdict
    assert one_error(result) == "Error: cannot write --json '/sys/report.json': Permission denied"


def test_a_killed_run_leaves_no_stale_report(tmp_path: Path) -> None:
    # An earlier run's report must not survive a run killed before it writes its own.
    out = tmp_path / "r.json"
    out.write_text(json.dumps({"ok": True, "verdict": "ok"}))
    found = shutil.which("nice-attendre", path=str(Path(sys.executable).parent))
    proc = subprocess.Popen([str(found), "verify", app("Sleeps"), "-o", "seconds=5", "--json", str(out)],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            if not out.exists() or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert not out.exists()  # removed before the search started
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # no temporary file left either


def test_json_is_replaced_whole(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    out.write_text("x" * 100_000)  # longer than the new report: nothing of it may remain
    result = run("verify", "route-flow", "--json", str(out))
    assert result.exit_code == 0
    assert json.loads(out.read_text())["verdict"] == "ok"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


# ---- 3. nothing lost: checkpoints -------------------------------------------------------------------

def test_resume_gives_the_counts_of_an_uninterrupted_run(tmp_path: Path) -> None:
    checkpoint = tmp_path / "search.ckpt"
    first = run(*PINNED, "--max-transitions", "5000", "--checkpoint", str(checkpoint), "--json",
                str(tmp_path / "a.json"))
    assert first.exit_code == 3, first.output
    assert counts(json.loads((tmp_path / "a.json").read_text()))[0] == 5000
    second = run(*PINNED, "--max-transitions", "9000", "--resume", str(checkpoint), "--checkpoint", str(checkpoint),
                 "--json", str(tmp_path / "b.json"))
    assert second.exit_code == 3, second.output
    assert counts(json.loads((tmp_path / "b.json").read_text()))[0] == 9000  # the limit counts the whole search
    last = run(*PINNED, "--resume", str(checkpoint), "--json", str(tmp_path / "c.json"))
    assert last.exit_code == 0, last.output
    lines = last.stdout.splitlines()
    assert f"  resumed from   {checkpoint}" in lines
    assert lines[-1] == "OK: no property violated"
    data = json.loads((tmp_path / "c.json").read_text())
    assert counts(data) == PINNED_COUNTS
    assert (data["verdict"], data["complete"]) == ("ok", True)


@pytest.mark.slow
def test_resume_after_sigterm_gives_the_counts_of_an_uninterrupted_run(tmp_path: Path) -> None:
    # SIGTERM on the app's third packet-in saves the checkpoint; the resumed run (not
    # interrupted again: the app signals once) ends with the counts of a run never interrupted.
    checkpoint, once = tmp_path / "s.ckpt", tmp_path / "signalled"
    spec = [app("Signals"), "-o", "name=SIGTERM", "-o", f"once={once}", "-t", "linear:3", "-n", "2", "--keep-going"]
    proc = script("verify", *spec, "--checkpoint", str(checkpoint), "--json", str(tmp_path / "cut.json"),
                  cwd=tmp_path)
    assert proc.returncode == 143 and checkpoint.exists(), (proc.stdout, proc.stderr)
    cut = json.loads((tmp_path / "cut.json").read_text())
    proc = script("verify", *spec, "--resume", str(checkpoint), "--json", str(tmp_path / "resumed.json"), cwd=tmp_path)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    resumed = json.loads((tmp_path / "resumed.json").read_text())
    proc = script("verify", *spec, "--json", str(tmp_path / "whole.json"), cwd=tmp_path)  # `once` exists now
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    whole = json.loads((tmp_path / "whole.json").read_text())
    assert 0 < cut["transitions"] < whole["transitions"]
    assert counts(resumed) == counts(whole)
    assert (resumed["verdict"], whole["verdict"]) == ("ok", "ok")


def test_resume_of_a_violating_search_reports_the_same_violations(tmp_path: Path) -> None:
    checkpoint = tmp_path / "b.ckpt"
    whole = run(*BUGGY, "--keep-going", "--json", str(tmp_path / "whole.json"))
    assert whole.exit_code == 1
    assert run(*BUGGY, "--keep-going", "--max-transitions", "10", "--checkpoint", str(checkpoint)).exit_code == 1
    resumed = run(*BUGGY, "--keep-going", "--resume", str(checkpoint), "--json", str(tmp_path / "resumed.json"))
    assert resumed.exit_code == 1, resumed.output
    a, b = (json.loads((tmp_path / name).read_text()) for name in ("whole.json", "resumed.json"))
    assert counts(a) == counts(b)
    assert a["violations"] == b["violations"]
    assert whole.stdout.split("\n\n", 2)[2] == resumed.stdout.split("\n\n", 2)[2]  # the same violations printed


def test_resume_refuses_a_checkpoint_of_another_run(tmp_path: Path) -> None:
    checkpoint = tmp_path / "search.ckpt"
    assert run(*PINNED, "--max-transitions", "100", "--checkpoint", str(checkpoint)).exit_code == 3
    for change, what in ((["--protocol", "attendre"], "protocol: checkpoint 'openflow', now 'attendre'"),
                         (["--packets", "3"], "traffic: checkpoint"),
                         (["--keep-going"], "keep going: checkpoint False, now True"),
                         (["--bug", "forget-last-hop"], "app description: checkpoint 'route-flow', now "
                                                        "'route-flow (bug: forget-last-hop)'")):
        args = [*PINNED, *change, "--resume", str(checkpoint)]
        result = run(*args)
        assert result.exit_code == 2, (change, result.output)
        message = one_error(result)
        assert message.startswith(f"Error: checkpoint {str(checkpoint)!r} was taken of another run ("), message
        assert what in message, message


def test_resume_refuses_a_file_that_is_not_a_checkpoint(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.ckpt"
    bogus.write_bytes(b"not a pickle at all")
    result = run(*PINNED, "--resume", str(bogus))
    assert result.exit_code == 2
    assert one_error(result).startswith(f"Error: {str(bogus)!r} is not a nice-attendre checkpoint")
    missing = tmp_path / "missing.ckpt"
    result = run(*PINNED, "--resume", str(missing))
    assert one_error(result) == f"Error: --resume: checkpoint {str(missing)!r} not found"


def test_a_checkpoint_refers_only_to_allowed_classes(tmp_path: Path) -> None:
    import pickle

    import nice_attendre.importing
    from nice_attendre.checkpoint import seal

    evil = tmp_path / "evil.ckpt"
    assert run(*PINNED, "--max-transitions", "10", "--checkpoint", str(evil)).exit_code == 3
    identity = json.loads(evil.read_bytes().split(b"\n", 4)[3])["identity"]  # (sealed: past the digest check)
    for thing, name in ((os.system, "posix.system"), (nice_attendre.importing.import_module,
                                                      "nice_attendre.importing.import_module")):
        evil.write_bytes(seal(identity, pickle.dumps({"format": "nice-attendre checkpoint", "call": thing})))
        result = run(*PINNED, "--resume", str(evil))
        assert result.exit_code == 2
        assert one_error(result) == f"Error: checkpoint {str(evil)!r} refers to {name}, which a checkpoint may not contain"


# ---- 4. bad requests from apps ---------------------------------------------------------------------

@pytest.mark.parametrize("kind, reason", [
    ("string-match", "out.flow_mod: match must be a Match (Match.of(...) or Match.exact(header)), got str 'h1->h2'"),
    ("list-action", "out.flow_mod: not an action: list [Output(port=2)] (actions: Output, Flood, ToController, "
                    "SetField, GotoTable)"),
    ("int-action", "out.flow_mod: not an action: int 2 (actions: Output, Flood, ToController, "
                   "SetField, GotoTable)"),
    ("bogus-hop", "out.install_path: hop 1 must be a Hop(dpid, match, actions), got tuple (1, 2)"),
    ("string-port", "out.packet_out: Output port must be an int, got str '2'"),
    ("bad-priority", "out.flow_mod: priority must be an int from 0 to 65535, got int 1099511627776"),
])
def test_a_malformed_request_is_an_app_exception_naming_the_call(kind: str, reason: str) -> None:
    result = run("verify", app("BadRequest"), "-o", f"kind={kind}")
    assert result.exit_code == 1, (result.output, result.exception)  # was a traceback, or a silent drop
    lines = result.stdout.splitlines()
    start = lines.index("VIOLATION 1: app-exception (always)")
    assert lines[start + 1] == (f"  BadRequest.on_packet_in made a malformed request: {reason} "
                                "(handling packet-in(s1, port 1, h1#0))")
    assert "Traceback" not in result.output


@pytest.mark.parametrize("kind, returned", [
    ("list", "an unhashable state [1] (list); states must be hashable values: tuples, frozensets, "
             "frozen dataclasses"),
    ("none", "None instead of the app's state (it was 0; a handler returns the new state, e.g. `return state`)"),
])
def test_a_bad_state_names_the_handler_that_returned_it(kind: str, returned: str) -> None:
    # Issue 8 item 6: was reported as an exception of the next call, or as "raised TypeError".
    result = run("verify", app("BadState"), "-o", f"kind={kind}")
    assert result.exit_code == 1, result.output
    assert f"  BadState.on_packet_in returned {returned} (handling packet-in(s1, port 1, h1#0))" in \
        result.stdout.splitlines()


# ---- 5. untrusted names and specs ------------------------------------------------------------------

def test_control_characters_in_names_are_refused() -> None:
    spec = f"{FACTORIES}:control_characters"
    result = run("verify", "route-flow", "--topology", spec)
    assert result.exit_code == 2, result.output  # a newline used to forge an "OK" line
    assert one_error(result) == (f"Error: topology {spec!r}: host name 'h2\\nOK: no property violated\\x1b[2J' is "
                                 "empty or has a control or unprintable character")


def test_control_characters_in_an_edge_list_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.edges"
    path.write_text("h1 s1\ns1 s\x1b[2J2\ns\x1b[2J2 h2\n")
    result = run("verify", "route-flow", "--topology", str(path))
    assert result.exit_code == 2
    assert "switch name 's\\x1b[2J2' is empty or has a control or unprintable character" in one_error(result)


def test_report_lines_from_user_code_cannot_forge_lines() -> None:
    result = run("verify", app("Raises"))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert "OK: no property violated" not in lines
    assert "\x1b" not in result.stdout
    assert ("  Raises.on_packet_in raised ValueError: boom\\nOK: no property violated\\x1b[2J "
            "(handling packet-in(s1, port 1, h1#0))") in lines


@pytest.mark.parametrize("spec", ["os:abort", "builtins:breakpoint", "os:fork"])
def test_topology_module_function_must_be_a_declared_factory(tmp_path: Path, spec: str) -> None:
    # In a child process: before the fix these were called.
    proc = script("verify", "route-flow", "--topology", spec, cwd=tmp_path, timeout=60)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert one_error(proc) == (f"Error: {spec!r} is not a topology factory: give a function declared with "
                               "@nice_attendre.models.topology.topology_factory")


def test_topology_module_factories_must_be_declared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(FACTORIES.parent))
    assert run("verify", "route-flow", "--topology", "topology_factories:diamond").exit_code == 0
    result = run("verify", "route-flow", "--topology", "topology_factories:undeclared")
    assert result.exit_code == 2
    assert one_error(result) == ("Error: 'topology_factories:undeclared' is not a topology factory: give a function "
                                 "declared with @nice_attendre.models.topology.topology_factory")
    sys.modules.pop("topology_factories", None)


def test_topology_file_factories_must_be_defined_in_the_file() -> None:
    assert run("verify", "route-flow", "--topology", f"{FACTORIES}:undeclared").exit_code == 0
    result = run("verify", "route-flow", "--topology", f"{FACTORIES}:path_graph")  # imported there
    assert result.exit_code == 2
    assert one_error(result) == (f"Error: '{FACTORIES}:path_graph' is not a topology factory: give a function "
                                 "defined in that file")


def test_graphml_with_a_doctype_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "laughs.graphml"
    path.write_text('<?xml version="1.0"?>\n<!DOCTYPE graphml [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]>\n'
                    '<graphml xmlns="http://graphml.graphdrawing.org/xmlns"><graph edgedefault="undirected">'
                    '<node id="h1"/><node id="s1"/><node id="h2"/><edge source="h1" target="s1"/>'
                    '<edge source="s1" target="h2"/></graph></graphml>\n')
    result = run("verify", "route-flow", "--topology", str(path))
    assert result.exit_code == 2, result.output  # was parsed (entities expanded by expat)
    assert one_error(result) == (f"Error: topology file {str(path)!r} has a DOCTYPE or entity declaration, "
                                 "which GraphML does not need; remove it")


# ---- issue 8, item 6: errors that are the checker's, not the app's -------------------------------

def test_openflow_b_holds_installs_named_by_a_buffer_id_and_by_a_match() -> None:
    # Sorting the held installs compared a tuple with a string: a raw TypeError traceback.
    result = run("verify", app("HoldsTwo"), "-P", "openflow-b", "-t", "linear:3")
    assert result.exit_code == 0, (result.output, result.exception)
    assert result.stdout.splitlines()[-1] == "OK: no property violated"


def test_an_internal_error_has_its_own_exit_code(monkeypatch: pytest.MonkeyPatch) -> None:
    import nice_attendre.frontend.api

    def broken(*args: object, **kwargs: object) -> None:
        raise TypeError("'<' not supported between instances of 'tuple' and 'str'")

    monkeypatch.setattr(nice_attendre.frontend.api, "search", broken)
    result = run("verify", "route-flow")
    assert result.exit_code == 70, result.output  # was 1, the code of a violation
    assert one_error(result) == ("internal error: TypeError: '<' not supported between instances of 'tuple' and "
                                 "'str' -- this is a bug in nice-attendre, not in your app; run again with --debug "
                                 "for the traceback and please report it")
    debug = run("--debug", "verify", "route-flow")
    assert debug.exit_code == 70
    assert "Traceback (most recent call last)" in debug.stderr
    assert debug.stderr.splitlines()[-1].startswith("internal error: TypeError")


def test_help_lists_the_exit_codes() -> None:
    result = run("verify", "--help")
    text = " ".join(result.stdout.split())
    for part in ("0 complete, no violation", "1 a property violated", "2 bad input", "3 incomplete",
                 "4 the app is not deterministic", "70 internal error", "130 interrupted by Ctrl-C",
                 "143 by SIGTERM", "129 by SIGHUP"):
        assert part in text, part


# ---- the library: verify ------------------------------------------------------------------------------

@pytest.mark.usefixtures("sigint_default")
def test_library_ctrl_c_keeps_the_partial_result_and_reraises() -> None:
    # The README's `assert verify(...).ok` used to pass when interrupted.
    from nice_attendre import verify
    from nice_attendre.errors import Interrupted

    with pytest.raises(Interrupted) as stopped:
        verify(app("Signals"), topology="linear:3", packets=2)
    assert isinstance(stopped.value, KeyboardInterrupt) and stopped.value.signum == signal.SIGINT
    partial = stopped.value.result
    assert (partial.verdict, partial.ok, partial.stop_reason) == ("interrupted", False, "interrupted")
    assert partial.stats.transitions > 0 and partial.system is not None


def test_library_incomplete_is_not_ok() -> None:
    from nice_attendre import verify

    result = verify("route-flow", topology="linear:3", packets=2, max_transitions=100)
    assert (result.verdict, result.ok, result.complete) == ("incomplete", False, False)


def test_library_limits_are_checked() -> None:
    from nice_attendre import InputError, verify

    for bad in ({"max_seconds": float("nan")}, {"max_seconds": float("inf")}, {"max_handler_seconds": 0},
                {"max_memory": -1}, {"max_transitions": -5}):
        with pytest.raises(InputError):
            verify("route-flow", **bad)


def test_library_limit_while_building_gives_an_empty_incomplete_result() -> None:
    from nice_attendre import verify

    result = verify(app("Sleeps"), app_options={"join": True, "seconds": 30}, max_seconds=0.2,
                    max_handler_seconds=60)
    assert (result.verdict, result.stop_reason, result.stats.counts(), result.system) == (
        "incomplete", "max-seconds", (0, 0, 0, 0), None)


def test_library_checkpoint_and_resume(tmp_path: Path) -> None:
    from nice_attendre import verify

    path = tmp_path / "run.ckpt"
    cut = verify("route-flow", topology="linear:3", packets=2, max_transitions=3000, checkpoint=path)
    assert cut.verdict == "incomplete" and path.exists()
    resumed = verify("route-flow", topology="linear:3", packets=2, resume=path)
    assert resumed.ok and resumed.stats.counts() == PINNED_COUNTS
