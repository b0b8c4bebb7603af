"""Progress when stderr is not a terminal: plain lines every few seconds (CI logs)."""
from __future__ import annotations

import io
import time as real_time

from click.testing import CliRunner

from nice_attendre import checker
from nice_attendre.checker import Progress
from nice_attendre.frontend.cli import _progress, main
from nice_attendre.frontend.progress import PLAIN_PROGRESS_SECONDS, PlainProgress
from nice_attendre.frontend.report import ProgressLine


def _snapshot(elapsed: float, transitions: int = 1000) -> Progress:
    return Progress(transitions, transitions // 2, 3, 5, elapsed)


def test_a_line_per_interval_with_counts_rate_and_elapsed() -> None:
    out = io.StringIO()
    plain = PlainProgress(out, interval=10.0)
    for elapsed in (0.5, 9.9, 10.0, 10.5, 19.0, 25.0, 29.9, 31.0):
        plain(_snapshot(elapsed, transitions=int(elapsed * 1000)))
    lines = out.getvalue().splitlines()
    assert len(lines) == 3 and plain.lines == 3  # at 10.0, 25.0 and 31.0
    assert lines[0] == "progress: 10,000 transitions, 5,000 unique states, 1,000 transitions/s, 10 s elapsed"
    assert "\r" not in out.getvalue()
    plain.clear()
    assert out.getvalue().count("\n") == 3


def test_the_cli_chooses_by_terminal(monkeypatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert isinstance(_progress(), PlainProgress)
    monkeypatch.setattr("sys.stderr", Tty())
    assert isinstance(_progress(), ProgressLine)
    assert PLAIN_PROGRESS_SECONDS >= 1


class _FakeTime:
    """The checker's clock: each read is a second after the previous one."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        self.now += 1.0
        return self.now

    def __getattr__(self, name: str):
        return getattr(real_time, name)


def test_verify_prints_plain_progress_lines_to_a_non_terminal(monkeypatch) -> None:
    monkeypatch.setattr(checker, "time", _FakeTime())
    monkeypatch.setattr("nice_attendre.frontend.progress.PLAIN_PROGRESS_SECONDS", 3.0)
    result = CliRunner().invoke(main, ["verify", "route-flow", "-t", "linear:3", "-n", "2"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("progress: ")]
    assert len(lines) >= 2, result.stderr
    assert all(" transitions, " in line and " unique states, " in line and line.endswith(" s elapsed")
               for line in lines)
    assert "progress:" not in result.stdout
