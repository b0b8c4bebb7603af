"""The experiment grids behind `nice-attendre bench` (nice_attendre.benchmarks.experiments): skipping
dominated cells, CSV, the count and ratio formats, the text tables, the Fig. 8 claims and plot."""
from __future__ import annotations

import csv
import dataclasses
import io
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import nice_attendre.frontend.api
import nice_attendre.benchmarks.experiments as experiments
from nice_attendre.frontend.cli import main
from nice_attendre.benchmarks.experiments import (PAPER_TABLE_II, Cell, CellSpec, cells_csv, energy_te_specs, fig8_claims,
                                       format_count, format_ratio, grid_table, mac_learning_specs, paper_table,
                                       plot_fig8, route_flow_specs, run_grid)

APPS = Path(__file__).resolve().parent / "data" / "apps"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def rf_spec(switches: int, packets: int, protocol: str = "openflow", experiment: str = "route-flow") -> CellSpec:
    return CellSpec(experiment, (("switches", switches), ("packets", packets)), protocol, "route-flow",
                    {"topology": f"linear:{switches}", "packets": packets})


def cell(params: dict[str, int], protocol: str, status: str, transitions: int = 0,
         experiment: str = "route-flow", seconds: float = 0.0) -> Cell:
    """A hand-made cell (unique states, revisits, depth derived from transitions to tell columns apart)."""
    spec = CellSpec(experiment, tuple(params.items()), protocol, "route-flow")
    if status == "skipped":
        return Cell(spec, status)
    return Cell(spec, status, transitions, transitions // 2, transitions // 3, transitions % 97, seconds)


def rf(switches: int, packets: int, protocol: str, status: str, transitions: int = 0) -> Cell:
    return cell({"switches": switches, "packets": packets}, protocol, status, transitions)


def summary(cells: list[Cell]) -> list[tuple[Any, ...]]:
    return [(c.spec.protocol, c.spec.param("switches"), c.spec.param("packets"), c.status, c.transitions)
            for c in cells]


# ---- run_grid: caps and dominance --------------------------------------------------------------

@pytest.fixture
def verify_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict]]:
    """Records every verification run_grid starts (run_grid imports verify at call time)."""
    calls: list[tuple[str, dict]] = []
    real = nice_attendre.frontend.api.verify

    def spy(app: Any, **options: Any) -> Any:
        calls.append((options["protocol"], {k: options[k] for k in ("topology", "packets", "max_transitions")}))
        return real(app, **options)

    monkeypatch.setattr(nice_attendre.frontend.api, "verify", spy)
    return calls


def test_run_grid_skips_cells_that_dominate_an_over_cap_cell(verify_calls: list) -> None:
    # (2 switches, 2 packets) of openflow is 1,026 transitions: over a cap of 500.
    specs = [rf_spec(2, 2), rf_spec(3, 1), rf_spec(3, 2), rf_spec(2, 3), rf_spec(1, 2),
             rf_spec(3, 2, "attendre"), rf_spec(3, 2, experiment="other")]
    seen: list[Cell] = []
    cells = run_grid(specs, cap=500, on_cell=seen.append)
    assert summary(cells) == [
        ("openflow", 2, 2, "over-cap", 500),
        ("openflow", 3, 1, "complete", 128),   # more switches but fewer packets: not dominated
        ("openflow", 3, 2, "skipped", 0),      # >= (2, 2) in both
        ("openflow", 2, 3, "skipped", 0),
        ("openflow", 1, 2, "complete", 80),    # fewer switches
        ("attendre", 3, 2, "complete", 430),   # another protocol is not affected
        ("openflow", 3, 2, "over-cap", 500),   # nor another experiment
    ]
    assert seen == cells  # on_cell hears of every cell, skipped ones too, in order
    # skipped cells are not verified; the others with the cap and no property but app-exception
    assert verify_calls == [
        ("openflow", {"topology": "linear:2", "packets": 2, "max_transitions": 500}),
        ("openflow", {"topology": "linear:3", "packets": 1, "max_transitions": 500}),
        ("openflow", {"topology": "linear:1", "packets": 2, "max_transitions": 500}),
        ("attendre", {"topology": "linear:3", "packets": 2, "max_transitions": 500}),
        ("openflow", {"topology": "linear:3", "packets": 2, "max_transitions": 500}),
    ]
    skipped = cells[2]
    assert (skipped.unique_states, skipped.revisits, skipped.max_depth, skipped.seconds) == (0, 0, 0, 0.0)
    assert not skipped.counted and not cells[0].counted and cells[1].counted
    complete = cells[1]
    assert (complete.unique_states, complete.revisits, complete.max_depth) == (77, 52, 22)
    assert complete.seconds > 0


def test_run_grid_runs_smaller_cells_listed_after_an_over_cap_one() -> None:
    # skipping only looks back: a smaller cell later in the list still runs
    cells = run_grid([rf_spec(2, 2), rf_spec(1, 2), rf_spec(2, 1)], cap=500)
    assert summary(cells) == [("openflow", 2, 2, "over-cap", 500), ("openflow", 1, 2, "complete", 80),
                              ("openflow", 2, 1, "complete", 29)]


def test_run_grid_cell_exactly_at_the_cap_is_complete() -> None:
    # (2, 2) openflow needs exactly 1,026 transitions: a cap of 1,026 does not cut it
    assert summary(run_grid([rf_spec(2, 2)], cap=1026)) == [("openflow", 2, 2, "complete", 1026)]
    assert summary(run_grid([rf_spec(2, 2)], cap=1025)) == [("openflow", 2, 2, "over-cap", 1025)]


def test_run_grid_marks_a_violation_and_does_not_skip_after_it() -> None:
    app = f"{APPS / 'join_raises.py'}:JoinRaises"  # app-exception in the initial state
    specs = [CellSpec("join", (("switches", n),), "openflow", app, {"topology": f"linear:{n}"}) for n in (1, 2)]
    cells = run_grid(specs, cap=100)
    assert [(c.status, c.transitions, c.unique_states) for c in cells] == [("violation", 0, 1), ("violation", 0, 1)]
    assert not cells[0].counted
    assert [format_count(c) for c in cells] == ["violation", "violation"]


def test_run_grid_turns_an_interrupted_search_into_keyboard_interrupt(monkeypatch: pytest.MonkeyPatch) -> None:
    real = nice_attendre.frontend.api.verify

    def interrupted(app: Any, **options: Any) -> Any:
        return dataclasses.replace(real(app, **options), complete=False, stop_reason="interrupted")

    monkeypatch.setattr(nice_attendre.frontend.api, "verify", interrupted)
    seen: list[Cell] = []
    with pytest.raises(KeyboardInterrupt):
        run_grid([rf_spec(1, 1), rf_spec(2, 1)], on_cell=seen.append)
    assert seen == []


# ---- the paper's grids ----------------------------------------------------------------------------

def test_route_flow_specs_order_and_options() -> None:
    specs = route_flow_specs([1, 2], [1, 3], ["openflow", "attendre"])
    assert [(s.experiment, s.protocol, s.params, s.app, s.options) for s in specs[:4]] == [
        ("route-flow", "openflow", (("switches", 1), ("packets", 1)), "route-flow", {"topology": "linear:1", "packets": 1}),
        ("route-flow", "openflow", (("switches", 2), ("packets", 1)), "route-flow", {"topology": "linear:2", "packets": 1}),
        ("route-flow", "openflow", (("switches", 1), ("packets", 3)), "route-flow", {"topology": "linear:1", "packets": 3}),
        ("route-flow", "openflow", (("switches", 2), ("packets", 3)), "route-flow", {"topology": "linear:2", "packets": 3}),
    ]
    assert [s.protocol for s in specs] == ["openflow"] * 4 + ["attendre"] * 4
    assert len(route_flow_specs()) == 8 * 5 * 3


def test_mac_learning_and_energy_te_specs() -> None:
    mac = mac_learning_specs()
    assert len(mac) == 2 * 4 * 3
    assert [(s.protocol, s.params, s.app, s.options) for s in mac[:2]] == [
        ("openflow", (("switches", 1), ("packets", 1)), "mac-learning", {"topology": "linear:1", "packets": 1}),
        ("openflow", (("switches", 1), ("packets", 2)), "mac-learning", {"topology": "linear:1", "packets": 2}),
    ]
    energy = energy_te_specs()
    assert len(energy) == 2 * 2 * 3
    assert [(s.experiment, s.protocol, s.params, s.app, s.options) for s in energy[:3]] == [
        ("energy-te", "openflow", (("always_on", 2), ("on_demand", 3), ("flows", 1)), "energy-te",
         {"topology": "paths:2,3", "packets": 1}),
        ("energy-te", "openflow", (("always_on", 2), ("on_demand", 3), ("flows", 2)), "energy-te",
         {"topology": "paths:2,3", "packets": 2}),
        ("energy-te", "openflow", (("always_on", 3), ("on_demand", 4), ("flows", 1)), "energy-te",
         {"topology": "paths:3,4", "packets": 1}),
    ]
    assert energy[0].param("on_demand") == 3


# ---- CSV ------------------------------------------------------------------------------------------

def test_cells_csv() -> None:
    cells = [
        rf(3, 2, "openflow", "complete", 13107),
        rf(3, 2, "attendre", "over-cap", 500),
        rf(4, 2, "openflow", "skipped"),
        cell({"always_on": 2, "on_demand": 3, "flows": 1}, "attendre", "violation", 7, "energy-te", seconds=1.23456),
    ]
    text = cells_csv(cells)
    assert text.splitlines() == [
        "experiment,protocol,switches,packets,always_on,on_demand,flows,transitions,unique_states,revisits,"
        "max_depth,seconds,status",
        "route-flow,openflow,3,2,,,,13107,6553,4369,12,0.000,complete",
        "route-flow,attendre,3,2,,,,500,250,166,15,0.000,over-cap",
        "route-flow,openflow,4,2,,,,,,,,0.000,skipped",
        "energy-te,attendre,,,2,3,1,7,3,2,7,1.235,violation",
    ]
    assert text.endswith("\n") and "\r" not in text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["status"] for r in rows] == ["complete", "over-cap", "skipped", "violation"]


def test_cells_csv_of_no_cells_is_the_fixed_header() -> None:
    assert cells_csv([]) == "experiment,protocol,transitions,unique_states,revisits,max_depth,seconds,status\n"


# ---- formats ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("status", "transitions", "text"), [
    ("complete", 13107, "13,107"),
    ("complete", 9, "9"),
    ("complete", 1_234_567, "1,234,567"),
    ("over-cap", 500, ">500"),
    ("over-cap", 123_456, ">123,456"),
    ("over-cap", 1_000_000, ">1M"),
    ("over-cap", 2_500_000, ">2.5M"),
    ("over-cap", 1_250_000, ">1.25M"),
    ("over-cap", 1_234_567, ">1,234,567"),
    ("skipped", 0, "-"),
    ("violation", 6, "violation"),
])
def test_format_count(status: str, transitions: int, text: str) -> None:
    assert format_count(rf(1, 1, "openflow", status, transitions)) == text


def test_format_count_of_a_missing_cell() -> None:
    assert format_count(None) == "-"


@pytest.mark.parametrize(("numerator", "denominator", "text"), [
    (("complete", 13107), ("complete", 430), "30.48x"),
    (("complete", 9), ("complete", 9), "1.00x"),
    (("complete", 21), ("complete", 29), "0.72x"),
    # over the cap: the true ratio is larger, so the bound is rounded down, never up
    (("over-cap", 500), ("complete", 158), ">3.16x"),
    (("over-cap", 500), ("complete", 281), ">1.77x"),   # 1.779...
    (("over-cap", 200), ("complete", 200), ">1.00x"),
    # the denominator over the cap: the true ratio is smaller, rounded up
    (("complete", 430), ("over-cap", 1000), "<0.43x"),
    (("complete", 158), ("over-cap", 500), "<0.32x"),   # 0.316
    (("over-cap", 500), ("over-cap", 500), "-"),
    (("complete", 80), ("skipped", 0), "-"),
    (("skipped", 0), ("complete", 80), "-"),
    (("violation", 6), ("complete", 6), "-"),
    (("complete", 6), ("violation", 6), "-"),
    (("complete", 6), ("complete", 0), "-"),
])
def test_format_ratio(numerator: tuple[str, int], denominator: tuple[str, int], text: str) -> None:
    assert format_ratio(rf(1, 1, "openflow", *numerator), rf(1, 1, "attendre", *denominator)) == text


def test_format_ratio_of_missing_cells() -> None:
    present = rf(1, 1, "openflow", "complete", 9)
    assert (format_ratio(None, present), format_ratio(present, None), format_ratio(None, None)) == ("-", "-", "-")


# ---- tables ----------------------------------------------------------------------------------------

GRID_CELLS = [
    rf(1, 1, "openflow", "complete", 9), rf(1, 1, "openflow-b", "complete", 9), rf(1, 1, "attendre", "complete", 9),
    rf(3, 2, "openflow", "complete", 13107), rf(3, 2, "openflow-b", "complete", 2131),
    rf(3, 2, "attendre", "complete", 430),
    rf(2, 2, "openflow", "over-cap", 500), rf(2, 2, "openflow-b", "complete", 281),
    rf(2, 2, "attendre", "complete", 158),
    rf(3, 3, "openflow", "skipped"), rf(3, 3, "attendre", "over-cap", 1_000_000),
]


def test_grid_table() -> None:
    table = grid_table(GRID_CELLS, ["switches", "packets"], ["openflow", "openflow-b", "attendre"],
                       [("openflow", "attendre"), ("openflow", "openflow-b"), ("openflow-b", "attendre")])
    assert table.splitlines() == [
        "switches  packets  openflow  openflow-b  attendre  openflow/attendre  openflow/openflow-b  openflow-b/attendre",
        "--------  -------  --------  ----------  --------  -----------------  -------------------  -------------------",
        "       1        1         9           9         9              1.00x                1.00x                1.00x",
        "       2        2      >500         281       158             >3.16x               >1.77x                1.78x",
        "       3        2    13,107       2,131       430             30.48x                6.15x                4.96x",
        "       3        3         -           -       >1M                  -                    -                    -",
    ]


def test_grid_table_leaves_out_ratios_of_protocols_not_shown() -> None:
    table = grid_table(GRID_CELLS, ["switches", "packets"], ["attendre", "openflow"],
                       [("openflow", "attendre"), ("openflow", "openflow-b")])
    assert table.splitlines() == [
        "switches  packets  attendre  openflow  openflow/attendre",
        "--------  -------  --------  --------  -----------------",
        "       1        1         9         9              1.00x",
        "       2        2       158      >500             >3.16x",
        "       3        2       430    13,107             30.48x",
        "       3        3       >1M         -                  -",
    ]


def test_grid_table_of_no_cells_is_the_header() -> None:
    assert grid_table([], ["switches", "packets"], ["openflow", "attendre"]).splitlines() == [
        "switches  packets  openflow  attendre  openflow/attendre",
        "--------  -------  --------  --------  -----------------",
    ]


def test_paper_table_puts_the_papers_columns_beside_ours() -> None:
    cells = [cell({"switches": 1, "packets": p}, protocol, status, n, "mac-learning")
             for p, protocol, status, n in [
                 (1, "openflow", "complete", 124), (1, "openflow-b", "complete", 124), (1, "attendre", "complete", 124),
                 (4, "openflow", "over-cap", 1_000_000), (4, "openflow-b", "skipped", 0),
                 (4, "attendre", "complete", 180_000),
                 (5, "openflow", "complete", 10), (5, "attendre", "complete", 5)]]
    table = paper_table(cells, ["switches", "packets"], PAPER_TABLE_II, "Table II - test")
    assert table.splitlines() == [
        "Table II - test",
        "switches  packets  openflow  openflow-b  attendre  of/att  paper openflow  paper attendre  paper of/att",
        "--------  -------  --------  ----------  --------  ------  --------------  --------------  ------------",
        "       1        1       124         124       124   1.00x              74              74         1.00x",
        "       1        4       >1M           -   180,000  >5.55x            527k            101k         5.22x",
        "       1        5        10           -         5   2.00x               -               -             -",
    ]


def test_paper_table_short_forms_of_the_papers_counts() -> None:
    paper = {(1,): (1_800, 2_100), (2,): (16_500, 36_100), (3,): (133_000, 1_500_000)}
    cells = [cell({"n": n}, "openflow", "complete", 1) for n in (1, 2, 3)]
    lines = paper_table(cells, ["n"], paper, "t").splitlines()
    assert [line.split()[-3:] for line in lines[3:]] == [["2.1k", "1.8k", "1.17x"], ["36.1k", "16.5k", "2.19x"],
                                                         ["1.5M", "133k", "11.28x"]]


def test_paper_table_of_no_cells_is_the_header() -> None:
    assert paper_table([], ["switches", "packets"], PAPER_TABLE_II, "T").splitlines() == [
        "T",
        "switches  packets  openflow  openflow-b  attendre  of/att  paper openflow  paper attendre  paper of/att",
        "--------  -------  --------  ----------  --------  ------  --------------  --------------  ------------",
    ]


def test_fig8_claims() -> None:
    cells = [rf(8, 1, "openflow", "complete", 5000), rf(8, 1, "attendre", "complete", 2000),
             rf(1, 5, "openflow", "over-cap", 1_000_000), rf(1, 5, "attendre", "complete", 40_000),
             rf(6, 2, "openflow", "skipped"), rf(6, 2, "attendre", "complete", 3000),
             cell({"switches": 8, "packets": 1}, "openflow", "complete", 1, "mac-learning")]  # another experiment
    assert fig8_claims(cells).splitlines() == [
        "Fig. 8 claims (openflow/attendre transitions):",
        "  8 switches, 1 packet: paper: attendre needs about 50% (about 2x fewer); ours: 2.50x",
        "  1 switch, 5 packets: paper: at least 20 times fewer; ours: >25.00x",
        "  6 switches, 2 packets: paper: more than two orders of magnitude (about 200 times) fewer; "
        "ours: - (openflow not run: a smaller cell exceeded the cap)",
    ]


def test_fig8_claims_say_why_a_ratio_is_missing() -> None:
    cells = [rf(8, 1, "openflow", "over-cap", 100), rf(8, 1, "attendre", "over-cap", 100),
             rf(1, 5, "openflow", "violation", 3), rf(1, 5, "attendre", "complete", 40_000)]
    assert fig8_claims(cells).splitlines()[1:] == [
        "  8 switches, 1 packet: paper: attendre needs about 50% (about 2x fewer); "
        "ours: - (openflow over the cap; attendre over the cap)",
        "  1 switch, 5 packets: paper: at least 20 times fewer; ours: - (openflow stopped at a violation)",
        "  6 switches, 2 packets: paper: more than two orders of magnitude (about 200 times) fewer; "
        "ours: - (openflow not in the grid; attendre not in the grid)",
    ]


# ---- the plot ---------------------------------------------------------------------------------------

def test_plot_fig8_writes_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    cells = [rf(n, p, protocol, "complete", 10 * n * p + i)
             for i, protocol in enumerate(("openflow", "openflow-b", "attendre")) for n in (1, 2, 3) for p in (1, 2)]
    cells += [rf(4, 2, "openflow", "over-cap", 1_000_000), rf(5, 2, "openflow", "skipped")]  # not plotted
    path = tmp_path / "fig8.png"
    plot_fig8(cells, str(path))
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    assert len(data) > 10_000


def test_bench_paper_plot_without_matplotlib_is_a_clean_error(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    def no_runs(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no cell may run before the options are checked")

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` raises ImportError
    monkeypatch.setattr(experiments, "run_grid", no_runs)
    result = CliRunner().invoke(main, ["bench", "paper", "-q", "--plot", str(tmp_path / "x.png")])
    assert result.exit_code == 2, (result.output, result.exception)
    assert result.stdout == ""
    assert result.stderr == "Error: --plot needs matplotlib: pip install 'nice-attendre[plot]'\n"
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("option", ["--csv", "--plot"])
def test_bench_paper_output_in_a_missing_folder_fails_before_running(monkeypatch: pytest.MonkeyPatch,
                                                                     tmp_path: Path, option: str) -> None:
    def no_runs(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no cell may run before the options are checked")

    monkeypatch.setattr(experiments, "run_grid", no_runs)
    target = tmp_path / "missing" / "out"
    result = CliRunner().invoke(main, ["bench", "paper", "-q", option, str(target)])
    assert result.exit_code == 2, (result.output, result.exception)
    assert result.stderr == (f"Error: cannot write {option} {str(target)!r}: folder {str(target.parent)!r} "
                             "not found\n")
