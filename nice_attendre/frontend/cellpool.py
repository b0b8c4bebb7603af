"""Independent experiment cells run in parallel processes, results in the given order.

The grids of ``nice-attendre bench`` skip a cell when an earlier cell of the same experiment
and protocol reached the cap and every parameter of this cell is at least that cell's. With
``jobs > 1`` the cells run in a pool of processes, but the outcome is the sequential one: the
results are taken in order, and a cell is skipped exactly when it would be sequentially. A
cell whose skipping is already certain is not started; one started before that became known
runs to its end and its result is thrown away.

Why this matches the sequential rule: if cell ``j`` dominates an over-cap cell ``i < j`` that
was itself skipped, then ``i`` dominates an over-cap cell ``k`` that ran, and domination is
transitive, so ``j`` dominates ``k``: knowing any earlier over-cap result is enough.
"""
from __future__ import annotations

import multiprocessing
import signal
from typing import Any, Callable, Iterator, Sequence, TypeVar

R = TypeVar("R")


class _Interrupted:
    """What a worker process returns for a cell interrupted by a signal."""


def dominates(small: tuple[tuple[str, int], ...], big: tuple[tuple[str, int], ...]) -> bool:
    """Whether every parameter of ``big`` is at least the matching one of ``small``."""
    return all(b >= s for (_, s), (_, b) in zip(small, big))


def _ignore_sigint() -> None:
    # Ctrl-C reaches the whole process group: the parent ends the pool; workers do not die
    # one by one in the middle of the pool's bookkeeping.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _call(work: Callable[[Any], Any], spec: Any) -> Any:
    try:
        return work(spec)
    except KeyboardInterrupt:
        return _Interrupted()


def run_in_order(specs: Sequence[Any], work: Callable[[Any], R], over_cap: Callable[[R], bool],
                 jobs: int = 1) -> Iterator[tuple[Any, R | None]]:
    """Yield ``(spec, work(spec))`` for every spec in order, or ``(spec, None)`` for a skipped
    one (see the module docstring; specs have ``experiment``, ``protocol`` and ``params``).

    ``work`` must be picklable (a module-level function or a ``functools.partial`` of one)
    when ``jobs > 1``; it may raise KeyboardInterrupt for an interrupted cell, which is
    raised here (in order) and ends the pool. ``over_cap(result)`` says whether a result
    reached the cap. With ``jobs == 1`` everything runs in this process.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    # (experiment, protocol) -> [(index, params)] of the cells known to be over the cap
    over: dict[tuple[str, str], list[tuple[int, tuple[tuple[str, int], ...]]]] = {}

    def skipped(index: int) -> bool:
        spec = specs[index]
        return any(earlier < index and dominates(small, spec.params)
                   for earlier, small in over.get((spec.experiment, spec.protocol), []))

    def note(index: int, result: Any) -> None:
        if not isinstance(result, _Interrupted) and over_cap(result):
            spec = specs[index]
            over.setdefault((spec.experiment, spec.protocol), []).append((index, spec.params))

    if jobs == 1:
        for index, spec in enumerate(specs):
            if skipped(index):
                yield spec, None
                continue
            result = work(spec)
            note(index, result)
            yield spec, result
        return

    pool = multiprocessing.get_context("spawn").Pool(jobs, initializer=_ignore_sigint)
    try:
        pending: dict[int, Any] = {}  # index -> AsyncResult, at most ``jobs`` not yet taken
        noted: set[int] = set()
        submitted = 0

        def fill() -> None:
            nonlocal submitted
            while submitted < len(specs) and len(pending) < jobs:
                if not skipped(submitted):
                    pending[submitted] = pool.apply_async(_call, (work, specs[submitted]))
                submitted += 1

        for index, spec in enumerate(specs):
            fill()
            # results that finished out of order may already tell which later cells to skip
            for other, handle in pending.items():
                if other not in noted and handle.ready():
                    noted.add(other)
                    note(other, handle.get())
            handle = pending.pop(index, None)
            if handle is None or skipped(index):
                yield spec, None
                continue
            result = handle.get()
            if isinstance(result, _Interrupted):
                raise KeyboardInterrupt
            if index not in noted:
                note(index, result)
            yield spec, result
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
