"""``compare --por`` and ``bench ... --por``: the unreduced counts stay (the paper's metric),
the reduced search's transitions and unique states come in columns of their own, the header
says ``reduction partial-order``; a protocol --por does not reduce is refused by compare
with one line (exit 2) and left unreduced (and said so) by bench."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from nice_attendre.benchmarks.experiments import CellSpec, cells_csv, grid_table, measure_cell
from nice_attendre.frontend.cli import main

PLAIN = ["-p", "no-forwarding-loops", "-p", "no-black-holes", "-p", "no-forgotten-packets"]


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _row(output: str, first: str) -> dict[str, str]:
    lines = output.splitlines()
    header = next(line for line in lines if line.startswith("protocol") or line.startswith("switches"))
    names = [name for name in header.split("  ") if name.strip()]
    row = next(line for line in lines if line.split() and line.split()[0] == first and line is not header)
    return dict(zip((n.strip() for n in names), (v for v in row.split("  ") if v.strip())))


def test_compare_adds_reduced_columns_beside_the_unreduced_counts(tmp_path: Path) -> None:
    out = tmp_path / "compare.json"
    done = run("compare", "route-flow", "-t", "linear:3", "-n", "2", *PLAIN, "--protocols", "openflow", "--por",
               "--json", str(out))
    assert done.exit_code == 0, done.output
    assert "reduction    partial-order" in done.output
    row = _row(done.output, "openflow")
    assert row["transitions"].strip() == "13,107" and row["unique states"].strip() == "4,934"
    assert row["por transitions"].strip() == "1,712" and row["por states"].strip() == "1,249"
    data = json.loads(out.read_text())
    [protocol] = data["protocols"]
    assert protocol["transitions"] == 13107 and protocol["unique_states"] == 4934  # the paper's metric
    assert protocol["reduced"]["transitions"] == 1712 and protocol["reduced"]["unique_states"] == 1249
    assert protocol["reduced"]["complete"] is True and protocol["reduced"]["reduction"] == "partial-order"
    plain = run("compare", "route-flow", "-t", "linear:3", "-n", "2", *PLAIN, "--protocols", "openflow")
    assert "por" not in plain.output and "reduction" not in plain.output


def _without_pif(monkeypatch: pytest.MonkeyPatch) -> None:
    """--por as if it did not support pif (it supports every variant now)."""
    import nice_attendre.models.footprints as footprints

    monkeypatch.setattr(footprints, "SUPPORTED_PROTOCOLS", ("openflow", "openflow-b", "attendre", "batch", "buffer"))


def test_compare_refuses_a_protocol_it_does_not_reduce_before_exploring(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_pif(monkeypatch)
    done = run("compare", "route-flow", "-t", "linear:2", "--por", "--protocols", "openflow,pif")
    assert done.exit_code == 2
    assert done.output.strip().splitlines() == [
        "Error: --por does not support protocol pif yet (supported: openflow, openflow-b, attendre, batch, buffer; use --protocols)"]


def test_bench_adds_reduced_columns(tmp_path: Path) -> None:
    path = tmp_path / "cells.csv"
    done = run("bench", "route-flow", "--switches", "3", "--packets", "2", "--por", "-q", "--csv", str(path))
    assert done.exit_code == 0, done.output
    assert "reduction    partial-order" in done.output
    assert "not reduced" not in done.output
    lines = done.output.splitlines()
    header = next(line for line in lines if line.startswith("switches"))
    assert "openflow por" in header and "openflow-b por" in header and "attendre por" in header
    row = next(line for line in lines if line.split()[:2] == ["3", "2"])
    assert row.split()[2] == "13,107" and row.split()[8:11] == ["4,934", "1,712", "1,249"]
    cells = {r["protocol"]: r for r in csv.DictReader(io.StringIO(path.read_text()))}
    assert cells["openflow"]["por_transitions"] == "1712" and cells["openflow"]["por_status"] == "complete"
    assert cells["attendre"]["transitions"] == "430" and cells["attendre"]["por_status"] == "complete"
    assert int(cells["attendre"]["por_unique_states"]) < int(cells["attendre"]["unique_states"])


def test_bench_names_what_it_does_not_reduce(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_pif(monkeypatch)
    done = run("bench", "route-flow", "--switches", "2", "--packets", "1", "--protocols", "openflow,pif", "--por", "-q")
    assert done.exit_code == 0, done.output
    assert "not reduced: pif" in done.output
    header = next(line for line in done.output.splitlines() if line.startswith("switches"))
    assert "openflow por" in header and "pif por" not in header


def test_a_reduced_cell_over_the_cap_is_a_lower_bound() -> None:
    spec = CellSpec("route-flow", (("switches", 3), ("packets", 2)), "openflow", "route-flow",
                    {"topology": "linear:3", "packets": 2})
    cell = measure_cell(1000, spec, por=True)
    assert cell.status == "over-cap" and cell.reduced_status == "over-cap"
    text = grid_table([cell], ["switches", "packets"], ["openflow"], ())
    assert text.splitlines()[-1].split()[-2:] == [f">{cell.reduced_transitions:,}", f">{cell.reduced_states:,}"]
    plain = measure_cell(1000, spec)
    assert plain.reduced_status is None and "por" not in cells_csv([plain])


@pytest.mark.slow  # about 8 s: four child processes
def test_the_reduced_counts_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    """The sets depend on the state only: the same counts and violations under two hash seeds
    (depth-first and breadth-first)."""
    import os

    from children import console

    here = Path(__file__).resolve().parent
    outcomes = []
    for seed in ("1", "2"):
        os.environ["PYTHONHASHSEED"] = seed
        try:
            for extra in ([], ["--shortest"]):
                out = tmp_path / f"{seed}{len(extra)}.json"
                done = console("verify", "mac-learning", "-t", "linear:2", "-n", "2", *PLAIN, "--por",
                               "--keep-going", *extra, "--json", str(out), cwd=here)
                assert done.returncode == 1, done.stderr
                data = json.loads(out.read_text())
                outcomes.append((len(extra), data["transitions"], data["unique_states"],
                                 sorted(v["property"] for v in data["violations"])))
        finally:
            del os.environ["PYTHONHASHSEED"]
    assert outcomes[:2] == outcomes[2:]


def test_a_reduced_search_cut_by_the_run_limits_makes_the_bench_incomplete(monkeypatch: Any) -> None:
    """A cell whose unreduced search completes but whose reduced one --max-seconds cuts is a
    lower bound: the bench ends INCOMPLETE (exit 3), never 0."""
    import dataclasses
    import time

    import nice_attendre.frontend.api as api
    from nice_attendre.frontend.commands import BenchLimits, _end_bench

    real = api.verify

    def cut_when_reduced(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        if kwargs.get("por"):
            return dataclasses.replace(result, complete=False, stop_reason="max-seconds")
        return result

    monkeypatch.setattr(api, "verify", cut_when_reduced)
    spec = CellSpec("route-flow", (("switches", 2), ("packets", 1)), "openflow", "route-flow",
                    {"topology": "linear:2", "packets": 1})
    cell = measure_cell(1000, spec, deadline=time.time() + 600, por=True)
    assert cell.status == "complete" and cell.reduced_status == "over-cap"
    assert cell.reduced_stop_reason == "max-seconds"
    with pytest.raises(SystemExit) as stop:
        _end_bench([cell], BenchLimits.start(600, None))
    assert stop.value.code == 3
