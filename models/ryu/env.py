"""What a Ryu app's code runs in: a fixed clock and refusals.

Inside :func:`handler_environment` (every handler call, and the app's construction):

* ``time.time()``, ``time.time_ns()``, ``time.monotonic()``, ``time.perf_counter()`` (and
  their ``_ns`` forms) return :data:`FIXED_TIME`; ``time.localtime()``, ``time.gmtime()`` and
  ``time.ctime()`` without an argument show that instant. (``datetime.now()`` is not covered.)
* The ``random`` module is left alone: a handler that draws random numbers (from a generator
  it did not seed with a value in the same call) is reported by the nondeterminism detector
  (:mod:`nice_attendre.models.determinism`, property ``app-nondeterminism``, exit 4), as a
  native app's is. (It used to be seeded at every call, which explored one outcome of the
  handler's choices forever, silently.)
* What the model cannot run is refused with :class:`UnsupportedFeature` naming it: threads
  (``hub.spawn``, ``hub.spawn_after``, ``threading.Thread.start``) and blocking
  (``hub.sleep``, ``time.sleep``).

The patches are undone when the call returns or raises, so nothing outside app code sees them.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from os_ken.lib import hub

from nice_attendre.errors import UnsupportedFeature

#: The clock every handler sees (seconds since the epoch: 2001-09-09 01:46:40 UTC).
FIXED_TIME = 1_000_000_000.0


def _refuse(feature: str) -> Callable[..., Any]:
    def refused(*_args: Any, **_kwargs: Any) -> Any:
        raise UnsupportedFeature(f"Ryu apps: {feature} is not supported (handlers are run one at a time, "
                                 "synchronously, by the checker)")
    return refused


def _at_fixed_time(function: Callable[..., Any]) -> Callable[..., Any]:
    def shown(secs: float | None = None) -> Any:
        return function(FIXED_TIME if secs is None else secs)
    return shown


_PATCHES: tuple[tuple[Any, str, Callable[..., Any]], ...] = (
    (time, "time", lambda: FIXED_TIME),
    (time, "time_ns", lambda: int(FIXED_TIME) * 1_000_000_000),
    (time, "monotonic", lambda: FIXED_TIME),
    (time, "monotonic_ns", lambda: int(FIXED_TIME) * 1_000_000_000),
    (time, "perf_counter", lambda: FIXED_TIME),
    (time, "perf_counter_ns", lambda: int(FIXED_TIME) * 1_000_000_000),
    (time, "localtime", _at_fixed_time(time.localtime)),
    (time, "gmtime", _at_fixed_time(time.gmtime)),
    (time, "ctime", _at_fixed_time(time.ctime)),
    (time, "sleep", _refuse("blocking (time.sleep)")),
    (hub, "sleep", _refuse("blocking (hub.sleep)")),
    (hub, "spawn", _refuse("starting threads (hub.spawn)")),
    (hub, "spawn_after", _refuse("starting threads (hub.spawn_after)")),
    (threading.Thread, "start", _refuse("starting threads (threading.Thread.start)")),
)


@contextmanager
def handler_environment() -> Iterator[None]:
    """Run the enclosed app code with the fixed clock and refusals."""
    saved = [(module, name, getattr(module, name)) for module, name, _ in _PATCHES]
    for module, name, replacement in _PATCHES:
        setattr(module, name, replacement)
    try:
        yield
    finally:
        for module, name, original in saved:
            setattr(module, name, original)
