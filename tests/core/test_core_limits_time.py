"""Wall-clock limit, Ctrl-C and the progress callback.

The checker loop reads the clock only every 1024 transitions, so the progress callback acts
at multiples of 1024 transitions; the time limit is also enforced by the watchdog's timer
signal, so a slow transition does not outlast it.
"""
from __future__ import annotations

import time

import pytest

from nice_attendre import Limits, Progress, Property, dfs


class Counter:
    """0 -> 1 -> ... -> length: one event per state; ``apply`` may sleep."""

    def __init__(self, length: int = 100_000, sleep: float = 0.0) -> None:
        self.length = length
        self.sleep = sleep

    def initial_states(self) -> tuple[int, ...]:
        return (0,)

    def enabled(self, state: int) -> tuple[str, ...]:
        return ("step",) if state < self.length else ()

    def apply(self, state: int, event: str) -> int:
        if self.sleep:
            time.sleep(self.sleep)
        return state + 1


class Grid:
    """States (x, y) in a size x size grid; moves right, up and diagonally while inside."""

    def __init__(self, size: int) -> None:
        self.size = size

    def initial_states(self) -> tuple[tuple[int, int], ...]:
        return ((0, 0),)

    def enabled(self, state: tuple[int, int]) -> tuple[str, ...]:
        x, y = state
        inside_x, inside_y = x + 1 < self.size, y + 1 < self.size
        return tuple(name for name, ok in (("right", inside_x), ("up", inside_y),
                                           ("diag", inside_x and inside_y)) if ok)

    def apply(self, state: tuple[int, int], event: str) -> tuple[int, int]:
        x, y = state
        match event:
            case "right":
                return (x + 1, y)
            case "up":
                return (x, y + 1)
            case "diag":
                return (x + 1, y + 1)
        raise AssertionError(event)


def grid_transitions(size: int) -> int:
    return 2 * size * (size - 1) + (size - 1) ** 2


def test_grid_counts() -> None:
    result = dfs(Grid(60))
    assert grid_transitions(60) == 10_561
    # The deepest first visit: right to the edge, then up: 59 + 59 moves.
    assert result.stats.counts() == (10_561, 3_600, 10_561 - 3_599, 118)


def test_max_seconds_with_a_slow_model() -> None:
    # 0.2 ms per transition: the loop's own clock read (every 1024 transitions, 0.2 s) would
    # come after the deadline; the watchdog's timer stops the search before it.
    result = dfs(Counter(sleep=0.0002), limits=Limits(max_seconds=0.1))
    assert (result.complete, result.stop_reason, result.verdict) == (False, "max-seconds", "incomplete")
    transitions, unique, revisits, depth = result.stats.counts()
    assert 0 < transitions < 1024
    assert (unique, revisits, depth) == (transitions + 1, 0, transitions)
    assert result.stats.elapsed >= 0.1


def test_max_seconds_zero_stops_before_the_first_transition() -> None:
    result = dfs(Counter(), limits=Limits(max_seconds=0))
    assert (result.complete, result.stop_reason) == (False, "max-seconds")
    assert result.stats.counts() == (0, 0, 0, 0)


class SlowStep(Counter):
    """Each transition sleeps ``sleep`` seconds: far longer than the time limit."""

    def __init__(self) -> None:
        super().__init__(10, sleep=0.3)


def test_max_seconds_stops_after_the_slow_transition_in_flight() -> None:
    # The deadline passes during the first transition; the search stops right after it,
    # not at the 1024th transition (which would take five minutes).
    result = dfs(SlowStep(), limits=Limits(max_seconds=0.1))
    assert (result.stop_reason, result.stats.transitions) == ("max-seconds", 1)
    assert result.stats.elapsed < 2


def test_max_seconds_outside_the_main_thread_falls_back_to_the_loop() -> None:
    # No timer signal outside the main thread: the loop's clock read still ends the search.
    import threading

    found: list = []
    thread = threading.Thread(target=lambda: found.append(dfs(Counter(sleep=0.0002), limits=Limits(max_seconds=0.05))))
    thread.start()
    thread.join()
    [result] = found
    assert result.stop_reason == "max-seconds" and result.stats.transitions == 1024


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0])
def test_max_seconds_must_be_finite_and_not_negative(value: float) -> None:
    from nice_attendre import InputError

    with pytest.raises(InputError, match="max_seconds must"):
        Limits(max_seconds=value)


def test_max_seconds_that_is_not_reached() -> None:
    result = dfs(Counter(3000), limits=Limits(max_seconds=60))
    assert result.complete and result.stop_reason is None
    assert result.stats.counts() == (3000, 3001, 0, 3000)


class InterruptAt(Counter):
    def __init__(self, k: int) -> None:
        super().__init__(10)
        self.k = k
        self.calls = 0

    def apply(self, state: int, event: str) -> int:
        self.calls += 1
        if self.calls == self.k:
            raise KeyboardInterrupt
        return super().apply(state, event)


@pytest.mark.parametrize("k", [1, 2, 5, 10])
def test_ctrl_c_in_apply(k: int) -> None:
    result = dfs(InterruptAt(k), [Property.sometimes("never", lambda s: False)])
    assert (result.complete, result.stop_reason) == (False, "interrupted")
    # The counter increments after apply returns: the k-th call did not count.
    assert result.stats.counts() == (k - 1, k, 0, k - 1)
    # An interrupted search claims nothing: no discovery, and not ok.
    assert result.discoveries == () and (result.verdict, result.ok) == ("interrupted", False)
    assert result.signal == 2


def test_ctrl_c_in_a_predicate_and_in_initial_states() -> None:
    def holds(state: int) -> bool:
        if state == 3:
            raise KeyboardInterrupt
        return True

    result = dfs(Counter(10), [Property.always("p", holds)])
    assert (result.stop_reason, result.stats.transitions, result.stats.unique_states) == (
        "interrupted", 3, 4)

    class NoStart(Counter):
        def initial_states(self) -> tuple[int, ...]:
            raise KeyboardInterrupt

    result = dfs(NoStart())
    assert (result.complete, result.stop_reason, result.stats.counts()) == (
        False, "interrupted", (0, 0, 0, 0))


def test_ctrl_c_in_the_progress_callback() -> None:
    def progress(snapshot: Progress) -> None:
        raise KeyboardInterrupt

    result = dfs(Grid(60), progress=progress, progress_interval=0)
    assert (result.complete, result.stop_reason, result.stats.transitions) == (
        False, "interrupted", 1024)


def test_progress_every_1024_transitions() -> None:
    snapshots: list[Progress] = []
    result = dfs(Grid(60), progress=snapshots.append, progress_interval=0)
    assert result.complete and result.stats.transitions == 10_561
    assert [p.transitions for p in snapshots] == [1024 * i for i in range(1, 11)]
    for before, after in zip(snapshots, snapshots[1:]):
        assert before.unique_states <= after.unique_states
        assert before.max_depth <= after.max_depth
        assert before.elapsed <= after.elapsed
    for p in snapshots:
        assert isinstance(p, Progress)
        assert 0 <= p.depth <= p.max_depth <= 118
        assert p.unique_states <= 3600
        assert p.rate >= 0.0
    assert snapshots[-1].unique_states <= result.stats.unique_states


def test_progress_depth_on_a_chain() -> None:
    snapshots: list[Progress] = []
    dfs(Counter(3000), progress=snapshots.append, progress_interval=0)
    # On a chain the state just stored is on top of the stack at its depth.
    assert [(p.transitions, p.unique_states, p.depth, p.max_depth) for p in snapshots] == [
        (1024, 1025, 1024, 1024), (2048, 2049, 2048, 2048)]


def test_progress_respects_the_interval() -> None:
    snapshots: list[Progress] = []
    dfs(Grid(60), progress=snapshots.append, progress_interval=3600)
    assert snapshots == []


def test_progress_rate() -> None:
    assert Progress(100, 10, 1, 2, 2.0).rate == 50.0
    assert Progress(100, 10, 1, 2, 0.0).rate == 0.0
