"""--simulate --workers N when a walk worker is lost or the command is killed, as a user's run
meets it (the partitioned search's cases of tests/cli/test_workers_faults_cli.py, whose busy
app and helpers these use): a worker killed (SIGKILL) or stopped (SIGSTOP) mid-walk ends the
run incomplete (exit 3) with its report and JSON and no process left behind; workers die
with the command. Timeouts only detect a hang."""
from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from test_workers_faults_cli import PATIENCE, busy_process, children, finish, running, start, stop_all, wait_for

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc")


@pytest.mark.parametrize("signum,what", [(signal.SIGKILL, "was killed by SIGKILL"),
                                         (signal.SIGSTOP, "was stopped (SIGSTOP or SIGTSTP) and does not answer")],
                         ids=["SIGKILL", "SIGSTOP"])
def test_a_lost_walk_worker_ends_the_run_incomplete_with_the_report_and_json(tmp_path: Path, signum: int,
                                                                             what: str) -> None:
    out_json = tmp_path / "r.json"
    process, marker = start(tmp_path, "--simulate", "--seed", "1", "--workers", "2", "--json", str(out_json))
    try:
        pid = busy_process(marker, process)
        before = children(process.pid)
        os.kill(pid, signum)
        code, out, err = finish(process)
    finally:
        stop_all(process)
    assert code == 3, (out, err)
    assert "Traceback" not in err
    detail = f"(process {pid}) {what}"
    last = out.splitlines()[-1]
    assert last.startswith("INCOMPLETE: no violation in ") and "a worker was lost" in last and detail in last, last
    data = json.loads(out_json.read_text())
    assert (data["complete"], data["verdict"], data["stop_reason"]) == (False, "incomplete", "worker-lost")
    assert detail in data["stop_detail"] and "simulation" in data
    assert not running(pid)
    assert not [child for child in before if running(child)], "a worker of the run is still running"


@pytest.mark.parametrize("before", ["", "import nice_attendre.parallel as p; p.PARENT_DEATH_SIGNAL = False"],
                         ids=["parent-death-signal", "watched-pipe"])
def test_walk_workers_die_with_the_command_when_it_is_killed(tmp_path: Path, before: str) -> None:
    process, marker = start(tmp_path, "--simulate", "--seed", "1", "--workers", "2", before=before)
    busy_process(marker, process)
    workers = children(process.pid)
    assert len(workers) == 2, workers
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=PATIENCE)
    try:
        wait_for("end of the workers", lambda: not [pid for pid in workers if running(pid)])
    finally:
        stop_all(process)
