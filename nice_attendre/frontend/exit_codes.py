"""The command line's exit codes, in one place (the README and ``--help`` list the same).

Only the command line exits; the library returns results and raises typed errors. A
violation found is never hidden behind another code: once a property is violated the exit
code is 1, whatever stopped the search afterwards; 4 when the app was found not to be
deterministic (what else the search found then depends on the run).
"""
from __future__ import annotations

import enum
import signal


class ExitCode(enum.IntEnum):
    """What a run of ``nice-attendre`` ended with."""

    #: The search was complete and no property was violated.
    OK = 0
    #: A property was violated (the report shows its trace).
    VIOLATION = 1
    #: Bad input or usage: an unknown name, a malformed file or option (one line, no traceback);
    #: also a feature of the app the model does not have, met in the middle of the search (the
    #: report of the part explored names it), when no violation was found before it.
    INPUT = 2
    #: Incomplete: a limit (--max-transitions, --max-states, --max-depth, --max-seconds,
    #: --max-memory), exhausted memory, a lost worker process (killed, stopped) or user code
    #: that would not stop (the run stopped hard) ended the search before it was complete,
    #: and no violation was found in the part explored.
    INCOMPLETE = 3
    #: The app is not deterministic (a handler read the clock, randomness or an object's
    #: address, gave another outcome when called again with the same input, or a replayed
    #: trace differs from the search's), or ``nice-attendre replay`` found that a saved
    #: trace no longer reproduces (it diverges). Wins over a violation found too.
    NONDETERMINISTIC = 4
    #: A bug in nice-attendre itself (one line says so; ``--debug`` shows the traceback).
    INTERNAL = 70
    #: The report could not be written in full: stdout, stderr or an output file (--json,
    #: --trace-out, --csv, --plot) failed (a full disk, an I/O error). Replaces 0 and 3 only: a
    #: violation found keeps 1, and what ended the run otherwise keeps its code (EX_IOERR).
    OUTPUT = 74
    #: Interrupted by Ctrl-C (SIGINT); SIGTERM and SIGHUP give 128 + their number.
    INTERRUPTED = 130
    #: The reader of the output went away (``| head``): 128 + SIGPIPE, as a shell reports a
    #: program killed by it. Never 0: the report was not read in full.
    BROKEN_PIPE = 141


#: The help text's summary of the codes.
EXIT_CODES_HELP = ("Exit status: 0 complete, no violation; 1 a property violated; 2 bad input; "
                   "3 incomplete (a limit, a lost worker or a hard stop ended the search, no violation found); 4 the app is not "
                   "deterministic, or a replayed trace diverges; 70 internal error (a bug in nice-attendre); 74 the "
                   "report could not be written (stdout, stderr or an output file failed: a full disk, an I/O "
                   "error); 130 interrupted by Ctrl-C, 143 by SIGTERM, 129 by SIGHUP; 141 the output's reader "
                   "went away (a closed pipe).")


def for_signal(signum: int | None) -> int:
    """128 + the signal's number (130 for Ctrl-C), the shell's convention."""
    return 128 + (signum if signum is not None else signal.SIGINT)


def for_verdict(verdict: str, signum: int | None = None) -> int:
    """The exit code of a search's verdict (``ok``, ``violated``, ``nondeterministic``,
    ``incomplete``, ``interrupted``; ``unsupported``: it stopped where the app used a feature
    the model does not have, exit 2)."""
    if verdict == "nondeterministic":
        return ExitCode.NONDETERMINISTIC
    if verdict == "unsupported":  # the search met a feature the model does not have
        return ExitCode.INPUT
    if verdict == "violated":
        return ExitCode.VIOLATION
    if verdict == "ok":
        return ExitCode.OK
    if verdict == "interrupted":
        return for_signal(signum)
    return ExitCode.INCOMPLETE


def with_lost_output(code: int) -> int:
    """The exit code of a run whose output was partly lost: :attr:`ExitCode.OUTPUT` in place
    of 0 (OK) or 3 (incomplete), which would claim a report was given; any other code (a
    violation, bad input, an interruption...) is kept."""
    return int(ExitCode.OUTPUT) if code in (ExitCode.OK, ExitCode.INCOMPLETE) else int(code)
