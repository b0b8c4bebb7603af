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

User code may fight the limits: catch what the watchdog raises (a bare ``except:``) and
go on, or ignore the alarm. What it swallowed is remembered (:attr:`CallGuard.hit`), so a
call that returns after swallowing a limit still ends as one that did not; a call that
goes on is raised into again at every tick, the second time also at its next line (a
trace function on its frames, so an ``except`` block that loops does not catch it); and,
as the last resort, a call still running :data:`GRACE` seconds after it was told to stop
stops the process hard: a guardian thread (which runs even if the alarm is ignored or
cancelled) writes the partial report from the search's last counts (:class:`HardStop`,
``on_hard_stop``) and exits with code 3 (1 if violations were found, 128 + the signal
for Ctrl-C or SIGTERM). Only code stuck in C without releasing the GIL escapes that.

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
from dataclasses import dataclass
from types import CodeType, FrameType
from typing import Any, Callable

from nice_attendre.errors import CallTimeout, Interrupted, StopRequest
from nice_attendre.result import Discovery, Result, Stats

#: Seconds between timer signals (less when a limit is shorter).
TICK = 0.1

#: Seconds a call into user code may go on after it was told to stop (its time limit, the
#: deadline, Ctrl-C) before the process is stopped hard.
GRACE = 2.0

#: The exit code of a hard stop with nothing else to say (no violation found, no signal).
HARD_STOP_EXIT = 3

#: Code objects of the functions that call user code under a guard (:func:`guarded_caller`):
#: the trace function that raises into a call that fights its limit is set on the frames
#: below the innermost of these, never on the checker's own.
GUARDED_CALLERS: set[CodeType] = set()


def guarded_caller(function: Callable[..., Any]) -> Callable[..., Any]:
    """Declare ``function`` a caller of user code under a :class:`CallGuard` (its frame is
    where a watchdog's trace function stops); returns ``function`` unchanged."""
    GUARDED_CALLERS.add(function.__code__)
    return function


@dataclass(frozen=True)
class HardStop:
    """A stop that user code would not obey, as the last resort reports it.

    ``reason`` is the stop reason (``max-handler-seconds`` for the per-call limit, else the
    watchdog's: ``max-seconds``, ``max-memory``, ``interrupted``, ``stopped``), ``signum``
    its signal, ``why`` one line saying what happened, ``phase`` the watchdog's phase then
    (``build``, ``search``, ``report``), and ``stats`` and ``discoveries`` what the search
    had done when it was stopped (``None`` when no search ran or the search did not say).
    """

    reason: str
    signum: int | None
    why: str
    phase: str
    stats: Stats | None
    discoveries: tuple[Discovery, ...] = ()

    def result(self) -> Result:
        """The partial result to report: never complete."""
        return Result(self.stats if self.stats is not None else Stats(0, 0, 0, 0, 0.0), self.discoveries, False,
                      self.reason, signal=self.signum)

    def exit_code(self) -> int:
        """1 if violations were found (or the report of found ones was being written: it
        replays their traces), 128 + the signal for a signal, else :data:`HARD_STOP_EXIT`."""
        if self.discoveries or self.phase == "report":
            return 1
        if self.reason == "interrupted" and self.signum is not None:
            return 128 + self.signum
        return HARD_STOP_EXIT

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

    @guarded_caller
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
    * ``stop_flag``: stop (reason ``stopped``) once another process sets its ``value``;
    * ``grace``: seconds a call into user code may go on after it was told to stop before
      the process is stopped hard (``math.inf``: never);
    * ``on_hard_stop``: writes the report of a hard stop (a :class:`HardStop`) and returns
      the exit code (``None``: :meth:`HardStop.exit_code`); by default one line on stderr.
      It runs in the guardian thread while the stuck call goes on in the main thread.

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
                 stop_flag: Any = None, grace: float = GRACE,
                 on_hard_stop: Callable[[HardStop], int | None] | None = None) -> None:
        for name, value in (("max_seconds", max_seconds), ("call_seconds", call_seconds)):
            if value is not None and (not math.isfinite(value) or value < 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value}")
        if not grace > 0:
            raise ValueError(f"grace must be a number > 0, got {grace}")
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
        self.grace = grace
        self.on_hard_stop = on_hard_stop
        #: what the running search has done, read from the main thread's current frame
        #: (see :meth:`bind`); for the report of a hard stop
        self._snapshot: Callable[[FrameType | None], tuple[Stats, tuple[Discovery, ...]] | None] | None = None
        self._raised_call = -1  # the call (guard.calls) raised into last
        self._stopping_since: float | None = None  # when a stop was first raised (deadline, signal...)
        self._armed = False  # whether a trace function raises into the current call
        self._restore_trace: Any = _NOT_TRACING  # the trace function to give back after one was armed
        self._main_thread = 0
        self._guardian: threading.Thread | None = None
        self._closing = threading.Event()
        self._hard_lock = threading.Lock()

    # ---- lifetime ---------------------------------------------------------------------

    def __enter__(self) -> "Watchdog":
        self._entered = True
        now = self.clock()
        self.deadline = None if self.max_seconds is None else now + self.max_seconds
        if threading.current_thread() is not threading.main_thread():
            return self
        self._main_thread = threading.get_ident()
        self._closing.clear()
        if self.max_seconds is not None or self.call_seconds is not None or self.stop_flag is not None:
            self._start_guardian()
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
        self._closing.set()
        guardian, self._guardian = self._guardian, None
        if guardian is not None and guardian is not threading.current_thread():
            guardian.join(timeout=5)
        self._give_trace_back()
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
             memory: Callable[[], int] | None = None,
             snapshot: Callable[[FrameType | None], tuple[Stats, tuple[Discovery, ...]] | None] | None = None
             ) -> None:
        """A search starts: it stops once its transition count reaches ``stop_at[0]``,
        which the watchdog lowers to -1 when a limit or a signal asks it to stop.

        ``on_stop`` is also called then (once; from a signal handler, so it must only set a
        flag): a search running in other processes passes on the request. ``memory``
        replaces what ``max_memory`` bounds until :meth:`unbind` (a partitioned search: this
        process's memory and its workers'). ``snapshot(frame)`` gives the search's counts and
        discoveries so far, read from the stack of the main thread (``frame``, its current
        frame, stuck in user code) when the process is stopped hard; it costs the search
        nothing while it runs."""
        self.stop_at = stop_at
        self._on_stop = on_stop
        self._snapshot = snapshot
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
        self._snapshot = None

    def poll(self, now: float, frame: FrameType | None = None) -> None:
        """The loop's own check (every 1024 transitions, and when no timer runs): the
        deadline and the memory bound (``frame``: where the alarm interrupted the program)."""
        if self.deadline is not None and now >= self.deadline:
            self._limit("max-seconds", None, frame)
        elif self.max_memory is not None and self.memory() > self.max_memory:
            self._limit("max-memory", None, frame)
        elif self.stop_flag is not None and self.stop_flag.value:
            self._limit("stopped", None, frame)

    # ---- signal handlers --------------------------------------------------------------

    def _limit(self, reason: str, signum: int | None = None, frame: FrameType | None = None) -> None:
        """A limit (or the first signal) was reached: stop the search cleanly."""
        if self.phase == "report":
            return
        if self._stopping_since is None:
            self._stopping_since = self.clock()
            self._start_guardian()
        if self.phase == "build":
            if self.guard.active:
                self._raise_in_call(StopRequest(reason, signum), frame)
            raise StopRequest(reason, signum)
        if self.reason is None:
            self.reason, self.signum = reason, signum
        self.stop_at[0] = -1
        if self._on_stop is not None:
            on_stop, self._on_stop = self._on_stop, None
            on_stop()
        if self.guard.active:  # in user code: nothing of ours is half done there
            self._raise_in_call(StopRequest(self.reason, self.signum), frame)

    def _raise_in_call(self, exc: BaseException, frame: FrameType | None) -> None:
        """Raise ``exc`` inside the active call into user code, and leave it in the guard's
        ``hit``: a call that swallows it still ends as it would have. A call raised into
        before (it swallowed that and went on) also gets ``exc`` at its next line (see
        :meth:`_arm`), ``frame`` being where the signal interrupted it."""
        guard = self.guard
        guard.hit = exc
        if guard.calls == self._raised_call:
            if frame is not None:
                self._arm(frame, exc)
        else:
            self._raised_call = guard.calls
        raise exc

    def _arm(self, frame: FrameType, exc: BaseException) -> None:
        """Make the call into user code that ``frame`` belongs to raise ``exc`` again at its
        next line event: a trace function on its frames, up to the guarded caller's (never
        on the checker's own), and for the frames it calls. An ``except`` block that loops
        catches the signal handler's raise, but not this one: the next line is in the
        handler block itself. One raise per arming (CPython drops a trace function that
        raised); the next tick arms it again. It disarms itself (and gives back a trace
        function it replaced, e.g. coverage's) once the call is over."""
        if self._armed:
            return
        guard = self.guard
        call = guard.calls
        frames: list[tuple[FrameType, Any]] = []
        current: FrameType | None = frame
        while current is not None and current.f_code not in GUARDED_CALLERS and len(frames) < 10_000:
            frames.append((current, current.f_trace))
            current = current.f_back
        if current is None or not frames or len(frames) >= 10_000:
            return  # no guarded caller below: the frame is not (only) user code
        if self._restore_trace is _NOT_TRACING:
            self._restore_trace = sys.gettrace()

        def disarm() -> None:
            self._armed = False
            for traced, before in frames:
                traced.f_trace = before
            frames.clear()
            sys.settrace(None if self._restore_trace is _NOT_TRACING else self._restore_trace)

        def tracer(traced: FrameType, event: str, arg: Any) -> Any:
            if not guard.active or guard.calls != call:
                disarm()
                return None
            if event == "line":
                disarm()
                guard.hit = exc
                raise exc
            return tracer

        for traced, _before in frames:
            traced.f_trace = tracer
        self._armed = True
        sys.settrace(tracer)

    def _give_trace_back(self) -> None:
        """Give back the trace function an armed one replaced (CPython drops a trace
        function that raised, with nothing in its place); in the main thread only."""
        if self._restore_trace is not _NOT_TRACING and not self.guard.active \
                and threading.get_ident() == self._main_thread:
            previous, self._restore_trace = self._restore_trace, _NOT_TRACING
            self._armed = False
            sys.settrace(previous)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self._signals += 1
        if self.phase == "search" and self._signals == 1:
            if self.reason is None:
                self.reason, self.signum = "interrupted", signum
            self._limit(self.reason, self.signum, frame)
            return
        raise Interrupted(signum)  # outside the search, or a second signal: at once

    def _on_alarm(self, signum: int, frame: FrameType | None) -> None:
        now = self.clock()
        guard = self.guard
        if not guard.active and self._restore_trace is not _NOT_TRACING:
            self._give_trace_back()
        if self.phase != "report":
            if self.reason is None:
                self.poll(now, frame)
            elif self.phase == "search" and guard.active:
                self._raise_in_call(StopRequest(self.reason, self.signum), frame)  # the call swallowed the first one
        if self.call_seconds is None or not guard.active:
            self._seen_call = -1
            return
        if guard.calls != self._seen_call:
            self._seen_call, self._seen_since = guard.calls, now
        elif now - self._seen_since >= self.call_seconds:  # and at every tick after, while it goes on
            self._raise_in_call(CallTimeout(self.call_seconds), frame)

    # ---- the last resort ----------------------------------------------------------------

    def _start_guardian(self) -> None:
        """Start the thread that stops the process hard when user code does not stop (once;
        in the main thread's watchdog only)."""
        if self._guardian is not None or not self._main_thread or self.grace == math.inf:
            return
        self._guardian = threading.Thread(target=self._guard, name="nice-attendre guardian", daemon=True)
        self._guardian.start()

    def _guard(self) -> None:
        """The guardian thread: every so often, stop the process hard if a call into user
        code is overdue (:meth:`overdue`). It needs no signal, so it also acts when the call
        ignores or cancels the alarm."""
        interval = max(0.02, min(0.5, self.grace / 4))
        seen_call, seen_since = -1, 0.0
        while not self._closing.wait(interval):
            guard = self.guard
            now = self.clock()
            if not guard.active:
                seen_call = -1
                continue
            if guard.calls != seen_call:
                seen_call, seen_since = guard.calls, now
            if self._stopping_since is None and self.stop_flag is not None and self.stop_flag.value:
                self._stopping_since = now  # another process asked; the alarm may never tell this one
            stop = self.overdue(now, seen_since)
            if stop is not None:
                self._hard_stop(*stop)
                return

    def overdue(self, now: float, since: float) -> tuple[str, int | None, str] | None:
        """Whether the active call into user code, running since ``since``, must be stopped
        hard at ``now``: ``(reason, signum, why)``, or ``None``. It is when it has run for its
        time limit and the grace after it, or for the grace after the search was asked to
        stop (the deadline, memory, a signal, another process) or after the deadline passed
        (even if the alarm that would have told it never came)."""
        grace = self.grace
        tail = ("did not stop within {:g} s of being told to (it catches the exception that stops it, or "
                "ignores the alarm); the run was stopped hard").format(grace)
        if self.call_seconds is not None and now - since >= self.call_seconds + grace:
            return ("max-handler-seconds", None,
                    f"user code (an app handler or a property) ran past the handler time limit "
                    f"({self.call_seconds:g} s) and {tail}")
        if self.phase == "report":
            return None
        # the grace counts from when the call was told, or from its start if it came later
        if self._stopping_since is not None and now - max(self._stopping_since, since) >= grace:
            reason = self.reason or ("max-seconds" if self.deadline is not None and now >= self.deadline
                                     else "stopped")
            return (reason, self.signum,
                    f"the search was asked to stop ({reason}) inside user code (an app handler or a property), "
                    f"which {tail}")
        if self.deadline is not None and now - max(self.deadline, since) >= grace:
            return ("max-seconds", None,
                    f"the time limit ({self.max_seconds:g} s) passed inside user code (an app handler or a "
                    f"property), which {tail}")
        return None

    def _hard_stop(self, reason: str, signum: int | None, why: str) -> None:
        """The last resort: write the report of what was done (``on_hard_stop``), flush and
        end the process with its exit code. Runs in the guardian thread."""
        if not self._hard_lock.acquire(blocking=False):
            return
        code = HARD_STOP_EXIT
        try:
            snapshot = None
            if self._snapshot is not None:
                try:
                    snapshot = self._snapshot(sys._current_frames().get(self._main_thread))
                except Exception:  # noqa: BLE001 - the report goes on without the counts
                    snapshot = None
            stats, discoveries = snapshot if snapshot is not None else (None, ())
            stop = HardStop(reason, signum, why, self.phase, stats, tuple(discoveries))
            code = stop.exit_code()
            if self.on_hard_stop is None:
                done = f"; {stats.transitions:,} transitions, {stats.unique_states:,} states" if stats else ""
                sys.stderr.write(f"nice-attendre: {why}{done}\n")
            else:
                given = self.on_hard_stop(stop)
                if given is not None:
                    code = given
        except BaseException as exc:  # noqa: BLE001 - the process ends whatever happens
            try:
                sys.stderr.write(f"nice-attendre: {why} (and its report failed: {type(exc).__name__})\n")
            except BaseException:  # noqa: BLE001
                pass
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except BaseException:  # noqa: BLE001
                    pass
            os._exit(code)


#: ``Watchdog._restore_trace`` when no trace function was replaced
_NOT_TRACING = object()
