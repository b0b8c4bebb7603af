"""``nice-attendre bench variants``: every protocol variant on the paper's three experiments
(registered on the ``bench`` group in :mod:`nice_attendre.frontend.cli`)."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from nice_attendre.frontend.cli_common import _check_output, _check_plot
from nice_attendre.frontend.commands import _protocol_list, _range, _write, jobs_option
from nice_attendre.errors import InputError
from nice_attendre.frontend.exit_codes import ExitCode

EXPERIMENTS = ("route-flow", "mac-learning", "energy-te")


def _experiment_list(value: str) -> list[str]:
    names = list(dict.fromkeys(item.strip() for item in value.split(",") if item.strip()))
    if not names:
        raise InputError(f"--experiments: give at least one of {', '.join(EXPERIMENTS)}, got {value!r}")
    for name in names:
        if name not in EXPERIMENTS:
            from nice_attendre.errors import UnknownNameError

            raise UnknownNameError("experiment", name, EXPERIMENTS)
    return names


def _print_cell(outcome: Any) -> None:
    cell = outcome.cell
    params = " ".join(f"{k}={v}" for k, v in cell.spec.params)
    prefix = f"  {cell.spec.experiment} {cell.spec.protocol} {params}:"
    if cell.status == "skipped":
        click.echo(f"{prefix} skipped (a smaller cell exceeded the cap)", err=True)
        return
    marks = {"over-cap": " (cap reached)", "violation": " (stopped at a violation)"}
    verdicts = " ".join(f"{name}={verdict}" for name, verdict in outcome.verdicts)
    click.echo(f"{prefix} {cell.transitions:,} transitions{marks.get(cell.status, '')} in {cell.seconds:.1f} s; "
               f"{verdicts}", err=True)


@click.command(name="variants")
@click.option("--protocols", default=None, metavar="LIST",
              help="Comma-separated variants, each maybe with parameters (default: the paper's three, "
                   "packet-in filtering, buffers and batching in the configurations listed under the tables).")
@click.option("--experiments", default=",".join(EXPERIMENTS), show_default=True,
              help="Which of route-flow, mac-learning, energy-te.")
@click.option("--switches", default="1-8", show_default=True, help="route-flow: switch counts (range or list).")
@click.option("--packets", default="1-5", show_default=True, help="route-flow: packet counts (range or list).")
@click.option("--mac-packets", default="1-4", show_default=True,
              help="mac-learning: packet counts (1 and 2 switches, the replier mobile).")
@click.option("--te-flows", default="1-2", show_default=True,
              help="energy-te: flows (paths of 2/3 and 3/4 switches).")
@click.option("--max-transitions", "cap", default=1_000_000, show_default=True, type=click.IntRange(min=1),
              help="Per-run cap; cells over it are reported as >cap and larger cells are not run.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write every cell (counts, load, verdicts) to this CSV file.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write transitions per variant as a PNG (needs the 'plot' extra: matplotlib).")
@click.option("--quiet", "-q", is_flag=True, help="Do not print each cell as it finishes.")
@jobs_option
def variants(protocols: str | None, experiments: str, switches: str, packets: str, mac_packets: str, te_flows: str,
             cap: int, csv_path: Path | None, plot_path: Path | None, quiet: bool, jobs: int) -> None:
    """Every protocol variant on route-flow, MAC learning and energy TE: transitions, unique
    states, control-plane load and the race properties."""
    from nice_attendre.benchmarks.variants_bench import (VARIANTS, legend, plot_variants, run_variants, summary_table,
                                              transitions_table, variant_specs, variants_csv)

    from nice_attendre.models.protocols import resolve

    names = _protocol_list(protocols) if protocols is not None else [spec for _name, spec in VARIANTS]
    labels = {name: resolve(name).label() for name in names}  # every parameter ("auto": per app)
    chosen = _experiment_list(experiments)
    from nice_attendre.frontend.api import MAX_PACKETS
    from nice_attendre.models.topology import MAX_SWITCHES

    specs = variant_specs(chosen, names, switches=_range(switches, "--switches", MAX_SWITCHES),
                          packets=_range(packets, "--packets", MAX_PACKETS),
                          mac_packets=_range(mac_packets, "--mac-packets", MAX_PACKETS),
                          te_flows=_range(te_flows, "--te-flows", MAX_PACKETS))
    _check_output(csv_path, "--csv")
    _check_plot(plot_path)
    try:
        cells = run_variants(specs, cap, None if quiet else _print_cell, jobs=jobs)
    except KeyboardInterrupt:
        click.echo("interrupted (Ctrl-C)", err=True)
        sys.exit(int(ExitCode.INTERRUPTED))
    for index, experiment in enumerate(chosen):
        mine = [c for c in cells if c.spec.experiment == experiment]
        if index:
            click.echo("")
        click.echo(f"{experiment} - transitions per variant (cap {cap:,} per run)")
        click.echo(transitions_table(mine, names))
        click.echo("")
        click.echo(summary_table(mine, names))
    text = legend(names, labels)
    if text:
        click.echo("")
        click.echo("variants:")
        click.echo(text)
        if any("clone=auto" in label for label in labels.values()):
            click.echo("  (clone=auto: in_port,eth_src,eth_dst for mac-learning, the header fields for route-flow "
                       "and energy-te)")
    if csv_path is not None:
        _write(csv_path, variants_csv(cells, labels), "--csv")
        click.echo(f"wrote {csv_path}")
    if plot_path is not None:
        from nice_attendre.output import write_with

        write_with(plot_path, lambda temp: plot_variants(cells, names, str(temp)), "--plot")
        click.echo(f"wrote {plot_path}")
