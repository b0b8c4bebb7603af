"""--workers and --engine ray when a worker is lost or the command itself is killed, as a
user's run meets it: a worker killed (SIGKILL) or stopped (SIGSTOP) mid-run ends the run
incomplete (exit 3) with the report and the JSON of what was explored, and no process is
left behind; workers die with the command when it is killed.

Each run is a real command in a subprocess, whose app writes a file named after its process
id when a handler starts and then sleeps for a minute, so the test knows which process is
busy and when. Timeouts here only detect a hang; no test asserts how fast anything is.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

from nice_attendre.parallel import process_state

#: An app whose packet-in handler says which process runs it (a file named after its pid in
#: the ``marker`` folder), then sleeps ``seconds`` (the runs below: longer than any wait).
BUSY_APP = '''
import os, time
from pathlib import Path
from nice_attendre.models.app import App, Hop
from nice_attendre.models.packet import Match, Output


class Busy(App):
    def __init__(self, marker: str = "", seconds: float = 60.0) -> None:
        self.marker, self.seconds = marker, seconds

    def on_packet_in(self, state, ev, out):
        Path(self.marker, str(os.getpid())).write_text("busy")
        time.sleep(self.seconds)
        hdr = ev.packet.hdr
        path = out.topology.path(ev.dpid, hdr.eth_dst)
        out.install_path([Hop(d, Match.exact(hdr), (Output(p),)) for d, p in path], packet_in=ev)
        return state
'''

#: Seconds a test waits for something before it fails (a hang detector, never a speed bound).
PATIENCE = 120.0


def _default_sigint() -> None:
    """In the child: Ctrl-C as a user's shell leaves it (pytest may run in the background,
    where SIGINT is ignored and a child would inherit that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(tmp_path: Path, *options: str, before: str = "") -> tuple[subprocess.Popen, Path]:
    """``nice-attendre verify`` of the busy app on linear:2 in a subprocess (``before``: Python
    run first in it); returns the process and the marker folder."""
    app = tmp_path / "busy.py"
    app.write_text(BUSY_APP)
    marker = tmp_path / "marker"
    marker.mkdir()
    code = f"{before}\nfrom nice_attendre.frontend.cli import main\nmain()"
    command = [sys.executable, "-c", code, "verify", f"{app}:Busy", "-o", f"marker={marker}", "-o",
               f"seconds={3 * PATIENCE}", "--topology", "linear:2", "--max-handler-seconds", f"{6 * PATIENCE}",
               *options]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=_default_sigint, start_new_session=True)
    return process, marker


def wait_for(what: str, found: Callable[[], object], process: subprocess.Popen | None = None) -> object:
    """Poll until ``found()`` is true (fails after :data:`PATIENCE` seconds, or if ``process``
    ends first)."""
    deadline = time.monotonic() + PATIENCE
    while True:
        value = found()
        if value:
            return value
        if process is not None and process.poll() is not None:
            stop_all(process)
            pytest.fail(f"the command ended before {what}: {process.communicate()}")
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {PATIENCE:.0f} s")
        time.sleep(0.05)


def busy_process(marker: Path, process: subprocess.Popen) -> int:
    """The id of the first process found running the app's handler."""
    return int(wait_for("handler call", lambda: sorted(marker.iterdir()), process)[0].name)  # type: ignore[index]


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_bytes()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2:].split()
            if len(fields) > 1 and int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (a zombie has ended)."""
    return process_state(pid) not in (None, "Z", "X")


def stop_all(process: subprocess.Popen) -> None:
    """Kill the command and every process of its session (its workers, a stopped one too)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass
    process.kill()
    process.wait()


def finish(process: subprocess.Popen) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=PATIENCE)
    except subprocess.TimeoutExpired:
        stop_all(process)
        pytest.fail(f"the command did not end within {PATIENCE:.0f} s")
    return process.returncode, out, err


pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc")


def check_lost(tmp_path: Path, engine: list[str], signum: int, what: str) -> None:
    """Send ``signum`` to the process running a handler; the run must end incomplete (exit
    3) naming that worker, its pid and ``what`` happened, with the report and the JSON, and
    leave no process of its own behind."""
    out_json = tmp_path / "r.json"
    process, marker = start(tmp_path, "--workers", "2", *engine, "--json", str(out_json))
    try:
        pid = busy_process(marker, process)
        before = children(process.pid)
        os.kill(pid, signum)
        code, out, err = finish(process)
    finally:
        stop_all(process)
    assert code == 3, (out, err)
    assert "Traceback" not in err
    lines = out.splitlines()
    detail = f"(process {pid}) {what}"
    search = next(line for line in lines if line.startswith("  search ") and "INCOMPLETE" in line)
    assert "a worker was lost" in search and detail in search, search
    assert lines[-1].startswith("INCOMPLETE: no violation in the part explored") and detail in lines[-1]
    data = json.loads(out_json.read_text())
    assert (data["complete"], data["verdict"], data["stop_reason"]) == (False, "incomplete", "worker-lost")
    assert detail in data["stop_detail"]
    # the levels before the handler's: the initial state and the packet's first hops
    assert data["transitions"] > 0 and data["unique_states"] > 0
    assert not running(pid)
    assert not [child for child in before if running(child)], "a worker of the run is still running"


@pytest.mark.parametrize("signum,what", [(signal.SIGKILL, "was killed by SIGKILL"),
                                         (signal.SIGSTOP, "was stopped (SIGSTOP or SIGTSTP) and does not answer")],
                         ids=["SIGKILL", "SIGSTOP"])
def test_a_lost_worker_process_ends_the_run_incomplete_with_the_report_and_json(
        tmp_path: Path, signum: int, what: str) -> None:
    check_lost(tmp_path, [], signum, what)


def test_a_killed_ray_actor_ends_the_run_incomplete_not_as_bad_input(tmp_path: Path) -> None:
    """(It was exit 2, 'a shard actor died', and no JSON.)"""
    check_lost(tmp_path, ["--engine", "ray"], signal.SIGKILL, "died")


@pytest.mark.slow
def test_a_stopped_ray_actor_ends_the_run_incomplete(tmp_path: Path) -> None:
    check_lost(tmp_path, ["--engine", "ray"], signal.SIGSTOP, "was stopped (SIGSTOP or SIGTSTP) and does not answer")


@pytest.mark.parametrize("before", ["", "import nice_attendre.parallel as p; p.PARENT_DEATH_SIGNAL = False"],
                         ids=["parent-death-signal", "watched-pipe"])
def test_workers_die_with_the_command_when_it_is_killed(tmp_path: Path, before: str) -> None:
    """SIGKILL to the command while a worker is in a handler call of minutes: its workers
    end too (they used to run until the end of their level; here, the end of the call). With
    the parent-death signal (Linux), and with the pipe the workers watch where it is missing."""
    process, marker = start(tmp_path, "--workers", "2", before=before)
    busy_process(marker, process)
    workers = children(process.pid)
    assert len(workers) == 2, workers
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=PATIENCE)
    try:
        wait_for("end of the workers", lambda: not [pid for pid in workers if running(pid)])
    finally:
        stop_all(process)  # (a worker left running fails the test, and is killed)


@pytest.mark.parametrize("semantics, code", [(["--command-order", "any"], 1), (["--threaded-controller", "any"], 1),
                                             (["--threaded-controller", "per-switch"], 0)],
                         ids=["any-order", "threaded-any", "threaded-per-switch"])
def test_workers_keep_going_under_unordered_channels_report_what_the_sequential_search_does(
        tmp_path: Path, semantics: list[str], code: int) -> None:
    """--workers N --keep-going with --command-order any or --threaded-controller exited 2
    ('the model is not deterministic'), without report or JSON, where the sequential search
    reports the violations (and three workers counted states twice)."""
    from click.testing import CliRunner

    from nice_attendre.frontend.cli import main

    def run(*workers: str) -> tuple[int, dict]:
        out = tmp_path / f"r{len(workers)}{workers[-1] if workers else ''}.json"
        result = CliRunner().invoke(main, ["verify", "mac-learning", "--topology", "linear:2", "--packets", "1",
                                           "--keep-going", *semantics, *workers, "--json", str(out)])
        assert result.exit_code == code, result.output
        return result.exit_code, json.loads(out.read_text())

    def outcome(data: dict) -> tuple:
        return (data["transitions"], data["unique_states"], data["revisits"], data["verdict"],
                [(group["property"], group["count"]) for group in data["violations_by_property"]],
                sorted((v["property"], v["reason"]) for v in data["violations"]))

    _code, sequential = run()
    for workers in ("2", "3"):
        _code, parallel = run("--workers", workers)
        assert outcome(parallel) == outcome(sequential)
        assert all(v["trace"] for v in parallel["violations"])


#: An app whose state is made of subclasses of builtins whose ``__new__`` takes other
#: arguments (plain pickling rebuilds them with the base value only), in a NamedTuple.
SUBCLASS_APP = '''
from typing import NamedTuple
from nice_attendre.models.app import App, Hop
from nice_attendre.models.packet import Match, Output


class Count(int):
    def __new__(cls, n, label):
        self = super().__new__(cls, n)
        self.label = label
        return self


class Path(tuple):
    def __new__(cls, *dpids):
        return super().__new__(cls, dpids)


class Seen(NamedTuple):
    count: Count
    path: Path


class Subclasses(App):
    def initial_state(self):
        return Seen(Count(0, "packet-ins"), Path())

    def on_packet_in(self, state, ev, out):
        hdr = ev.packet.hdr
        path = out.topology.path(ev.dpid, hdr.eth_dst)
        out.install_path([Hop(d, Match.exact(hdr), (Output(p),)) for d, p in path], packet_in=ev)
        return Seen(Count(state.count + 1, state.count.label), Path(*state.path, ev.dpid))
'''


@pytest.mark.slow  # about 9 s: worker processes, then a Ray instance
def test_app_states_of_builtin_subclasses_cross_to_workers_and_ray_actors(tmp_path: Path) -> None:
    """(--workers 2 ended in exit 70: 'Count.__new__() missing 1 required positional
    argument'.) The same counts and verdict in one process, two worker processes and two
    Ray actors."""
    app = tmp_path / "subclasses.py"
    app.write_text(SUBCLASS_APP)
    outcomes = []
    for engine in ([], ["--workers", "2"], ["--workers", "2", "--engine", "ray"]):
        process = subprocess.run([sys.executable, "-c", "from nice_attendre.frontend.cli import main; main()",
                                  "verify", f"{app}:Subclasses", "--topology", "linear:2", "--packets", "2", *engine],
                                 capture_output=True, text=True, timeout=PATIENCE, preexec_fn=_default_sigint)
        counts = [line.split()[-1] for line in process.stdout.splitlines()
                  if line.startswith(("  transitions", "  unique states", "  revisits"))]
        # (the partitioned search says it leaves the default termination out: same verdict otherwise)
        verdict = [line.removesuffix(" (not checked: termination)") for line in process.stdout.splitlines()[-1:]]
        outcomes.append((process.returncode, counts, verdict))
        assert "Traceback" not in process.stderr and "internal error" not in process.stderr, process.stderr
    assert outcomes[0][0] == 0 and len(outcomes[0][1]) == 3
    assert outcomes[1] == outcomes[0] and outcomes[2] == outcomes[0]
