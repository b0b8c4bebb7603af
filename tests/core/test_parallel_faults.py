"""The partitioned search against faults around it: a memory bound read from a signal
handler on a loaded machine, workers that are killed, stopped or orphaned.

Tests here never assert wall-clock times; where a fault needs a process to be busy, a
generous timeout only detects a hang.
"""
from __future__ import annotations

import sys
import time
from typing import Any

import pytest

from nice_attendre import Limits
from nice_attendre import parallel
from nice_attendre.parallel import InProcessCluster, search
from nice_attendre.watchdog import Watchdog


class Chain:
    """0 -> 1 -> ... -> length-1, each step taking ``sleep`` seconds."""

    def __init__(self, length: int, sleep: float = 0.0) -> None:
        self.length, self.sleep = length, sleep

    def initial_states(self) -> tuple[int, ...]:
        return (0,)

    def enabled(self, state: int) -> tuple[str, ...]:
        return ("next",) if state < self.length - 1 else ()

    def apply(self, state: int, event: str) -> int:
        if self.sleep:
            time.sleep(self.sleep)
        return state + 1


# ---- the memory bound, read from a signal handler ------------------------------------------


def test_a_memory_reading_reentered_from_a_nested_handler_returns_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A signal handler that arrives while the watchdog reads the memory runs inside that
    reading and reads again: the second reading must not start a third (it used to recurse
    until RecursionError)."""
    chain = Chain(5)
    watchdog = Watchdog(max_memory=1 << 50, signals=False)
    calls = []

    def reading(pid: int | None = None) -> int:
        calls.append(pid)
        if len(calls) < 5_000:  # a nested handler, as many as the recursion allows
            watchdog.memory()
        return 1000

    monkeypatch.setattr(parallel, "process_memory", reading)
    result = search(InProcessCluster(lambda: (chain, (), ()), 2), chain, (), watchdog=watchdog)
    assert result.complete and result.stats.transitions == 4
    assert len(calls) == 1  # the nested call returned the last reading without reading


def test_slow_memory_readings_under_a_fast_timer_do_not_nest_handlers(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--workers 2 --max-memory`` on a loaded machine ended in RecursionError: each reading
    of the memory (page-table walks in /proc) took longer than the watchdog's timer period,
    so the timer's handlers nested. Here every reading takes four periods and the recursion
    limit leaves room for a few dozen frames: the search must still end normally."""
    import signal

    def slow_reading(pid: int | None = None) -> int:
        until = time.perf_counter() + 0.02  # four ticks of the 0.005 s timer below
        while time.perf_counter() < until:
            pass
        return 1000

    monkeypatch.setattr(parallel, "process_memory", slow_reading)
    chain = Chain(300, sleep=0.001)
    saved_limit = sys.getrecursionlimit()
    saved_alarm = signal.getsignal(signal.SIGALRM)
    frames = 0
    frame = sys._getframe()
    while frame is not None:
        frames, frame = frames + 1, frame.f_back
    # call_seconds 0.02: the timer ticks every 0.005 s; the memory bound is never reached
    with Watchdog(max_memory=1 << 50, call_seconds=0.02, signals=False) as watchdog:
        assert watchdog.timer
        sys.setrecursionlimit(frames + 120)
        try:
            result = search(InProcessCluster(lambda: (chain, (), ()), 2), chain, (), watchdog=watchdog)
        finally:
            sys.setrecursionlimit(saved_limit)
    assert signal.getsignal(signal.SIGALRM) == saved_alarm
    assert result.complete and result.stats.transitions == 299
