"""The command line. Thin: each command is one library call plus printing.

Exit codes (named in :mod:`nice_attendre.exit_codes`): 0 complete and no violation, 1 a
property violated, 2 bad input, 3 incomplete (a limit ended the search, no violation found),
4 the app is not deterministic (or, for ``replay``, a saved trace diverges), 70 internal
error (a bug in nice-attendre), 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP. SIGTERM and SIGHUP end a run like Ctrl-C: the partial report and
JSON are written.
"""
from __future__ import annotations

import json
import math
import re
import signal
import sys
import textwrap
import time
import traceback
from pathlib import Path
from typing import Any, Callable, NoReturn

import click

from nice_attendre.errors import InputError, NiceAttendreError, NondeterminismError, StopRequest
from nice_attendre.exit_codes import EXIT_CODES_HELP, ExitCode, for_signal, for_verdict
from nice_attendre.report import printable, signal_name


#: Signals that end a run like Ctrl-C (what `timeout`, CI cancellation and `docker stop` send).
TERMINATING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


def error_line(message: str) -> str:
    """One line for an error message: whitespace runs collapsed, unprintables escaped."""
    return printable(" ".join(message.split()))


class _Group(click.Group):
    """Turns what ends a command into its exit code and one clean line on stderr:

    * a library error (bad input) -> 2;
    * Ctrl-C, SIGTERM or SIGHUP outside a search (importing, building, reporting) -> 130,
      143 or 129;
    * exhausted memory outside a search -> 3;
    * anything else is a bug in nice-attendre -> 70.

    With ``--debug`` the traceback is printed too.
    """

    def invoke(self, ctx: click.Context) -> Any:
        from nice_attendre.watchdog import raise_interrupted

        saved = {signum: signal.getsignal(signum) for signum in TERMINATING}
        for signum in TERMINATING:
            if saved[signum] in (signal.SIG_DFL, None):
                signal.signal(signum, raise_interrupted)
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except NiceAttendreError as exc:  # InputError and its kinds, ModelError
            code = ExitCode.NONDETERMINISTIC if isinstance(exc, NondeterminismError) else ExitCode.INPUT
            self._fail(ctx, f"Error: {error_line(str(exc)) or type(exc).__name__}", code)
        except KeyboardInterrupt as exc:
            self._fail(ctx, f"interrupted ({signal_name(getattr(exc, 'signum', None))})",
                       for_signal(getattr(exc, "signum", None)), show_traceback=False)
        except StopRequest as exc:  # a limit reached outside a search
            self._fail(ctx, f"INCOMPLETE: {exc.reason} reached before the search", ExitCode.INCOMPLETE)
        except MemoryError:
            self._fail(ctx, "Error: out of memory (try --max-memory, a smaller scenario or --fingerprint)",
                       ExitCode.INCOMPLETE)
        except Exception as exc:  # noqa: BLE001 - everything else is a bug of ours
            self._fail(ctx, internal_error_line(exc), ExitCode.INTERNAL)
        finally:
            for signum, handler in saved.items():
                signal.signal(signum, handler if handler is not None else signal.SIG_DFL)

    #: Commands imported on first use: name -> (loader returning the command, the text
    #: ``--help`` lists for it), so that ``--help`` does not import their modules.
    lazy: dict[str, tuple[Callable[[], click.Command], str]] = {}

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name``, importing a lazy one's module on first use."""
        if cmd_name not in self.commands and cmd_name in self.lazy:
            self.add_command(self.lazy[cmd_name][0](), cmd_name)
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``--help``, as click writes it, without importing lazy commands."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            command = self.commands.get(name)
            if command is None:
                rows.append((name, click.Command(name, help=self.lazy[name][1]).get_short_help_str(limit)))
            elif not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    @staticmethod
    def _fail(ctx: click.Context, line: str, code: int, show_traceback: bool = True) -> NoReturn:
        if show_traceback and ctx.obj and ctx.obj.get("debug"):
            traceback.print_exc()
        click.echo(line, err=True)
        ctx.exit(int(code))


def internal_error_line(exc: BaseException) -> str:
    """The one line printed for a bug in nice-attendre."""
    return (f"internal error: {error_line(f'{type(exc).__name__}: {exc}')} -- this is a bug in nice-attendre, "
            "not in your app; run again with --debug for the traceback and please report it")


@click.group(cls=_Group, epilog=EXIT_CODES_HELP)
@click.option("--debug", is_flag=True, help="Show tracebacks with errors (exit codes stay the same).")
@click.version_option(package_name="nice-attendre")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """nice-attendre: model-check OpenFlow controller apps under OpenFlow, OpenFlow-B and Attendre."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


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
    from nice_attendre.api import DEFAULT_HANDLER_SECONDS, MAX_PACKETS

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
                     help="An app handler call that runs longer is the violation app-exception."),
        click.option("--threaded-controller", is_flag=True,
                     help="Controller handler calls race, any number in flight (a superset of every fixed "
                          "thread count): their commands interleave at each switch (type-3 races) and one "
                          "switch's messages may be handled in any order."),
        click.option("--fault", "faults", multiple=True, metavar="KIND=N",
                     help="Inject up to N faults of KIND (repeatable): loss, duplicate, reorder (packets on "
                          "a link), link (a link goes down, later up), control (a control message lost), "
                          "restart (a switch restarts empty)."),
        click.option("--command-order", type=click.Choice(["fifo", "any"]), default="fifo", show_default=True,
                     help="fifo: a switch executes commands in arrival order (the paper's and NICE's "
                          "assumption); any: in any order no barrier forbids, as OpenFlow allows."),
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
                     help="Also write the report as JSON to FILE (atomically; an older FILE is removed first)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


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
    """The traffic keywords of :func:`nice_attendre.api.build` from the command line's options."""
    if not flows and scenario_file is None:
        return {"packets": 1 if packets is None else packets}
    if packets is not None:
        raise InputError("--packets is for the app's own traffic; with --flow or --scenario give "
                         "packets=N per flow")
    if flows and scenario_file is not None:
        raise InputError("give --flow or --scenario, not both")
    return {"packets": 1, "flows": list(flows) or None, "scenario": scenario_file}


def _app_options(app_options: tuple[str, ...], bug: str | None) -> dict[str, Any]:
    from nice_attendre.loading import parse_options

    options = parse_options(list(app_options))
    if bug is not None:
        options["bug"] = bug
    return options


def _progress() -> Any:
    """The progress callback: a live line on a terminal, else a plain line every
    :data:`nice_attendre.progress.PLAIN_PROGRESS_SECONDS` seconds (CI logs are not silent)."""
    from nice_attendre.progress import PlainProgress
    from nice_attendre.report import ProgressLine

    return ProgressLine() if sys.stderr.isatty() else PlainProgress()


def _checkpoint_warning(exc: Exception) -> None:
    click.echo(f"warning: {error_line(str(exc))}; the search goes on", err=True)


def finish(verdict: str, signum: int | None, summary: Callable[[], str], write: Callable[[], None],
           ctx: click.Context | None = None) -> NoReturn:
    """Write the report of finished searches with ``write`` and exit with the verdict's code.

    A violation already found is never lost: if writing is interrupted (Ctrl-C, SIGTERM),
    fails (a full disk) or crashes, the ``summary`` line (``FAILED: ...``) is still printed
    and the exit code is 1 for a violation; otherwise it is that of the interruption (130),
    of bad output (2) or of an internal error (70).
    """
    violated = verdict == "violated"
    code = for_verdict(verdict, signum)
    debug = bool(ctx and ctx.obj and ctx.obj.get("debug"))
    try:
        write()
    except KeyboardInterrupt as exc:
        stopped_by = getattr(exc, "signum", None)
        click.echo(f"interrupted ({signal_name(stopped_by)}) while writing the report", err=True)
        click.echo(summary())
        code = ExitCode.VIOLATION if violated else for_signal(stopped_by)
    except NiceAttendreError as exc:
        click.echo(f"Error: {error_line(str(exc))}", err=True)
        code = ExitCode.VIOLATION if violated else ExitCode.INPUT
    except Exception as exc:  # noqa: BLE001 - a bug of ours while reporting
        if debug:
            traceback.print_exc()
        click.echo(internal_error_line(exc), err=True)
        click.echo(summary())
        code = ExitCode.VIOLATION if violated else ExitCode.INTERNAL
    sys.exit(int(code))


@main.command(epilog=EXIT_CODES_HELP)
@scenario_options
@click.option("--protocol", "-P", default="openflow", show_default=True, metavar="NAME[:KEY=VALUE,...]",
              help="openflow, openflow-b, attendre, pif, buffer or batch, with the variant's parameters "
                   "(e.g. pif:clone=in_port,eth_src,eth_dst,action=drop; see `nice-attendre list`).")
@click.option("--count-load", is_flag=True,
              help="Count control-plane messages per complete execution (adds counters to the state).")
@click.option("--checkpoint", "checkpoint_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Save the search to FILE periodically and when it stops (limits, Ctrl-C), to --resume it.")
@click.option("--checkpoint-every", type=FiniteFloat(), default=60.0, show_default=True, metavar="S",
              help="Seconds between periodic checkpoints.")
@click.option("--resume", "resume_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Continue the search saved in FILE by --checkpoint (same app, topology and options).")
@click.option("--shortest", is_flag=True,
              help="Search breadth-first so that every counterexample is a shortest one (one process; not "
                   "with --workers, --engine ray, --checkpoint or --resume).")
@click.option("--trace-format", type=click.Choice(["text", "json", "mermaid"]), default="text", show_default=True,
              help="How traces are written with --trace-out: text (as printed), json (for `nice-attendre "
                   "replay`) or mermaid (a sequence diagram).")
@click.option("--trace-out", "trace_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the first violation's trace to FILE in --trace-format (atomically).")
@click.option("--no-memo", is_flag=True,
              help="Run every transition's handlers instead of replaying memoised ones (slower; the same "
                   "results).")
@click.pass_context
def verify(ctx: click.Context, app: str, topology: str | None, packets: int | None, flows: tuple[str, ...],
           scenario_file: str | None, sender: str | None,
           receiver: str | None, properties: tuple[str, ...], app_options: tuple[str, ...], bug: str | None,
           max_transitions: int | None, max_states: int | None, max_depth: int | None,
           max_seconds: float | None, max_memory: int | None, max_handler_seconds: float,
           faults: tuple[str, ...], threaded_controller: bool, command_order: str, keep_going: bool,
           fingerprint: bool, workers: int, engine: str, address: str | None,
           json_path: Path | None, protocol: str, count_load: bool, checkpoint_path: Path | None,
           checkpoint_every: float, resume_path: Path | None, no_memo: bool, shortest: bool = False,
           trace_format: str = "text", trace_path: Path | None = None) -> None:
    """Explore every interleaving of APP on a topology and check properties.

    APP is a registered app (see `nice-attendre list`), path/to/file.py:ClassName or
    package.module:ClassName.
    """
    from functools import partial

    from nice_attendre.api import build, check_engine, model, not_started, search
    from nice_attendre.models.faults import KINDS as FAULT_KINDS
    from nice_attendre.models.faults import parse_budgets
    from nice_attendre.checker import Limits
    from nice_attendre.headers import network_header
    from nice_attendre.output import check_writable, write_atomic
    from nice_attendre.report import CheckedNarrator, json_report, text_report, verdict_line
    from nice_attendre.watchdog import Watchdog

    limits = Limits(max_transitions, max_states, max_depth, max_seconds, max_memory)
    traffic = _traffic(packets, flows, scenario_file)
    packets = traffic["packets"]
    _check_output(json_path, "--json")
    _check_output(trace_path, "--trace-out")
    check_engine(workers, engine, address)
    if shortest:
        from nice_attendre.breadth_first import check_shortest

        check_shortest(workers, engine, resume_path, checkpoint_path)
    if checkpoint_path is not None:
        check_writable(checkpoint_path, "--checkpoint")
    if resume_path is not None and not resume_path.is_file():
        why = "is not a file" if resume_path.exists() else "not found"
        raise InputError(f"--resume: checkpoint {str(resume_path)!r} {why}")
    started = time.monotonic()
    with Watchdog(max_seconds=max_seconds, max_memory=max_memory, call_seconds=max_handler_seconds) as watchdog:
        options = dict(topology=topology, protocol=protocol, **traffic, properties=list(properties) or None,
                       app_options=_app_options(app_options, bug), sender=sender, receiver=receiver,
                       count_load=count_load, threaded_controller=threaded_controller,
                       command_order=command_order, faults=parse_budgets(faults) or None,
                       **({"memo": False} if no_memo else {}))
        try:
            run = build(app, **options, guard=watchdog.guard)  # type: ignore[arg-type]
        except StopRequest as stop:  # a limit reached while importing the app or building the network
            result = not_started(stop.reason, stop.signum, time.monotonic() - started)
            stopped_header = {"app": app, "protocol": protocol, "topology": topology, "packets": packets}
            limit = stop.reason

            def write_nothing() -> None:
                click.echo(f"INCOMPLETE: --{limit} reached while building the network (importing the app, "
                           "switch joins); nothing was explored")
                if json_path is not None:
                    write_atomic(json_path, json.dumps(json_report(result, stopped_header, None), indent=2) + "\n",
                                 "--json")

            finish(result.verdict, result.signal, lambda: verdict_line(result), write_nothing, ctx)
        net = run.network
        progress = _progress()
        try:
            result = search(run, partial(model, app, **options), limits=limits, keep_going=keep_going,
                            fingerprint=fingerprint, watchdog=watchdog, progress=progress,
                            checkpoint=checkpoint_path, resume=resume_path, checkpoint_every=checkpoint_every,
                            on_checkpoint_error=_checkpoint_warning, workers=workers, engine=engine,
                            address=address, shortest=shortest)
        finally:
            if progress is not None:
                progress.clear()
        narrate = CheckedNarrator(result, net.narrate, net.narrate_initial)
        header = network_header(net, [p.name for p in run.properties])
        if workers > 1 or engine != "processes":
            where = f"{workers} Ray actors" if engine == "ray" else f"{workers} worker processes"
            header.append(("search", f"partitioned over {where}, breadth-first (max depth: the longest "
                                     "shortest path; traces: shortest paths)"))
        if shortest:
            header.append(("search", "breadth-first (--shortest: traces are shortest paths; max depth: "
                                     "the longest shortest path)"))
        if no_memo:
            header.append(("memo", "off (--no-memo)"))
        if resume_path is not None:
            header.append(("resumed from", str(resume_path)))
        if checkpoint_path is not None:
            header.append(("checkpoint", str(checkpoint_path)))

        def write() -> None:
            click.echo(text_report(result, header, narrate))
            if json_path is not None:
                data = json_report(result, {"app": net.app.describe(), "protocol": net.protocol.name,
                                            "protocol_params": net.protocol.settings_json(),
                                            "protocol_spec": net.protocol.label(),
                                            "command_order": net.options.command_order,
                                            "faults": dict(zip(FAULT_KINDS, net.options.faults or
                                                               (0,) * len(FAULT_KINDS))),
                                            "threaded_controller": net.threaded,
                                            "topology": net.topology.name, "packets": packets,
                                            "traffic": net.scenario.describe(),
                                            "properties": [p.name for p in run.properties]}, narrate)
                write_atomic(json_path, json.dumps(data, indent=2) + "\n", "--json")
            if trace_path is not None:
                from nice_attendre.trace_format import write_trace

                if not write_trace(trace_path, trace_format, result, net, {"app": app, **options}, narrate, header):
                    click.echo("--trace-out: no violation with a trace; nothing written", err=True)

        finish(result.verdict, result.signal, lambda: verdict_line(result), write, ctx)


def _phrase(text: str) -> str:
    """A docstring's first sentence as a list entry: lower-case start, no final period."""
    first = text.split(" ", 1)[0]
    if first[:1].isupper() and first[1:].islower():
        text = text[0].lower() + text[1:]
    return text.removesuffix(".")


def _entry(name: str, text: str) -> str:
    """One entry of ``list``: the name, then its description wrapped at 100 columns under itself."""
    return textwrap.fill(text, width=100, initial_indent=f"  {name:<24} ", subsequent_indent=" " * 27)


@main.command(name="list")
def list_cmd() -> None:
    """List apps, protocols, properties and topology forms."""
    from nice_attendre import properties as registry
    from nice_attendre.apps import app_class, app_names
    from nice_attendre.models.protocols import protocol_description, protocol_names, protocol_params

    click.echo("apps:")
    for name in app_names():
        doc = (app_class(name).__doc__ or "").strip().splitlines()
        click.echo(_entry(name, doc[0] if doc else ""))
    click.echo("protocols:")
    for name in protocol_names():
        click.echo(_entry(name, protocol_description(name)))
        for param in protocol_params(name):  # continuation lines of the entry
            click.echo(textwrap.fill(param.describe(), width=100, initial_indent=" " * 29,
                                     subsequent_indent=" " * 31))
    click.echo("properties:")
    for name in registry.property_names():
        default = " (default)" if name in registry.DEFAULT_PROPERTIES else ""
        click.echo(_entry(name, _phrase(registry.describe(name)) + default))
    click.echo(_entry("app-exception", "no app handler raises an exception (always checked)"))
    click.echo("topologies:")
    click.echo(_entry("linear:N", "sender h1 - s1 - ... - sN - replier h2"))
    click.echo(_entry("star:N", "one switch s1 with hosts h1 ... hN"))
    click.echo(_entry("paths:A,D", "two disjoint paths of A and D switches between h1 and h2 (energy-te)"))
    click.echo(_entry("FILE.graphml|.gml|other", "a graph file (other suffixes: edge list); hosts marked by a "
                      "'host' attribute or named h1, h2, ..."))
    click.echo(_entry("FILE.py:FUNCTION", "a function of that file returning a networkx graph (or "
                      "MODULE:FUNCTION, declared with @topology_factory)"))


def _load_delay() -> click.Command:
    from nice_attendre.delay_cmd import delay

    return delay


def _load_compare() -> click.Command:
    from nice_attendre.commands import compare

    return compare


def _load_bench() -> click.Command:
    from nice_attendre.commands import bench
    from nice_attendre.variants_cmd import variants

    if "variants" not in bench.commands:
        bench.add_command(variants)
    return bench


def _load_replay() -> click.Command:
    from nice_attendre.replay_cmd import replay

    return replay


#: Commands whose modules are imported only when the command runs (or its own --help is
#: asked for): ``delay`` needs numpy, the experiments the models. name -> (loader, the text
#: ``--help`` lists; a test checks it against the command's own).
LAZY_COMMANDS: dict[str, tuple[Callable[[], click.Command], str]] = {
    "bench": (_load_bench, "Run the paper's experiments as tables (and CSV)."),
    "compare": (_load_compare, "Verify APP under several protocols and compare the state spaces side by side."),
    "delay": (_load_delay, "Forwarding delay of a flow's first packet under OpenFlow, OpenFlow-B and Attendre."),
    "replay": (_load_replay, "Replay a saved trace against the app: reproduced, or where it diverges."),
}


main.lazy = LAZY_COMMANDS
