"""The ``compare`` and ``bench`` commands (registered on the CLI group in :mod:`nice_attendre.cli`)."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from nice_attendre.cli import EXIT_OK, EXIT_VIOLATION, _app_options, scenario_options


def _protocol_list(value: str) -> list[str]:
    from nice_attendre.models.protocols import protocol_class

    names = [name.strip() for name in value.split(",") if name.strip()]
    if not names:
        raise click.BadParameter("give at least one protocol")
    for name in names:
        protocol_class(name)
    return names


@click.command()
@scenario_options
@click.option("--protocols", default="openflow,openflow-b,attendre", show_default=True,
              help="Comma-separated protocol variants; ratios are to the first.")
@click.option("--load", is_flag=True,
              help="Also measure control-plane messages per complete execution (a second exploration).")
def compare(app: str, topology: str | None, packets: int, sender: str | None, receiver: str | None,
            properties: tuple[str, ...], app_options: tuple[str, ...], bug: str | None,
            max_transitions: int | None, max_states: int | None, max_depth: int | None,
            max_seconds: float | None, keep_going: bool, fingerprint: bool, json_path: Path | None,
            protocols: str, load: bool) -> None:
    """Verify APP under several protocols and compare the state spaces side by side."""
    from nice_attendre.compare import LOAD_NOTE, compare as run_compare, ratio
    from nice_attendre.models.network import LOAD_COUNTERS

    names = _protocol_list(protocols)
    rows = run_compare(app, names, load=load, topology=topology, packets=packets, sender=sender,
                       receiver=receiver, properties=list(properties) or None,
                       app_options=_app_options(app_options, bug), max_transitions=max_transitions,
                       max_states=max_states, max_depth=max_depth, max_seconds=max_seconds,
                       keep_going=keep_going, fingerprint=fingerprint)
    net = rows[0].result.system
    click.echo(f"  app          {net.app.describe()}")
    click.echo(f"  topology     {net.topology.describe()}")
    click.echo(f"  traffic      {net.scenario.describe()}")
    click.echo("")
    base = rows[0].transitions
    header = ["protocol", "transitions", "unique states", "revisits", "max depth", "time (s)",
              f"{rows[0].protocol}/this", "search", "violations"]
    if load:
        header += [name.replace("_", "-") for name in LOAD_COUNTERS]
    table = []
    for row in rows:
        stats = row.result.stats
        r = ratio(base, stats.transitions)
        line = [row.protocol, f"{stats.transitions:,}", f"{stats.unique_states:,}", f"{stats.revisits:,}",
                str(stats.max_depth), f"{stats.elapsed:.2f}", "-" if r is None else f"{r:.2f}x",
                "complete" if row.result.complete else f"INCOMPLETE ({row.result.stop_reason})",
                ", ".join(dict.fromkeys(d.property for d in row.result.discoveries)) or "none"]
        if load:
            line += [("{}..{}".format(*row.load[name]) if name in row.load else "-") + ("" if row.load_complete else "*")
                     for name in LOAD_COUNTERS]
        table.append(line)
    widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(header)]
    click.echo("  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(header, widths))))
    for line in table:
        click.echo("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(line, widths))))
    if load:
        click.echo("")
        click.echo(f"  {LOAD_NOTE}" + ("; * = that exploration was cut by a limit" if not all(r.load_complete for r in rows) else ""))
    if json_path is not None:
        from nice_attendre.report import json_report

        data = {"app": net.app.describe(), "topology": net.topology.name, "packets": packets,
                "protocols": [
                    {**json_report(row.result, {"protocol": row.protocol}, None),
                     "ratio_to_first": ratio(base, row.transitions),
                     "load": {name: {"min": lo, "max": hi} for name, (lo, hi) in row.load.items()}}
                    for row in rows]}
        json_path.write_text(json.dumps(data, indent=2) + "\n")
    sys.exit(EXIT_OK if all(row.result.ok for row in rows) else EXIT_VIOLATION)


def _range(value: str) -> list[int]:
    """``"1-8"`` or ``"1,2,5"`` -> a list of ints."""
    result: list[int] = []
    for part in value.split(","):
        part = part.strip()
        if "-" in part:
            low, _, high = part.partition("-")
            if not (low.isdigit() and high.isdigit()) or int(low) > int(high):
                raise click.BadParameter(f"bad range {part!r}")
            result.extend(range(int(low), int(high) + 1))
        elif part.isdigit():
            result.append(int(part))
        else:
            raise click.BadParameter(f"bad number {part!r}")
    if not result or min(result) < 1:
        raise click.BadParameter("values must be whole numbers >= 1")
    return sorted(set(result))


@click.group()
def bench() -> None:
    """Run the paper's experiments as tables (and CSV)."""


def _print_cell(cell: Any) -> None:
    params = " ".join(f"{k}={v}" for k, v in cell.spec.params)
    if cell.status == "skipped":
        click.echo(f"  {cell.spec.experiment} {cell.spec.protocol:<10} {params}: skipped (a smaller cell exceeded the cap)", err=True)
    else:
        click.echo(f"  {cell.spec.experiment} {cell.spec.protocol:<10} {params}: {cell.transitions:,} transitions "
                   f"{'' if cell.counted else '(cap reached) '}in {cell.seconds:.1f} s", err=True)


@bench.command(name="route-flow")
@click.option("--switches", default="1-8", show_default=True, help="Switch counts (range or list).")
@click.option("--packets", default="1-5", show_default=True, help="Packet counts (range or list).")
@click.option("--protocols", default="openflow,openflow-b,attendre", show_default=True)
@click.option("--max-transitions", "cap", default=1_000_000, show_default=True, type=click.IntRange(min=1),
              help="Per-cell cap; cells over it are reported as >cap and larger cells are not run.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write every cell to this CSV file.")
@click.option("--quiet", "-q", is_flag=True, help="Do not print each cell as it finishes.")
def bench_route_flow(switches: str, packets: str, protocols: str, cap: int, csv_path: Path | None,
                     quiet: bool) -> None:
    """Fig. 8: route-flow on linear topologies, 1-8 switches x 1-5 packets, per protocol."""
    from nice_attendre.experiments import cells_csv, grid_table, route_flow_specs, run_grid

    names = _protocol_list(protocols)
    specs = route_flow_specs(_range(switches), _range(packets), names)
    cells = run_grid(specs, cap, None if quiet else _print_cell)
    click.echo(f"Fig. 8 - route-flow, transitions per protocol (cap {cap:,} per cell)")
    click.echo(grid_table(cells, ["switches", "packets"], names,
                          [("openflow", "attendre"), ("openflow", "openflow-b"), ("openflow-b", "attendre")]))
    if csv_path is not None:
        csv_path.write_text(cells_csv(cells))
        click.echo(f"wrote {csv_path}")


@bench.command(name="paper")
@click.option("--max-transitions", "cap", default=1_000_000, show_default=True, type=click.IntRange(min=1),
              help="Per-cell cap; cells over it are reported as >cap and larger cells are not run.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write every cell of every experiment to this CSV file.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write Fig. 8 as a PNG (needs the 'plot' extra: matplotlib).")
@click.option("--quiet", "-q", is_flag=True, help="Do not print each cell as it finishes.")
def bench_paper(cap: int, csv_path: Path | None, plot_path: Path | None, quiet: bool) -> None:
    """Regenerate the paper's verification results: Fig. 8, Table II and Table III."""
    from nice_attendre.experiments import (PAPER_TABLE_II, PAPER_TABLE_III, cells_csv, energy_te_specs,
                                           fig8_claims, grid_table, mac_learning_specs, paper_table,
                                           plot_fig8, route_flow_specs, run_grid)

    if plot_path is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise click.UsageError("--plot needs matplotlib: pip install 'nice-attendre[plot]'") from None
    report = _print_cell if not quiet else None
    route = run_grid(route_flow_specs(), cap, report)
    mac = run_grid(mac_learning_specs(), cap, report)
    energy = run_grid(energy_te_specs(), cap, report)
    click.echo(f"Fig. 8 - route-flow, transitions per protocol (cap {cap:,} per cell)")
    click.echo(grid_table(route, ["switches", "packets"], list(PROTOCOLS_ORDER),
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
        csv_path.write_text(cells_csv([*route, *mac, *energy]))
        click.echo(f"wrote {csv_path}")
    if plot_path is not None:
        plot_fig8(route, str(plot_path))
        click.echo(f"wrote {plot_path}")


PROTOCOLS_ORDER = ("openflow", "openflow-b", "attendre")
