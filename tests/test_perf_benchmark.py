"""benchmarks/perf.py: --max-transitions caps every search, and --instructions counts a
search's instructions under Valgrind (a smoke test of the benchmark, not a measurement)."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from nice_attendre.benchmarks import perf


def test_max_transitions_caps_every_configuration(tmp_path: Path) -> None:
    out = tmp_path / "perf.json"
    assert perf.main(["--only", "mac-learning-linear1-4pkt", "--max-transitions", "700", "--no-memo",
                      "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [row["config"] for row in rows] == ["this", "no-memo"]
    for row in rows:
        assert row["transitions"] == 700 and not row["complete"]
    assert rows[0]["unique_states"] == rows[1]["unique_states"]  # the memo changes no count
    for bad in (["--max-transitions", "0"], ["--instructions", "--repeat", "2"]):
        with pytest.raises(SystemExit) as stopped:
            perf.main(bad)
        assert stopped.value.code == 2


def instruction_arguments(tmp_path: Path) -> list[str]:
    return ["--instructions", "--only", "mac-learning-linear1-4pkt", "--max-transitions", "300",
            "--python", f"again={sys.executable}", "--json", str(tmp_path / "perf.json")]


def test_instructions_without_valgrind_are_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name, *args, **kwargs: None)
    with pytest.raises(SystemExit) as stopped:
        perf.main(instruction_arguments(tmp_path))
    assert stopped.value.code == 2
    assert "--instructions needs Valgrind's cachegrind" in capsys.readouterr().err


@pytest.mark.slow  # about a minute under cachegrind
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="Valgrind's cachegrind is not installed")
def test_instructions_are_counted_per_transition_and_repeat(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Under Valgrind, the same search counted twice, as two configurations, gives nearly the
    same count."""
    assert perf.main(instruction_arguments(tmp_path)) == 0
    this, again = json.loads((tmp_path / "perf.json").read_text())
    assert this["transitions"] == again["transitions"] == 300
    # the model's building and Python's start-up (about 350 million) are taken out: what is
    # left is the search's, thousands of instructions per transition
    assert 1_000 < this["instructions_per_transition"] < 1_000_000
    assert this["instructions"] < 300 * 1_000_000
    assert abs(this["instructions"] - again["instructions"]) < 0.005 * this["instructions"]
    assert "instr/trans" in capsys.readouterr().out
    with pytest.raises(RuntimeError, match="ended with exit code 3"):  # a failing search is an error, not a count
        perf.instructions([sys.executable, "-c", "raise SystemExit(3)"])
