"""The variants bench (nice_attendre.benchmarks.variants_bench) with hand-made cells: skipping, verdict
aggregation, the cell the load is read at, CSV of skipped cells; and the runs a cell makes."""
from __future__ import annotations

import csv
import io
from typing import Any

import pytest

import nice_attendre.frontend.api
from nice_attendre.benchmarks.experiments import Cell, CellSpec
from nice_attendre.benchmarks.variants_bench import (VARIANTS, VariantCell, run_variants, summary_table, transitions_table,
                                          variant_specs, variants_csv)


def spec(switches: int, packets: int, protocol: str) -> CellSpec:
    return CellSpec("route-flow", (("switches", switches), ("packets", packets)), protocol, "route-flow",
                    {"topology": f"linear:{switches}", "packets": packets})


def outcome(switches: int, packets: int, protocol: str, status: str, transitions: int = 0,
            load: bool = True, **verdicts: str) -> VariantCell:
    cell = Cell(spec(switches, packets, protocol), status, transitions, transitions // 2)
    if status == "skipped":
        return VariantCell(cell)
    return VariantCell(cell, {"packet_ins": (2, 4), "flow_mods": (1, 3), "packet_outs": (0, 0), "barriers": (0, 0)}
                       if load else {}, "complete" if load else "over-cap",
                       tuple((name.replace("_", "-"), value) for name, value in verdicts.items()))


CELLS = [
    outcome(1, 1, "openflow", "complete", 10, delivery="ok", no_reordering="ok"),
    outcome(2, 1, "openflow", "complete", 30, delivery="FAIL", no_reordering="ok"),
    outcome(3, 1, "openflow", "over-cap", 500, load=False, delivery="FAIL", no_reordering="?"),
    outcome(1, 1, "attendre", "complete", 8, delivery="ok", no_reordering="ok"),
    outcome(2, 1, "attendre", "complete", 20, delivery="ok", no_reordering="ok"),
    outcome(3, 1, "attendre", "complete", 50, delivery="ok", no_reordering="ok"),
]


def test_transitions_table_and_the_ratio_at_the_largest_cell_all_completed() -> None:
    assert transitions_table(CELLS, ["openflow", "attendre"]).splitlines() == [
        "switches  packets  openflow  attendre",
        "--------  -------  --------  --------",
        "       1        1        10         8",
        "       2        1        30        20",
        "       3        1      >500        50",
        "openflow/variant at 2/1: openflow 1.00x  attendre 1.50x",
    ]


def test_summary_aggregates_verdicts_over_cells() -> None:
    lines = summary_table(CELLS, ["openflow", "attendre"]).splitlines()
    assert lines[0].startswith("route-flow: unique states and load (min..max per execution) at switches/packets 2/1;")
    assert lines[1].split() == ["variant", "unique", "states", "packet-ins", "flow-mods", "packet-outs", "barriers",
                                "delivery", "no", "reorder"]
    assert lines[3].split() == ["openflow", "15", "2..4", "1..3", "0..0", "0..0", "FAIL", "2/1", "?"]
    assert lines[4].split() == ["attendre", "10", "2..4", "1..3", "0..0", "0..0", "ok", "ok"]


def test_summary_reads_the_load_where_every_variant_completed_or_stopped_at_an_app_exception() -> None:
    cells = [*CELLS, outcome(1, 1, "broken", "violation", 3, load=False), outcome(2, 1, "broken", "violation", 3,
                                                                                   load=False)]
    lines = summary_table(cells, ["openflow", "attendre", "broken"]).splitlines()
    assert "at switches/packets 2/1;" in lines[0]
    assert lines[5].split() == ["broken", "-", "-", "-", "-", "-", "-", "-"]


def test_summary_without_a_cell_all_completed() -> None:
    cells = [outcome(1, 1, "openflow", "over-cap", 500, load=False), outcome(1, 1, "attendre", "skipped")]
    lines = summary_table(cells, ["openflow", "attendre"]).splitlines()
    assert "at switches/packets -;" in lines[0]
    assert lines[3].split() == ["openflow", "-", "-", "-", "-", "-"]


def test_csv_leaves_skipped_cells_empty() -> None:
    rows = list(csv.reader(io.StringIO(variants_csv([CELLS[2], outcome(4, 1, "openflow", "skipped")],
                                                    {"openflow": "openflow"}))))
    assert rows[0][-2:] == ["delivery", "no-reordering"]
    assert rows[1][:5] == ["route-flow", "openflow", "openflow", "3", "1"]
    assert rows[1][5] == "500" and rows[1][10] == "over-cap" and rows[1][11:19] == [""] * 8
    assert rows[2][5:9] == ["", "", "", ""] and rows[2][10] == "skipped" and rows[2][-2:] == ["-", "-"]


def test_variant_specs_cover_the_papers_sizes() -> None:
    protocols = [p for _n, p in VARIANTS]
    specs = variant_specs(["route-flow", "mac-learning", "energy-te"], protocols)
    by_experiment: dict[str, set[Any]] = {}
    for cell in specs:
        by_experiment.setdefault(cell.experiment, set()).add(cell.params)
    assert len(by_experiment["route-flow"]) == 40       # Fig. 8: 1-8 switches x 1-5 packets
    assert len(by_experiment["mac-learning"]) == 8      # Table II: 1-2 switches x 1-4 packets
    assert len(by_experiment["energy-te"]) == 4         # Table III: 2/3 and 3/4 x 1-2 flows
    assert len(specs) == 52 * len(VARIANTS)
    with pytest.raises(ValueError, match="unknown experiment"):
        variant_specs(["nope"], protocols)


def test_a_cell_runs_counts_load_and_one_run_per_property(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, ...]] = []
    real = nice_attendre.frontend.api.verify

    def spy(app: Any, **options: Any) -> Any:
        calls.append((options["protocol"], tuple(options["properties"]), options.get("count_load", False)))
        return real(app, **options)

    monkeypatch.setattr(nice_attendre.frontend.api, "verify", spy)
    cells = run_variants([spec(2, 2, "openflow"), spec(3, 2, "openflow"), spec(2, 2, "attendre")], cap=600,
                         properties={"route-flow": ("no-reordering", "delivery")})
    assert calls == [
        ("openflow", (), False),                                   # 2/2: 1,026 transitions: over the cap
        ("attendre", (), False), ("attendre", (), True),           # complete: its load is measured
        ("attendre", ("no-reordering",), False), ("attendre", ("delivery",), False),  # and its properties
    ]
    assert [c.cell.status for c in cells] == ["over-cap", "skipped", "complete"]
    assert cells[0].verdicts == (("no-reordering", "-"), ("delivery", "-"))  # not checked
    assert cells[0].load_status == "not-run" and cells[1].verdicts == ()
    assert cells[2].load["packet_ins"] == (2, 2) and cells[2].verdicts == (("no-reordering", "ok"), ("delivery", "ok"))
