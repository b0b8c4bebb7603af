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

from nice_attendre import parallel
from nice_attendre.parallel import InProcessCluster, search
from nice_attendre.watchdog import Watchdog

from test_parallel_graphs import Chain  # 0 -> 1 -> ... -> length-1, each step taking `sleep` s




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


# ---- a worker lost in the middle of a search ---------------------------------------------------


class Wide:
    """0 -> 1..width (level 1; state 1 violates ``not-one``) -> width+1, each step from level
    1 writing this process's id into ``marker`` and then taking ``sleep`` seconds: a long
    level 2, whose workers say who they are."""

    def __init__(self, width: int, sleep: float, marker: str) -> None:
        self.width, self.sleep, self.marker = width, sleep, marker

    def initial_states(self) -> tuple[int, ...]:
        return (0,)

    def enabled(self, state: int) -> tuple[int, ...]:
        if state == 0:
            return tuple(range(1, self.width + 1))
        return (self.width + 1,) if state <= self.width else ()

    def apply(self, state: int, event: int) -> int:
        if state:
            import os
            from pathlib import Path

            Path(self.marker, str(os.getpid())).touch()
            time.sleep(self.sleep)
        return event


def test_a_violation_found_before_a_worker_is_lost_is_reported(tmp_path: Any) -> None:
    """keep_going: a violation found in level 1 is kept when a worker is killed in level 2
    (without its trace: the lost worker's parents went with it); the counts are level 0's
    and level 1's; no worker is left."""
    import multiprocessing
    import os
    import signal
    import threading

    from nice_attendre import Property
    from nice_attendre.parallel import ProcessCluster

    wide = Wide(40, sleep=600.0, marker=str(tmp_path))  # a step of level 2 never ends by itself
    not_one = Property.always("not-one", lambda state: state != 1, explain=lambda state: f"state {state}")
    killed: list[int] = []

    def kill_a_busy_worker() -> None:
        deadline = time.monotonic() + 120
        while not list(tmp_path.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.02)
        busy = sorted(tmp_path.iterdir())
        if busy:
            killed.append(int(busy[0].name))
            os.kill(killed[0], signal.SIGKILL)

    killer = threading.Thread(target=kill_a_busy_worker)
    killer.start()
    try:
        cluster = ProcessCluster(lambda: (wide, (not_one,), ()), 2)
        result = search(cluster, wide, (not_one,), keep_going=True)
    finally:
        killer.join()
    assert killed, "no worker reached level 2"
    assert (result.verdict, result.stop_reason, result.complete) == ("violated", "worker-lost", False)
    assert result.stop_detail is not None and f"(process {killed[0]}) was killed by SIGKILL" in result.stop_detail
    assert result.stats.transitions == 40 and result.stats.unique_states == 41  # levels 0 and 1
    (discovery,) = result.discoveries
    assert (discovery.property, discovery.trace) == ("not-one", None)
    assert discovery.reason == "state 1 (a worker was lost before its trace was rebuilt)"
    assert not [p for p in multiprocessing.active_children() if p.name.startswith("nice-attendre-shard")]


class DiesAtStart(Chain):
    """A :class:`Chain` that ends any process but ``coordinator`` that builds a shard of it."""

    def __init__(self, length: int, coordinator: int) -> None:
        super().__init__(length)
        self.coordinator = coordinator

    @property
    def state_codec(self) -> None:  # read by every shard as it starts
        import os

        if os.getpid() != self.coordinator:
            os._exit(5)
        return None


def test_a_worker_lost_while_starting_ends_the_search_incomplete() -> None:
    """(A worker that died while starting was an error raised while the cluster was built:
    exit 2 on the command line.)"""
    import multiprocessing
    import os

    from nice_attendre.parallel import ProcessCluster

    chain = DiesAtStart(10, os.getpid())
    cluster = ProcessCluster(lambda: (chain, (), ()), 2)
    result = search(cluster, chain, ())
    assert (result.complete, result.stop_reason) == (False, "worker-lost")
    assert result.stop_detail is not None and result.stop_detail.startswith("worker 0 (process ")
    assert result.stop_detail.endswith(") exited with code 5")
    assert result.stats.transitions == 0
    assert not [p for p in multiprocessing.active_children() if p.name.startswith("nice-attendre-shard")]


def test_a_fork_that_fails_is_a_worker_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """(An OSError from fork, out of processes or memory, was a crash: exit 70.)"""
    import errno
    import multiprocessing

    from nice_attendre.parallel import ProcessCluster, WorkerError

    def no_fork(self: Any) -> None:
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")

    monkeypatch.setattr(type(multiprocessing.get_context("fork").Process()), "start", no_fork)
    chain = Chain(3)
    with pytest.raises(WorkerError, match=r"cannot start 2 worker processes: \[Errno 11\]"):
        ProcessCluster(lambda: (chain, (), ()), 2)
