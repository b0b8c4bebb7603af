"""The protocol variants side by side (front end of ``nice-attendre bench variants``).

Every variant (the paper's three and the other papers' mechanisms, each with parameters) on
the paper's three experiments: route-flow (Fig. 8), MAC learning (Table II) and energy TE
(Table III), at the paper's sizes. Per cell (an app, a scenario, a variant) it runs:

1. the bare state space (no property, as the paper counts): transitions and unique states,
   with the per-cell cap; as in :func:`nice_attendre.benchmarks.experiments.run_grid`, cells larger in
   every parameter than an over-cap cell of the same experiment and variant are skipped;
2. the control-plane load (``count_load``: packet-ins, flow-mods, packet-outs, barriers,
   min..max per complete execution), when the bare run completed;
3. when the bare run completed, one verification per race property of the experiment
   (:data:`RACE_PROPERTIES`), each stopping at its first violation: ``ok`` (complete, none),
   ``FAIL`` or ``?`` (the cap came first; a property's history can make its state space
   larger than the bare one). A cell over the cap is not checked (``-``): its bare space
   alone exceeds the cap, and violations show in smaller cells first.
"""
from __future__ import annotations

import csv
import io
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Iterable, Sequence

from nice_attendre.benchmarks.experiments import (DEFAULT_CAP, Cell, CellSpec, energy_te_specs, format_count, format_ratio,
                                       mac_learning_specs, route_flow_specs)
from nice_attendre.frontend.report import table_lines

#: The default variants: (short name for tables, protocol spec). The paper's three; packet-in
#: filtering dropping repeats while the controller answers (entries outlive the answer),
#: flooding them, and as the authors' prototype (a rate-limited packet-in, entries expiring
#: at any time); a switch without buffer, one whose buffer holds one packet, and
#: flow-granularity buffering; batches of two flow-mods with the timer.
VARIANTS: tuple[tuple[str, str], ...] = (
    ("openflow", "openflow"),
    ("openflow-b", "openflow-b"),
    ("attendre", "attendre"),
    ("pif-drop", "pif:action=drop,expire=never"),
    ("pif-flood", "pif:action=flood,expire=never"),
    ("pif-meter", "pif"),
    ("no-buffer", "buffer:capacity=0"),
    ("buffer-1", "buffer:capacity=1"),
    ("flow-buffer", "buffer:granularity=flow"),
    ("batch-2", "batch:threshold=2"),
)

#: The race properties checked per experiment (delivery is left out of MAC learning: its
#: replier moves, so frames in flight to its old port are lost under every protocol).
RACE_PROPERTIES: dict[str, tuple[str, ...]] = {
    "route-flow": ("one-packet-in-per-flow", "no-forgotten-packets", "no-reordering", "delivery", "no-duplicates"),
    "mac-learning": ("one-packet-in-per-flow", "no-forgotten-packets", "no-reordering", "no-duplicates"),
    "energy-te": ("one-packet-in-per-flow", "no-forgotten-packets", "no-reordering", "delivery", "no-duplicates"),
}
#: Short column titles of the properties.
PROPERTY_TITLES = {"one-packet-in-per-flow": "1 pkt-in/flow", "no-forgotten-packets": "no forgotten",
                   "no-reordering": "no reorder", "delivery": "delivery", "no-duplicates": "no dups"}
LOAD_COLUMNS = ("packet_ins", "flow_mods", "packet_outs", "barriers")

#: Verdicts of a property run.
OK, FAIL, UNKNOWN, NOT_RUN = "ok", "FAIL", "?", "-"


@dataclass(frozen=True)
class VariantCell:
    """One cell's outcome: the bare counts (``cell``), the load (counter -> (min, max); empty
    when not measured, ``load_status`` says why) and a verdict per race property."""

    cell: Cell
    load: dict[str, tuple[int, int]] = field(default_factory=dict)
    load_status: str = "not-run"
    verdicts: tuple[tuple[str, str], ...] = ()

    @property
    def spec(self) -> CellSpec:
        return self.cell.spec

    def verdict(self, name: str) -> str:
        return dict(self.verdicts).get(name, NOT_RUN)


def variant_specs(experiments: Iterable[str], protocols: Sequence[str], *, switches: Iterable[int] = range(1, 9),
                  packets: Iterable[int] = range(1, 6), mac_packets: Iterable[int] = range(1, 5),
                  te_flows: Iterable[int] = (1, 2)) -> list[CellSpec]:
    """The cells of the chosen experiments (smaller cells first within each variant)."""
    specs: list[CellSpec] = []
    for experiment in experiments:
        if experiment == "route-flow":
            specs += route_flow_specs(list(switches), list(packets), protocols)
        elif experiment == "mac-learning":
            specs += mac_learning_specs((1, 2), list(mac_packets), protocols)
        elif experiment == "energy-te":
            specs += energy_te_specs(((2, 3), (3, 4)), list(te_flows), protocols)
        else:
            raise ValueError(f"unknown experiment {experiment!r}")
    return specs


def _verdict(result: Any) -> str:
    if result.stop_reason == "interrupted":
        raise KeyboardInterrupt
    if result.discoveries:
        return FAIL
    return OK if result.complete else UNKNOWN


def measure_variant(cap: int, race: dict[str, tuple[str, ...]], spec: CellSpec) -> VariantCell:
    """One cell's runs (see the module docstring); KeyboardInterrupt if a signal interrupted one."""
    from nice_attendre.frontend.api import verify

    started = time.perf_counter()
    result = verify(spec.app, protocol=spec.protocol, max_transitions=cap, properties=[], **spec.options)
    seconds = time.perf_counter() - started
    if result.stop_reason == "interrupted":
        raise KeyboardInterrupt
    status = "complete" if result.complete else ("violation" if result.stop_reason == "violation"
                                                 else "over-cap")
    stats = result.stats
    counted = Cell(spec, status, stats.transitions, stats.unique_states, stats.revisits, stats.max_depth,
                   seconds)
    load: dict[str, tuple[int, int]] = {}
    load_status = "not-run"
    names = race.get(spec.experiment, ())
    if status == "complete":
        loaded = verify(spec.app, protocol=spec.protocol, max_transitions=cap, properties=[],
                        count_load=True, **spec.options)
        if loaded.stop_reason == "interrupted":
            raise KeyboardInterrupt
        load_status = "complete" if loaded.complete else "over-cap"
        load = dict(loaded.metrics) if loaded.complete else {}
        verdicts = tuple((name, _verdict(verify(spec.app, protocol=spec.protocol, max_transitions=cap,
                                                properties=[name], **spec.options)))
                         for name in names)
    else:
        verdicts = tuple((name, NOT_RUN) for name in names)
    return VariantCell(counted, load, load_status, verdicts)


def run_variants(specs: Sequence[CellSpec], cap: int = DEFAULT_CAP,
                 on_cell: Callable[[VariantCell], None] | None = None,
                 properties: dict[str, tuple[str, ...]] | None = None, jobs: int = 1) -> list[VariantCell]:
    """Run every cell (see the module docstring); Ctrl-C raises KeyboardInterrupt. With
    ``jobs > 1`` the cells run in that many processes, with the outcome of ``jobs == 1``."""
    from nice_attendre.frontend.cellpool import run_in_order

    race = RACE_PROPERTIES if properties is None else properties
    done: list[VariantCell] = []
    work = partial(measure_variant, cap, race)
    for spec, outcome in run_in_order(specs, work, lambda o: o.cell.status == "over-cap", jobs):
        outcome = outcome if outcome is not None else VariantCell(Cell(spec, "skipped"))
        done.append(outcome)
        if on_cell is not None:
            on_cell(outcome)
    return done


# ---- output -----------------------------------------------------------------------------

def _cell_label(spec: CellSpec) -> str:
    return "/".join(str(value) for _name, value in spec.params)


def short_names(protocols: Sequence[str]) -> dict[str, str]:
    """Column titles: the short name of a default variant, else the protocol as given."""
    known = {spec: name for name, spec in VARIANTS}
    return {protocol: known.get(protocol, protocol) for protocol in protocols}


def transitions_table(cells: Sequence[VariantCell], protocols: Sequence[str], base: str = "openflow") -> str:
    """Transitions per cell (rows) and variant (columns), then unique states, with the ratio
    ``base``/variant of the largest cell every variant completed."""
    names = short_names(protocols)
    by_row: dict[tuple[Any, ...], dict[str, VariantCell]] = {}
    for outcome in cells:
        by_row.setdefault(tuple(v for _n, v in outcome.spec.params), {})[outcome.spec.protocol] = outcome
    params = [name for name, _v in cells[0].spec.params] if cells else []
    header = [*params, *(names[p] for p in protocols)]
    rows = []
    for key, group in sorted(by_row.items()):
        rows.append([*(str(v) for v in key), *(format_count(group[p].cell if p in group else None) for p in protocols)])
    lines = table_lines(header, rows)
    full = [key for key, group in sorted(by_row.items())
            if all(p in group and group[p].cell.counted for p in protocols)]
    if full and base in protocols:
        group = by_row[full[-1]]
        ratios = "  ".join(f"{names[p]} {format_ratio(group[base].cell, group[p].cell)}" for p in protocols)
        lines.append(f"{base}/variant at {'/'.join(map(str, full[-1]))}: {ratios}")
    return "\n".join(lines)


def _load_text(outcome: VariantCell, counter: str) -> str:
    if outcome.load_status != "complete" or counter not in outcome.load:
        return "-"
    low, high = outcome.load[counter]
    return f"{low}..{high}"


def summary_table(cells: Sequence[VariantCell], protocols: Sequence[str]) -> str:
    """Per variant: unique states and load at the largest cell every variant completed (or
    stopped at an app exception, shown ``-``), and each race property over the cells checked
    (``ok`` in each, ``FAIL a/b`` at the first cell that violates it, ``?`` when some run hit
    the cap without a violation; ``-`` when no cell was checked)."""
    names = short_names(protocols)
    experiment = cells[0].spec.experiment if cells else ""
    props = list(dict.fromkeys(name for outcome in cells for name, _v in outcome.verdicts))
    by_row: dict[tuple[Any, ...], dict[str, VariantCell]] = {}
    for outcome in cells:
        by_row.setdefault(tuple(v for _n, v in outcome.spec.params), {})[outcome.spec.protocol] = outcome
    full = [key for key, group in sorted(by_row.items())
            if all(p in group and (group[p].cell.status == "violation"
                                   or (group[p].cell.counted and group[p].load_status == "complete"))
                   for p in protocols)]
    at = full[-1] if full else None
    header = ["variant", "unique states", *(c.replace("_", "-") for c in LOAD_COLUMNS),
              *(PROPERTY_TITLES.get(p, p) for p in props)]
    rows = []
    for protocol in protocols:
        mine = [c for c in cells if c.spec.protocol == protocol]
        here = by_row.get(at, {}).get(protocol) if at is not None else None
        counted = here is not None and here.cell.counted
        row = [names[protocol], f"{here.cell.unique_states:,}" if counted else "-",  # type: ignore[union-attr]
               *(_load_text(here, c) if counted else "-" for c in LOAD_COLUMNS)]  # type: ignore[arg-type]
        for prop in props:
            verdicts = [(c, c.verdict(prop)) for c in mine if c.verdict(prop) != NOT_RUN]
            failed = [c for c, v in verdicts if v == FAIL]
            if failed:
                row.append(f"FAIL {_cell_label(failed[0].spec)}")
            elif not verdicts:
                row.append(NOT_RUN)
            elif all(v == OK for _c, v in verdicts):
                row.append(OK)
            else:
                row.append(UNKNOWN)
        rows.append(row)
    where = "/".join(map(str, at)) if at is not None else "-"
    params = "/".join(name for name, _v in cells[0].spec.params) if cells else ""
    title = (f"{experiment}: unique states and load (min..max per execution) at {params} {where}; "
             f"race properties over the cells within the cap (FAIL {params} = first cell violating it)")
    return "\n".join([title, *table_lines(header, rows, left=1)])


def legend(protocols: Sequence[str], labels: dict[str, str]) -> str:
    """What each column title stands for: the variant with every parameter (``labels``:
    protocol as given -> its full ``NAME:KEY=VALUE,...``), where the title does not say it all."""
    names = short_names(protocols)
    width = max((len(names[p]) for p in protocols), default=0)
    return "\n".join(f"  {names[p]:<{width}}  {labels.get(p, p)}" for p in protocols if labels.get(p, p) != names[p])


def variants_csv(cells: Sequence[VariantCell], labels: dict[str, str] | None = None) -> str:
    """Every cell: experiment, protocol (as given, and with every parameter from ``labels``),
    parameters, counts, status, load min/max, verdicts."""
    labels = labels or {}
    params: list[str] = []
    props: list[str] = []
    for outcome in cells:
        for name, _v in outcome.spec.params:
            if name not in params:
                params.append(name)
        for name, _v in outcome.verdicts:
            if name not in props:
                props.append(name)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["experiment", "protocol", "protocol_spec", *params, "transitions", "unique_states", "revisits", "max_depth",
                     "seconds", "status", *(f"{c}_{end}" for c in LOAD_COLUMNS for end in ("min", "max")), *props])
    for outcome in cells:
        cell = outcome.cell
        values = dict(cell.spec.params)
        counted = cell.status != "skipped"
        loads = []
        for counter in LOAD_COLUMNS:
            low_high = outcome.load.get(counter) if outcome.load_status == "complete" else None
            loads += list(low_high) if low_high is not None else ["", ""]
        writer.writerow([cell.spec.experiment, cell.spec.protocol, labels.get(cell.spec.protocol, cell.spec.protocol),
                         *(values.get(n, "") for n in params),
                         cell.transitions if counted else "", cell.unique_states if counted else "",
                         cell.revisits if counted else "", cell.max_depth if counted else "",
                         f"{cell.seconds:.3f}", cell.status, *loads, *(outcome.verdict(p) for p in props)])
    return out.getvalue()


def plot_variants(cells: Sequence[VariantCell], protocols: Sequence[str], path: str) -> None:
    """One panel per experiment: transitions per cell (log scale), a line per variant and
    value of the leading parameters (route-flow: one per switch count, over packets).

    Needs matplotlib (the ``plot`` extra); raises ImportError without it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = short_names(protocols)
    experiments = list(dict.fromkeys(c.spec.experiment for c in cells))
    figure, axes = plt.subplots(len(experiments), 1, figsize=(10, 4 * max(len(experiments), 1)), squeeze=False)
    colours = plt.get_cmap("tab10")
    for panel, experiment in zip(axes[:, 0], experiments):
        mine = [c for c in cells if c.spec.experiment == experiment]
        keys = sorted({tuple(v for _n, v in c.spec.params) for c in mine})
        for index, protocol in enumerate(protocols):
            # one line per value of the leading parameters: the last one grows along it
            groups: dict[tuple[Any, ...], list[tuple[int, int]]] = {}
            for c in mine:
                if c.spec.protocol == protocol and c.cell.counted:
                    key = tuple(v for _n, v in c.spec.params)
                    groups.setdefault(key[:-1], []).append((keys.index(key), c.cell.transitions))
            for number, (_lead, points) in enumerate(sorted(groups.items())):
                xs, ys = zip(*sorted(points))
                panel.plot(xs, ys, marker="o", color=colours(index % 10),
                           label=names[protocol] if number == 0 else None)
        panel.set_xticks(range(len(keys)))
        panel.set_xticklabels(["/".join(map(str, key)) for key in keys], rotation=90, fontsize=7)
        panel.set_yscale("log")
        params = "/".join(name for name, _v in mine[0].spec.params) if mine else ""
        panel.set_xlabel(params)
        panel.set_ylabel("transitions")
        panel.set_title(f"{experiment}: transitions per variant (complete cells)")
        panel.grid(True, which="both", alpha=0.3)
        panel.legend(fontsize=7, ncol=5)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
