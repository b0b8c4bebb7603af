"""Issue 34, section 1, on the command line: resume gives the result of the uninterrupted run.

Resume of an app whose entries time out (and of a Ryu-API app) gives the counts of the
uninterrupted run. These tests use only the command line and the library's public names,
so they run against the code before a fix too.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from nice_attendre.frontend.api import verify
from nice_attendre.frontend.cli import main

ROOT = Path(__file__).resolve().parents[2]
TIMEOUTS = str(ROOT / "tests" / "data" / "apps" / "timeout_routing.py") + ":TimeoutRouting"
RYU = str(ROOT / "examples" / "ryu" / "learning_switch_13.py") + ":LearningSwitch13"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


# ---- resume keeps working ------------------------------------------------------------------------------

def _counts(path: Path) -> tuple[Any, ...]:
    data = json.loads(path.read_text())
    return (data["transitions"], data["unique_states"], data["revisits"], data["max_depth"], data["verdict"],
            [v["property"] for v in data["violations"]])


@pytest.mark.parametrize("limit", [2000, 5000])
def test_resume_of_an_app_whose_entries_time_out_gives_the_uninterrupted_counts(tmp_path: Path, limit: int) -> None:
    # A restored network did not know that its tables held entries that expire: it offered
    # no expiry event until it installed one itself (2000 transitions: 722 unique states
    # against 713).
    whole = verify(TIMEOUTS, keep_going=True, max_transitions=limit)
    path = tmp_path / "t.ckpt"
    verify(TIMEOUTS, keep_going=True, max_transitions=limit // 2, checkpoint=path)
    resumed = verify(TIMEOUTS, keep_going=True, max_transitions=limit, resume=path)
    assert resumed.stats.counts() == whole.stats.counts()


def test_resume_of_a_ryu_app_gives_the_uninterrupted_run(tmp_path: Path) -> None:
    pytest.importorskip("os_ken")
    spec = ["verify", RYU, "--topology", "linear:3", "--packets", "2", "--keep-going"]
    assert run(*spec, "--json", str(tmp_path / "whole.json")).exit_code == 1
    path = tmp_path / "ryu.ckpt"
    assert run(*spec, "--max-transitions", "600", "--checkpoint", str(path)).exit_code == 1
    assert b"LearningSwitch13" not in path.read_bytes().split(b"\n", 4)[4]  # its state is frozen data
    result = run(*spec, "--resume", str(path), "--json", str(tmp_path / "resumed.json"))
    assert result.exit_code == 1, result.output
    assert _counts(tmp_path / "resumed.json") == _counts(tmp_path / "whole.json")
