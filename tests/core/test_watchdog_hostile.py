"""Issue 34: user code that fights the checker, in the library (the command line's side is
tests/cli/test_hostile_handlers_cli.py).

No test here lets a hostile call run unchecked in the test process: a handler that could
make the watchdog stop the process hard runs in a child process (the CLI tests).
"""
from __future__ import annotations

import signal
import time

import pytest

from nice_attendre import Limits, Property, dfs
from nice_attendre.breadth_first import bfs
from nice_attendre.errors import CallTimeout, Interrupted, ModelError, StopRequest, UnsupportedFeature
from nice_attendre.models.app import is_app_failure
from nice_attendre.watchdog import CallGuard, Watchdog

from test_core_limits_time import Counter
from test_core_watchdog import UserCode
from tests_data_apps import path


class Boom(BaseException):
    """A BaseException of the user's own."""


class ExitsIn(Counter):
    """A chain whose ``apply`` raises ``exc`` (as user code no guard catches) at state 3."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__(10)
        self.exc = exc

    def apply(self, state: int, event: str) -> int:
        if state == 3:
            raise self.exc
        return super().apply(state, event)


@pytest.mark.parametrize("search", [dfs, bfs])
@pytest.mark.parametrize("exc, said", [(SystemExit(0), "sys.exit(0)"), (SystemExit("bye"), "sys.exit('bye')"),
                                       (GeneratorExit(), "GeneratorExit"), (Boom(), "Boom")])
def test_a_non_exception_out_of_unguarded_user_code_is_a_model_error(search, exc: BaseException, said: str) -> None:
    # Was: the SystemExit went through the search and the command line exited with its code (0: OK-looking).
    with pytest.raises(ModelError, match=rf"user code ended the search with {said.replace('(', '[(]').replace(')', '[)]')} "
                                         "outside a guarded call"):
        search(ExitsIn(exc))


def test_ctrl_c_and_the_watchdogs_stops_are_not_the_apps() -> None:
    assert not is_app_failure(StopRequest("max-seconds"))
    assert not is_app_failure(Interrupted(signal.SIGTERM))
    assert not is_app_failure(MemoryError())
    assert not is_app_failure(UnsupportedFeature("groups"))
    for exc in (CallTimeout(1.0), SystemExit(0), GeneratorExit(), Boom(), ValueError("x")):
        assert is_app_failure(exc), exc


def test_a_keyboard_interrupt_is_the_apps_own_only_when_ctrl_c_cannot_raise_one() -> None:
    saved = signal.getsignal(signal.SIGINT)
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a real Ctrl-C raises KeyboardInterrupt
        assert not is_app_failure(KeyboardInterrupt())
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C ignored: the app raised it itself
        assert is_app_failure(KeyboardInterrupt())
        signal.signal(signal.SIGINT, signal.default_int_handler)
        with Watchdog():  # the watchdog turns Ctrl-C into its own stop while it runs
            assert signal.getsignal(signal.SIGINT) != signal.default_int_handler
            assert is_app_failure(KeyboardInterrupt())
        assert not is_app_failure(KeyboardInterrupt())
    finally:
        signal.signal(signal.SIGINT, saved)


# ---- 2. a limit swallowed by a bare except still holds -------------------------------------------------

#: 0 -> 1 -> ... -> length whose ``apply`` calls ``user(state)`` through the guard, as the
#: network calls app handlers; a call that timed out leads to -1 (the "app exception").
Guarded = UserCode


def swallow_once(state: int, at: int) -> None:
    """At state ``at``: wait until the watchdog raises here, swallow it, return."""
    if state == at:
        try:
            while True:
                time.sleep(0.005)
        except BaseException:  # noqa: BLE001 - the point: a bare except
            pass


def test_a_swallowed_time_limit_is_still_the_calls_time_limit() -> None:
    # Was: the call returned normally after swallowing CallTimeout, and the search went on
    # as if it had been on time (a handler with a bare except never hit --max-handler-seconds).
    system = Guarded(lambda state: swallow_once(state, 1), 3)
    with Watchdog(guard=system.guard, call_seconds=0.05) as watchdog:
        result = dfs(system, [Property.always("returns", lambda s: s >= 0)], watchdog=watchdog)
    (found,) = result.discoveries
    assert [step.state for step in found.trace.steps] == [1, -1]
    assert system.guard.hit is None  # taken by the call's caller


def test_a_swallowed_stop_in_the_last_transition_still_stops_the_search() -> None:
    # The deadline comes during the last call, which swallows the stop and returns. Was: the
    # search had nothing left to do and said complete, OK.
    system = Guarded(lambda state: swallow_once(state, 2), 3)
    result = dfs(system, limits=Limits(max_seconds=0.1))
    assert (result.complete, result.stop_reason, result.verdict) == (False, "max-seconds", "incomplete")
    assert result.stats.transitions == 2  # the interrupted call is not counted: it was put back


def test_a_call_that_swallows_its_time_limit_and_raises_something_else_still_timed_out() -> None:
    def user(state: int) -> None:
        if state == 1:
            try:
                while True:
                    time.sleep(0.005)
            except BaseException:  # noqa: BLE001
                raise ValueError("not what the watchdog raised")

    guard = CallGuard()
    with pytest.raises(CallTimeout):
        with Watchdog(guard=guard, call_seconds=0.05):
            guard.run(user, 1)
    assert guard.hit is None


# ---- 3. the last resort: when a call is overdue, and what is reported ---------------------------------

def test_a_call_is_overdue_after_its_limit_and_the_grace() -> None:
    watchdog = Watchdog(call_seconds=1.0, grace=2.0, clock=lambda: 0.0)
    assert watchdog.overdue(2.9, 0.0) is None
    reason, signum, why = watchdog.overdue(3.0, 0.0)
    assert (reason, signum) == ("max-handler-seconds", None)
    assert why.startswith("user code (an app handler or a property) ran past the handler time limit (1 s) and "
                          "did not stop within 2 s of being told to")


def test_a_call_is_overdue_the_grace_after_the_stop_or_the_deadline() -> None:
    now = [0.0]
    watchdog = Watchdog(max_seconds=10.0, grace=2.0, clock=lambda: now[0])
    watchdog.deadline = 10.0
    watchdog.bind([float("inf")])
    assert watchdog.overdue(11.9, 0.0) is None
    assert watchdog.overdue(12.0, 0.0)[0] == "max-seconds"  # the alarm never told it: the deadline
    assert watchdog.overdue(12.5, 11.0) is None  # a call that began after the deadline gets its grace
    now[0] = 20.0
    watchdog._on_signal(signal.SIGINT, None)  # Ctrl-C (outside user code: nothing raised)
    assert watchdog.overdue(21.0, 0.0)[0] == "max-seconds"  # (still past the deadline)
    watchdog.deadline = None
    assert watchdog.overdue(21.0, 0.0) is None
    assert watchdog.overdue(22.0, 0.0)[:2] == ("interrupted", signal.SIGINT)
    watchdog.unbind()
    assert watchdog.overdue(100.0, 0.0) is None  # the report: only the per-call limit applies


def test_the_exit_code_of_a_hard_stop_never_hides_a_violation() -> None:
    from nice_attendre.property import Expectation
    from nice_attendre.result import Discovery, Stats
    from nice_attendre.watchdog import HardStop

    stats = Stats(5, 4, 1, 3, 1.0)
    found = (Discovery("p", Expectation.ALWAYS, None, "why"),)
    assert HardStop("max-seconds", None, "w", "search", stats).exit_code() == 3
    assert HardStop("max-seconds", None, "w", "search", stats, found).exit_code() == 1
    assert HardStop("interrupted", signal.SIGTERM, "w", "search", stats).exit_code() == 143
    assert HardStop("max-handler-seconds", None, "w", "report", None).exit_code() == 1  # found ones were told
    result = HardStop("max-seconds", None, "w", "search", stats, found).result()
    assert (result.complete, result.stop_reason, result.stats, result.verdict) == (False, "max-seconds", stats,
                                                                                    "violated")


def test_the_running_search_is_read_from_its_frame() -> None:
    import sys

    from nice_attendre.checker import _running_search

    seen = []

    class Reads(Counter):
        def apply(self, state: int, event: str) -> int:
            if state == 4:
                seen.append(_running_search(sys._getframe()))
            return super().apply(state, event)

    dfs(Reads(6), [Property.always("not-2", lambda s: s != 2)], keep_going=True)
    assert seen == []  # 2 violates the property: not expanded
    dfs(Reads(6), [Property.always("not-5", lambda s: s != 5)], keep_going=True)
    ((stats, discoveries),) = seen
    assert stats.counts() == (4, 5, 0, 4)  # 0 -> 1 -> 2 -> 3 -> 4, then the apply in flight
    assert discoveries == ()
    assert _running_search(sys._getframe()) is None  # no search on this stack


# ---- 5. a time limit is not nondeterminism; 6. Trace.replay runs the handlers ---------------------------

def test_trace_replay_runs_the_handlers_and_sees_a_nondeterministic_app() -> None:
    # With the memo (the default) a replayed step repeated the recorded one: no handler ran,
    # and a nondeterministic app replayed "fine". Issue 34, section 4.
    from nice_attendre import verify

    # (Calling each handler twice now finds the app in the search: its state counts its calls.
    # The trace's last step is that finding, which the replay tells as found; it runs again.)
    result = verify(path("hostile.py", "CountsCalls"), topology="linear:2", app_options={"bug": True})
    found = result.discoveries[0]
    assert found.property == "app-nondeterminism"
    calls = result.system.app.on_packet_in.__globals__["CALLS"]
    before = len(calls)
    found.trace.replay(result.system)
    assert len(calls) == before + 2  # the handler ran, twice (its input was never found deterministic)


def test_trace_replay_of_a_deterministic_app_runs_its_handlers_too() -> None:
    from nice_attendre import verify

    spec = path("hostile.py", "SlowCalls")
    result = verify(spec, topology="linear:2", app_options={"bug": True, "slow": ""})
    before = result.system.app.calls
    found = result.discoveries[0]
    assert found.trace.replay(result.system) == found.trace.final
    assert result.system.app.calls == before + 2  # both packet-ins of the trace ran again, not from the memo


def test_a_step_that_hit_the_time_limit_in_the_search_only_replays() -> None:
    # The search's first packet-in ran past the limit; replayed, the call is fast. Not the
    # app's nondeterminism: the replay goes on (was: ModelError, "not deterministic").
    from nice_attendre import verify
    from nice_attendre.trace import narrate_trace

    result = verify(path("hostile.py", "SlowCalls"), topology="linear:2",
                    app_options={"slow": "1", "seconds": 30.0}, max_handler_seconds=0.2)
    (found,) = result.discoveries
    assert found.property == "app-exception" and "did not return within 0.2 s" in found.reason
    assert found.trace.replay(result.system) == found.trace.final
    told = narrate_trace(found.trace, result.system.narrate)
    assert told[-1][0].startswith("ALERT app-exception: SlowCalls.on_packet_in did not return within 0.2 s")


def test_a_real_difference_is_still_nondeterminism_when_narrating() -> None:
    from nice_attendre import verify
    from nice_attendre.errors import NondeterminismError
    from nice_attendre.trace import narrate_trace

    # (An app whose two calls of each input agree: one that differs at once is now found by
    # the search itself, and its trace ends with that finding.)
    result = verify(path("random_router.py", "LaterCallsRouter"), topology="paths:2,3",
                    app_options={"bug": "black-hole"})
    assert result.discoveries[0].property != "app-nondeterminism"
    with pytest.raises(NondeterminismError):
        narrate_trace(result.discoveries[0].trace, result.system.narrate)
