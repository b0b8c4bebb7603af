"""The command line in a child process, for tests of limits and signals.

A test of ``--max-seconds`` must not depend on how fast the machine builds the network: on
a busy machine (``nice -n 19`` beside busy cores) importing our modules and building even a
two-switch network can take more than a second. :func:`console` can start the child with
nice-attendre's modules already imported (``preloaded``), and :func:`within_seconds` runs a
command whose limit must stop the *search*, doubling the limit (up to 32 s) while it still
expires before the search starts. Every child gets SIGINT's default disposition, as a
command started from a terminal has it, even when the suite runs in the background.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

from conftest import child_preexec

#: A child that runs the command line with nice-attendre's modules already imported.
PRELOADED = ("import sys\n"
             "import nice_attendre.frontend.api, nice_attendre.frontend.cli, nice_attendre.models.network, "
             "nice_attendre.apps, nice_attendre.properties\n"
             "from nice_attendre.frontend.cli import main\n"
             "main(sys.argv[1:], prog_name='nice-attendre')\n")

#: What the report says when a limit expired before the search started.
BUILD_LIMITED = "reached while building the network"

#: The largest limit :func:`within_seconds` tries.
MOST_SECONDS = 32.0

#: Seconds a child may take beyond its limit before the test calls it hung: generous, for a
#: machine so loaded that a child gets little CPU (a full suite beside other full suites once
#: took more than 90 s to print its report and exit; alone the same command takes 2 s).
HANG_GUARD = 300


def console(*args: str, cwd: Path, timeout: float = 120, preloaded: bool = False,
            preexec: Callable[[], None] | None = None) -> subprocess.CompletedProcess[str]:
    """``nice-attendre *args`` in a child process, its output captured as text (``preloaded``:
    see :data:`PRELOADED`; ``preexec``: runs in the child after SIGINT is restored)."""
    found = shutil.which("nice-attendre", path=str(Path(sys.executable).parent))
    assert found is not None
    command = [sys.executable, "-c", PRELOADED, *args] if preloaded else [found, *args]
    steps = () if preexec is None else (preexec,)
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          preexec_fn=child_preexec(*steps))


def within_seconds(*args: str, cwd: Path, seconds: float = 2.0,
                   preexec: Callable[[], None] | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    """``console(*args, "--max-seconds", S)``, preloaded, for a test of a limit that must stop
    the search: while the limit expires before the search starts, the run is repeated with
    twice the limit, up to :data:`MOST_SECONDS`. Returns the last run and the limit it had
    (the scenarios must run longer than that in the search, so that the limit stops them)."""
    while True:
        proc = console(*args, "--max-seconds", f"{seconds:g}", cwd=cwd, timeout=seconds + HANG_GUARD,
                       preloaded=True,
                       preexec=preexec)
        if BUILD_LIMITED not in proc.stdout or seconds >= MOST_SECONDS:
            return proc, seconds
        seconds *= 2
