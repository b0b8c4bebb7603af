"""The paper's experiments as grids of verifications (front end of ``nice-attendre bench``).

A grid is a list of cells (an app, a scenario, a protocol); each cell is verified with a cap
on transitions (the paper reports cells under 1,000,000). Counts grow with switches, packets
and flows, so once a cell of a protocol exceeds the cap, the cells that are larger in every
parameter are not run (marked ``skipped``). A cell whose search stops at a violation (an app
exception: the grids check no other property) is marked ``violation``.
"""
from __future__ import annotations

import csv
import io
import time
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Callable, Iterable, Sequence

from nice_attendre.frontend.report import table_lines

PROTOCOLS = ("openflow", "openflow-b", "attendre")
DEFAULT_CAP = 1_000_000


@dataclass(frozen=True)
class CellSpec:
    """What one cell verifies: ``params`` label it (e.g. switches, packets), ``options`` are
    the keywords of :func:`nice_attendre.frontend.api.verify`."""

    experiment: str
    params: tuple[tuple[str, int], ...]
    protocol: str
    app: Any
    options: dict[str, Any] = field(default_factory=dict)

    def param(self, name: str) -> int:
        return dict(self.params)[name]


@dataclass(frozen=True)
class Cell:
    """A cell's outcome. ``status``: ``complete``, ``over-cap`` (stopped at the cap),
    ``skipped`` (a smaller cell was over the cap) or ``violation``. ``stop_reason`` names the
    limit of the whole run (``max-seconds``, ``max-memory``) that cut an ``over-cap`` cell
    (its count a lower bound, like the cap's) or left a ``skipped`` cell not run."""

    spec: CellSpec
    status: str
    transitions: int = 0
    unique_states: int = 0
    revisits: int = 0
    max_depth: int = 0
    seconds: float = 0.0
    stop_reason: str | None = None
    #: with ``--por``: the reduced search's outcome (``status``'s values, or ``unsupported``)
    #: and counts; None without ``--por``
    reduced_status: str | None = None
    reduced_transitions: int = 0
    reduced_states: int = 0
    #: the limit of the whole run that cut the reduced search or left it not run
    reduced_stop_reason: str | None = None

    @property
    def counted(self) -> bool:
        """Whether the counts are a complete exploration's."""
        return self.status == "complete"


def _status(result: Any) -> tuple[str, str | None]:
    """A verification's cell status and the limit of the whole run that cut it."""
    if result.complete:
        return "complete", None
    if result.stop_reason == "interrupted":
        raise KeyboardInterrupt
    if result.stop_reason == "violation":
        return "violation", None
    if result.stop_reason in ("max-seconds", "max-memory", "out-of-memory"):
        return ("over-cap" if result.stats.transitions else "skipped"), result.stop_reason
    return "over-cap", None


def por_supported(protocol: str) -> bool:
    """Whether ``--por`` reduces ``protocol`` (its footprints are declared)."""
    from nice_attendre.models.footprints import SUPPORTED_PROTOCOLS
    from nice_attendre.models.protocols import resolve

    return resolve(protocol).name in SUPPORTED_PROTOCOLS


def measure_cell(cap: int, spec: CellSpec, deadline: float | None = None, max_memory: int | None = None,
                 por: bool = False) -> Cell:
    """Verify one cell with no property, stopping at ``cap`` transitions (KeyboardInterrupt
    if a signal interrupted it). ``deadline`` (a ``time.time()``) and ``max_memory`` (bytes,
    this process) are the limits of the whole run: a cell they cut is ``over-cap`` with its
    ``stop_reason``, one that could not start before the deadline (or was cut before its
    first transition) is ``skipped``. With ``por`` the cell is also verified with
    partial-order reduction, within the same cap (``reduced_*``; ``unsupported`` for a
    protocol it does not reduce)."""
    from nice_attendre.frontend.api import verify

    limits: dict[str, Any] = {}
    if deadline is not None:
        left = deadline - time.time()
        if left <= 0:
            return Cell(spec, "skipped", stop_reason="max-seconds")
        limits["max_seconds"] = left
    if max_memory is not None:
        limits["max_memory"] = max_memory
    started = time.perf_counter()
    result = verify(spec.app, protocol=spec.protocol, max_transitions=cap, properties=[], **limits, **spec.options)
    seconds = time.perf_counter() - started
    stats = result.stats
    status, stop_reason = _status(result)
    cell = Cell(spec, status, stats.transitions, stats.unique_states, stats.revisits, stats.max_depth, seconds,
                stop_reason)
    if not por:
        return cell
    if not por_supported(spec.protocol):
        return replace(cell, reduced_status="unsupported")
    if deadline is not None:
        left = deadline - time.time()
        if left <= 0:
            return replace(cell, reduced_status="skipped", reduced_stop_reason="max-seconds")
        limits["max_seconds"] = left
    reduced = verify(spec.app, protocol=spec.protocol, max_transitions=cap, properties=[], por=True, **limits,
                     **spec.options)
    status, stop_reason = _status(reduced)
    return replace(cell, reduced_status=status, reduced_transitions=reduced.stats.transitions,
                   reduced_states=reduced.stats.unique_states, reduced_stop_reason=stop_reason)


def run_grid(specs: Sequence[CellSpec], cap: int = DEFAULT_CAP,
             on_cell: Callable[[Cell], None] | None = None, jobs: int = 1,
             deadline: float | None = None, max_memory: int | None = None, por: bool = False) -> list[Cell]:
    """Verify every cell in the given order, skipping those that dominate an over-cap cell.

    A cell is skipped when an earlier cell of the same experiment and protocol reached the cap
    and every parameter of this cell is at least that cell's, so give smaller cells first.
    With ``jobs > 1`` the cells run in that many processes; the cells (counts, statuses,
    order) and the calls of ``on_cell`` (in order) are those of ``jobs == 1``.
    ``deadline``, ``max_memory`` and ``por``: see :func:`measure_cell`.
    """
    from nice_attendre.frontend.cellpool import run_in_order

    work = partial(measure_cell, cap, deadline=deadline, max_memory=max_memory, por=por)
    cells: list[Cell] = []
    for spec, cell in run_in_order(specs, work, lambda c: c.status == "over-cap", jobs):
        cell = cell if cell is not None else Cell(spec, "skipped")
        cells.append(cell)
        if on_cell is not None:
            on_cell(cell)
    return cells


def route_flow_specs(switches: Iterable[int] = range(1, 9), packets: Iterable[int] = range(1, 6),
                     protocols: Sequence[str] = PROTOCOLS) -> list[CellSpec]:
    """Fig. 8: route-flow, sender and replier, N switches in a line, P packets each way."""
    return [CellSpec("route-flow", (("switches", n), ("packets", p)), protocol, "route-flow",
                     {"topology": f"linear:{n}", "packets": p})
            for protocol in protocols for p in packets for n in switches]


def cells_csv(cells: Sequence[Cell]) -> str:
    """The cells as CSV: experiment, protocol, parameters, counts, seconds, status."""
    names: list[str] = []
    for cell in cells:
        for name, _ in cell.spec.params:
            if name not in names:
                names.append(name)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    por = any(cell.reduced_status is not None for cell in cells)
    writer.writerow(["experiment", "protocol", *names, "transitions", "unique_states", "revisits",
                     "max_depth", "seconds", "status"]
                    + (["por_transitions", "por_unique_states", "por_status"] if por else []))
    for cell in cells:
        params = dict(cell.spec.params)
        counted = cell.reduced_status not in (None, "skipped", "unsupported")
        writer.writerow([cell.spec.experiment, cell.spec.protocol, *(params.get(n, "") for n in names),
                         cell.transitions if cell.status != "skipped" else "",
                         cell.unique_states if cell.status != "skipped" else "",
                         cell.revisits if cell.status != "skipped" else "",
                         cell.max_depth if cell.status != "skipped" else "",
                         f"{cell.seconds:.3f}",
                         cell.status if cell.stop_reason is None else f"{cell.status} ({cell.stop_reason})"]
                        + ([cell.reduced_transitions if counted else "", cell.reduced_states if counted else "",
                            cell.reduced_status or "skipped"] if por else []))
    return out.getvalue()


def format_count(cell: Cell | None) -> str:
    """A cell's transitions for a table: the number, ``>cap`` (``>1M``, ``>500``) when the cap
    stopped it, ``violation`` or ``-`` (not run)."""
    if cell is None or cell.status == "skipped":
        return "-"
    if cell.status == "over-cap":
        return f">{_round_count(cell.transitions)}"
    if cell.status == "violation":
        return "violation"
    return f"{cell.transitions:,}"


def _round_count(count: int) -> str:
    """``1M``, ``2.5M`` for millions with at most two decimals, else ``123,456``."""
    if count >= 1_000_000 and count % 10_000 == 0:
        return f"{count / 1e6:g}M"
    return f"{count:,}"


def format_ratio(numerator: Cell | None, denominator: Cell | None) -> str:
    """``numerator / denominator`` transitions with an ``x`` suffix, or ``-`` when it is unknown.

    When one side stopped at the cap (its true count is larger), the ratio is a bound:
    ``>2.41x`` (numerator over the cap; rounded down) or ``<0.41x`` (denominator over the cap;
    rounded up)."""
    if numerator is None or denominator is None or denominator.transitions == 0:
        return "-"
    if numerator.counted and denominator.counted:
        return f"{numerator.transitions / denominator.transitions:.2f}x"
    if numerator.status == "over-cap" and denominator.counted:
        hundredths = 100 * numerator.transitions // denominator.transitions
        return f">{hundredths // 100}.{hundredths % 100:02d}x"
    if numerator.counted and denominator.status == "over-cap":
        hundredths = -(-100 * numerator.transitions // denominator.transitions)
        return f"<{hundredths // 100}.{hundredths % 100:02d}x"
    return "-"


def _by_row(cells: Sequence[Cell], row_params: Sequence[str]) -> dict[tuple[Any, ...], dict[str, Cell]]:
    """The cells grouped by their values of ``row_params``, then by protocol."""
    by_key: dict[tuple[Any, ...], dict[str, Cell]] = {}
    for cell in cells:
        key = tuple(cell.spec.param(name) for name in row_params)
        by_key.setdefault(key, {})[cell.spec.protocol] = cell
    return by_key


def grid_table(cells: Sequence[Cell], row_params: Sequence[str], protocols: Sequence[str],
               ratios: Sequence[tuple[str, str]] = (("openflow", "attendre"),)) -> str:
    """A text table: one row per parameter combination, transitions per protocol and ratios;
    for the protocols reduced with ``--por``, the unreduced unique states and the reduced
    search's transitions and unique states beside them."""
    ratios = [(a, b) for a, b in ratios if a in protocols and b in protocols]
    reduced = [p for p in protocols if any(c.spec.protocol == p and c.reduced_status not in (None, "unsupported")
                                           for c in cells)]
    header = [*row_params, *protocols, *(f"{a}/{b}" for a, b in ratios)]
    for p in reduced:
        header += [f"{p} states", f"{p} por", f"{p} por states"]
    rows = []
    for key, group in sorted(_by_row(cells, row_params).items()):
        row = [*(str(v) for v in key), *(format_count(group.get(p)) for p in protocols),
               *(format_ratio(group.get(a), group.get(b)) for a, b in ratios)]
        for p in reduced:
            row += _reduced_counts(group.get(p))
        rows.append(row)
    return "\n".join(table_lines(header, rows))


def _reduced_counts(cell: Cell | None) -> list[str]:
    """A cell's unreduced unique states, reduced transitions and reduced unique states (``>``
    when the cap stopped it: lower bounds; ``violation``; ``-`` not run)."""
    if cell is None or cell.status == "skipped":
        states = "-"
    else:
        states = f"{'>' if cell.status == 'over-cap' else ''}{cell.unique_states:,}"
    status = None if cell is None else cell.reduced_status
    if status in (None, "skipped", "unsupported"):
        return [states, "-", "-"]
    if status == "violation":
        return [states, "violation", "violation"]
    mark = ">" if status == "over-cap" else ""
    return [states, f"{mark}{cell.reduced_transitions:,}", f"{mark}{cell.reduced_states:,}"]  # type: ignore[union-attr]


def mac_learning_specs(switches: Iterable[int] = (1, 2), packets: Iterable[int] = range(1, 5),
                       protocols: Sequence[str] = PROTOCOLS) -> list[CellSpec]:
    """Table II: MAC learning, N switches in a line, P packets each way, the replier mobile."""
    return [CellSpec("mac-learning", (("switches", n), ("packets", p)), protocol, "mac-learning",
                     {"topology": f"linear:{n}", "packets": p})
            for protocol in protocols for n in switches for p in packets]


def energy_te_specs(hops: Iterable[tuple[int, int]] = ((2, 3), (3, 4)), flows: Iterable[int] = (1, 2),
                    protocols: Sequence[str] = PROTOCOLS) -> list[CellSpec]:
    """Table III: energy-efficient TE, alwaysOn/onDemand paths of A/D switches, F flows."""
    return [CellSpec("energy-te", (("always_on", a), ("on_demand", d), ("flows", f)), protocol, "energy-te",
                     {"topology": f"paths:{a},{d}", "packets": f})
            for protocol in protocols for a, d in hops for f in flows]


#: The paper's figures (transitions): Table II and III as printed, Fig. 8 as the claims in VI.A.
PAPER_TABLE_II = {  # (switches, packets) -> (attendre, openflow)
    (1, 1): (74, 74), (1, 2): (1_800, 2_100), (1, 3): (16_500, 36_100), (1, 4): (101_000, 527_000),
    (2, 1): (188, 188), (2, 2): (9_200, 11_000), (2, 3): (133_000, 335_000),
}
PAPER_TABLE_III = {  # (always_on, on_demand, flows) -> (attendre, openflow)
    (2, 3, 1): (2_100, 2_900), (2, 3, 2): (27_100, 38_000),
    (3, 4, 1): (8_300, 47_100), (3, 4, 2): (110_000, 642_000),
}
PAPER_FIG_8_CLAIMS = (  # (switches, packets, what the paper says, openflow/attendre it implies)
    (8, 1, "attendre needs about 50% (about 2x fewer)", 2.0),
    (1, 5, "at least 20 times fewer", 20.0),
    (6, 2, "more than two orders of magnitude (about 200 times) fewer", 200.0),
)


def _short(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1e6:.2g}M"
    if count >= 1_000:
        return f"{count / 1e3:.3g}k"
    return str(count)


def paper_table(cells: Sequence[Cell], row_params: Sequence[str], paper: dict[tuple[int, ...], tuple[int, int]],
                title: str) -> str:
    """Our transitions under each protocol beside the paper's (attendre, openflow), with both ratios."""
    header = [*row_params, "openflow", "openflow-b", "attendre", "of/att", "paper openflow", "paper attendre",
              "paper of/att"]
    reduced = any(c.spec.protocol == "openflow" and c.reduced_status not in (None, "unsupported") for c in cells)
    if reduced:
        header += ["openflow states", "openflow por", "openflow por states"]
    rows = []
    for key, group in sorted(_by_row(cells, row_params).items()):
        paper_row = paper.get(key)
        rows.append([*(str(v) for v in key), format_count(group.get("openflow")), format_count(group.get("openflow-b")),
                     format_count(group.get("attendre")), format_ratio(group.get("openflow"), group.get("attendre")),
                     _short(paper_row[1]) if paper_row else "-", _short(paper_row[0]) if paper_row else "-",
                     f"{paper_row[1] / paper_row[0]:.2f}x" if paper_row else "-"]
                    + (_reduced_counts(group.get("openflow")) if reduced else []))
    return "\n".join([title, *table_lines(header, rows)])


def fig8_claims(cells: Sequence[Cell]) -> str:
    """The three route-flow claims of VI.A, with our ratio for each."""
    by_key = {(c.spec.param("switches"), c.spec.param("packets"), c.spec.protocol): c for c in cells
              if c.spec.experiment == "route-flow"}
    lines = ["Fig. 8 claims (openflow/attendre transitions):"]
    for switches, packets, said, _implied in PAPER_FIG_8_CLAIMS:
        pair = [(protocol, by_key.get((switches, packets, protocol))) for protocol in ("openflow", "attendre")]
        ours = format_ratio(pair[0][1], pair[1][1])
        if ours == "-":
            why = [_not_counted(protocol, cell) for protocol, cell in pair if cell is None or not cell.counted]
            ours += f" ({'; '.join(why)})" if why else ""
        lines.append(f"  {switches} switch{'es' if switches > 1 else ''}, {packets} packet{'s' if packets > 1 else ''}: "
                     f"paper: {said}; ours: {ours}")
    return "\n".join(lines)


def _not_counted(protocol: str, cell: Cell | None) -> str:
    if cell is None:
        return f"{protocol} not in the grid"
    return {"skipped": f"{protocol} not run: a smaller cell exceeded the cap",
            "over-cap": f"{protocol} over the cap",
            "violation": f"{protocol} stopped at a violation"}.get(cell.status, f"{protocol} {cell.status}")


def plot_fig8(cells: Sequence[Cell], path: str) -> None:
    """Fig. 8 as a PNG: transitions against switches, log scale, a line per (packets, protocol).

    Needs matplotlib (the ``plot`` extra); raises ImportError without it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    styles = {"openflow": ("o", "-"), "openflow-b": ("^", ":"), "attendre": ("s", "--")}
    figure, axes = plt.subplots(figsize=(8, 5.5))
    packets = sorted({c.spec.param("packets") for c in cells if c.spec.experiment == "route-flow"})
    colours = plt.get_cmap("viridis")
    for index, count in enumerate(packets):
        for protocol, (marker, line) in styles.items():
            points = sorted((c.spec.param("switches"), c.transitions) for c in cells
                            if c.spec.experiment == "route-flow" and c.counted
                            and c.spec.param("packets") == count and c.spec.protocol == protocol)
            if points:
                xs, ys = zip(*points)
                axes.plot(xs, ys, marker=marker, linestyle=line, color=colours(index / max(len(packets) - 1, 1)),
                          label=f"{protocol}, {count} pkt")
    axes.set_yscale("log")
    axes.set_xlabel("switches between sender and replier")
    axes.set_ylabel("state transitions")
    axes.set_title("Route-flow: transitions explored (Fig. 8)")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=7, ncol=3)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
