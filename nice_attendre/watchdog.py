"""The limits of a run that the search loop cannot check by itself, in one place.

The search loop reads the clock only every 1024 transitions (it runs about 200,000
transitions per second), so a slow transition (an app handler that sleeps or loops) would
make ``--max-seconds`` meaningless. A :class:`Watchdog` adds a periodic timer signal
(``SIGALRM``, every 0.1 s or less) that checks, outside the loop:

* the deadline (``max_seconds``, counted from when the watchdog starts, so it covers
  building the network: importing the app, switch joins);
* the process's memory (``max_memory``, resident bytes; a partitioned search counts its
  worker processes too, see :meth:`Watchdog.bind`);
* how long the current call into user code has run (``call_seconds``): a handler stuck in
  a loop gets :class:`~nice_attendre.errors.CallTimeout` raised inside it, which the
  platform reports as an app exception with its trace.

It also turns the signals that would raise ``KeyboardInterrupt`` (Ctrl-C's SIGINT; SIGTERM
and SIGHUP when the command line asks for that, see :func:`raise_interrupted`) into a clean
stop of the search: the first one asks the loop to stop after the current transition (or
stops the call into user code at once), so the partial result is consistent and can be
checkpointed; a second one interrupts at once.

A limit or signal never raises inside the checker's own code during a search (it could
leave a table half updated): the loop sees ``stop_at[0]`` drop below its transition count
and stops; only calls into user code, marked by a :class:`CallGuard`, are interrupted at
once. While the network is built nothing is kept, so a limit raises wherever it hits.

Signals and timers only work in the main thread (and ``setitimer`` only on Unix);
elsewhere the watchdog does nothing and the loop's own checks every 1024 transitions
still apply. The previous signal handlers and timer are restored on exit.
"""
from __future__ import annotations

import math
import os
import resource
import signal
import sys
import threading
import time
from types import FrameType
from typing import Any, Callable

from nice_attendre.errors import CallTimeout, Interrupted, StopRequest

#: Seconds between timer signals (less when a limit is shorter).
TICK = 0.1

#: Signals a watchdog turns into a clean stop, when their handler would raise KeyboardInterrupt.
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class CallGuard:
    """Marks calls into user code (app handlers) for a :class:`Watchdog`.

    The caller increments ``calls`` and sets ``active`` just before calling user code, and
    clears ``active`` right after it returns (three attribute writes: cheap enough for every
    handler call). While ``active`` is true, a watchdog may raise
    :class:`~nice_attendre.errors.CallTimeout` or :class:`~nice_attendre.errors.StopRequest`
    inside the call: nothing of the checker's is half updated there.

    The watchdog also leaves what it raised in ``hit``, so that a call that swallows it (a
    bare ``except:``) and returns is still known to have hit the limit: the caller then
    checks ``hit`` after the call and raises it (:meth:`run` does), and takes it back with
    :meth:`take` when it handles what the call raised.
    """

    __slots__ = ("calls", "active", "hit")

    def __init__(self) -> None:
        self.calls = 0
        self.active = False
        #: what a watchdog raised inside the current call (until the caller takes it)
        self.hit: BaseException | None = None

    def take(self) -> BaseException | None:
        """What a watchdog raised inside the call that just ended, if anything (and forget it)."""
        hit, self.hit = self.hit, None
        return hit

    def run(self, function: Callable[..., Any], *args: Any) -> Any:
        """Call ``function(*args)`` as user code (for calls outside the hot path). What a
        watchdog raised inside the call is raised from here even if the call caught it
        (and returned, or raised something else)."""
        self.calls += 1
        self.active = True
        try:
            result = function(*args)
        except BaseException as exc:
            self.active = False
            hit = self.take()
            if hit is None or hit is exc:
                raise
            raise hit from None
        self.active = False
        if self.hit is not None:
            raise self.take()  # type: ignore[misc]
        return result


def raise_interrupted(signum: int, frame: FrameType | None) -> None:
    """A signal handler that ends the program like Ctrl-C: raises
    :class:`~nice_attendre.errors.Interrupted` (a KeyboardInterrupt) with the signal number.
    The command line installs it for SIGTERM and SIGHUP; a watchdog turns it into a clean
    stop during a search."""
    raise Interrupted(signum)


raise_interrupted.raises_interrupted = True  # type: ignore[attr-defined]


def _page_size() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return 4096


_PAGE = _page_size()


def memory_usage(pid: int | None = None) -> int:
    """The resident memory in bytes of process ``pid``, this one by default (Linux: now, from
    /proc; elsewhere: this process's peak, and 0 for another process)."""
    try:
        with open(f"/proc/{'self' if pid is None else pid}/statm", "rb") as handle:
            return int(handle.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        if pid is not None:
            return 0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


class Watchdog:
    """Deadline, memory bound, per-call time limit and signal handling of one run.

    Use as a context manager around the whole run (build, search, report). ``phase`` is
    ``"build"`` until a search binds it (:meth:`bind`), ``"search"`` while it runs and
    ``"report"`` after (:meth:`unbind`); the deadline and the memory bound apply in the first
    two, the per-call limit in all three.

    * ``max_seconds``: wall-clock seconds from :meth:`__enter__` (non-negative, finite);
    * ``max_memory``: resident bytes of the process;
    * ``call_seconds``: how long one call into user code (marked by ``guard``) may run;
    * ``signals``: turn SIGINT (and SIGTERM/SIGHUP when :func:`raise_interrupted` handles
      them) into a clean stop of the search;
    * ``stop_flag``: stop (reason ``stopped``) once another process sets its ``value``.

    After the search, ``reason`` is the limit that stopped it (``max-seconds``,
    ``max-memory`` or ``interrupted``) or ``None``; ``signum`` the signal, if any.
    """

    #: While its handler is SIGINT's, a Ctrl-C never raises a plain KeyboardInterrupt (it
    #: becomes a stop, or :class:`~nice_attendre.errors.Interrupted`): one out of an app
    #: handler is then the app's own (see :func:`nice_attendre.models.app.is_app_failure`).
    translates_ctrl_c = True

    def __init__(self, *, guard: CallGuard | None = None, max_seconds: float | None = None,
                 max_memory: int | None = None, call_seconds: float | None = None,
                 signals: bool = True, clock: Callable[[], float] = time.monotonic,
                 stop_flag: Any = None) -> None:
        for name, value in (("max_seconds", max_seconds), ("call_seconds", call_seconds)):
            if value is not None and (not math.isfinite(value) or value < 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value}")
        if max_memory is not None and max_memory <= 0:
            raise ValueError(f"max_memory must be positive, got {max_memory}")
        self.guard = guard if guard is not None else CallGuard()
        self.max_seconds = max_seconds
        self.max_memory = max_memory
        self.call_seconds = call_seconds
        self.signals = signals
        self.clock = clock
        #: an object whose ``value`` another process sets to stop this one's search (a
        #: worker's: see :mod:`nice_attendre.parallel`); checked as the limits are
        self.stop_flag = stop_flag
        self.deadline: float | None = None
        self.phase = "build"
        self.stop_at: list[float] = [math.inf]
        self.reason: str | None = None
        self.signum: int | None = None
        self.timer = False  # whether the timer signal runs (main thread, Unix)
        self._entered = False
        self._saved_handlers: dict[int, Any] = {}
        self._saved_timer: tuple[float, float] | None = None
        self._seen_call = -1
        self._seen_since = 0.0
        self._signals = 0
        self._timer_started = 0.0
        #: the memory ``max_memory`` bounds, in bytes: this process's by default; a search
        #: whose states live in other processes too binds its own measure (see :meth:`bind`)
        self.memory: Callable[[], int] = memory_usage
        self._on_stop: Callable[[], None] | None = None

    # ---- lifetime ---------------------------------------------------------------------

    def __enter__(self) -> "Watchdog":
        self._entered = True
        now = self.clock()
        self.deadline = None if self.max_seconds is None else now + self.max_seconds
        if threading.current_thread() is not threading.main_thread():
            return self
        if self.signals:
            for signum in STOP_SIGNALS:
                current = signal.getsignal(signum)
                if current is signal.default_int_handler or getattr(current, "raises_interrupted", False):
                    self._saved_handlers[signum] = current
                    signal.signal(signum, self._on_signal)
        if hasattr(signal, "setitimer") and (self.max_seconds is not None or self.max_memory is not None
                                             or self.call_seconds is not None or self.stop_flag is not None):
            tick = TICK
            for limit in (self.max_seconds, self.call_seconds):
                if limit is not None:
                    tick = min(tick, limit / 4)
            tick = max(tick, 0.005)
            self._saved_handlers[signal.SIGALRM] = signal.getsignal(signal.SIGALRM)
            signal.signal(signal.SIGALRM, self._on_alarm)
            self._saved_timer = signal.setitimer(signal.ITIMER_REAL, tick, tick)
            self._timer_started = now
            self.timer = True
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.timer:
            signal.setitimer(signal.ITIMER_REAL, 0, 0)
            self.timer = False
        for signum, handler in self._saved_handlers.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        self._saved_handlers.clear()
        if self._saved_timer is not None and self._saved_timer[0] > 0:
            # Someone else's timer was running: give it back what was left of it.
            left = max(self._saved_timer[0] - (self.clock() - self._timer_started), 0.001)
            signal.setitimer(signal.ITIMER_REAL, left, self._saved_timer[1])
        self._saved_timer = None
        self._entered = False

    # ---- the search ---------------------------------------------------------------------

    def bind(self, stop_at: list[float], *, on_stop: Callable[[], None] | None = None,
             memory: Callable[[], int] | None = None) -> None:
        """A search starts: it stops once its transition count reaches ``stop_at[0]``,
        which the watchdog lowers to -1 when a limit or a signal asks it to stop.

        ``on_stop`` is also called then (once; from a signal handler, so it must only set a
        flag): a search running in other processes passes on the request. ``memory``
        replaces what ``max_memory`` bounds until :meth:`unbind` (a partitioned search: this
        process's memory and its workers')."""
        self.stop_at = stop_at
        self._on_stop = on_stop
        if memory is not None:
            self.memory = memory
        self.phase = "search"
        if not self._entered:
            self.deadline = None if self.max_seconds is None else self.clock() + self.max_seconds
        if self.reason is not None:
            stop_at[0] = -1
        else:
            self.poll(self.clock())

    def unbind(self) -> None:
        """The search ended: from now on signals interrupt at once and the limits are off."""
        self.phase = "report"
        self.stop_at = [math.inf]
        self._on_stop = None
        self.memory = memory_usage

    def poll(self, now: float) -> None:
        """The loop's own check (every 1024 transitions, and when no timer runs): the
        deadline and the memory bound."""
        if self.deadline is not None and now >= self.deadline:
            self._limit("max-seconds")
        elif self.max_memory is not None and self.memory() > self.max_memory:
            self._limit("max-memory")
        elif self.stop_flag is not None and self.stop_flag.value:
            self._limit("stopped")

    # ---- signal handlers --------------------------------------------------------------

    def _limit(self, reason: str, signum: int | None = None) -> None:
        """A limit (or the first signal) was reached: stop the search cleanly."""
        if self.phase == "report":
            return
        if self.phase == "build":
            raise StopRequest(reason, signum)
        if self.reason is None:
            self.reason, self.signum = reason, signum
        self.stop_at[0] = -1
        if self._on_stop is not None:
            on_stop, self._on_stop = self._on_stop, None
            on_stop()
        if self.guard.active:  # in user code: nothing of ours is half done there
            self._raise_in_call(StopRequest(self.reason, self.signum))

    def _raise_in_call(self, exc: BaseException) -> None:
        """Raise ``exc`` inside the active call into user code, and leave it in the guard's
        ``hit``: a call that swallows it still ends as it would have."""
        self.guard.hit = exc
        raise exc

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self._signals += 1
        if self.phase == "search" and self._signals == 1:
            if self.reason is None:
                self.reason, self.signum = "interrupted", signum
            self._limit(self.reason, self.signum)
            return
        raise Interrupted(signum)  # outside the search, or a second signal: at once

    def _on_alarm(self, signum: int, frame: FrameType | None) -> None:
        now = self.clock()
        if self.phase != "report":
            if self.reason is None:
                self.poll(now)
            elif self.phase == "search" and self.guard.active:
                self._raise_in_call(StopRequest(self.reason, self.signum))  # the call swallowed the first one
        guard = self.guard
        if self.call_seconds is None or not guard.active:
            self._seen_call = -1
            return
        if guard.calls != self._seen_call:
            self._seen_call, self._seen_since = guard.calls, now
        elif now - self._seen_since >= self.call_seconds:
            self._seen_since = now  # raise again if the call swallows it and goes on
            self._raise_in_call(CallTimeout(self.call_seconds))
