"""`nice-attendre delay`: the forwarding-delay study of paper section VIII.

The computation is one library call (:func:`grid_study` or :func:`monte_carlo_study`
in ``nice_attendre.models.delay``); this module only reads options, renders the
report, and writes the CSV and PNG. Library errors become one-line usage errors
(exit code 2).
"""
from __future__ import annotations

import csv
import dataclasses
import importlib
import math
from pathlib import Path
from typing import Any, Callable

import click
import numpy as np

from nice_attendre.models.delay import (
    Claims,
    DelayConfigError,
    DelayModelError,
    DelayParams,
    DelayStudy,
    Mechanism,
    Summary,
    check_claims,
    grid_study,
    load_config,
    monte_carlo_study,
    parse_duration,
    parse_durations,
    redundant_share,
    summarize,
)

def _default_text(key: str, value: object) -> str:
    """A default as it would be typed on the command line (durations in us)."""
    parse = next(f.metadata["parse"] for f in dataclasses.fields(DelayParams) if f.name == key)
    if parse is parse_duration:
        return f"{_us(value)}us"
    if parse is parse_durations:
        return ",".join(f"{_us(v)}us" for v in value)
    return str(value)


def _option_name(key: str) -> str:
    return "--" + key.replace("_", "-")


def _parameter_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """One string option per :class:`DelayParams` field, parsed by the library."""
    defaults = DelayParams()
    for key, doc in reversed(list(DelayParams.describe().items())):
        command = click.option(
            _option_name(key),
            key,
            metavar="VALUE",
            default=None,
            help=f"{doc} (default {_default_text(key, getattr(defaults, key))}).",
        )(command)
    return command


# --------------------------------------------------------------------------- units


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f}"


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:g}"


def _us_list(values: tuple[float, ...] | np.ndarray) -> str:
    return ", ".join(_us(v) for v in values)


# ---------------------------------------------------------------------- rendering


def _header(study: DelayStudy) -> list[str]:
    p = study.params
    n = p.n_switches
    k, m = len(study.p_c), study.cases_per_controller
    ac = f"links out of switches 1..{n - 1}" if n > 1 else "no link (N = 1)"
    lines = [f"Forwarding delay of a flow's first packet over N = {n} switches (paper VIII, formulas (3)-(5))"]
    if study.mode == "grid":
        lines.append(
            f"grid: {k} controller delays x {m} RTT combinations ({len(p.tau)} values ^ {n} switches) = {k * m} cases"
        )
    else:
        lines.append(
            f"monte-carlo: {k} controller delays x {m} samples = {k * m} cases, seed {study.seed}; "
            f"p_sp, p_sc log-normal (sigma {p.sigma_switch:g}), p_c log-normal (sigma {p.sigma_controller:g}) "
            "around the values below (medians), tau uniform over the tau values"
        )
    lines += [
        f"fixed (us): t = {_us(p.t)} (Attendre: t_ac = {_us(p.t_ac)} on {ac}), g = {_us(p.g)}, "
        f"q_i = {_us(p.q_i)}, q_o = {_us(p.q_o)}, p_sp = {_us(p.p_sp)}, p_sc = {_us(p.p_sc)}",
        f"varied (us): p_c = {_us_list(p.p_c)}; tau per switch = {_us_list(p.tau)}",
    ]
    return lines


def _table(rows: tuple[Summary, ...]) -> list[str]:
    lines = [
        "One-way delay of the first packet (ms); p80 = 80th percentile (linear interpolation)",
        f"{'p_c (ms)':>9}  {'mechanism':<11}{'min':>8}{'median':>9}{'max':>8}{'p80':>8}",
    ]
    for r in rows:
        lines.append(
            f"{_ms(r.p_c):>9}  {r.mechanism.value:<11}{_ms(r.minimum):>8}{_ms(r.median):>9}"
            f"{_ms(r.maximum):>8}{_ms(r.p80):>8}"
        )
    return lines


def _redundant(study: DelayStudy) -> list[str]:
    lines = ["Redundant packet-in under OpenFlow (indicator of (3) true at some hop)"]
    counts = study.redundant.any(axis=2).sum(axis=1)
    for p_c, share, count in zip(study.p_c, redundant_share(study), counts):
        lines.append(f"  p_c {_ms(p_c)} ms: {share:.1%} of cases ({count} of {study.cases_per_controller})")
    return lines


def _verdict(holds: bool) -> str:
    return "true " if holds else "false"


def _claims(study: DelayStudy, claims: Claims) -> list[str]:
    gap, best, share = claims.barrier_gap, claims.worst_beats_best, claims.worst_beats_share
    title = "Claims of section VIII.D"
    if study.mode != "grid":
        title += " (checked on the Monte Carlo samples; the paper states them for the grid)"
    lines = [
        title,
        f"  1. {_verdict(gap.holds)} OpenFlow-B slower than Attendre by about 1 ms in every case",
        f"           gap T_b - T_a from {_ms(gap.min_gap)} to {_ms(gap.max_gap)} ms over "
        f"{study.openflow.size} cases (criterion: every gap in "
        f"[{_ms(gap.target - gap.tolerance)}, {_ms(gap.target + gap.tolerance)}) ms)",
        f"  2. {_verdict(best.holds)} within each controller delay, worst Attendre faster than best OpenFlow-B",
    ]
    for p_c, worst, fastest in zip(best.p_c, best.worst_attendre, best.best_openflow_b):
        sign = "<" if worst < fastest else ">="
        lines.append(
            f"           p_c {_ms(p_c)} ms: worst Attendre {_ms(worst)} ms {sign} best OpenFlow-B {_ms(fastest)} ms"
        )
    lines.append(f"  3. {_verdict(share.holds)} worst Attendre faster than roughly 60% of OpenFlow cases")
    for p_c, worst, fraction in zip(share.p_c, share.worst_attendre, share.share):
        lines.append(
            f"           p_c {_ms(p_c)} ms: {fraction:.1%} of OpenFlow cases slower than worst Attendre {_ms(worst)} ms"
        )
    lines.append(
        f"           (criterion: at least {share.threshold:.0%} at every controller delay; "
        "'roughly 60%' read as 60% within 5 points)"
    )
    return lines


def render_report(study: DelayStudy, claims: Claims) -> str:
    """The full text report: header, summary table, redundant packet-ins, claims."""
    blocks = [_header(study), _table(summarize(study)), _redundant(study), _claims(study, claims)]
    return "\n\n".join("\n".join(block) for block in blocks)


# -------------------------------------------------------------------------- files


def csv_columns(n_switches: int) -> list[str]:
    """Column names of the ``--csv`` file (times in microseconds)."""
    return (
        ["p_c_us", "case"]
        + [f"tau_{k}_us" for k in range(1, n_switches + 1)]
        + [f"{m.slug}_us" for m in Mechanism]
        + ["redundant_packet_ins"]
    )


def write_csv(study: DelayStudy, path: Path) -> None:
    """One row per case: controller delay, case index, RTTs, the three delays, redundant count."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(csv_columns(study.params.n_switches))
        counts = study.redundant.sum(axis=2)
        for i, p_c in enumerate(study.p_c):
            p_c_text = f"{p_c * 1e6:.4f}"
            taus = np.char.mod("%.4f", study.tau[i] * 1e6)
            delays = np.char.mod("%.4f", np.stack([study.delays(m)[i] * 1e6 for m in Mechanism], axis=1))
            for j in range(study.cases_per_controller):
                writer.writerow([p_c_text, j, *taus[j], *delays[j], int(counts[i, j])])


def _require_matplotlib() -> Any:
    try:
        matplotlib = importlib.import_module("matplotlib")
    except ImportError:
        raise click.UsageError(
            "--plot needs matplotlib, which is not installed; install the 'plot' extra: pip install 'nice-attendre[plot]'"
        ) from None
    matplotlib.use("Agg")
    return importlib.import_module("matplotlib.pyplot")


def write_plot(study: DelayStudy, path: Path, plt: Any) -> None:
    """CDFs of the delays: one panel per controller delay, one curve per mechanism."""
    k = len(study.p_c)
    fig, axes = plt.subplots(1, k, figsize=(4 * k, 3.6), sharey=True, squeeze=False)
    for i, ax in enumerate(axes[0]):
        for mechanism in Mechanism:
            values = np.sort(study.delays(mechanism)[i]) * 1e3
            ax.step(values, np.arange(1, values.size + 1) / values.size, where="post", label=mechanism.value)
        ax.set_title(f"p_c = {_ms(study.p_c[i])} ms")
        ax.set_xlabel("first-packet delay (ms)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("CDF")
    axes[0][0].legend(loc="lower right")
    fig.suptitle(f"Forwarding delay over N = {study.params.n_switches} switches ({study.mode})")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ------------------------------------------------------------------------ command


def _params(config: Path | None, options: dict[str, str | None]) -> DelayParams:
    """Defaults, then the parameter file, then the command-line options."""
    params = DelayParams()
    if config is not None:
        try:
            params = params.with_overrides(load_config(config))
        except DelayConfigError as err:
            message = str(err) if err.key is None else f"{config}: {err}"
            raise click.BadParameter(message, param_hint="--config") from None
    given = {key: value for key, value in options.items() if value is not None}
    try:
        return params.with_overrides(given)
    except DelayConfigError as err:
        hint = _option_name(err.key) if err.key in given else None
        raise click.BadParameter(str(err), param_hint=hint) from None


@click.command("delay")
@click.option(
    "--config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSON or TOML file of parameters (keys as the options below, with '_'); options override it.",
)
@click.option("--monte-carlo", "samples", type=click.IntRange(min=1), default=None, metavar="N",
              help="Draw N log-normal cases per controller delay instead of the grid.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the Monte Carlo draws.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, writable=True, path_type=Path),
              help="Write one row per case to this CSV file (times in us).")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False, writable=True, path_type=Path),
              help="Write the delay CDFs to this PNG (needs matplotlib, the 'plot' extra).")
@_parameter_options
def delay(
    config: Path | None,
    samples: int | None,
    seed: int,
    csv_path: Path | None,
    plot_path: Path | None,
    **options: str | None,
) -> None:
    """Forwarding delay of a flow's first packet under OpenFlow, OpenFlow-B and Attendre.

    Evaluates formulas (3)-(5) of the paper's section VIII on the grid of VIII.C
    (or on Monte Carlo draws), prints min / median / max / 80th percentile per
    mechanism and controller delay, the share of redundant packet-ins, and checks
    the three claims of VIII.D. Durations take a unit (1ms, 5us, 167ns; a bare
    number is seconds); lists are comma-separated or START:STOP:COUNT.
    """
    from nice_attendre.output import prepare, write_with

    prepare(csv_path, "--csv")
    prepare(plot_path, "--plot")
    plt = _require_matplotlib() if plot_path is not None else None
    params = _params(config, options)
    _check_size(params, samples)
    try:
        study = grid_study(params) if samples is None else monte_carlo_study(params, samples, seed)
    except DelayModelError as err:
        raise click.UsageError(str(err)) from None
    click.echo(render_report(study, check_claims(study)))
    if csv_path is not None:
        write_with(csv_path, lambda temp: write_csv(study, temp), "--csv")
        click.echo(f"\nwrote {study.openflow.size} rows to {csv_path}")
    if plot_path is not None:
        write_with(plot_path, lambda temp: write_plot(study, temp, plt), "--plot")
        click.echo(f"wrote delay CDFs to {plot_path}")


#: Most cases (RTT combinations) a grid study may have; the model's own limit.
MAX_GRID_CASES = 5_000_000
#: Most values drawn per quantity in a Monte Carlo study (samples x switches x controller delays).
MAX_MONTE_CARLO_VALUES = 20_000_000
#: Most switches on the path (as for a generated topology): with one tau value the grid has
#: one case whatever N, and a huge N would only exhaust memory building its arrays.
MAX_PATH_SWITCHES = 1000


def _check_size(params: DelayParams, samples: int | None) -> None:
    """Refuse a study too large to hold in memory, before computing anything (a huge N or N
    of samples would otherwise end in a memory error, or in an overflow formatting the size)."""
    n = params.n_switches
    if samples is None:
        values = len(params.tau)
        if values > 1 and n * math.log10(values) > math.log10(MAX_GRID_CASES):
            count = str(values ** n) if n * math.log10(values) < 100 else "more than 10^100"
            raise click.BadParameter(
                f"the grid would have {values}^{n} = {count} RTT combinations (limit {MAX_GRID_CASES:,}); "
                "use fewer switches or tau values, or --monte-carlo", param_hint="--n-switches")
    elif samples * n * len(params.p_c) > MAX_MONTE_CARLO_VALUES:
        raise click.BadParameter(
            f"{samples:,} samples x {n} switches x {len(params.p_c)} controller delays is more than "
            f"{MAX_MONTE_CARLO_VALUES:,} values per quantity; use fewer samples", param_hint="--monte-carlo")
    if n > MAX_PATH_SWITCHES:
        raise click.BadParameter(f"{n:,} switches on the path is more than {MAX_PATH_SWITCHES:,}",
                                 param_hint="--n-switches")
