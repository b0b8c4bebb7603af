"""The report of a run stopped hard: user code that would not stop (it catches what the
watchdog raises, or ignores the alarm) after its time limit, the deadline or Ctrl-C.

The watchdog's guardian thread calls the writer while the stuck call still runs in the main
thread (see :class:`~nice_attendre.watchdog.HardStop`), then ends the process with the exit
code it returns. The report is the ordinary one, from the search's counts and discoveries at
that moment, with one more line saying why; no trace is narrated (that would run the app's
handlers again), and the JSON is written when asked.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Sequence

import click

from nice_attendre.watchdog import HardStop


def hard_stop_writer(json_path: Path | None, header: dict[str, Any], net: Any = None,
                     properties: Sequence[str] = ()) -> Callable[[HardStop], int]:
    """The ``on_hard_stop`` of a verify run: prints ``STOPPED HARD: why`` on stderr, the
    partial report on stdout (the network's header once ``net`` is built, else
    ``header``'s fields), writes the JSON report to ``json_path`` if given (``header`` and
    ``stopped_hard``: why) and returns :meth:`HardStop.exit_code`."""

    def write(stop: HardStop) -> int:
        from nice_attendre.frontend.report import json_report, text_report
        from nice_attendre.output import write_atomic

        result = stop.result()
        click.echo(f"STOPPED HARD: {stop.why}", err=True)
        if net is not None:
            from nice_attendre.frontend.headers import network_header

            lines = network_header(net, list(properties))
        else:
            lines = [(key, str(value)) for key, value in header.items() if value is not None]
        lines.append(("stopped hard", stop.why))
        click.echo(text_report(result, lines, None))
        if json_path is not None:
            data = json_report(result, {**header, "stopped_hard": stop.why}, None)
            write_atomic(json_path, json.dumps(data, indent=2) + "\n", "--json")
        return stop.exit_code()

    return write
