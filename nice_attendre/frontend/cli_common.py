"""What the commands share: option types, the scenario options of ``verify`` and
``compare``, their translation into library keywords, output checks, and how a finished run
ends (its report written, its exit code). Every command module imports these from here,
and :mod:`nice_attendre.frontend.cli` registers the commands: no command module imports the CLI
group, so there is no import cycle."""
from __future__ import annotations

import math
import re
import sys
import traceback
from pathlib import Path
from typing import Any, Callable, NoReturn, Sequence

import click

from nice_attendre.errors import InputError, NiceAttendreError
from nice_attendre.partition import FINGERPRINT
from nice_attendre.frontend.exit_codes import ExitCode, for_signal, for_verdict
from nice_attendre.frontend.report import printable, signal_name


def error_line(message: str) -> str:
    """One line for an error message: whitespace runs collapsed, unprintables escaped."""
    return printable(" ".join(message.split()))


def internal_error_line(exc: BaseException) -> str:
    """The one line printed for a bug in nice-attendre."""
    return (f"internal error: {error_line(f'{type(exc).__name__}: {exc}')} -- this is a bug in nice-attendre, "
            "not in your app; run again with --debug for the traceback and please report it")


class FiniteFloat(click.ParamType):
    """A finite number of seconds: at least ``low`` (above it when ``strict``); no nan or inf."""

    name = "seconds"

    def __init__(self, low: float = 0.0, strict: bool = False) -> None:
        self.low = low
        self.strict = strict

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        if number < self.low or (self.strict and number == self.low):
            self.fail(f"{value!r} must be {'above' if self.strict else 'at least'} {self.low:g}", param, ctx)
        return number


class ThreadMode(click.ParamType):
    """``--threaded-controller [per-switch|any]``: the way handler calls race (the option
    alone is ``per-switch``; not given, ``False``: a single-threaded controller)."""

    name = "per-switch|any"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from nice_attendre.models.channels import THREAD_MODES

        if value is None or value is False or value in THREAD_MODES:
            return value or False
        self.fail(f"{value!r} is not one of {', '.join(THREAD_MODES)} (given alone, the option means "
                  "per-switch: put it after the app, or write --threaded-controller=per-switch)", param, ctx)


_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgt]?)(?:i?b)?\s*", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``"512M"``, ``"2G"``, ``"1.5GiB"``, ``"1048576"`` -> bytes (K, M, G, T are powers of 1024)."""
    match = _SIZE.fullmatch(text)
    if not match:
        raise ValueError(f"{text!r} is not a size (e.g. 512M, 2G)")
    number = float(match.group(1)) * 1024 ** " kmgt".index(match.group(2).lower() or " ")
    if not math.isfinite(number) or number < 1:
        raise ValueError(f"{text!r} is not a positive size")
    return int(number)


class MemorySize(click.ParamType):
    """A memory size such as 512M or 2G, in bytes."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return parse_size(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def scenario_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The options that describe what is verified (shared by verify and compare)."""
    from nice_attendre.frontend.api import DEFAULT_HANDLER_SECONDS, MAX_PACKETS

    options = [
        click.argument("app"),
        click.option("--topology", "-t", default=None, metavar="SPEC",
                     help="linear:N, star:N, paths:A,D, a .graphml/.gml/edge-list file, or file.py:factory "
                          "(default: the app's)."),
        click.option("--packets", "-n", default=None, type=click.IntRange(min=0, max=MAX_PACKETS),
                     metavar="N", help="Packets the sender sends (default 1)."),
        click.option("--flow", "flows", multiple=True, metavar="SRC->DST[:K=V,...]",
                     help="A flow of your own (repeatable; replaces the app's traffic): "
                          "h1->h2:packets=2,proto=tcp,sport=1000,dport=80,reply=tcp; reply is none, echo or "
                          "tcp; h1->broadcast:target=h2 is an ARP-like request."),
        click.option("--scenario", "scenario_file", default=None, metavar="FILE.toml",
                     help="Flows (and host moves) from a TOML file (see the README)."),
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
                     help="Stop after N transitions (exit 3 if no violation was found)."),
        click.option("--max-states", type=click.IntRange(min=1), default=None, metavar="N",
                     help="Stop after N unique states."),
        click.option("--max-depth", type=click.IntRange(min=0), default=None, metavar="N",
                     help="Do not expand beyond depth N."),
        click.option("--max-seconds", type=FiniteFloat(), default=None, metavar="S",
                     help="Stop after S seconds, counted from the start (building the network included)."),
        click.option("--max-memory", type=MemorySize(), default=None, metavar="SIZE",
                     help="Stop cleanly once the process uses more than SIZE of memory (e.g. 4G, 512M)."),
        click.option("--max-handler-seconds", type=FiniteFloat(strict=True), default=DEFAULT_HANDLER_SECONDS,
                     show_default=True, metavar="S",
                     help="An app handler call that runs longer is the violation app-exception; a call to "
                          "a property of your own that does, a violation of that property."),
        click.option("--threaded-controller", type=ThreadMode(), is_flag=False, flag_value="per-switch",
                     default=False, metavar="[per-switch|any]",
                     help="Controller handler calls race: their commands interleave at each switch (type-3 "
                          "races). per-switch (the option alone): each switch's messages are handled in "
                          "order, one call at a time, as os-ken does; any: any number of calls in flight "
                          "(a superset of every fixed thread count), one switch's messages in any order too."),
        click.option("--fault", "faults", multiple=True, metavar="KIND=N",
                     help="Inject up to N faults of KIND (repeatable): loss, duplicate, reorder (packets on "
                          "a link), link (a link goes down, later up), control (a control message lost), "
                          "restart (a switch restarts empty)."),
        click.option("--command-order", type=click.Choice(["fifo", "any"]), default="fifo", show_default=True,
                     help="fifo: a switch executes commands in arrival order (the paper's and NICE's "
                          "assumption); any: in any order no barrier forbids, as OpenFlow allows."),
        click.option("--joins-first", is_flag=True,
                     help="Start traffic only once every switch has joined and executed the commands the app "
                          "sent it at join (and the app has handled the switches' answers). Default: hosts may "
                          "send while switches join (an OpenFlow 1.3 switch drops a frame that beats its "
                          "table-miss entry: the race is real)."),
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
        click.option("--partition", default=FINGERPRINT, show_default=True, metavar="PART",
                     help="With --workers or --engine ray: which shard owns a state: by its fingerprint "
                          "(even shares), or by the hash of one kind of slot (app, host, table, buffer, "
                          "port...: successors mostly stay in their shard; faster for some apps, slower for "
                          "others) or of several joined by commas (host,ctrlq). Results are the same."),
        click.option("--address", default=None, metavar="ADDR",
                     help="With --engine ray: the Ray cluster to join (e.g. auto, or HOST:6379); default: "
                          "a local Ray instance."),
        click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="Also write the report as JSON to FILE (atomically; an older FILE is removed first)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def partitioned_search(workers: int, engine: str, partition: str | None) -> str | None:
    """How a report describes a partitioned search (None for the one-process search):
    where its shards ran, and how they shared the states."""
    if workers == 1 and engine == "processes":
        return None
    where = f"{workers} Ray actors" if engine == "ray" else f"{workers} worker processes"
    return (f"partitioned over {where}, breadth-first (max depth: the longest shortest path; traces: "
            f"shortest paths){f'; {partition}' if partition else ''}")


def _check_output(path: Path | None, option: str) -> None:
    """Before a long run: fail if ``path`` cannot be written; remove an older file there."""
    from nice_attendre.output import prepare

    prepare(path, option)


def _check_plot(path: Path | None) -> None:
    """Before a long run: ``--plot`` must be writable and matplotlib installed."""
    _check_output(path, "--plot")
    if path is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise InputError("--plot needs matplotlib: pip install 'nice-attendre[plot]'") from None


def _traffic(packets: int | None, flows: tuple[str, ...], scenario_file: str | None) -> dict[str, Any]:
    """The traffic keywords of :func:`nice_attendre.frontend.api.build` from the command line's options."""
    if not flows and scenario_file is None:
        return {"packets": 1 if packets is None else packets}
    if packets is not None:
        raise InputError("--packets is for the app's own traffic; with --flow or --scenario give "
                         "packets=N per flow")
    if flows and scenario_file is not None:
        raise InputError("give --flow or --scenario, not both")
    return {"packets": 1, "flows": list(flows) or None, "scenario": scenario_file}


def _app_options(app_options: tuple[str, ...], bug: str | None) -> dict[str, Any]:
    from nice_attendre.frontend.loading import parse_options

    options = parse_options(list(app_options))
    if bug is not None:
        options["bug"] = bug
    return options


def _progress() -> Any:
    """The progress callback: a live line on a terminal, else a plain line every
    :data:`nice_attendre.frontend.progress.PLAIN_PROGRESS_SECONDS` seconds (CI logs are not silent)."""
    from nice_attendre.frontend.progress import PlainProgress
    from nice_attendre.frontend.report import ProgressLine

    return ProgressLine() if sys.stderr.isatty() else PlainProgress()


def _checkpoint_warning(exc: Exception) -> None:
    click.echo(f"warning: {error_line(str(exc))}; the search goes on", err=True)


def silence_stdout() -> None:
    """After a broken pipe: point stdout at the null device, so that Python's final flush
    of what is still buffered does not raise again at exit."""
    from nice_attendre.output import silence

    silence(sys.stdout)


Writer = Callable[[], None]


def _stdout_failed() -> bool:
    """Whether writing to stdout has failed in this command (see :func:`nice_attendre.output.guard_streams`)."""
    from nice_attendre.output import GuardedStream

    stream = sys.stdout
    return isinstance(stream, GuardedStream) and stream.failed


def say_summary(line: str) -> None:
    """Print a report's last line (``FAILED: ...``) on stdout, or on stderr once stdout has failed."""
    click.echo(line, err=_stdout_failed())


def finish(verdict: str, signum: int | None, summary: Callable[[], str], write: Writer | Sequence[Writer],
           ctx: click.Context | None = None) -> NoReturn:
    """Write the report of finished searches and exit with the verdict's code.

    ``write`` is one writer or several (the text on stdout, the JSON, the trace file), each
    tried even when one before it failed, so that a full stdout does not lose the JSON. A
    violation already found is never lost: the ``summary`` line (``FAILED: ...``) is printed
    again when the report was cut short (on stderr if stdout failed) and the exit code is 1
    (4 for a nondeterministic app).
    Otherwise:

    * Ctrl-C, SIGTERM while writing: the writers left are skipped; the signal's code (130);
    * the reader went away (a closed pipe on stdout): 141, silently;
    * stdout or an output file could not be written (a full disk, an I/O error): one line
      on stderr, 74;
    * other bad input while writing: one line, 2;
    * a bug of ours: one line (the traceback with ``--debug``), 70.
    """
    from nice_attendre.output import OutputWriteError, StreamError

    violated = verdict in ("violated", "nondeterministic")
    code = for_verdict(verdict, signum)
    found = code  # the code of a finding (1, or 4 for a nondeterministic app) survives a failed write
    debug = bool(ctx and ctx.obj and ctx.obj.get("debug"))
    failed: set[int] = set()
    cut_short = False  # the summary line must be said again
    for writer in ([write] if callable(write) else list(write)):
        try:
            writer()
        except KeyboardInterrupt as exc:
            stopped_by = getattr(exc, "signum", None)
            click.echo(f"interrupted ({signal_name(stopped_by)}) while writing the report", err=True)
            say_summary(summary())
            code = found if violated else for_signal(stopped_by)
            sys.exit(int(code))
        except BrokenPipeError:  # the reader went away (`| head`): the verdict's code stays
            silence_stdout()
            failed.add(ExitCode.BROKEN_PIPE)
        except (StreamError, OutputWriteError) as exc:  # a full disk, an I/O error
            click.echo(f"Error: {error_line(str(exc))}", err=True)
            cut_short = cut_short or (isinstance(exc, StreamError) and violated)
            failed.add(ExitCode.OUTPUT)
        except NiceAttendreError as exc:
            click.echo(f"Error: {error_line(str(exc))}", err=True)
            failed.add(ExitCode.INPUT)
        except Exception as exc:  # noqa: BLE001 - a bug of ours while reporting
            if debug:
                traceback.print_exc()
            click.echo(internal_error_line(exc), err=True)
            cut_short = True
            failed.add(ExitCode.INTERNAL)
    if cut_short:
        say_summary(summary())
    if violated:
        code = found
    else:
        for worst in (ExitCode.INTERNAL, ExitCode.OUTPUT, ExitCode.BROKEN_PIPE, ExitCode.INPUT):
            if worst in failed:
                code = worst
                break
    sys.exit(int(code))
