"""benchmarks/scaling.py: ``seqf`` and ``--repeat`` (a smoke test of the benchmark on its
smallest scenario, not a measurement)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from nice_attendre.benchmarks import scaling


@pytest.mark.slow  # about 18 s: three rounds of child processes
def test_rounds_give_speed_ups_against_their_own_seq_and_a_summary(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "scaling.json"
    assert scaling.main(["--scenario", "openflow-b-linear4-3pkt", "--runs", "seq,seqf,proc2", "--repeat", "2",
                         "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [(row["round"], row["run"]) for row in rows] == [(1, "seq"), (1, "seqf"), (1, "proc2"),
                                                            (2, "seq"), (2, "seqf"), (2, "proc2")]
    assert {(row["transitions"], row["unique_states"]) for row in rows} == {(864_066, 195_368)}
    assert all(row["complete"] for row in rows)
    for first in (0, 3):  # each round's speed-ups are against its own seq
        seq = rows[first]["wall_seconds"]
        assert rows[first]["speedup"] == 1.0
        for row in rows[first + 1:first + 3]:
            assert row["speedup"] == round(seq / row["wall_seconds"], 2)
    assert rows[2]["workers"] == 2 and rows[1]["workers"] == 1
    assert [row["fingerprints"] for row in rows[:3]] == [False, True, True]  # seqf stores fingerprints
    printed = capsys.readouterr().out
    assert "over 2 rounds" in printed
    assert printed.count("median wall") == 3


def test_repeat_must_be_positive() -> None:
    with pytest.raises(SystemExit) as stopped:
        scaling.main(["--repeat", "0"])
    assert stopped.value.code == 2
