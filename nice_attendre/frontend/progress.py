"""Progress for logs: when stderr is not a terminal (CI, a file, a pipe), a plain line
every :data:`PLAIN_PROGRESS_SECONDS` seconds, so that long runs are not silent.

On a terminal the live line of :class:`nice_attendre.frontend.report.ProgressLine` is used instead.
"""
from __future__ import annotations

import sys
from typing import Any, TextIO

#: Seconds between two plain progress lines (of search time, as the search measures it).
PLAIN_PROGRESS_SECONDS = 10.0


class PlainProgress:
    """A progress callback writing one complete line every ``interval`` seconds of search
    (default: :data:`PLAIN_PROGRESS_SECONDS`, read when it is created).

    Contract: called with :class:`nice_attendre.checker.Progress` snapshots (the search calls
    it about twice a second); it writes a line when the snapshot's ``elapsed`` has reached the
    next multiple of ``interval``, at most one line per call, and never rewrites a line (no
    carriage returns), so a log keeps every line. ``clear`` does nothing (the lines stay).
    """

    def __init__(self, stream: TextIO | None = None, interval: float | None = None) -> None:
        if interval is None:
            interval = PLAIN_PROGRESS_SECONDS
        if not interval > 0:
            raise ValueError(f"interval must be positive, got {interval!r}")
        self.stream = stream
        self.interval = interval
        self.next_at = interval
        self.lines = 0

    def __call__(self, progress: Any) -> None:
        if progress.elapsed < self.next_at:
            return
        # the next line is due at the next multiple of the interval after this one
        self.next_at = (progress.elapsed // self.interval + 1) * self.interval
        stream = self.stream if self.stream is not None else sys.stderr
        stream.write(f"progress: {progress.transitions:,} transitions, {progress.unique_states:,} unique states, "
                     f"{progress.rate:,.0f} transitions/s, {progress.elapsed:,.0f} s elapsed\n")
        stream.flush()
        self.lines += 1

    def clear(self) -> None:
        """Nothing to erase: the lines are part of the log."""
