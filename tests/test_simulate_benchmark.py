"""benchmarks/simulate.py: a smoke test of the benchmark on a few walks (not a measurement:
nothing here asserts a speed)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from nice_attendre.benchmarks import simulate as bench


@pytest.mark.slow  # about 5 s: child processes per configuration
def test_runs_agree_and_get_speed_ups_against_seq(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "walks.json"
    assert bench.main(["--runs", "seq,proc1,proc2,pair", "--walks", "600", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [row["run"] for row in rows] == ["seq", "proc1", "proc2", "pair"]
    assert len({(row["walks"], row["transitions"], row["distinct_states"], row["violating_walks"])
                for row in rows}) == 1
    assert rows[0]["walks"] == 600 and rows[0]["violating_walks"] > 0  # keep-going: violations do not stop it
    assert [row["workers"] * row["copies"] for row in rows] == [1, 1, 2, 2]
    for row in rows:
        assert row["speedup"] == round(row["rate"] / rows[0]["rate"], 2)
        assert row["cpu_seconds"] > 0  # its processes' CPU time, the workers' (and pair's two) included
    assert "every run: the same walks" in capsys.readouterr().out


def test_unknown_runs_and_bad_counts_are_refused() -> None:
    for argv in (["--runs", "seq,warp"], ["--walks", "0"], ["--repeat", "0"]):
        with pytest.raises(SystemExit) as stopped:
            bench.main(argv)
        assert stopped.value.code == 2
