"""``nice-attendre replay TRACE.json``: replay a saved trace against the app as it is now
(registered on the main group in :mod:`nice_attendre.frontend.cli`; the work is
:mod:`nice_attendre.frontend.replay`).

Exit status: 1 the trace reproduces the violation; 4 it diverges (an event is no longer
enabled, a state differs from the recorded one, or the property now holds); 2 bad input (a
malformed trace file, another version, an unknown app, a file or module the trace names that
the user did not name: see :mod:`nice_attendre.frontend.replay_sources`).
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
@click.option("--app", "app", default=None, metavar="PATH:CLASS",
              help="The app file (or module) the trace names, as found here: needed when the trace's app is "
                   "not a registered one; the class must be the trace's.")
@click.option("--topology", "-t", "topology", default=None, metavar="PATH[:FUNCTION]",
              help="The topology file or factory the trace names, as found here (a graph file for a graph "
                   "file; the same function for a factory).")
@click.option("--property", "properties", multiple=True, metavar="PATH:NAME",
              help="A property file (or module) the trace names, as found here (repeat for each; the NAME must "
                   "be the trace's).")
@click.option("--scenario", "scenario", default=None, metavar="PATH",
              help="The scenario file the trace names, as found here.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the verdict line, not the replayed steps.")
@click.option("--max-handler-seconds", type=FiniteFloat(strict=True), default=DEFAULT_HANDLER_SECONDS,
              show_default=True, metavar="S",
              help="Longest one app handler call may run; longer is an app exception (as in verify).")
def replay(trace_file: Path, app: str | None, topology: str | None, properties: tuple[str, ...],
           scenario: str | None, quiet: bool, max_handler_seconds: float) -> None:
    """Replay a saved trace against the app: reproduced, or where it diverges.

    Rebuild the network a saved trace (verify --trace-format json --trace-out FILE) came
    from and apply its events again, one by one: say whether it still reproduces the
    violation, or exactly where it diverges.

    Replay runs only code you name. Registered apps, generated topologies (linear:N,
    star:N, paths:A,D) and property names are taken from the trace; an app, topology,
    property or scenario the trace names by a file or module must be given again with
    --app PATH:CLASS, --topology PATH[:FUNCTION], --property PATH:NAME or --scenario PATH
    (the path may differ from the trace's, the name after the colon must be the same).
    Otherwise replay stops before it imports or reads anything, naming the file and the
    option (exit 2).
    """
    from nice_attendre.frontend.replay import Sources, load_document, replay_document
    from nice_attendre.frontend.replay_sources import substitutions, trusted_build

    data = load_document(trace_file)
    sources = Sources(app, topology, properties, scenario)
    used = trusted_build(data["build"], sources)
    outcome = replay_document(data, max_handler_seconds, sources)
    click.echo(printable(f"  replaying     {trace_file}: {data.get('app', data['build']['app'])} under "
                         f"{data.get('protocol', data['build'].get('protocol'))}, {len(data['events'])} events, "
                         f"property {data['property']}"))
    if not quiet:
        for option, was, now in substitutions(data["build"], used):
            click.echo(printable(f"  using         {option} {now} (the trace's: {was})"))
        for line in outcome.lines:
            click.echo(printable(line))
    click.echo(printable(outcome.message))
    sys.exit(int(ExitCode.VIOLATION if outcome.reproduced else ExitCode.NONDETERMINISTIC))
