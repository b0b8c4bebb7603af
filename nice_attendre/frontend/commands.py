"""The ``compare`` and ``bench`` commands (registered on the CLI group in :mod:`nice_attendre.frontend.cli`)."""
from __future__ import annotations

import json
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import click

from nice_attendre.frontend.cli_common import (_app_options, _check_output, _check_plot, _traffic, finish,
                                               partitioned_search, scenario_options)
from nice_attendre.errors import InputError
from nice_attendre.models.channels import describe_semantics
from nice_attendre.models.faults import parse_budgets
from nice_attendre.frontend.exit_codes import EXIT_CODES_HELP, ExitCode, for_signal
from nice_attendre.frontend.report import signal_name, table_lines

#: Printed notes wrap at this width.
NOTE_WIDTH = 100


def _protocol_list(value: str) -> list[str]:
    """``"openflow,attendre"`` -> the protocols, in order, without repeats; each may carry
    parameters (``"openflow,pif:clone=in_port,eth_src,action=drop"``: an item that is not a
    protocol name continues the parameters before it). Unknown names and bad parameters raise."""
    from nice_attendre.models.protocols import protocol_names, resolve, split_protocol_list

    names = list(dict.fromkeys(split_protocol_list(value, protocol_names())))
    if not names:
        raise InputError(f"--protocols: give at least one protocol, got {value!r}")
    for name in names:
        resolve(name)
    return names


def _parameter_lines(rows: Any) -> list[str]:
    """Header lines naming every parameter of the compared protocols that have any."""
    labels = list(dict.fromkeys(row.result.system.protocol.label() for row in rows
                                if row.result.system is not None and row.result.system.protocol.params))
    return [f"  {'parameters' if i == 0 else '':<12} {label}" for i, label in enumerate(labels)]


def _write(path: Path, text: str, option: str) -> None:
    """Write an output file atomically (no truncated file on failure)."""
    from nice_attendre.output import write_atomic

    write_atomic(path, text, option)


def _ratio_text(base: Any, row: Any) -> str:
    """The first protocol's transitions over this one's. When a search was cut short its count
    is a lower bound, so the ratio is one too: ``>`` (the first's was cut; rounded down) or
    ``<`` (this one's was cut; rounded up); ``-`` when both were cut or this one made none."""
    numerator, denominator = base.result.stats.transitions, row.result.stats.transitions
    if row is base:
        return "1.00x" if denominator else "-"
    if not denominator or (not base.result.complete and not row.result.complete):
        return "-"
    if not base.result.complete:
        hundredths = 100 * numerator // denominator
        return f">{hundredths // 100}.{hundredths % 100:02d}x"
    if not row.result.complete:
        hundredths = -(-100 * numerator // denominator)
        return f"<{hundredths // 100}.{hundredths % 100:02d}x"
    return f"{numerator / denominator:.2f}x"


@click.command(epilog=EXIT_CODES_HELP)
@scenario_options
@click.option("--protocols", default="openflow,openflow-b,attendre", show_default=True,
              help="Comma-separated protocol variants, each maybe with parameters "
                   "(openflow,pif:action=drop,buffer:capacity=1); ratios are to the first.")
@click.option("--load", is_flag=True,
              help="Also measure control-plane messages per complete execution (a second exploration).")
@click.option("--por", is_flag=True,
              help="Also verify each protocol with partial-order reduction: its counts in columns of their "
                   "own beside the unreduced ones (the paper's metric). Every protocol variant.")
@click.pass_context
def compare(ctx: click.Context, app: str, topology: str | None, packets: int | None, flows: tuple[str, ...],
            scenario_file: str | None, sender: str | None,
            receiver: str | None, properties: tuple[str, ...], app_options: tuple[str, ...], bug: str | None,
            max_transitions: int | None, max_states: int | None, max_depth: int | None,
            max_seconds: float | None, max_memory: int | None, max_handler_seconds: float,
            faults: tuple[str, ...], threaded_controller: bool | str, command_order: str, joins_first: bool,
            keep_going: bool, fingerprint: bool, workers: int, engine: str, address: str | None, partition: str,
            json_path: Path | None, protocols: str, load: bool, por: bool = False) -> None:
    """Verify APP under several protocols and compare the state spaces side by side.

    The limits apply to each protocol's verification (--max-seconds: each one's). The exit
    status is 1 if any protocol violates a property, else that of an interruption, else 3
    if any search is incomplete, else 0.
    """
    from nice_attendre.frontend.compare import LOAD_NOTE, compare as run_compare, ratio
    from nice_attendre.models.network import LOAD_COUNTERS, STARTUP_JOINS_FIRST, STARTUP_RACE

    names = _protocol_list(protocols)
    _check_output(json_path, "--json")
    traffic = _traffic(packets, flows, scenario_file)
    rows = run_compare(app, names, load=load, por=por, topology=topology, **traffic, sender=sender,
                       receiver=receiver, properties=list(properties) or None,
                       app_options=_app_options(app_options, bug), max_transitions=max_transitions,
                       max_states=max_states, max_depth=max_depth, max_seconds=max_seconds,
                       max_memory=max_memory, max_handler_seconds=max_handler_seconds,
                       keep_going=keep_going, fingerprint=fingerprint, threaded_controller=threaded_controller,
                       command_order=command_order, joins_first=joins_first, workers=workers, engine=engine,
                       address=address, partition=partition,
                       faults=parse_budgets(faults) or None)
    # A row whose network was never built (a limit reached while building) has no system.
    net = next((row.result.system for row in rows if row.result.system is not None), None)
    app_text = net.app.describe() if net is not None else app
    topology_name = net.topology.name if net is not None else (topology or "(the app's default)")
    base = rows[0]
    stopped = [row for row in rows if row.interrupted]

    def write_table() -> None:
        click.echo(f"  app          {app_text}")
        click.echo(f"  topology     {net.topology.describe() if net is not None else topology_name}")
        click.echo(f"  traffic      {net.scenario.describe() if net is not None else '(not built)'}")
        click.echo(f"  channels     {describe_semantics(command_order, threaded_controller)}")
        click.echo(f"  start-up     {STARTUP_JOINS_FIRST if joins_first else STARTUP_RACE}")
        for line in _parameter_lines(rows):
            click.echo(line)
        partitioned = partitioned_search(workers, engine, rows[0].result.partition if rows else None)
        if partitioned is not None:
            click.echo(f"  search       {partitioned}")
        if por:
            click.echo("  reduction    partial-order (por columns; the others: the unreduced search)")
        click.echo("")
        header = ["protocol", "transitions", "unique states", "revisits", "max depth", "time (s)",
                  f"{rows[0].protocol}/this", "search", "violations"]
        if por:
            header[3:3] = ["por transitions", "por states"]
        if load:
            header += [name.replace("_", "-") for name in LOAD_COUNTERS]
        table = []
        for row in rows:
            stats = row.result.stats
            line = [row.protocol, f"{stats.transitions:,}", f"{stats.unique_states:,}", f"{stats.revisits:,}",
                    str(stats.max_depth), f"{stats.elapsed:.2f}", _ratio_text(base, row),
                    "complete" if row.result.complete else f"INCOMPLETE ({row.result.stop_reason})",
                    ", ".join(dict.fromkeys(d.property for d in row.result.discoveries)) or "none"]
            if por:
                line[3:3] = _reduced_cells(row.reduced)
            if load:
                line += [("{}..{}".format(*row.load[name]) if name in row.load else "-") + ("" if row.load_complete else "*")
                         for name in LOAD_COUNTERS]
            table.append(line)
        for text in table_lines(header, table, left=1, rule=False):
            click.echo(text)
        if load:
            note = LOAD_NOTE + ("; * = that exploration was cut short" if not all(r.load_complete for r in rows) else "")
            click.echo("")
            click.echo(textwrap.fill(note, width=NOTE_WIDTH, initial_indent="  ", subsequent_indent="  "))
        if stopped:
            skipped = names[len(rows):]
            click.echo("")
            click.echo(f"interrupted ({signal_name(stopped[0].result.signal)}) during {stopped[0].protocol}"
                       + (f"; not run: {', '.join(skipped)}" if skipped else ""), err=True)

    verdict = _overall_verdict(rows, len(names))
    signum = stopped[0].result.signal if stopped else None

    def write_json() -> None:
        if json_path is not None:
            from nice_attendre.frontend.report import json_report

            data = {"app": app_text, "topology": topology_name, "packets": traffic["packets"],
                    "traffic": net.scenario.describe() if net is not None else None,
                    "command_order": command_order, "threaded_controller": threaded_controller,
                    "joins_first": joins_first,
                    "start_up": STARTUP_JOINS_FIRST if joins_first else STARTUP_RACE,
                    "verdict": verdict,
                    "protocols": [
                        {**json_report(row.result, {"protocol": row.protocol,
                                                    **_json_params(row.result.system)}, None),
                         "ratio_to_first": ratio(base.transitions, row.transitions),
                         **({"reduced": _reduced_json(row.reduced)} if por else {}),
                         "load": {name: {"min": lo, "max": hi} for name, (lo, hi) in row.load.items()}}
                        for row in rows]}
            _write(json_path, json.dumps(data, indent=2) + "\n", "--json")

    def summary() -> str:
        failed = ", ".join(dict.fromkeys(d.property for row in rows for d in row.result.discoveries))
        if verdict == "nondeterministic":
            return f"NONDETERMINISTIC: an app handler is not a function of its input (violated: {failed})"
        return f"FAILED: {failed}" if failed else f"{verdict.upper()}: no violation found"

    finish(verdict, signum, summary, (write_table, write_json), ctx)


def _reduced_cells(result: Any) -> list[str]:
    """A compare row's por columns: the reduced search's transitions and unique states (a
    cut search's marked ``>``, as lower bounds; ``-`` when it did not run)."""
    if result is None:
        return ["-", "-"]
    mark = "" if result.complete else ">"
    return [f"{mark}{result.stats.transitions:,}", f"{mark}{result.stats.unique_states:,}"]


def _reduced_json(result: Any) -> dict[str, Any] | None:
    """The reduced search's counts for compare's JSON report (None when it did not run)."""
    if result is None:
        return None
    stats = result.stats
    return {"reduction": "partial-order", "transitions": stats.transitions, "unique_states": stats.unique_states,
            "revisits": stats.revisits, "max_depth": stats.max_depth, "complete": result.complete,
            "violations": list(dict.fromkeys(d.property for d in result.discoveries))}


def _overall_verdict(rows: list[Any], planned: int) -> str:
    """One verdict for a comparison: ``nondeterministic`` if a protocol's search found the
    app not deterministic, else ``violated`` if any protocol violates a property, else
    ``interrupted`` if a signal stopped it, else ``incomplete`` if a search was cut, else ``ok``."""
    from nice_attendre.frontend.report import verdict_of

    verdicts = [verdict_of(row.result) for row in rows]
    if "nondeterministic" in verdicts:
        return "nondeterministic"
    if "violated" in verdicts:
        return "violated"
    if "interrupted" in verdicts or any(row.interrupted for row in rows) or len(rows) < planned:
        return "interrupted"
    return "incomplete" if "incomplete" in verdicts else "ok"


def _json_params(net: Any) -> dict[str, Any]:
    """The protocol's parameters for a JSON report (nothing when the run built no network)."""
    if net is None:
        return {}
    return {"protocol_params": net.protocol.settings_json(), "protocol_spec": net.protocol.label()}


def _range(value: str, option: str, maximum: int) -> list[int]:
    """``"1-8"``, ``"1,2,5"`` or ``"1-3,5"`` -> the sorted whole numbers (each from 1 to ``maximum``)."""
    result: list[int] = []
    expected = "expected N, N-M or a comma-separated list of them, e.g. 1-3,5"
    for part in value.split(","):
        part = part.strip()
        low, dash, high = part.partition("-")
        if dash and low.strip().isdecimal() and high.strip().isdecimal():
            low_n, high_n = int(low), int(high)
            if low_n > high_n:
                raise InputError(f"{option}: bad range {part!r} (its start is above its end)")
            if high_n > maximum:
                raise InputError(f"{option}: values must be at most {maximum:,}, got {part!r}")
            result.extend(range(low_n, high_n + 1))
        elif not dash and part.isdecimal():
            if int(part) > maximum:
                raise InputError(f"{option}: values must be at most {maximum:,}, got {part!r}")
            result.append(int(part))
        else:
            raise InputError(f"{option}: bad value {part!r} ({expected})")
    if min(result) < 1:
        raise InputError(f"{option}: values must be at least 1, got {value!r}")
    return sorted(set(result))


@click.group()
def bench() -> None:
    """Run the paper's experiments as tables (and CSV)."""


def _print_cell(cell: Any) -> None:
    params = " ".join(f"{k}={v}" for k, v in cell.spec.params)
    prefix = f"  {cell.spec.experiment} {cell.spec.protocol:<10} {params}:"
    limit = getattr(cell, "stop_reason", None)
    if cell.status == "skipped":
        why = f"not run (--{limit} reached)" if limit else "skipped (a smaller cell exceeded the cap)"
        click.echo(f"{prefix} {why}", err=True)
    else:
        marks = {"over-cap": f"(stopped by --{limit}) " if limit else "(cap reached) ",
                 "violation": "(stopped at a violation) "}
        click.echo(f"{prefix} {cell.transitions:,} transitions {marks.get(cell.status, '')}in {cell.seconds:.1f} s",
                   err=True)


#: The --jobs option of the bench commands.
jobs_option = click.option("--jobs", "-j", default=1, show_default=True, type=click.IntRange(min=1), metavar="N",
                           help="Run N cells at a time in separate processes (same cells, counts and output "
                                "order as one at a time).")


def limit_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--max-seconds and --max-memory of the bench commands (see :class:`BenchLimits`)."""
    from nice_attendre.frontend.cli_common import FiniteFloat, MemorySize

    func = click.option("--max-memory", type=MemorySize(), default=None, metavar="SIZE",
                        help="Stop a cell once its process uses more than SIZE (e.g. 4G): its count is then a "
                             "lower bound; exit 3.")(func)
    return click.option("--max-seconds", type=FiniteFloat(strict=True), default=None, metavar="S",
                        help="Stop the whole benchmark S seconds after it started: the cells running then stop "
                             "there (their counts are lower bounds), the others are not run; exit 3.")(func)


@dataclass(frozen=True)
class BenchLimits:
    """The limits of a whole benchmark run: ``max_seconds`` from its start (``deadline``,
    a ``time.time()``, shared with the worker processes of ``--jobs``), ``max_memory`` per
    cell's process."""

    max_seconds: float | None = None
    max_memory: int | None = None
    deadline: float | None = None

    @classmethod
    def start(cls, max_seconds: float | None, max_memory: int | None) -> "BenchLimits":
        """The limits of a run starting now."""
        return cls(max_seconds, max_memory, None if max_seconds is None else time.time() + max_seconds)

    def describe(self) -> str | None:
        """The report's line naming the limits (None without limits)."""
        parts = ([f"--max-seconds {self.max_seconds:g} (the whole run)"] if self.max_seconds is not None else []) + \
                ([f"--max-memory {self.max_memory:,} bytes (each cell)"] if self.max_memory is not None else [])
        return f"limits: {', '.join(parts)}" if parts else None


def por_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """--por of the bench commands."""
    return click.option("--por", is_flag=True,
                        help="Also verify each cell with partial-order reduction (within the same cap): the "
                             "unreduced unique states and the reduced transitions and unique states beside the "
                             "unreduced transitions (the paper's metric). Every protocol variant.")(func)


def _por_lines(protocols: list[str]) -> list[str]:
    """The report's lines on the reduction (``bench --por``)."""
    from nice_attendre.benchmarks.experiments import por_supported

    lines = ["reduction    partial-order (por columns; transitions: the unreduced search, the paper's metric)"]
    left = [name for name in protocols if not por_supported(name)]
    if left:
        lines.append(f"             not reduced: {', '.join(left)} (--por does not support them yet)")
    return lines


def _run_grids(grids: list[Any], cap: int, quiet: bool, jobs: int = 1,
               limits: BenchLimits = BenchLimits(), por: bool = False) -> list[list[Any]]:
    """Run each grid of specs (``jobs`` cells at a time, within ``limits``); Ctrl-C ends the
    command with exit code 130."""
    from nice_attendre.benchmarks.experiments import run_grid

    extra = ({"deadline": limits.deadline} if limits.deadline is not None else {}) | \
            ({"max_memory": limits.max_memory} if limits.max_memory is not None else {})
    try:
        return [run_grid(specs, cap, None if quiet else _print_cell, jobs, **extra, **({"por": True} if por else {}))
                for specs in grids]
    except KeyboardInterrupt as exc:
        signum = getattr(exc, "signum", None)
        click.echo(f"interrupted ({signal_name(signum)})", err=True)
        sys.exit(for_signal(signum))


def _end_bench(cells: list[Any], limits: BenchLimits) -> None:
    """The report's last lines on the limits; exit 3 when one cut the run (never 0: its
    tables are incomplete)."""
    line = limits.describe()
    if line is None:
        return
    cut = [cell for cell in cells if getattr(cell, "stop_reason", None) and cell.status != "skipped"]
    not_run = [cell for cell in cells if getattr(cell, "stop_reason", None) and cell.status == "skipped"]
    # with --por, a reduced search the limits cut (or left not run) makes its cell incomplete too
    cut += [cell for cell in cells if getattr(cell, "reduced_stop_reason", None) and cell.reduced_status != "skipped"
            and cell not in cut]
    not_run += [cell for cell in cells if getattr(cell, "reduced_stop_reason", None)
                and cell.reduced_status == "skipped" and cell not in cut and cell not in not_run]
    click.echo("")
    click.echo(line)
    if not cut and not not_run:
        return
    reasons = ", ".join(dict.fromkeys(f"--{cell.stop_reason or cell.reduced_stop_reason}"
                                      for cell in [*cut, *not_run]))
    click.echo(f"INCOMPLETE: {reasons} reached: {len(cut)} cell{'s' * (len(cut) != 1)} cut short (counts marked > are "
               f"lower bounds), {len(not_run)} not run (-)")
    sys.exit(int(ExitCode.INCOMPLETE))


@bench.command(name="route-flow", epilog=EXIT_CODES_HELP)
@click.option("--switches", default="1-8", show_default=True, help="Switch counts (range or list).")
@click.option("--packets", default="1-5", show_default=True, help="Packet counts (range or list).")
@click.option("--protocols", default="openflow,openflow-b,attendre", show_default=True)
@click.option("--max-transitions", "cap", default=1_000_000, show_default=True, type=click.IntRange(min=1),
              help="Per-cell cap; cells over it are reported as >cap and larger cells are not run.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write every cell to this CSV file.")
@click.option("--quiet", "-q", is_flag=True, help="Do not print each cell as it finishes.")
@jobs_option
@limit_options
@por_option
def bench_route_flow(switches: str, packets: str, protocols: str, cap: int, csv_path: Path | None,
                     quiet: bool, jobs: int, max_seconds: float | None = None, max_memory: int | None = None,
                     por: bool = False) -> None:
    """Fig. 8: route-flow on linear topologies, 1-8 switches x 1-5 packets, per protocol."""
    from nice_attendre.benchmarks.experiments import cells_csv, grid_table, route_flow_specs

    names = _protocol_list(protocols)
    from nice_attendre.frontend.api import MAX_PACKETS
    from nice_attendre.models.topology import MAX_SWITCHES

    specs = route_flow_specs(_range(switches, "--switches", MAX_SWITCHES), _range(packets, "--packets", MAX_PACKETS),
                             names)
    _check_output(csv_path, "--csv")
    limits = BenchLimits.start(max_seconds, max_memory)
    [cells] = _run_grids([specs], cap, quiet, jobs, limits, por)
    click.echo(f"Fig. 8 - route-flow, transitions per protocol (cap {cap:,} per cell)")
    if por:
        for line in _por_lines(names):
            click.echo(line)
    click.echo(grid_table(cells, ["switches", "packets"], names,
                          [("openflow", "attendre"), ("openflow", "openflow-b"), ("openflow-b", "attendre")]))
    if csv_path is not None:
        _write(csv_path, cells_csv(cells), "--csv")
        click.echo(f"wrote {csv_path}")
    _end_bench(cells, limits)


@bench.command(name="paper", epilog=EXIT_CODES_HELP)
@click.option("--max-transitions", "cap", default=1_000_000, show_default=True, type=click.IntRange(min=1),
              help="Per-cell cap; cells over it are reported as >cap and larger cells are not run.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write every cell of every experiment to this CSV file.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write Fig. 8 as a PNG (needs the 'plot' extra: matplotlib).")
@click.option("--quiet", "-q", is_flag=True, help="Do not print each cell as it finishes.")
@jobs_option
@limit_options
@por_option
def bench_paper(cap: int, csv_path: Path | None, plot_path: Path | None, quiet: bool, jobs: int,
                max_seconds: float | None = None, max_memory: int | None = None, por: bool = False) -> None:
    """Regenerate the paper's verification results: Fig. 8, Table II and Table III."""
    from nice_attendre.benchmarks.experiments import (PAPER_TABLE_II, PAPER_TABLE_III, PROTOCOLS, cells_csv,
                                           energy_te_specs, fig8_claims, grid_table, mac_learning_specs,
                                           paper_table, plot_fig8, route_flow_specs)

    _check_output(csv_path, "--csv")
    _check_plot(plot_path)
    limits = BenchLimits.start(max_seconds, max_memory)
    route, mac, energy = _run_grids([route_flow_specs(), mac_learning_specs(), energy_te_specs()], cap, quiet, jobs,
                                    limits, por)
    click.echo(f"Fig. 8 - route-flow, transitions per protocol (cap {cap:,} per cell)")
    if por:
        for line in _por_lines(list(PROTOCOLS)):
            click.echo(line)
    click.echo(grid_table(route, ["switches", "packets"], list(PROTOCOLS),
                          [("openflow", "attendre"), ("openflow", "openflow-b"), ("openflow-b", "attendre")]))
    click.echo("")
    click.echo(fig8_claims(route))
    click.echo("")
    click.echo(paper_table(mac, ["switches", "packets"], PAPER_TABLE_II,
                           "Table II - MAC learning (replier mobile), transitions"))
    click.echo("")
    click.echo(paper_table(energy, ["always_on", "on_demand", "flows"], PAPER_TABLE_III,
                           "Table III - energy-efficient TE (InstantStats), transitions"))
    if csv_path is not None:
        _write(csv_path, cells_csv([*route, *mac, *energy]), "--csv")
        click.echo(f"wrote {csv_path}")
    if plot_path is not None:
        from nice_attendre.output import write_with

        write_with(plot_path, lambda temp: plot_fig8(route, str(temp)), "--plot")
        click.echo(f"wrote {plot_path}")
    _end_bench([*route, *mac, *energy], limits)
