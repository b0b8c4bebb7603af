"""The command line. Thin: each command is one library call plus printing.

Exit codes: 0 ok, 1 a property was violated, 2 bad input (usage), 130 interrupted.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable

import click

from nice_attendre.errors import InputError, NiceAttendreError

EXIT_OK, EXIT_VIOLATION, EXIT_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


class _Group(click.Group):
    """Turns library errors into one clean line and exit code 2 (tracebacks only with --debug)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except NiceAttendreError as exc:  # InputError and its kinds, ModelError
            if ctx.obj and ctx.obj.get("debug"):
                raise
            message = " ".join(str(exc).split()) or type(exc).__name__  # always one line
            click.echo(f"Error: {message}", err=True)
            ctx.exit(EXIT_INPUT)


@click.group(cls=_Group)
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.version_option(package_name="nice-attendre")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """nice-attendre: model-check OpenFlow controller apps under OpenFlow, OpenFlow-B and Attendre."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def scenario_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The options that describe what is verified (shared by verify and compare)."""
    options = [
        click.argument("app"),
        click.option("--topology", "-t", default=None, metavar="SPEC",
                     help="linear:N, a .graphml/.gml/edge-list file, or file.py:factory (default: the app's)."),
        click.option("--packets", "-n", default=1, show_default=True, type=click.IntRange(min=0), metavar="N",
                     help="Packets the sender sends."),
        click.option("--sender", default=None, metavar="HOST", help="Sending host (default: the first host)."),
        click.option("--receiver", default=None, metavar="HOST", help="Receiving host (default: the last host)."),
        click.option("--property", "-p", "properties", multiple=True, metavar="NAME",
                     help="Property to check (repeatable; default: the ones marked in `nice-attendre list`). "
                          "app-exception is always checked."),
        click.option("--app-option", "-o", "app_options", multiple=True, metavar="KEY=VALUE",
                     help="Keyword argument for the app's constructor (repeatable; true/false/none, "
                          "integers and decimals are converted)."),
        click.option("--bug", default=None, metavar="NAME",
                     help="Shortcut for -o bug=NAME: a deliberately buggy variant."),
        click.option("--max-transitions", type=click.IntRange(min=1), default=None, metavar="N",
                     help="Stop after N transitions."),
        click.option("--max-states", type=click.IntRange(min=1), default=None, metavar="N",
                     help="Stop after N unique states."),
        click.option("--max-depth", type=click.IntRange(min=0), default=None, metavar="N",
                     help="Do not expand beyond depth N."),
        click.option("--max-seconds", type=click.FloatRange(min=0), default=None, metavar="S",
                     help="Stop after S seconds (the counts so far are printed, marked INCOMPLETE)."),
        click.option("--controller-threads", default=1, show_default=True, type=click.IntRange(min=1),
                     metavar="N", help="Above 1, the commands of different controller handler calls race "
                                       "(type-3 races)."),
        click.option("--keep-going", is_flag=True, help="Report every violation, not only the first."),
        click.option("--fingerprint", is_flag=True,
                     help="Store stable 64-bit state fingerprints instead of states (less memory; the report "
                          "gives the probability that a collision hid a state)."),
        click.option("--workers", "-w", default=1, show_default=True, type=click.IntRange(min=1), metavar="N",
                     help="Explore with N processes, each owning the states whose fingerprint it is given: the "
                          "same transitions and unique states, breadth-first (max depth and traces are "
                          "shortest paths)."),
        click.option("--engine", default="processes", show_default=True, type=click.Choice(["processes", "ray"]),
                     help="Where the --workers shards run: worker processes on this machine, or Ray actors "
                          "(needs the 'cluster' extra)."),
        click.option("--address", default=None, metavar="ADDR",
                     help="With --engine ray: the Ray cluster to join (e.g. auto, or HOST:6379); default: "
                          "a local Ray instance."),
        click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="Also write the report as JSON to FILE."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _check_output(path: Path | None, option: str) -> None:
    """Fail before a long run if ``path`` cannot be written (its folder does not exist)."""
    if path is not None and not path.resolve().parent.is_dir():
        raise InputError(f"cannot write {option} {str(path)!r}: folder {str(path.parent)!r} not found")


def _app_options(app_options: tuple[str, ...], bug: str | None) -> dict[str, Any]:
    from nice_attendre.loading import parse_options

    options = parse_options(list(app_options))
    if bug is not None:
        options["bug"] = bug
    return options


def _progress() -> Any:
    from nice_attendre.report import ProgressLine

    return ProgressLine() if sys.stderr.isatty() else None


@main.command()
@scenario_options
@click.option("--protocol", "-P", default="openflow", show_default=True, metavar="NAME",
              help="openflow, openflow-b or attendre.")
@click.option("--count-load", is_flag=True,
              help="Count control-plane messages per complete execution (adds counters to the state).")
def verify(app: str, topology: str | None, packets: int, sender: str | None, receiver: str | None,
           properties: tuple[str, ...], app_options: tuple[str, ...], bug: str | None,
           max_transitions: int | None, max_states: int | None, max_depth: int | None,
           max_seconds: float | None, controller_threads: int, keep_going: bool, fingerprint: bool,
           workers: int, engine: str, address: str | None, json_path: Path | None, protocol: str,
           count_load: bool) -> None:
    """Explore every interleaving of APP on a topology and check properties.

    APP is a registered app (see `nice-attendre list`), path/to/file.py:ClassName or
    package.module:ClassName. Exit status: 0 no violation, 1 a property was violated,
    2 bad input.
    """
    from functools import partial

    from nice_attendre.api import build, check_engine, model, search
    from nice_attendre.checker import Limits
    from nice_attendre.report import json_report, text_report

    _check_output(json_path, "--json")
    check_engine(workers, engine, address)
    options = dict(topology=topology, packets=packets, protocol=protocol, properties=list(properties) or None,
                   app_options=_app_options(app_options, bug), sender=sender, receiver=receiver,
                   count_load=count_load, controller_threads=controller_threads)
    run = build(app, **options)  # type: ignore[arg-type]
    net = run.network
    progress = _progress()
    try:
        result = search(run, partial(model, app, **options),
                        limits=Limits(max_transitions, max_states, max_depth, max_seconds),
                        keep_going=keep_going, fingerprint=fingerprint, workers=workers, engine=engine,
                        address=address, progress=progress)
    finally:
        if progress is not None:
            progress.clear()
    narrate = _narrator(net)
    threads = f", {controller_threads} controller threads (commands of different calls race)" if net.threaded else ""
    header = [("app", net.app.describe()), ("protocol", net.protocol.name + threads),
              ("topology", net.topology.describe()), ("traffic", net.scenario.describe()),
              ("properties", ", ".join(p.name for p in run.properties))]
    if workers > 1 or engine != "processes":
        where = f"{workers} Ray actors" if engine == "ray" else f"{workers} worker processes"
        header.append(("search", f"partitioned over {where}, breadth-first (max depth: the longest "
                                 "shortest path; traces: shortest paths)"))
    click.echo(text_report(result, header, narrate))
    if json_path is not None:
        data = json_report(result, {"app": net.app.describe(), "protocol": net.protocol.name,
                                    "topology": net.topology.name, "packets": packets,
                                    "properties": [p.name for p in run.properties]}, narrate)
        try:
            json_path.write_text(json.dumps(data, indent=2) + "\n")
        except OSError as exc:
            raise InputError(f"cannot write --json {str(json_path)!r}: {exc.strerror or exc}") from exc
    if result.stop_reason == "interrupted":
        sys.exit(EXIT_INTERRUPTED)
    sys.exit(EXIT_OK if result.ok else EXIT_VIOLATION)


def _narrator(net: Any) -> Callable[[Any, Any], list[str]]:
    def narrate(state: Any, event: Any) -> list[str]:
        _next, notes = net.narrate(state, event)
        return notes

    return narrate


def _phrase(text: str) -> str:
    """A docstring's first sentence as a list entry: lower-case start, no final period."""
    first = text.split(" ", 1)[0]
    if first[:1].isupper() and first[1:].islower():
        text = text[0].lower() + text[1:]
    return text.removesuffix(".")


@main.command(name="list")
def list_cmd() -> None:
    """List apps, protocols, properties and topology forms."""
    from nice_attendre import properties as registry
    from nice_attendre.apps import app_class, app_names
    from nice_attendre.models.protocols import protocol_description, protocol_names

    click.echo("apps:")
    for name in app_names():
        doc = (app_class(name).__doc__ or "").strip().splitlines()
        click.echo(f"  {name:<24} {doc[0] if doc else ''}")
    click.echo("protocols:")
    for name in protocol_names():
        click.echo(f"  {name:<24} {protocol_description(name)}")
    click.echo("properties:")
    for name in registry.property_names():
        default = " (default)" if name in registry.DEFAULT_PROPERTIES else ""
        click.echo(f"  {name:<24} {_phrase(registry.describe(name))}{default}")
    click.echo(f"  {'app-exception':<24} no app handler raises an exception (always checked)")
    click.echo("topologies:")
    click.echo(f"  {'linear:N':<24} sender h1 - s1 - ... - sN - replier h2")
    click.echo(f"  {'paths:A,D':<24} two disjoint paths of A and D switches between h1 and h2 (energy-te)")
    click.echo(f"  {'FILE.graphml|.gml|other':<24} a graph file (other suffixes: edge list); hosts marked by a "
               "'host' attribute or named h1, h2, ...")
    click.echo(f"  {'FILE.py:FUNCTION':<24} a Python function returning a networkx graph")


def _register_delay() -> None:
    from nice_attendre.delay_cmd import delay

    main.add_command(delay)


def _register_experiments() -> None:
    from nice_attendre.commands import bench, compare

    main.add_command(compare)
    main.add_command(bench)


_register_delay()
_register_experiments()
