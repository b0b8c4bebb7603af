"""A feature the model lacks, met in the middle of a run (a value the app computes, which the
load-time reading cannot see), under the other engines: random walks (in this process and in
worker processes) and the partitioned search. Each reports what it ran, names the refusal in
its last line and exits 2 (1 when a violation was found first); never OK."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_ryu_refusals import COMPUTED, MASK, cli

pytest.importorskip("os_ken")

APP = f"{COMPUTED}:ComputedMask13"
START = ("--topology", "linear:2", "--joins-first")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_walks_stop_at_the_walk_that_met_it_and_report_the_walks(workers: str, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = cli("verify", APP, *START, "--simulate", "--seed", "1", "--walks", "50", "--keep-going",
                 "--workers", workers, "--json", str(report))
    assert result.exit_code == 2, result.output
    lines = result.stdout.splitlines()
    assert lines[-1] == f"INCOMPLETE: no violation in 1 walk, but the walks stopped at a feature the model does not have: {MASK}"
    data = json.loads(report.read_text())
    assert (data["verdict"], data["stop_reason"], data["stop_detail"]) == ("incomplete", "unsupported-feature", MASK)
    walks = data["simulation"]
    assert (walks["walks"], walks["ends"]) == (1, {"unsupported": 1}), walks  # the same walks on any number of workers
    assert walks["transitions"] > 0


def test_the_partitioned_search_reports_the_levels_it_completed(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = cli("verify", APP, *START, "--workers", "2", "--json", str(report))
    assert result.exit_code == 2, result.output
    assert result.stdout.splitlines()[-1] == ("INCOMPLETE: no violation in the part explored, but the search stopped "
                                              f"at a feature the model does not have: {MASK}")
    data = json.loads(report.read_text())
    assert (data["verdict"], data["stop_reason"], data["stop_detail"]) == ("incomplete", "unsupported-feature", MASK)
    assert data["transitions"] > 0


@pytest.mark.parametrize("engine", [("--workers", "2"), ("--simulate", "--seed", "2", "--walks", "400")],
                         ids=["partitioned", "walks"])
def test_a_violation_found_first_keeps_exit_1_and_the_refusal_is_named(engine: tuple[str, ...]) -> None:
    result = cli("verify", f"{COMPUTED}:CountingComputedMask13", *START, "--packets", "2", "--keep-going", *engine)
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines()[-1] == ("FAILED: app-exception; then stopped at a feature the model does not "
                                              f"have: {MASK}")
