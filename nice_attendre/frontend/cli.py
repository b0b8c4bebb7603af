"""The command line. Thin: each command is one library call plus printing.

Exit codes (named in :mod:`nice_attendre.frontend.exit_codes`): 0 complete and no violation, 1 a
property violated, 2 bad input, 3 incomplete (a limit, a lost worker or a hard stop ended the search, no violation found),
4 the app is not deterministic (or, for ``replay``, a saved trace diverges), 70 internal
error (a bug in nice-attendre), 74 the report could not be written (a full disk, an I/O
error), 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP, 141 a closed pipe. SIGTERM and SIGHUP end a
run like Ctrl-C: the partial report and JSON are written.
"""
from __future__ import annotations

import dataclasses
import json
import signal
import sys
import textwrap
import time
import traceback
from pathlib import Path
from typing import Any, Callable, NoReturn

import click

from nice_attendre.errors import InputError, NiceAttendreError, NondeterminismError, StopRequest
from nice_attendre.frontend.exit_codes import EXIT_CODES_HELP, ExitCode, for_signal, with_lost_output
from nice_attendre.frontend.cli_common import (FiniteFloat, partitioned_search, _app_options, _check_output, _checkpoint_warning,
                                               _progress, _traffic, error_line, finish, internal_error_line,
                                               scenario_options, silence_stdout)
from nice_attendre.frontend.report import signal_name


def _status(code: Any) -> int:
    """The process exit status ``sys.exit(code)`` gives (None: 0; a message: 1)."""
    if code is None:
        return 0
    return code if isinstance(code, int) else 1


#: Signals that end a run like Ctrl-C (what `timeout`, CI cancellation and `docker stop` send).
TERMINATING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class _Group(click.Group):
    """Turns what ends a command into its exit code and one clean line on stderr:

    * a library error (bad input) -> 2;
    * Ctrl-C, SIGTERM or SIGHUP outside a search (importing, building, reporting) -> 130,
      143 or 129;
    * exhausted memory outside a search -> 3;
    * the output's reader went away (a closed pipe) -> 141, silently;
    * stdout or an output file could not be written (a full disk, an I/O error) -> 74, and a
      failed write to stderr turns 0 or 3 into 74 (see :func:`main`);
    * anything else is a bug in nice-attendre -> 70.

    With ``--debug`` the traceback is printed too.
    """

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        """Click's ``main`` with the standard streams guarded
        (:func:`nice_attendre.output.guard_streams`): a write to stdout that fails ends the
        command with one line on stderr and exit 74; one to stderr is noted, and the run goes
        on and then exits 74 in place of 0 or 3 (:func:`~nice_attendre.frontend.exit_codes.with_lost_output`)."""
        from nice_attendre.output import StreamError, guard_streams

        with guard_streams() as guard:
            try:
                return super().main(args, prog_name, complete_var, standalone_mode, **extra)
            except StreamError as exc:  # outside every command: --help, a usage error's message
                click.echo(f"Error: {error_line(str(exc))}", err=True)
                if not standalone_mode:
                    raise
                sys.exit(int(ExitCode.OUTPUT))
            except SystemExit as stop:
                code = _status(stop.code)
                if guard.lost_output and with_lost_output(code) != code:
                    raise SystemExit(with_lost_output(code)) from None
                raise

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        """Click's, with a closed pipe (``--help | head``) exiting 141 and Ctrl-C 130 (Click
        would exit 1, the code of a violation)."""
        try:
            return super().make_context(info_name, args, parent, **extra)
        except BrokenPipeError:
            silence_stdout()
            raise click.exceptions.Exit(int(ExitCode.BROKEN_PIPE)) from None
        except KeyboardInterrupt as exc:
            click.echo(f"interrupted ({signal_name(getattr(exc, 'signum', None))})", err=True)
            raise click.exceptions.Exit(for_signal(getattr(exc, "signum", None))) from None

    def invoke(self, ctx: click.Context) -> Any:
        from nice_attendre.output import OutputWriteError, StreamError
        from nice_attendre.watchdog import raise_interrupted

        saved = {signum: signal.getsignal(signum) for signum in TERMINATING}
        for signum in TERMINATING:
            if saved[signum] in (signal.SIG_DFL, None):
                signal.signal(signum, raise_interrupted)
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except (StreamError, OutputWriteError) as exc:  # a full disk, an I/O error: not a bug of ours
            self._fail(ctx, f"Error: {error_line(str(exc))}", ExitCode.OUTPUT, show_traceback=False)
        except NiceAttendreError as exc:  # InputError and its kinds, ModelError
            code = ExitCode.NONDETERMINISTIC if isinstance(exc, NondeterminismError) else ExitCode.INPUT
            self._fail(ctx, f"Error: {error_line(str(exc)) or type(exc).__name__}", code)
        except KeyboardInterrupt as exc:
            self._fail(ctx, f"interrupted ({signal_name(getattr(exc, 'signum', None))})",
                       for_signal(getattr(exc, "signum", None)), show_traceback=False)
        except StopRequest as exc:  # a limit reached outside a search
            self._fail(ctx, f"INCOMPLETE: {exc.reason} reached before the search", ExitCode.INCOMPLETE)
        except BrokenPipeError:  # `| head`: nobody reads the rest; no traceback, no "internal error"
            silence_stdout()
            ctx.exit(int(ExitCode.BROKEN_PIPE))
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


@click.group(cls=_Group, epilog=EXIT_CODES_HELP)
@click.option("--debug", is_flag=True, help="Show tracebacks with errors (exit codes stay the same).")
@click.version_option(package_name="nice-attendre")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """nice-attendre: model-check OpenFlow controller apps under OpenFlow, OpenFlow-B and Attendre."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


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
@click.option("--coverage", "coverage", is_flag=True,
              help="Report the lines and branches of the app's handlers the search ran and never ran "
                   "(file:line; in the JSON too). Not with --engine ray or --resume.")
@click.option("--simulate", is_flag=True,
              help="Random walks instead of the exhaustive search, each to quiescence, a violation, a state it "
                   "has been in or --walk-depth; never OK: without a violation, INCOMPLETE (exit 3) with what "
                   "the walks covered. Stops at --walks, the first violation, --max-transitions (after that "
                   "walk), --max-seconds or Ctrl-C (default: 1000 walks). --workers/--engine run walks in "
                   "parallel, with the same result for a --seed.")
@click.option("--seed", type=click.IntRange(0, 2 ** 63 - 1), default=None, metavar="S",
              help="With --simulate: the seed; the same seed, options and code give the same walks and result "
                   "(default: a random one, printed).")
@click.option("--walks", type=click.IntRange(min=1), default=None, metavar="N",
              help="With --simulate: stop after N walks.")
@click.option("--walk-depth", type=click.IntRange(min=1), default=None, metavar="N",
              help="With --simulate: at most N events a walk (each walk draws N, N/2 or N/4).")
@click.option("--bias", type=click.Choice(["swarm", "uniform", "control-first", "packets-first"]), default=None,
              help="With --simulate: how walks choose among the enabled events: uniform, control-first (the "
                   "controller's and switches' steps first, NICE's no-delay), packets-first, or swarm (each "
                   "walk draws one of them; the default).")
@click.option("--shrink/--no-shrink", default=None,
              help="Shrink each violation's trace (drop and move events while it still violates the same "
                   "property) before it is reported; the default with --simulate only.")
@click.option("--discover", "discover", is_flag=True,
              help="First discover representative packets of the app's packet-in handler by symbolic execution "
                   "(the 'discover' extra), then verify them as one-packet flows with the app's default traffic "
                   "(or with --flow); the report shows each packet and the branch it takes. Not with --scenario.")
@click.option("--discover-seconds", type=FiniteFloat(strict=True), default=30.0, show_default=True, metavar="S",
              help="With --discover: seconds of solver time.")
@click.option("--por", is_flag=True,
              help="Partial-order reduction: explore one interleaving of independent events (the same "
                   "quiescent states and verdicts; counts of the reduced graph). Depth-first (checkpoints too), "
                   "breadth-first (--shortest: traces shortest in the reduced graph) or partitioned (--workers, "
                   "--engine ray: the counts of --shortest --por); leaves the default termination out.")
@click.pass_context
def verify(ctx: click.Context, app: str, topology: str | None, packets: int | None, flows: tuple[str, ...],
           scenario_file: str | None, sender: str | None,
           receiver: str | None, properties: tuple[str, ...], app_options: tuple[str, ...], bug: str | None,
           max_transitions: int | None, max_states: int | None, max_depth: int | None,
           max_seconds: float | None, max_memory: int | None, max_handler_seconds: float,
           faults: tuple[str, ...], threaded_controller: bool | str, command_order: str, joins_first: bool,
           keep_going: bool, fingerprint: bool, workers: int, engine: str, address: str | None, partition: str,
           json_path: Path | None, protocol: str, count_load: bool, checkpoint_path: Path | None,
           checkpoint_every: float, resume_path: Path | None, no_memo: bool, shortest: bool = False,
           trace_format: str = "text", trace_path: Path | None = None, coverage: bool = False,
           simulate: bool = False, seed: int | None = None, walks: int | None = None,
           walk_depth: int | None = None, bias: str | None = None, shrink: bool | None = None,
           por: bool = False, discover: bool = False, discover_seconds: float = 30.0) -> None:
    """Explore every interleaving of APP on a topology and check properties.

    APP is a registered app (see `nice-attendre list`), path/to/file.py:ClassName or
    package.module:ClassName.
    """
    from functools import partial

    from nice_attendre.frontend.api import build, check_engine, model, not_started, search
    from nice_attendre.models.faults import KINDS as FAULT_KINDS
    from nice_attendre.models.faults import parse_budgets
    from nice_attendre.checker import Limits
    from nice_attendre.frontend.hard_stop import hard_stop_writer
    from nice_attendre.frontend.headers import network_header
    from nice_attendre.output import check_writable, write_atomic
    from nice_attendre.frontend.report import CheckedNarrator, exit_verdict, json_report, text_report, verdict_line
    from nice_attendre.frontend.simulation import check_simulation, random_seed
    from nice_attendre.watchdog import Watchdog

    limits = Limits(max_transitions, max_states, max_depth, max_seconds, max_memory)
    traffic = _traffic(packets, flows, scenario_file)
    packets = traffic["packets"]
    _check_output(json_path, "--json")
    _check_output(trace_path, "--trace-out")
    check_simulation(simulate, seed=seed, walks=walks, walk_depth=walk_depth, bias=bias, shortest=shortest,
                     checkpoint=checkpoint_path, resume=resume_path, fingerprint=fingerprint, partition=partition,
                     max_states=max_states, max_depth=max_depth)
    check_engine(workers, engine, address, partition, max_memory)
    if shortest:
        from nice_attendre.breadth_first import check_shortest

        check_shortest(workers, engine, resume_path, checkpoint_path)
    if checkpoint_path is not None:
        check_writable(checkpoint_path, "--checkpoint")
    from nice_attendre.frontend.coverage import check_coverage, measuring

    if coverage:
        check_coverage(engine, resume_path)
    if simulate and seed is None:
        seed = random_seed()
    if resume_path is not None and not resume_path.is_file():
        why = "is not a file" if resume_path.exists() else "not found"
        raise InputError(f"--resume: checkpoint {str(resume_path)!r} {why}")
    discovery = None
    if discover:
        from nice_attendre.discover.run import discovered_traffic

        discovery, traffic = discovered_traffic(app, topology=topology, packets=packets,
                                                app_options=_app_options(app_options, bug), sender=sender,
                                                receiver=receiver, flows=traffic.get("flows"),
                                                scenario=traffic.get("scenario"), seconds=discover_seconds)
        packets, sender, receiver = traffic["packets"], None, None
    started = time.monotonic()
    with Watchdog(max_seconds=max_seconds, max_memory=max_memory, call_seconds=max_handler_seconds) as watchdog, \
            measuring(coverage, workers) as measurement:
        options = dict(topology=topology, protocol=protocol, **traffic, properties=list(properties) or None,
                       app_options=_app_options(app_options, bug), sender=sender, receiver=receiver,
                       count_load=count_load, threaded_controller=threaded_controller,
                       command_order=command_order, faults=parse_budgets(faults) or None,
                       joins_first=joins_first, **({"memo": False} if no_memo else {}))
        hard_header = {"app": app, "protocol": protocol, "topology": topology, "packets": packets}
        watchdog.on_hard_stop = hard_stop_writer(json_path, hard_header)  # user code that will not stop
        progress = None
        try:
            run = build(app, **options, guard=watchdog.guard,  # type: ignore[arg-type]
                        on_app=None if measurement is None else measurement.start)
            watchdog.on_hard_stop = hard_stop_writer(json_path, {**hard_header, "app": run.network.app.describe()},
                                                     run.network, [p.name for p in run.properties])
            progress = _progress()
            result = search(run, partial(model, app, **options), limits=limits, keep_going=keep_going,
                            fingerprint=fingerprint, watchdog=watchdog, progress=progress,
                            checkpoint=checkpoint_path, resume=resume_path, checkpoint_every=checkpoint_every,
                            on_checkpoint_error=_checkpoint_warning, workers=workers, engine=engine,
                            address=address, shortest=shortest, partition=partition, simulate=simulate,
                            seed=seed, walks=walks, walk_depth=walk_depth, bias=bias, shrink=shrink, por=por)
            if measurement is not None:
                result = dataclasses.replace(result, coverage=measurement.finish(result.complete, result.stop_reason))
            if discovery is not None:
                result = dataclasses.replace(result, packets_discovered=discovery)
        except StopRequest as stop:  # a limit reached before the search started (importing the app, switch joins)
            watchdog.unbind()  # the limits are off for the report: the timer would stop it too
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
        finally:
            if progress is not None:
                progress.clear()
        net = run.network
        narrate = CheckedNarrator(result, net.narrate, net.narrate_initial)
        if narrate.interrupted is not None:  # the violations are reported all the same (exit 1)
            click.echo(f"interrupted ({signal_name(narrate.interrupted)}) while narrating the traces; "
                       "the report follows without the rest", err=True)
        header = network_header(net, [p.name for p in run.properties])
        header.extend(("source", source.describe()) for source in run.sources)
        partitioned = None if simulate else partitioned_search(workers, engine, result.partition)
        if partitioned is not None:
            header.append(("search", partitioned))
        if result.simulation is not None:
            header.append(("search", result.simulation.describe()))
        if shortest:
            header.append(("search", "breadth-first (--shortest: traces are shortest paths; max depth: "
                                     "the longest shortest path)"))
        if result.reduction is not None:
            header.append(("reduction", result.reduction))
        if no_memo:
            header.append(("memo", "off (--no-memo)"))
        if resume_path is not None:
            header.append(("resumed from", str(resume_path)))
        if checkpoint_path is not None:
            header.append(("checkpoint", str(checkpoint_path)))

        def write_text() -> None:
            click.echo(text_report(result, header, narrate))

        def write_json() -> None:
            if json_path is not None:
                data = json_report(result, {"app": net.app.describe(), "protocol": net.protocol.name,
                                            "protocol_params": net.protocol.settings_json(),
                                            "protocol_spec": net.protocol.label(),
                                            "command_order": net.options.command_order,
                                            "joins_first": net.options.joins_first,
                                            "start_up": net.options.describe_startup(),
                                            "faults": dict(zip(FAULT_KINDS, net.options.faults or
                                                               (0,) * len(FAULT_KINDS))),
                                            "link_scope": net.options.link_scope,
                                            "threaded_controller": net.threaded,
                                            "topology": net.topology.name, "packets": packets,
                                            "traffic": net.scenario.describe(),
                                            "properties": [p.name for p in run.properties],
                                            **({"search": result.simulation.describe()} if result.simulation else {}),
                                            "reduction": result.reduction,
                                            "sources": [source.as_json() for source in run.sources]}, narrate)
                write_atomic(json_path, json.dumps(data, indent=2) + "\n", "--json")

        def write_trace_file() -> None:
            if trace_path is not None:
                from nice_attendre.frontend.trace_format import write_trace

                if not write_trace(trace_path, trace_format, result, net, {"app": app, **options}, narrate, header):
                    click.echo("--trace-out: no violation with a trace; nothing written", err=True)

        finish(exit_verdict(result), result.signal, lambda: verdict_line(result),
               (write_text, write_json, write_trace_file), ctx)


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
    click.echo(_entry("app-nondeterminism", "every app handler is a function of its input: it reads no clock, "
                      "randomness or object address, and gives the same outcome when called again (always checked; "
                      "exit code 4)"))
    click.echo("topologies:")
    click.echo(_entry("linear:N", "sender h1 - s1 - ... - sN - replier h2"))
    click.echo(_entry("star:N", "one switch s1 with hosts h1 ... hN"))
    click.echo(_entry("paths:A,D", "two disjoint paths of A and D switches between h1 and h2 (energy-te)"))
    click.echo(_entry("FILE.graphml|.gml|other", "a graph file (other suffixes: edge list); hosts marked by a "
                      "'host' attribute or named h1, h2, ..."))
    click.echo(_entry("FILE.py:FUNCTION", "a function of that file returning a networkx graph (or "
                      "MODULE:FUNCTION, declared with @topology_factory)"))


def _load_delay() -> click.Command:
    from nice_attendre.frontend.delay_cmd import delay

    return delay


def _load_compare() -> click.Command:
    from nice_attendre.frontend.commands import compare

    return compare


def _load_bench() -> click.Command:
    from nice_attendre.frontend.commands import bench
    from nice_attendre.frontend.variants_cmd import variants

    if "variants" not in bench.commands:
        bench.add_command(variants)
    return bench


def _load_explore() -> click.Command:
    from nice_attendre.frontend.explorer.command import explore

    return explore


def _load_discover() -> click.Command:
    from nice_attendre.discover.command import discover

    return discover


def _load_replay() -> click.Command:
    from nice_attendre.frontend.replay_cmd import replay

    return replay


#: Commands whose modules are imported only when the command runs (or its own --help is
#: asked for): ``delay`` needs numpy, the experiments the models. name -> (loader, the text
#: ``--help`` lists; a test checks it against the command's own).
LAZY_COMMANDS: dict[str, tuple[Callable[[], click.Command], str]] = {
    "bench": (_load_bench, "Run the paper's experiments as tables (and CSV)."),
    "compare": (_load_compare, "Verify APP under several protocols and compare the state spaces side by side."),
    "explore": (_load_explore, "Explore APP's states in a browser: step through events, open a saved trace."),
    "delay": (_load_delay, "Forwarding delay of a flow's first packet under OpenFlow, OpenFlow-B and Attendre."),
    "replay": (_load_replay, "Replay a saved trace against the app: reproduced, or where it diverges."),
    "discover": (_load_discover, "Discover representative packets of APP's packet-in handler (symbolic execution)."),
}


main.lazy = LAZY_COMMANDS
