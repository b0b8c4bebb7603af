"""``nice-attendre replay TRACE.json``: replay a saved trace against the app as it is now
(registered on the main group in :mod:`nice_attendre.frontend.cli`; the work is
:mod:`nice_attendre.frontend.replay`).

Exit status: 1 the trace reproduces the violation; 4 it diverges (an event is no longer
enabled, a state differs from the recorded one, or the property now holds); 2 bad input (a
malformed trace file, another version, an unknown app).
"""
from __future__ import annotations

import sys
from pathlib import Path

import click

from nice_attendre.frontend.api import DEFAULT_HANDLER_SECONDS
from nice_attendre.frontend.cli_common import FiniteFloat
from nice_attendre.frontend.exit_codes import EXIT_CODES_HELP, ExitCode
from nice_attendre.frontend.report import printable


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("trace_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--quiet", "-q", is_flag=True, help="Print only the verdict line, not the replayed steps.")
@click.option("--max-handler-seconds", type=FiniteFloat(strict=True), default=DEFAULT_HANDLER_SECONDS,
              show_default=True, metavar="S",
              help="Longest one app handler call may run; longer is an app exception (as in verify).")
def replay(trace_file: Path, quiet: bool, max_handler_seconds: float) -> None:
    """Replay a saved trace against the app: reproduced, or where it diverges.

    Rebuild the network a saved trace (verify --trace-format json --trace-out FILE) came
    from and apply its events again, one by one: say whether it still reproduces the
    violation, or exactly where it diverges.
    """
    from nice_attendre.frontend.replay import load_document, replay_document

    data = load_document(trace_file)
    outcome = replay_document(data, max_handler_seconds)
    click.echo(printable(f"  replaying     {trace_file}: {data.get('app', data['build']['app'])} under "
                         f"{data.get('protocol', data['build'].get('protocol'))}, {len(data['events'])} events, "
                         f"property {data['property']}"))
    if not quiet:
        for line in outcome.lines:
            click.echo(printable(line))
    click.echo(printable(outcome.message))
    sys.exit(int(ExitCode.VIOLATION if outcome.reproduced else ExitCode.NONDETERMINISTIC))
