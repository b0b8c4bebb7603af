"""Issue 34, section 2: the command line's own output failing.

``verify ... > /dev/full`` (ENOSPC on stdout) ended in exit 70, the code of a bug in
nice-attendre, or with Python's "Exception ignored" at exit; a closed pipe during
``--help`` exited 1, the code of a violation. Now a full or failing stdout, stderr or
output file gives one clear line on stderr (if stderr works) and exit 74, a closed pipe
141, and a violation found keeps 1 whatever happens to the output.
"""
from __future__ import annotations

import errno
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nice_attendre.frontend.cli import main
from nice_attendre.frontend.exit_codes import ExitCode

DEV_FULL = Path("/dev/full")
needs_dev_full = pytest.mark.skipif(not DEV_FULL.exists(), reason="needs /dev/full (Linux)")
BUGGY = ["verify", "route-flow", "--topology", "linear:2", "--bug", "forget-last-hop"]
FAILED = "FAILED: no-forgotten-packets, delivery"
FULL = "No space left on device"


def console(*args: str, stdout: Any = subprocess.PIPE, stderr: Any = subprocess.PIPE,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The console script in a child process, its streams where the test says."""
    found = shutil.which("nice-attendre", path=str(Path(sys.executable).parent))
    assert found is not None
    return subprocess.run([found, *args], stdout=stdout, stderr=stderr, text=True, timeout=120, cwd=cwd)


@needs_dev_full
def test_a_full_stdout_is_one_line_and_exit_74(tmp_path: Path) -> None:
    with DEV_FULL.open("w") as full:
        done = console("verify", "route-flow", stdout=full, cwd=tmp_path)
    assert done.returncode == ExitCode.OUTPUT == 74, done.stderr  # was 70, an internal error
    assert done.stderr == f"Error: cannot write to stdout: {FULL}\n"


@needs_dev_full
def test_a_full_stdout_keeps_the_violation_and_its_json(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    with DEV_FULL.open("w") as full:
        done = console(*BUGGY, "--json", str(out), stdout=full, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [f"Error: cannot write to stdout: {FULL}", FAILED]
    assert json.loads(out.read_text())["verdict"] == "violated"  # written although stdout failed


@needs_dev_full
@pytest.mark.parametrize("args", [["--help"], ["verify", "--help"], ["list"],
                                  ["compare", "route-flow", "-t", "linear:2", "--protocols", "openflow"],
                                  ["bench", "route-flow", "--switches", "1", "--packets", "1", "-q"]])
def test_every_command_with_a_full_stdout_exits_74(tmp_path: Path, args: list[str]) -> None:
    with DEV_FULL.open("w") as full:
        done = console(*args, stdout=full, cwd=tmp_path)
    assert done.returncode == 74, done.stderr
    assert done.stderr == f"Error: cannot write to stdout: {FULL}\n"


@needs_dev_full
def test_a_full_stderr_is_exit_74_not_an_internal_error(tmp_path: Path) -> None:
    # --trace-out without a violation says so on stderr: the report on stdout is whole, the
    # warning is lost; the run used to end as an internal error (70).
    with DEV_FULL.open("w") as full:
        done = console("verify", "route-flow", "--trace-out", str(tmp_path / "t.txt"), stderr=full, cwd=tmp_path)
    assert done.returncode == 74
    assert done.stdout.splitlines()[-1] == "OK: no property violated"
    with DEV_FULL.open("w") as full:
        bad = console("verify", "no-such-app", stderr=full, cwd=tmp_path)
    assert bad.returncode == 2  # bad input keeps its code


@needs_dev_full
def test_a_json_file_on_a_full_disk_is_exit_74_and_never_hides_a_violation(tmp_path: Path) -> None:
    done = console("verify", "route-flow", "--json", str(DEV_FULL), cwd=tmp_path)
    assert done.returncode == 74, done.stderr  # was 2, the code of bad input
    assert done.stdout.splitlines()[-1] == "OK: no property violated"
    assert done.stderr == f"Error: cannot write --json '/dev/full': {FULL}\n"
    violated = console(*BUGGY, "--json", str(DEV_FULL), "--trace-out", str(DEV_FULL), cwd=tmp_path)
    assert violated.returncode == 1
    assert violated.stdout.splitlines()[-1] == FAILED
    assert violated.stderr.splitlines() == [f"Error: cannot write --json '/dev/full': {FULL}",
                                            f"Error: cannot write --trace-out '/dev/full': {FULL}"]


def test_help_lists_exit_code_74() -> None:
    from click.testing import CliRunner

    text = " ".join(CliRunner().invoke(main, ["verify", "--help"]).stdout.split())
    assert "74 the report could not be written" in text


def test_a_closed_pipe_during_help_exits_141_not_1(tmp_path: Path) -> None:
    read, write = os.pipe()
    os.close(read)  # the reader went away before anything was written
    with os.fdopen(write, "w") as closed:
        done = console("--help", stdout=closed, cwd=tmp_path)
    assert done.returncode == ExitCode.BROKEN_PIPE == 141, done.stderr  # Click exited 1, a violation's code
    assert done.stderr == ""


# ---- the output boundary, fuzzed --------------------------------------------------------------

class FailingRaw(io.RawIOBase):
    """A file that accepts ``budget`` bytes, then fails every write with ``code``."""

    def __init__(self, budget: int, code: int) -> None:
        self.budget = budget
        self.code = code
        self.data = bytearray()
        self.failed = False

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        data = bytes(data)
        if len(data) > self.budget:
            self.data += data[:self.budget]
            self.budget = 0
            self.failed = True
            raise OSError(self.code, os.strerror(self.code))  # EPIPE gives a BrokenPipeError
        self.data += data
        self.budget -= len(data)
        return len(data)

    def disarm(self) -> None:
        self.budget = math.inf  # type: ignore[assignment]


def stream(raw: FailingRaw) -> IO[str]:
    return io.TextIOWrapper(raw, encoding="utf-8", write_through=True)  # type: ignore[arg-type]


COMMANDS = {
    "ok": ["verify", "route-flow"],
    "violated": BUGGY,
    "violated-json": [*BUGGY, "--json", "{tmp}/r.json", "--trace-out", "{tmp}/t.txt"],
    "incomplete": ["verify", "route-flow", "--max-transitions", "3"],
    "bad-input": ["verify", "no-such-app"],
    "usage": ["verify", "--packets", "many", "route-flow"],
    "trace-warning": ["verify", "route-flow", "--trace-out", "{tmp}/t.txt"],
    "help": ["--help"],
    "verify-help": ["verify", "--help"],
    "list": ["list"],
    "compare": ["compare", "route-flow", "-t", "linear:2", "--protocols", "openflow,attendre"],
    "compare-violated": ["compare", "route-flow", "-t", "linear:2", "--bug", "forget-last-hop",
                         "--protocols", "openflow"],
}
DOCUMENTED = {0, 1, 2, 3, 4, 74, 141}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(command=st.sampled_from(sorted(COMMANDS)), which=st.sampled_from(["stdout", "stderr", "both"]),
       code=st.sampled_from([errno.EPIPE, errno.ENOSPC, errno.EIO]), budget=st.integers(0, 3000))
def test_failing_output_streams_end_with_a_documented_code(command: str, which: str, code: int,
                                                          budget: int) -> None:
    """Whatever fails, whenever: a documented exit code (never 70, the code of a bug of
    ours), no traceback, and a violation found is always exit 1."""
    out = FailingRaw(budget if which != "stderr" else 10**9, code)
    err = FailingRaw(budget if which != "stdout" else 10**9, code)
    saved = sys.stdout, sys.stderr
    with tempfile.TemporaryDirectory() as tmp:
        args = [arg.format(tmp=tmp) for arg in COMMANDS[command]]
        sys.stdout, sys.stderr = stream(out), stream(err)
        try:
            main.main(args, prog_name="nice-attendre")
        except SystemExit as stop:
            status = 0 if stop.code is None else stop.code
        else:  # pragma: no cover - standalone mode always exits
            pytest.fail("main returned")
        finally:
            fake_out, fake_err = sys.stdout, sys.stderr
            sys.stdout, sys.stderr = saved
            for raw, text in ((out, fake_out), (err, fake_err)):
                raw.disarm()
                text.close()
    said = err.data.decode("utf-8", "replace")
    assert status in DOCUMENTED, (status, said)
    assert "Traceback" not in said and "internal error" not in said, said
    if command.startswith(("violated", "compare-violated")):
        assert status == 1, said
    if which == "stdout" and out.failed and command in ("ok", "list", "help"):
        assert status == (141 if code == errno.EPIPE else 74), said
        if code != errno.EPIPE:
            assert said == f"Error: cannot write to stdout: {os.strerror(code)}\n"
