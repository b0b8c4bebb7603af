"""``verify --simulate`` and ``--shrink`` as a user meets them: the issue's scenario (MAC
learning on linear:2 with 3 packets under any command order finds its no-stale-routes
violation; the trace is shrunk and replays), a correct app ends INCOMPLETE with its coverage,
a seeded run is the same in two runs, under any PYTHONHASHSEED and with any number of
workers, options that do not go together are refused, Ctrl-C gives the partial report, and
``--shrink`` shortens an exhaustive search's trace."""
from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import child_preexec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nice_attendre import verify
from nice_attendre.errors import InputError
from nice_attendre.frontend.cli import main

MAC = ["mac-learning", "-t", "linear:2", "-n", "3", "--command-order", "any", "-p", "no-stale-routes"]
TIMEOUTS = str(Path(__file__).resolve().parents[1] / "data" / "apps" / "timeout_routing.py") + ":TimeoutRouting"


COMMAND = shutil.which("nice-attendre", path=str(Path(sys.executable).parent)) or "nice-attendre"


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args))


def trace_line(output: str) -> tuple[int, int | None]:
    """(events shown, events before shrinking or None) of the first trace of a report."""
    found = re.search(r"trace \((\d+) events(?:; shrunk from (\d+))?", output)
    assert found, output
    return int(found.group(1)), int(found.group(2)) if found.group(2) else None


def without_times(data: dict) -> dict:
    """A JSON report without what depends on the clock."""
    return {key: value for key, value in data.items()
            if key not in ("elapsed_seconds", "transitions_per_second", "sources")}


def test_the_issues_scenario_finds_the_violation_and_the_shrunk_trace_replays(tmp_path: Path) -> None:
    out, trace = tmp_path / "r.json", tmp_path / "t.json"
    result = invoke("verify", *MAC, "--simulate", "--seed", "1", "--max-seconds", "60", "--json", str(out),
                    "--trace-format", "json", "--trace-out", str(trace))
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert "  search         simulation (385 walks, seed 1, biases uniform, control-first, packets-first; walks to " \
           "quiescence or a repeated state; 1 process)" in lines
    assert lines[-1] == "FAILED: no-stale-routes"
    shown, before = trace_line(result.output)
    assert (shown, before) == (33, 43)
    data = json.loads(out.read_text())
    assert data["verdict"] == "violated" and data["ok"] is False and data["complete"] is False
    assert data["simulation"]["walks"] == 385 and data["simulation"]["violating_walk"] == {"no-stale-routes": 384}
    assert data["violations"][0]["unshrunk_length"] == 43 and len(data["violations"][0]["trace"]) == 33
    replayed = invoke("replay", str(trace))
    assert replayed.exit_code == 1, replayed.output
    assert "trace reproduced: property no-stale-routes violated at step 33" in replayed.output


def test_a_correct_app_ends_incomplete_with_its_coverage(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = invoke("verify", "route-flow", "-t", "linear:3", "-n", "2", "--simulate", "--seed", "5", "--walks", "60",
                    "--json", str(out))
    assert result.exit_code == 3, result.output
    lines = result.output.splitlines()
    assert lines[-1] == "INCOMPLETE: no violation in 60 walks (not a proof; ran the walks asked for)"
    for label in ("walks", "transitions", "states", "deepest walk", "events", "walks by bias", "properties"):
        assert any(line.startswith(f"  {label} ") for line in lines), label
    assert "  search           INCOMPLETE  (random walks, not a proof; ran the walks asked for)" in lines
    assert "OK" not in result.output
    data = json.loads(out.read_text())
    coverage = data["simulation"]
    assert (data["verdict"], data["ok"], data["stop_reason"]) == ("incomplete", False, "walks")
    assert coverage["walks"] == 60 and coverage["ends"] == {"quiescent": 60}
    assert data["transitions"] == coverage["transitions"] == sum(coverage["event_kinds"].values())
    assert 0 < coverage["distinct_states"] == data["unique_states"] <= data["transitions"] + 60
    assert sum(coverage["biases"].values()) == 60
    assert coverage["properties_checked"] == data["properties"]
    assert data["search"].startswith("simulation (60 walks, seed 5,")


def test_no_limit_runs_a_thousand_walks() -> None:
    result = verify("route-flow", topology="linear:2", simulate=True, seed=0)
    assert result.stop_reason == "walks" and result.simulation.walks == 1000 and not result.ok


def test_a_seed_gives_the_same_run_under_any_hash_seed_and_number_of_workers(tmp_path: Path) -> None:
    reports = []
    for hash_seed, workers in (("1", "1"), ("2", "1"), ("3", "2")):
        out = tmp_path / f"r{hash_seed}.json"
        proc = subprocess.run([COMMAND, "verify", *MAC, "--simulate",
                               "--seed", "3", "--workers", workers, "--json", str(out)],
                              capture_output=True, text=True, timeout=300, preexec_fn=child_preexec(),
                              env={**os.environ, "PYTHONHASHSEED": hash_seed})
        assert proc.returncode == 1, proc.stderr
        data = without_times(json.loads(out.read_text()))
        data["simulation"].pop("workers")
        data.pop("search")  # (names the number of workers)
        reports.append(data)
    assert reports[0] == reports[1] == reports[2]
    assert reports[0]["violations"][0]["trace"]


def test_the_same_seed_in_the_library_twice_and_another_seed() -> None:
    options = dict(topology="linear:2", packets=3, command_order="any", properties=["no-stale-routes"],
                   simulate=True)
    first, again, other = verify("mac-learning", seed=4, **options), verify("mac-learning", seed=4, **options), \
        verify("mac-learning", seed=8, **options)
    assert first.verdict == again.verdict == other.verdict == "violated"
    assert first.stats.counts() == again.stats.counts()
    assert first.discoveries[0].trace.events == again.discoveries[0].trace.events  # (states: each network interns its own)
    assert first.simulation.violating_walk != other.simulation.violating_walk
    assert first.simulation.seed == 4 and other.simulation.seed == 8


@pytest.mark.parametrize("extra,why", [
    (["--shortest"], "--shortest"), (["--fingerprint"], "--fingerprint"), (["--max-depth", "3"], "--max-depth"),
    (["--max-states", "9"], "--max-states"), (["--partition", "app", "--workers", "2"], "--partition"),
    (["--checkpoint", "x.ckpt"], "--checkpoint"),
])
def test_options_that_do_not_go_with_simulate(extra: list[str], why: str) -> None:
    result = invoke("verify", "route-flow", "--simulate", *extra)
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and why in result.output and "--simulate" in result.output


@pytest.mark.parametrize("extra", [["--seed", "3"], ["--walks", "3"], ["--walk-depth", "3"], ["--bias", "uniform"]])
def test_walk_options_need_simulate(extra: list[str]) -> None:
    result = invoke("verify", "route-flow", *extra)
    assert result.exit_code == 2, result.output
    assert "add --simulate" in result.output
    with pytest.raises(InputError, match="add --simulate"):
        verify("route-flow", **{extra[0][2:].replace("-", "_"): 3 if extra[1] == "3" else extra[1]})


def test_walk_depth_bounds_every_walk() -> None:
    result = verify("mac-learning", topology="linear:2", packets=2, simulate=True, seed=2, walks=30, walk_depth=8)
    assert result.simulation.deepest <= 8 and result.simulation.ends.get("depth", 0) > 0
    assert result.simulation.walk_depth == 8


def test_bias_uniform_and_control_first() -> None:
    for bias in ("uniform", "control-first", "packets-first"):
        result = verify("route-flow", topology="linear:2", simulate=True, seed=2, walks=20, bias=bias)
        assert result.simulation.biases == {bias: 20}


def test_shrink_shortens_an_exhaustive_searchs_trace(tmp_path: Path) -> None:
    args = ["verify", TIMEOUTS, "-t", "linear:3", "-n", "2", "-p", "no-reordering"]
    plain = invoke(*args)
    trace = tmp_path / "t.json"
    shrunk = invoke(*args, "--shrink", "--trace-format", "json", "--trace-out", str(trace))
    assert plain.exit_code == shrunk.exit_code == 1
    assert trace_line(plain.output) == (21, None)
    assert trace_line(shrunk.output) == (16, 21)
    counts = [[line for line in output.split("\n\n")[1].splitlines() if not line.startswith("  time ")]
              for output in (plain.output, shrunk.output)]
    assert counts[0] == counts[1]  # the same search
    replayed = invoke("replay", "--app", TIMEOUTS, str(trace))
    assert replayed.exit_code == 1 and "trace reproduced" in replayed.output, replayed.output
    unshrunk = invoke(*args, "--simulate", "--seed", "1", "--no-shrink")
    assert unshrunk.exit_code == 1 and trace_line(unshrunk.output)[1] is None


def test_shrink_in_the_library_for_the_dfs() -> None:
    options = dict(topology="linear:2", packets=2, command_order="any", properties=["no-stale-routes"])
    plain = verify("mac-learning", **options)
    shrunk = verify("mac-learning", shrink=True, **options)
    assert len(plain.discoveries[0].trace) == 42 and plain.discoveries[0].unshrunk_length is None
    assert len(shrunk.discoveries[0].trace) == 30 and shrunk.discoveries[0].unshrunk_length == 42
    assert shrunk.stats.counts() == plain.stats.counts()
    shrunk.discoveries[0].trace.replay(shrunk.system)


def _read_line(stream, deadline: float) -> str:  # type: ignore[no-untyped-def]
    while time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], 0.1)
        if ready:
            return stream.readline()
    pytest.fail("no progress line from the simulation")


def test_ctrl_c_gives_the_partial_report(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    code = ("import nice_attendre.frontend.progress as p; p.PLAIN_PROGRESS_SECONDS = 0.2\n"
            "from nice_attendre.frontend.cli import main; main()")
    process = subprocess.Popen([sys.executable, "-c", code, "verify", "route-flow", "-t", "linear:3", "-n", "3",
                                "--simulate", "--seed", "1", "--walks", "100000000", "--json", str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=child_preexec())
    try:
        line = _read_line(process.stderr, time.monotonic() + 120)
        assert line.startswith("progress:"), line
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 130, (stdout, stderr)
    assert "Traceback" not in stderr
    last = stdout.splitlines()[-1]
    assert re.fullmatch(r"INTERRUPTED: no violation in [\d,]+ walks( \(\+ 1 cut short\))? \(not a proof; "
                        r"interrupted by Ctrl-C\)", last), last
    data = json.loads(out.read_text())
    assert data["verdict"] == "interrupted" and data["simulation"]["walks"] > 0


@given(seed=st.integers(0, 2 ** 40), walks=st.integers(1, 6), depth=st.one_of(st.none(), st.integers(1, 30)),
       bias=st.sampled_from(["swarm", "uniform", "control-first", "packets-first"]),
       workers=st.sampled_from(["1", "2"]), keep=st.booleans(),
       app=st.sampled_from([["route-flow", "-t", "linear:2"], ["mac-learning", "-t", "linear:2", "-n", "2"],
                            ["mac-learning", "-t", "linear:1", "--bug", "delayed-direct-path", "-n", "2"]]))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_fuzzed_simulations_end_in_a_verdict_never_a_crash(seed: int, walks: int, depth: int | None, bias: str,
                                                           workers: str, keep: bool, app: list[str]) -> None:
    args = ["verify", *app, "--simulate", "--seed", str(seed), "--walks", str(walks), "--bias", bias,
            "--workers", workers, *(["--walk-depth", str(depth)] if depth else []), *(["--keep-going"] if keep else [])]
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (1, 3), (args, result.output)
    assert "Traceback" not in result.output and "internal error" not in result.output


@given(text=st.text(max_size=12))
@settings(max_examples=30, deadline=None)
def test_fuzzed_walk_option_values_are_bad_input_in_one_line(text: str) -> None:
    for option in ("--seed", "--walks", "--walk-depth", "--bias"):
        result = CliRunner().invoke(main, ["verify", "route-flow", "--simulate", "--walks", "2", option, text])
        assert result.exit_code in (0, 1, 2, 3), (option, text, result.output)
        assert "Traceback" not in result.output
        if result.exit_code == 2:
            assert "Error" in result.output
