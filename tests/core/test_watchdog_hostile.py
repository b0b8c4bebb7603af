"""Issue 34: user code that fights the checker, in the library (the command line's side is
tests/cli/test_hostile_handlers_cli.py).

No test here lets a hostile call run unchecked in the test process: a handler that could
make the watchdog stop the process hard runs in a child process (the CLI tests).
"""
from __future__ import annotations

import signal

import pytest

from nice_attendre import dfs
from nice_attendre.breadth_first import bfs
from nice_attendre.errors import CallTimeout, Interrupted, ModelError, StopRequest, UnsupportedFeature
from nice_attendre.models.app import is_app_failure

from test_core_limits_time import Counter


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
        from nice_attendre.watchdog import Watchdog

        signal.signal(signal.SIGINT, signal.default_int_handler)
        with Watchdog():  # the watchdog turns Ctrl-C into its own stop while it runs
            assert signal.getsignal(signal.SIGINT) != signal.default_int_handler
            assert is_app_failure(KeyboardInterrupt())
        assert not is_app_failure(KeyboardInterrupt())
    finally:
        signal.signal(signal.SIGINT, saved)
