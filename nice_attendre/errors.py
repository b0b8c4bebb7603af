"""Typed errors of the library. Only the command line turns them into exit codes."""
from __future__ import annotations

from typing import Any


class NiceAttendreError(Exception):
    """Base of every error the library raises on purpose."""


class InputError(NiceAttendreError, ValueError):
    """Bad input from the user: an unknown name, a malformed file or option (CLI exit code 2)."""


class UnknownNameError(InputError):
    """A name (app, protocol, property, topology kind) that is not registered.

    The message lists the known names and, when one is close, suggests it.
    """

    def __init__(self, kind: str, name: str, known: list[str] | tuple[str, ...]) -> None:
        import difflib

        self.kind = kind
        self.name = name
        self.known = tuple(known)
        close = difflib.get_close_matches(name, self.known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        super().__init__(f"unknown {kind} {name!r}{hint} (known: {', '.join(self.known) or 'none'})")


class TopologyError(InputError):
    """A topology that cannot be built: bad spec, unreadable file, hosts not attached to a switch."""


class AppLoadError(InputError):
    """An app given as `path/to/file.py:ClassName` that cannot be loaded."""


class UnsupportedFeature(InputError):
    """The app uses a feature the model does not have (for example an adapted Ryu app's groups,
    meters, threads or flow timeouts): refused with the feature named, never ignored.

    Raised from inside an app handler, it is not an app bug: it ends the run (CLI exit code 2).
    """


class ModelError(NiceAttendreError):
    """A model that breaks its contract (non-deterministic `enabled`, mutated state, bad event)."""


class NondeterminismError(ModelError):
    """Replaying a trace gave another state than the search recorded: the model (in practice
    the app: a handler reading a global, the clock or unseeded randomness) is not a function
    of the state. ``step`` is the 1-based step where the replay left the recorded path,
    ``event`` its event and ``said`` what the replayed step did."""

    def __init__(self, step: int, event: object, said: list[str]) -> None:
        self.step = step
        self.event = event
        self.said = list(said)
        what = said[0] if said else str(event)
        super().__init__(
            f"the app is not deterministic: replaying a reported trace gave another state at step {step} "
            f"({what}); its handlers must depend only on their arguments (no globals, clock or unseeded "
            "randomness), so the trace cannot be shown")


def escaped(exc: BaseException) -> ModelError:
    """The error for ``exc``, a ``BaseException`` that is not an :class:`Exception` (``sys.exit``,
    GeneratorExit, a class of the user's own), raised by user code the system did not run
    as a guarded call (a state's ``__hash__``, ``__eq__`` or ``__repr__`` called to store,
    fingerprint or describe it): a search must never end silently, or with the exit code
    the user's code chose."""
    what = f"sys.exit({exc.code!r})" if isinstance(exc, SystemExit) else type(exc).__name__
    return ModelError(f"user code ended the search with {what} outside a guarded call (for example in a "
                      "state's __hash__, __eq__ or __repr__, called to store, fingerprint or describe it); "
                      "such code must return")


class Interrupted(KeyboardInterrupt):
    """A run ended by a signal (Ctrl-C's SIGINT, or SIGTERM/SIGHUP on the command line).

    A subclass of :class:`KeyboardInterrupt`, so code that stops on Ctrl-C stops on it too.
    ``signum`` is the signal's number; ``result`` is the partial
    :class:`~nice_attendre.result.Result` of the search it interrupted (``None`` when it
    came before or after a search). :func:`nice_attendre.verify` raises it after keeping the
    partial result, so a caller can still read what was explored.
    """

    def __init__(self, signum: int = 2, result: Any = None) -> None:
        super().__init__(signum)
        self.signum = signum
        self.result = result


class StopRequest(BaseException):
    """Raised inside a call into user code (an app handler) to end the search now.

    Not an :class:`Exception`, so an app handler's ``except Exception`` does not swallow it
    and the platform does not report it as an app exception. ``reason`` is the stop reason
    the search then reports (``"max-seconds"``, ``"max-memory"``, ``"interrupted"``);
    ``signum`` the signal, for ``"interrupted"``.
    """

    def __init__(self, reason: str, signum: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.signum = signum


class CallTimeout(BaseException):
    """Raised inside a call into user code that ran longer than its time limit.

    The platform reports it as an app exception of that call (with the trace that led
    there). Not an :class:`Exception`, so a handler's ``except Exception`` does not hide it.
    """

    def __init__(self, seconds: float) -> None:
        super().__init__(seconds)
        self.seconds = seconds
