"""Issue 34 (sections 0 and 3): apps that fight the checker, as the command line meets them.

States whose ``__hash__``, ``__eq__`` or ``__repr__`` call ``sys.exit``; handlers and
properties raising what is not an Exception; handlers that swallow the watchdog's stops or
never return; deterministic handlers whose calls take about ``--max-handler-seconds``. The
apps are in ``tests/data/apps/hostile.py``. Runs that exit or fight signals run the console
script in a child process (SIGINT restored to its default there, so the tests also pass when
pytest runs in the background); a hang shows up as the subprocess timeout, a generous bound
that detects failure and never asserts speed.
"""
from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from children import within_seconds
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "tests" / "data" / "apps" / "hostile.py"
PROPERTIES = ROOT / "tests" / "data" / "properties" / "hostile_properties.py"
#: a bound on a run that should end within seconds: only a hang reaches it
HANG = 90


def app(name: str) -> str:
    return f"{HOSTILE}:{name}"


def _default_signals() -> None:
    """In the child: Ctrl-C's default disposition, even when pytest runs in the background."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def script(*args: str, cwd: Path, timeout: float = HANG) -> subprocess.CompletedProcess[str]:
    """The console script in a child process."""
    found = shutil.which("nice-attendre", path=str(Path(sys.executable).parent))
    assert found is not None
    return subprocess.run([found, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          preexec_fn=_default_signals)


def no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr


def violation(proc: subprocess.CompletedProcess[str], number: int = 1) -> list[str]:
    """The lines of violation ``number`` of a text report (its heading first)."""
    lines = proc.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"VIOLATION {number}: "))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("  ")), len(lines))
    return lines[start:end]


# ---- 1. sys.exit in the app state's __hash__, __eq__, __repr__ ---------------------------------------

@pytest.mark.parametrize("dunder", ["hash", "eq", "repr"])
@pytest.mark.parametrize("code", ["0", "3"])
def test_sys_exit_in_a_state_dunder_is_an_app_exception(tmp_path: Path, dunder: str, code: str) -> None:
    # Was: exit 0 (or the code given to sys.exit) with no output and no JSON.
    out = tmp_path / "report.json"
    # __eq__ runs when a state equal to a stored one comes again: two packets make that happen
    proc = script("verify", app("DunderExits"), "-t", "linear:2", "-n", "2", "-o", f"dunder={dunder}",
                  "-o", f"code={code}", "--json", str(out), cwd=tmp_path)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    no_traceback(proc)
    heading, reason, *_ = violation(proc)
    assert heading == "VIOLATION 1: app-exception (always)"
    assert reason == (f"  DunderExits.on_packet_in returned a state whose __{dunder}__ called sys.exit({code}) "
                      "(handling packet-in(s1, port 1, h1#0))")
    assert proc.stdout.splitlines()[-1] == "FAILED: app-exception"
    data = json.loads(out.read_text())
    (found,) = data["violations"]
    assert found["property"] == "app-exception"
    assert found["reason"] == reason.strip()
    assert found["trace"], "the violation comes with its trace"


@pytest.mark.parametrize("dunder", ["hash", "repr"])
def test_sys_exit_in_the_initial_state_dunder_is_an_app_exception(tmp_path: Path, dunder: str) -> None:
    proc = script("verify", app("DunderExits"), "-t", "linear:2", "-o", f"dunder={dunder}", "-o", "after=0",
                  cwd=tmp_path)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    no_traceback(proc)
    assert violation(proc)[1] == (f"  DunderExits.initial_state returned a state whose __{dunder}__ called "
                                  "sys.exit(0)")


def test_a_repr_that_exits_while_a_trace_is_narrated_is_said_not_obeyed(tmp_path: Path) -> None:
    # The state's __repr__ worked when the state was made and exits when the trace is told.
    out = tmp_path / "report.json"
    proc = script("verify", app("DunderExits"), "-t", "linear:2", "-o", "dunder=repr-later", "-o", "bug=true",
                  "--json", str(out), cwd=tmp_path)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    no_traceback(proc)
    assert proc.stdout.splitlines()[-1].startswith("FAILED: ")
    assert "app state: (not described: the state's own code called sys.exit(0))" in proc.stdout
    assert json.loads(out.read_text())["violations"]


@pytest.mark.parametrize("search", [["--fingerprint"], ["--fingerprint", "--shortest"], ["--workers", "2"]])
def test_sys_exit_in_a_repr_while_an_error_is_told_is_not_obeyed(tmp_path: Path, search: list[str]) -> None:
    # The state cannot be fingerprinted; telling so called its __repr__ a second time, which
    # exited 0 (the run looked fine and said nothing).
    proc = script("verify", app("DunderExits"), "-t", "linear:2", "-o", "dunder=repr-later", "-o", "after=0",
                  *search, cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    no_traceback(proc)
    assert proc.stderr.splitlines()[-1] == (
        "Error: cannot fingerprint a value of type Counter (<its __repr__ raised SystemExit>): state values must "
        "be None, bool, int, float, str, bytes, tuples, frozensets, enums or dataclasses")


# ---- 4. BaseException subclasses and GeneratorExit ---------------------------------------------------

@pytest.mark.parametrize("kind, raised", [
    ("boom", "raised Boom: the app's own"),
    ("generator-exit", "raised GeneratorExit: closed"),
    # no Ctrl-C was pressed: the watchdog turns a real one into its own stop, so a
    # KeyboardInterrupt out of a handler is the app's
    ("keyboard-interrupt", "raised KeyboardInterrupt: "),
])
def test_a_handler_raising_a_base_exception_is_an_app_exception(tmp_path: Path, kind: str, raised: str) -> None:
    # Was: a Python traceback (exit 70, or 130 for KeyboardInterrupt).
    proc = script("verify", app("RaisesBase"), "-t", "linear:2", "-o", f"kind={kind}", cwd=tmp_path)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    no_traceback(proc)
    assert violation(proc)[1] == f"  RaisesBase.on_packet_in {raised} (handling packet-in(s1, port 1, h1#0))"


@pytest.mark.parametrize("name, raised", [
    ("RAISES_BOOM", "raised Boom: from a property"),
    ("RAISES_GENERATOR_EXIT", "raised GeneratorExit: "),
])
def test_a_property_raising_a_base_exception_is_its_violation(tmp_path: Path, name: str, raised: str) -> None:
    proc = script("verify", "route-flow", "-t", "linear:2", "--property", f"{PROPERTIES}:{name}", cwd=tmp_path)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    no_traceback(proc)
    heading, reason, *_ = violation(proc)
    assert heading.startswith("VIOLATION 1: ")
    prop = heading.split()[2]
    assert reason == f"  the property {prop!r} {raised}"


# ---- 2. a limit swallowed by a bare except ------------------------------------------------------------

def test_a_handler_that_swallows_the_time_limit_and_returns_still_timed_out(tmp_path: Path) -> None:
    # Was: OK, exit 0 (the call returned after catching CallTimeout, as if on time).
    proc = script("verify", app("Swallows"), "-t", "linear:2", "--max-handler-seconds", "0.5", cwd=tmp_path)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    no_traceback(proc)
    assert violation(proc)[1] == ("  Swallows.on_packet_in did not return within 0.5 s (stuck in a loop or "
                                  "waiting?) (handling packet-in(s1, port 1, h1#0))")


def test_a_handler_that_swallows_the_stop_and_returns_still_stops_the_search(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    proc, _ = within_seconds("verify", app("Swallows"), "-t", "linear:2", "--max-handler-seconds", "60",
                             "--json", str(out), cwd=tmp_path, seconds=1)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    no_traceback(proc)
    assert "  search           INCOMPLETE  (stopped by --max-seconds)" in proc.stdout.splitlines()
    assert json.loads(out.read_text())["stop_reason"] == "max-seconds"


# ---- 3. limits hold against a handler that fights them -------------------------------------------------

STOPPED_HARD = "STOPPED HARD: "


def test_a_handler_that_catches_its_time_limit_in_a_loop_is_still_an_app_exception(tmp_path: Path) -> None:
    # `while True: try: sleep except BaseException: pass`. Was: ran until killed from outside.
    # The second raise comes at the handler's next line (in its except block) and gets out.
    out = tmp_path / "report.json"
    proc = script("verify", app("Fights"), "-t", "linear:2", "-o", "how=catch", "--max-handler-seconds", "1",
                  "--max-seconds", "30", "--json", str(out), cwd=tmp_path)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    no_traceback(proc)
    assert violation(proc)[1] == ("  Fights.on_packet_in did not return within 1 s (stuck in a loop or waiting?) "
                                  "(handling packet-in(s1, port 1, h1#0))")
    assert json.loads(out.read_text())["violations"][0]["trace"]


@pytest.mark.parametrize("how", ["nested", "ignore-alarm", "cancel-timer"])
def test_a_handler_that_will_not_stop_is_stopped_hard_after_its_time_limit(tmp_path: Path, how: str) -> None:
    # Two nested bare excepts, SIGALRM ignored, or the timer cancelled: nothing raised in the
    # call gets out. Was: ran until killed from outside. Now the process stops itself, with
    # the report of what it explored.
    out = tmp_path / "report.json"
    proc = script("verify", app("Fights"), "-t", "linear:2", "-o", f"how={how}", "--max-handler-seconds", "1",
                  "--max-seconds", "300", "--json", str(out), cwd=tmp_path)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    no_traceback(proc)
    why = ("user code (an app handler or a property) ran past the handler time limit (1 s) and did not stop "
           "within 2 s of being told to (it catches the exception that stops it, or ignores the alarm); the run "
           "was stopped hard")
    assert proc.stderr.splitlines() == [STOPPED_HARD + why]
    lines = proc.stdout.splitlines()
    assert f"  stopped hard   {why}" in lines
    assert "  search           INCOMPLETE  (max-handler-seconds)" in lines
    assert lines[-1].startswith("INCOMPLETE: ")
    data = json.loads(out.read_text())
    assert (data["verdict"], data["stop_reason"], data["complete"], data["stopped_hard"]) == (
        "incomplete", "max-handler-seconds", False, why)
    assert data["transitions"] == 2  # h1 sends, s1 sends the packet-in: the stuck call is not counted


@pytest.mark.parametrize("how, why", [
    ("nested", "the search was asked to stop (max-seconds) inside user code"),
    ("ignore-alarm", "the time limit ({seconds:g} s) passed inside user code"),  # the alarm never came
    ("cancel-timer", "the time limit ({seconds:g} s) passed inside user code"),
])
def test_max_seconds_holds_against_a_handler_that_will_not_stop(tmp_path: Path, how: str, why: str) -> None:
    out = tmp_path / "report.json"
    proc, seconds = within_seconds("verify", app("Fights"), "-t", "linear:2", "-o", f"how={how}",
                                   "--max-handler-seconds", "300", "--json", str(out), cwd=tmp_path, seconds=1)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    no_traceback(proc)
    (line,) = proc.stderr.splitlines()
    assert line.startswith(STOPPED_HARD + why.format(seconds=seconds)), line
    assert "  search           INCOMPLETE  (stopped by --max-seconds)" in proc.stdout.splitlines()
    data = json.loads(out.read_text())
    assert (data["verdict"], data["stop_reason"]) == ("incomplete", "max-seconds")


def test_max_seconds_stops_a_handler_that_swallows_the_first_stop(tmp_path: Path) -> None:
    # One bare except in a loop: the stop raised again at its next line gets out; no hard stop.
    proc, _ = within_seconds("verify", app("Fights"), "-t", "linear:2", "-o", "how=catch",
                             "--max-handler-seconds", "300", cwd=tmp_path, seconds=1)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert STOPPED_HARD not in proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("INCOMPLETE: ")


def test_ctrl_c_holds_against_a_handler_that_will_not_stop(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    found = shutil.which("nice-attendre", path=str(Path(sys.executable).parent))
    assert found is not None
    child = subprocess.Popen([found, "verify", app("Fights"), "-t", "linear:2", "-o", "how=nested", "-o",
                              f"ready={ready}", "--max-handler-seconds", "300"], cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=_default_signals)
    try:
        deadline = time.monotonic() + HANG
        while not ready.exists():  # the handler has begun
            assert child.poll() is None and time.monotonic() < deadline, child.communicate()
            time.sleep(0.02)
        child.send_signal(signal.SIGINT)
        stdout, stderr = child.communicate(timeout=HANG)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 130, (stdout, stderr)
    assert stderr.splitlines()[-1].startswith(STOPPED_HARD + "the search was asked to stop (interrupted)")
    assert stdout.splitlines()[-1].startswith("INTERRUPTED: ")


def test_workers_hold_the_limit_against_a_handler_that_will_not_stop(tmp_path: Path) -> None:
    # The handler runs in a worker process, whose own watchdog stops it hard; the run ends
    # (the coordinator reports the lost worker: its exit code is the partitioned search's).
    proc, _ = within_seconds("verify", app("Fights"), "-t", "linear:2", "-o", "how=ignore-alarm", "--workers", "2",
                             cwd=tmp_path, seconds=1)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    no_traceback(proc)
    assert "the run was stopped hard" in proc.stderr


# ---- 5. a time limit is not nondeterminism ---------------------------------------------------------

def test_a_call_that_hit_the_limit_only_in_the_search_is_the_time_limit_violation(tmp_path: Path) -> None:
    # The first packet-in of the process sleeps past --max-handler-seconds (a busy machine); the
    # replay that narrates the trace is fast. Was: exit 4, "the app is not deterministic".
    out = tmp_path / "report.json"
    proc = script("verify", app("SlowCalls"), "-t", "linear:2", "-o", "slow=1", "-o", "seconds=30",
                  "--max-handler-seconds", "0.5", "--json", str(out), cwd=tmp_path)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    no_traceback(proc)
    limit = ("SlowCalls.on_packet_in did not return within 0.5 s (stuck in a loop or waiting?) (handling "
             "packet-in(s1, port 1, h1#0))")
    lines = violation(proc)
    assert lines[:2] == ["VIOLATION 1: app-exception (always)", f"  {limit}"]
    assert lines[-2:] == [f"  3. ALERT app-exception: {limit}",
                          "     (when the trace was replayed, this call returned within the time limit: it takes "
                          "about --max-handler-seconds, and the machine's speed varies; the search's call did not)"]
    data = json.loads(out.read_text())
    assert data["violations"][0]["trace"][-1]["effects"][0] == f"ALERT app-exception: {limit}"


def test_a_call_that_hit_the_limit_only_in_the_replay_keeps_the_violation(tmp_path: Path) -> None:
    # Search fast, then the replay's first call slow. Was: exit 4, "the app is not deterministic".
    counts = tmp_path / "calls.txt"  # a run with no slow call: how many calls the search makes
    quick = script("verify", app("SlowCalls"), "-t", "linear:2", "-o", "slow=0", "-o", "bug=true",
                   "-o", f"counts={counts}", cwd=tmp_path)
    assert quick.returncode == 1, (quick.stdout, quick.stderr)
    # the report replays each step once (the two violations share their trace), after the search
    told = {line for line in quick.stdout.splitlines() if ". controller: SlowCalls.on_packet_in handles" in line}
    searched = len(counts.read_text().splitlines()) - len(told)
    assert searched > 0 and told
    out = tmp_path / "report.json"
    proc = script("verify", app("SlowCalls"), "-t", "linear:2", "-o", f"slow={searched + 1}", "-o", "seconds=30",
                  "-o", "bug=true", "--max-handler-seconds", "0.5", "--json", str(out), cwd=tmp_path)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    no_traceback(proc)
    assert proc.stdout.splitlines()[-1] == quick.stdout.splitlines()[-1] == "FAILED: no-forgotten-packets, delivery"
    note = ("  3. (not told: when the trace was replayed, SlowCalls.on_packet_in did not return within 0.5 s "
            "(stuck in a loop or waiting?), though the search's call returned in time: it takes about "
            "--max-handler-seconds, and the machine's speed varies; the trace goes on as the search found it)")
    assert note in violation(proc)
    assert [v["property"] for v in json.loads(out.read_text())["violations"]] == ["no-forgotten-packets", "delivery"]


# ---- 6. replaying runs the handlers, also an adapted Ryu app's remembered ones ----------------------------

RYU_COUNTING = '''
from ryu.controller import ofp_event
from ryu.controller.handler import MAIN_DISPATCHER, set_ev_cls
from learning_switch_10 import ForgetfulLearningSwitch10

CALLS = [0]


class Counting(ForgetfulLearningSwitch10):
    """Keeps how many packet-ins this process handled: not a function of its arguments."""

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def handle_packet_in(self, ev):
        CALLS[0] += 1
        self.calls = CALLS[0]
        super().handle_packet_in(ev)
'''


def test_a_nondeterministic_ryu_app_is_seen_when_its_trace_is_replayed(tmp_path: Path) -> None:
    # The adapter remembers each handler call's outcome per (message, state): replaying a trace
    # (the report's narration, Trace.replay) repeated what the search recorded, so an app
    # reading a global was shown with a trace it does not follow. (The adapter now also runs
    # the handlers twice, so the search itself finds the app nondeterministic at its first call.)
    pytest.importorskip("os_ken")
    from nice_attendre import verify
    from nice_attendre.importing import import_target

    (tmp_path / "counting.py").write_text(f"import sys\nsys.path.insert(0, {str(ROOT / 'examples' / 'ryu')!r})\n"
                                          + RYU_COUNTING)
    spec = f"{tmp_path / 'counting.py'}:Counting"
    proc = script("verify", spec, "-t", "linear:3", "-n", "2", cwd=tmp_path)
    assert proc.returncode == 4, (proc.stdout, proc.stderr)
    no_traceback(proc)
    assert violation(proc)[0] == "VIOLATION 1: app-nondeterminism (always)"
    assert violation(proc)[1].startswith("  Counting.handle_packet_in returned two states for the same input: ")
    result = verify(spec, topology="linear:3", packets=2)
    assert result.discoveries[0].property == "app-nondeterminism"
    module = import_target(str(tmp_path / "counting.py"), "app", Exception)
    calls = module.CALLS[0]
    result.discoveries[0].trace.replay(result.system)  # the handlers run again: not the adapter's memo
    assert module.CALLS[0] == calls + 2


# ---- fuzz: whatever the app raises, wherever ----------------------------------------------------------

WHERE = ["initial_state", "on_switch_join", "on_packet_in", "hash", "eq", "repr"]
WHAT = ["exit:0", "exit:3", "exit:bye", "generator-exit", "boom", "keyboard-interrupt", "value-error", "recursion",
        "stop-iteration", "type-error"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.sampled_from(WHERE), what=st.sampled_from(WHAT), packets=st.integers(1, 2),
       extra=st.sampled_from([[], ["--fingerprint"], ["--shortest"], ["--keep-going"]]))
def test_whatever_the_app_raises_the_run_says_so(where: str, what: str, packets: int, extra: list[str]) -> None:
    from click.testing import CliRunner

    from nice_attendre.frontend.cli import main

    result = CliRunner().invoke(main, ["verify", app("RaisesAnything"), "-t", "linear:2", "-n", str(packets),
                                       "-o", f"where={where}", "-o", f"what={what}", *extra])
    assert result.exit_code in (1, 2), (result.output, result.exception)
    assert "Traceback" not in result.output
    if result.exit_code == 1:
        assert any(line.startswith("VIOLATION 1: app-exception (always)") for line in result.stdout.splitlines())
    else:  # a state that cannot be fingerprinted (its class is not a dataclass): one line
        assert "--fingerprint" in extra and result.stderr.startswith("Error: cannot fingerprint"), result.output
