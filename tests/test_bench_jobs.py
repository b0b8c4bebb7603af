"""`bench --jobs N`: cells in parallel processes, with the cells, counts and output of --jobs 1."""
from __future__ import annotations

import dataclasses
from typing import Any

from click.testing import CliRunner

from nice_attendre.frontend.cellpool import dominates
from nice_attendre.frontend.cli import main
from nice_attendre.benchmarks.experiments import CellSpec, run_grid
from nice_attendre.benchmarks.variants_bench import run_variants


def rf_spec(switches: int, packets: int, protocol: str = "openflow", experiment: str = "route-flow") -> CellSpec:
    return CellSpec(experiment, (("switches", switches), ("packets", packets)), protocol, "route-flow",
                    {"topology": f"linear:{switches}", "packets": packets})


def counts(cells: list[Any]) -> list[Any]:
    """Everything of a cell but its time."""
    return [dataclasses.replace(cell, seconds=0.0) for cell in cells]


#: Over-cap cells, later dominated (skipped) ones, smaller ones listed after them, other protocols.
SPECS = [rf_spec(2, 2), rf_spec(3, 1), rf_spec(3, 2), rf_spec(2, 3), rf_spec(1, 2), rf_spec(3, 2, "attendre"),
         rf_spec(3, 2, experiment="other"), rf_spec(1, 3), rf_spec(2, 1), rf_spec(3, 3)]


def test_dominates() -> None:
    assert dominates((("s", 1), ("p", 2)), (("s", 1), ("p", 3)))
    assert not dominates((("s", 2), ("p", 2)), (("s", 1), ("p", 3)))


def test_run_grid_jobs_2_equals_jobs_1() -> None:
    seen_1: list[Any] = []
    seen_2: list[Any] = []
    one = run_grid(SPECS, cap=500, on_cell=seen_1.append, jobs=1)
    two = run_grid(SPECS, cap=500, on_cell=seen_2.append, jobs=2)
    assert counts(one) == counts(two)
    assert counts(seen_2) == counts(two)  # on_cell hears of every cell, in order
    assert {"skipped", "over-cap", "complete"} <= {c.status for c in one}


def test_run_variants_jobs_2_equals_jobs_1() -> None:
    specs = [rf_spec(1, 1), rf_spec(2, 2), rf_spec(1, 2), rf_spec(3, 3)]
    race = {"route-flow": ("no-duplicates",)}
    one = run_variants(specs, cap=500, properties=race, jobs=1)
    two = run_variants(specs, cap=500, properties=race, jobs=2)
    assert [(dataclasses.replace(v.cell, seconds=0.0), v.load, v.load_status, v.verdicts) for v in one] == \
        [(dataclasses.replace(v.cell, seconds=0.0), v.load, v.load_status, v.verdicts) for v in two]


def test_bench_route_flow_output_identical_with_jobs_2() -> None:
    args = ["bench", "route-flow", "--switches", "1-3", "--packets", "1-3", "--max-transitions", "3000",
            "--protocols", "openflow,attendre"]
    one = CliRunner().invoke(main, [*args, "--jobs", "1"])
    two = CliRunner().invoke(main, [*args, "--jobs", "2"])
    assert one.exit_code == two.exit_code == 0, (one.output, two.output)
    assert one.stdout == two.stdout
    assert ">3,000" in one.stdout and " - " in one.stdout  # an over-cap and a skipped cell

    def without_times(text: str) -> list[str]:
        return [line.rsplit(" in ", 1)[0] for line in text.splitlines()]

    assert without_times(one.stderr) == without_times(two.stderr)
