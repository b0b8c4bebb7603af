"""benchmarks/size.py runs, both modes agree on the counts, and --memory measures each cell
in a process of its own (a smoke test of the benchmark, not a measurement)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from nice_attendre.benchmarks import size


@pytest.mark.slow  # about 7 s: the benchmark builds both state layouts
def test_the_size_benchmark_compares_flat_and_chunked_states(tmp_path: Path) -> None:
    out = tmp_path / "size.json"
    assert size.main(["--sizes", "3,80", "--shapes", "tail", "--packets", "3", "--transitions", "20000", "--memory",
                      "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [(row["switches"], row["mode"]) for row in rows] == [(3, "full"), (3, "default"), (80, "full"),
                                                                 (80, "default")]
    small_full, small_default, large_full, large_default = rows
    assert not small_default["incremental"] and large_default["incremental"] and not large_full["incremental"]
    assert large_default["slots"] >= 512 > small_default["slots"]
    for row in rows:
        assert (row["transitions"], row["unique_states"]) == (20000, 8088)  # the tail's traffic is the same
    # a flat state of 567 slots holds 8 bytes per slot (4,536); a chunked one shares all but
    # its new chunks (a peak-memory figure: only its order of magnitude is asserted)
    assert large_full["bytes_per_state"] > 6 * large_full["slots"]
    assert 0 < 2 * large_default["bytes_per_state"] < large_full["bytes_per_state"]
    assert large_default["fingerprint_bytes_per_state"] >= 0


def test_the_size_benchmark_runs_a_variant_in_both_modes(tmp_path: Path) -> None:
    out = tmp_path / "size.json"
    assert size.main(["--sizes", "80", "--shapes", "tail", "--packets", "3", "--transitions", "3000",
                      "--protocol", "buffer:granularity=flow,timeout=event", "--json", str(out)]) == 0
    full, default = json.loads(out.read_text())
    assert not full["incremental"] and default["incremental"]
    assert full["transitions"] == default["transitions"] == 3000
    assert full["unique_states"] == default["unique_states"]


def test_the_size_benchmark_runs_with_faults_in_both_modes(tmp_path: Path) -> None:
    out = tmp_path / "size.json"
    assert size.main(["--sizes", "80", "--shapes", "tail", "--transitions", "2000", "--faults", "loss=1,control=1",
                      "--json", str(out)]) == 0
    full, default = json.loads(out.read_text())
    assert not full["incremental"] and default["incremental"]
    assert full["transitions"] == default["transitions"] == 2000  # no property stops it early
    assert full["unique_states"] == default["unique_states"]
