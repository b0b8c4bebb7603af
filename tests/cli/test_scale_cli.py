"""--fingerprint, --workers, --engine and --address on the command line, as a user runs them."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from nice_attendre.frontend.cli import main

ROOT = Path(__file__).resolve().parents[2]
PROACTIVE = f"{ROOT / 'examples' / 'proactive.py'}:ProactiveRouting"
RAISES = f"{ROOT / 'tests' / 'data' / 'apps' / 'lookup_routing.py'}:LookupRouting"
PINNED = ["route-flow", "--topology", "linear:3", "--packets", "2"]


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def counts(output: str) -> dict[str, str]:
    wanted = ("transitions", "unique states", "revisits")
    return {line[:16].strip(): line[16:].split()[0] for line in output.splitlines()
            if line[:16].strip() in wanted}


def test_fingerprint_mode_prints_the_collision_probability_and_writes_it_to_json(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = run("verify", *PINNED, "--fingerprint", "--json", str(out))
    assert result.exit_code == 0, result.output
    assert counts(result.output) == {"transitions": "13,107", "unique states": "4,934", "revisits": "8,174"}
    assert "probability that a fingerprint collision hid a state" in result.output
    data = json.loads(out.read_text())
    assert 0 < data["collision_probability"] < 1e-9
    plain = run("verify", *PINNED)
    assert "collision" not in plain.output


def test_two_workers_print_the_sequential_counts_and_say_how_they_searched() -> None:
    sequential = run("verify", *PINNED)
    parallel = run("verify", *PINNED, "--workers", "2")
    assert parallel.exit_code == 0, parallel.output
    assert counts(parallel.output) == counts(sequential.output)
    assert "partitioned over 2 worker processes, breadth-first" in parallel.output
    assert "OK: no property violated" in parallel.output


def test_workers_report_how_evenly_the_shards_shared_the_work(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    parallel = run("verify", *PINNED, "--workers", "2", "--partition", "app", "--json", str(out))
    assert parallel.exit_code == 0, parallel.output
    line = next(line for line in parallel.output.splitlines() if line.strip().startswith("balance"))
    assert line.split()[1].endswith("%") and "shards busy" in line and "if even" in line
    balance = json.loads(out.read_text())["balance"]
    assert len(balance["shard_seconds"]) == 2 and min(balance["shard_seconds"]) > 0
    assert sum(balance["shard_seconds"]) / 2 <= balance["busiest_seconds"] + 1e-5
    assert 0 < balance["efficiency"] <= 1
    sequential = run("verify", *PINNED, "--json", str(out))
    assert "balance" not in sequential.output
    assert json.loads(out.read_text())["balance"] is None


def test_a_users_app_file_with_workers() -> None:
    good = run("verify", PROACTIVE, "--topology", "linear:3", "--packets", "2", "-w", "3")
    assert good.exit_code == 0, good.output
    sequential = run("verify", PROACTIVE, "--topology", "linear:3", "--packets", "2")
    assert counts(good.output) == counts(sequential.output)
    bad = run("verify", RAISES, "-w", "2")
    assert bad.exit_code == 1, bad.output
    assert "VIOLATION 1: app-exception" in bad.output and "KeyError" in bad.output
    assert "trace (" in bad.output


def test_a_violation_found_by_workers_has_a_numbered_trace() -> None:
    result = run("verify", "route-flow", "--topology", "linear:2", "--bug", "forget-last-hop", "--workers", "2")
    assert result.exit_code == 1
    assert "VIOLATION 1: no-forgotten-packets" in result.output and "trace (6 events):" in result.output
    assert "INCOMPLETE  (stopped at the first violation)" in result.output


def test_compare_with_workers_gives_the_sequential_table() -> None:
    sequential = run("compare", "route-flow", "--topology", "linear:2", "--packets", "2")
    parallel = run("compare", "route-flow", "--topology", "linear:2", "--packets", "2", "--workers", "2")
    assert parallel.exit_code == 0, parallel.output

    def columns(output: str) -> list[list[str]]:
        rows = [line.split() for line in output.splitlines() if line.split()[:1] in (["openflow"], ["openflow-b"],
                                                                                   ["attendre"])]
        return [row[:4] + row[6:7] for row in rows]  # protocol, transitions, states, revisits, ratio

    assert columns(parallel.output) == columns(sequential.output) and len(columns(parallel.output)) == 3
    assert "partitioned over 2 worker processes, breadth-first" in parallel.output
    assert "partitioned" not in sequential.output


def test_bad_engine_options_are_one_line_errors() -> None:
    address = run("verify", "route-flow", "--address", "auto")
    assert address.exit_code == 2
    assert address.output.strip().splitlines() == ["Error: --address joins a Ray cluster: use it with --engine ray"]
    zero = run("verify", "route-flow", "--workers", "0")
    assert zero.exit_code == 2 and "--workers" in zero.output
    engine = run("verify", "route-flow", "--engine", "spark")
    assert engine.exit_code == 2 and "'spark' is not one of" in engine.output


def test_limits_stop_workers_and_the_report_gives_what_they_explored(tmp_path: Path) -> None:
    """--max-seconds and --max-memory end a --workers search as they end the sequential one:
    the report has the counts explored (not 'before the search'), exit 3."""
    from nice_attendre.parallel import process_memory

    out = tmp_path / "r.json"
    # (the command runs in this process: its memory bound is what it has now, and 60 MiB more)
    for limit in (["--max-seconds", "1.5"], ["--max-memory", str(process_memory() + (60 << 20))]):
        result = run("verify", "route-flow", "--topology", "linear:5", "--packets", "2", "--workers", "2",
                     *limit, "--json", str(out))
        assert result.exit_code == 3, result.output
        assert f"  search           INCOMPLETE  (stopped by {limit[0]})" in result.output.splitlines()
        data = json.loads(out.read_text())
        assert (data["verdict"], data["stop_reason"]) == ("incomplete", limit[0][2:])
        assert 0 < int(counts(result.output)["transitions"].replace(",", "")) < 2_366_988  # the complete search


def test_max_memory_is_refused_with_ray() -> None:
    result = run("verify", *PINNED, "--engine", "ray", "--max-memory", "1G")
    assert result.exit_code == 2
    assert result.output.startswith("Error: --max-memory bounds the memory of this machine's processes")


def test_a_state_without_a_canonical_encoding_is_one_clear_error() -> None:
    app = f"{ROOT / 'tests' / 'data' / 'apps' / 'opaque_state.py'}:CountPacketIns"
    exact = run("verify", app, "--topology", "linear:1")
    assert exact.exit_code == 1 and "no-forgotten-packets" in exact.output  # runs (and finds its bug)
    for option in ("--fingerprint", "--workers=2"):
        result = run("verify", app, "--topology", "linear:1", option)
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: cannot fingerprint a value of type Opaque"), lines


def test_from_python_a_stuck_handler_in_a_worker_is_an_app_exception() -> None:
    """verify(..., workers=2), as a user's own test suite calls it: the workers bound the
    app's handlers with max_handler_seconds (they used to wait for ever)."""
    from nice_attendre import verify

    loops = f"{ROOT / 'tests' / 'data' / 'apps' / 'careless.py'}:Loops"
    result = verify(loops, topology="linear:2", workers=2, max_handler_seconds=0.3)
    assert not result.ok and result.complete is False and result.stop_reason == "violation"
    (discovery,) = result.discoveries
    assert discovery.property == "app-exception"
    assert discovery.reason.startswith("Loops.on_packet_in did not return within 0.3 s")
    assert [type(step.event).__name__ for step in discovery.trace.steps][-1] == "ControllerHandle"
