"""The watchdog: a time limit on calls into user code, limits and signals that stop a search cleanly.

The systems here mark their calls into "user code" with a :class:`CallGuard`, as the network
marks app handlers. Signals are sent to this process only while a watchdog handles them, and
with SIGINT's default handler (the ``sigint_default`` fixture: a suite run in the background
starts with SIGINT ignored, which a watchdog leaves alone).
"""
from __future__ import annotations

import os
import pickle
import signal
import time

import pytest

from nice_attendre import Limits, Property, dfs
from nice_attendre.errors import CallTimeout, Interrupted, StopRequest
from nice_attendre.watchdog import CallGuard, Watchdog, memory_usage

from test_core_limits_time import Counter, Grid


class UserCode(Counter):
    """A chain 0 -> 1 -> ... -> length whose ``apply`` calls ``user(state)`` as guarded user
    code; a call that times out leads to the state -1 (the checker's "app exception")."""

    def __init__(self, user, length: int = 20) -> None:
        super().__init__(length)
        self.guard = CallGuard()
        self.user = user

    def apply(self, state: int, event: str) -> int:
        try:
            self.guard.run(self.user, state)
        except CallTimeout:
            return -1
        return state + 1

    def enabled(self, state: int) -> tuple[str, ...]:
        return () if state < 0 else super().enabled(state)


def test_a_call_that_does_not_return_is_timed_out() -> None:
    def user(state: int) -> None:
        while state == 3:
            pass

    system = UserCode(user)
    with Watchdog(guard=system.guard, call_seconds=0.1) as watchdog:
        result = dfs(system, [Property.always("returns", lambda s: s >= 0)], watchdog=watchdog)
    assert [d.property for d in result.discoveries] == ["returns"]
    assert [step.state for step in result.discoveries[0].trace.steps] == [1, 2, 3, -1]


def test_a_call_that_swallows_the_timeout_gets_it_again() -> None:
    caught = []

    def user(state: int) -> None:
        if state == 2:
            for _ in range(2):
                try:
                    while True:
                        pass
                except CallTimeout as timeout:
                    caught.append(timeout.seconds)  # swallowed; it comes again while the call goes on

    system = UserCode(user, 5)
    with Watchdog(guard=system.guard, call_seconds=0.05) as watchdog:
        result = dfs(system, [Property.always("returns", lambda s: s >= 0)], watchdog=watchdog)
    # The second time, the call is also raised into at its next line (the first line of its
    # except block), which it does not catch; and a call that returns after swallowing the
    # limit still timed out (issue 34: it used to count as a normal call, so a handler with a
    # bare `except:` never hit the limit)
    assert caught == [0.05]
    assert [step.state for step in result.discoveries[0].trace.steps] == [1, 2, -1]


def test_the_deadline_stops_a_call_into_user_code() -> None:
    # The call sleeps far past the deadline; the search stops inside it and does not count it.
    system = UserCode(lambda state: time.sleep(60) if state == 2 else None)
    saved = []
    result = dfs(system, limits=Limits(max_seconds=0.2), checkpoint=lambda s: saved.append(pickle.dumps(s)))
    assert (result.stop_reason, result.verdict, result.stats.transitions) == ("max-seconds", "incomplete", 2)
    assert len(saved) == 1  # the transition in flight was put back: the state is consistent
    resumed = dfs(UserCode(lambda state: None), resume=pickle.loads(saved[0]))
    assert resumed.complete and resumed.stats.counts() == dfs(UserCode(lambda state: None)).stats.counts()


def test_a_limit_while_building_raises_stop_request() -> None:
    with pytest.raises(StopRequest) as stop:
        with Watchdog(max_seconds=0.05):
            time.sleep(5)
    assert stop.value.reason == "max-seconds"


class SignalAt(Counter):
    """Sends SIGINT to this process in its ``k``-th ``apply`` (``times`` times)."""

    def __init__(self, k: int, times: int = 1) -> None:
        super().__init__(20)
        self.k = k
        self.times = times
        self.calls = 0

    def apply(self, state: int, event: str) -> int:
        self.calls += 1
        if self.calls == self.k:
            for _ in range(self.times):
                os.kill(os.getpid(), signal.SIGINT)
        return super().apply(state, event)


@pytest.mark.usefixtures("sigint_default")
def test_ctrl_c_stops_the_search_after_the_transition_in_flight() -> None:
    result = dfs(SignalAt(5))
    assert (result.stop_reason, result.verdict, result.signal) == ("interrupted", "interrupted", signal.SIGINT)
    assert result.stats.counts() == (5, 6, 0, 5)  # the fifth transition completed


@pytest.mark.usefixtures("sigint_default")
def test_a_second_ctrl_c_interrupts_at_once() -> None:
    result = dfs(SignalAt(5, times=2))
    assert result.stop_reason == "interrupted"
    assert result.stats.counts() == (4, 5, 0, 4)  # the fifth apply did not return


@pytest.mark.usefixtures("sigint_default")
def test_signals_outside_a_search_interrupt_at_once() -> None:
    with pytest.raises(Interrupted) as stopped:
        with Watchdog():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
    assert stopped.value.signum == signal.SIGINT and isinstance(stopped.value, KeyboardInterrupt)


def test_max_memory_stops_the_search() -> None:
    assert memory_usage() > 1 << 20
    result = dfs(Grid(60), limits=Limits(max_memory=1 << 20))
    assert (result.stop_reason, result.verdict, result.stats.transitions) == ("max-memory", "incomplete", 0)


def test_memory_error_ends_the_search_like_ctrl_c() -> None:
    class Exhausted(Counter):
        def apply(self, state: int, event: str) -> int:
            if state == 7:
                raise MemoryError
            return super().apply(state, event)

    result = dfs(Exhausted(20), [Property.sometimes("never", lambda s: False)])
    assert (result.stop_reason, result.verdict, result.discoveries) == ("out-of-memory", "incomplete", ())
    assert result.stats.counts() == (7, 8, 0, 7)


def test_the_previous_handlers_and_timer_come_back() -> None:
    def mine(signum: int, frame: object) -> None:  # pragma: no cover - never fires
        pass

    old_alarm = signal.signal(signal.SIGALRM, mine)
    try:
        signal.setitimer(signal.ITIMER_REAL, 100, 0)
        before_int = signal.getsignal(signal.SIGINT)
        dfs(Counter(3000), limits=Limits(max_seconds=60))
        assert signal.getsignal(signal.SIGALRM) is mine
        assert signal.getsignal(signal.SIGINT) is before_int
        left, interval = signal.getitimer(signal.ITIMER_REAL)
        assert 50 < left <= 100 and interval == 0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        signal.signal(signal.SIGALRM, old_alarm)


def test_a_handler_the_user_installed_is_left_alone() -> None:
    seen = []
    old = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    try:
        result = dfs(SignalAt(5))
        assert result.complete and seen == [signal.SIGINT]  # the user's handler ran; the search went on
    finally:
        signal.signal(signal.SIGINT, old)


@pytest.mark.parametrize("kwargs", [{"max_seconds": float("nan")}, {"call_seconds": float("inf")},
                                    {"max_seconds": -1}, {"max_memory": 0}])
def test_bad_watchdog_limits(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        Watchdog(**kwargs)
