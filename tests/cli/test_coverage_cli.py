"""Issue 32, section 1: ``nice-attendre verify --coverage`` (the report's coverage block and
the JSON's ``coverage`` object)."""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from nice_attendre.frontend.cli import main

ROOT = Path(__file__).resolve().parents[2]
FIREWALL_PATH = "tests/data/apps/coverage_firewall.py"
FIREWALL = f"{FIREWALL_PATH}:CoverageFirewall"
BALANCER_PATH = "examples/load_balancer.py"


@pytest.fixture(autouse=True)
def at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reports name files relative to the working directory: run from the repository's root."""
    monkeypatch.chdir(ROOT)


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def line_of(path: str, text: str) -> int:
    found = [n for n, line in enumerate((ROOT / path).read_text().splitlines(), start=1) if text in line]
    assert len(found) == 1, (text, found)
    return found[0]


def block(output: str) -> list[str]:
    """The report's coverage block (its lines, up to the blank line that ends it)."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  coverage of the app's code"))
    end = lines.index("", start)
    return lines[start:end]


def summaries(lines: list[str]) -> dict[str, tuple[int, int, int, int]]:
    """name -> (lines run, lines, branches taken, branches) from a coverage block."""
    found = {}
    for line in lines:
        match = re.fullmatch(r"    (?:handler|function) (\S+) \(.+\): lines (\d+)/(\d+), branches (\d+)/(\d+)", line)
        if match:
            found[match[1]] = tuple(int(n) for n in match.groups()[1:])
    return found


def test_the_report_names_the_branch_the_default_ping_never_takes(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run("verify", FIREWALL, "--coverage", "--json", str(out))
    assert result.exit_code == 0, result.output
    ssh = line_of(FIREWALL_PATH, "if tp_dst == SSH:")
    checked = line_of(FIREWALL_PATH, "if blocked(hdr.ip_src, hdr.tp_dst):")
    drop = line_of(FIREWALL_PATH, "# drop it")
    lines = block(result.stdout)
    assert lines[1] == "    (counted where handlers ran; memoised calls repeat known outcomes)"
    assert f"      never taken: {FIREWALL_PATH}:{ssh} (the branch to line {ssh + 1})" in lines
    assert f"      never taken: {FIREWALL_PATH}:{checked} (the branch to line {drop})" in lines
    assert f"      never run: {FIREWALL_PATH}:{drop}-{drop + 1}" in lines
    assert summaries(lines)["CoverageFirewall.on_packet_in"] == (5, 7, 1, 2)
    assert result.stdout.rstrip().endswith("OK: no property violated")


def test_a_flow_that_exercises_the_rule_covers_its_line() -> None:
    result = run("verify", FIREWALL, "--coverage", "--flow", "h1->h2", "--flow", "h1->h2:proto=tcp,dport=22")
    assert result.exit_code == 0, result.output
    ssh = line_of(FIREWALL_PATH, "if tp_dst == SSH:")
    lines = block(result.stdout)
    assert summaries(lines)["CoverageFirewall.on_packet_in"] == (7, 7, 2, 2)
    assert not any(f":{ssh} " in line or f":{ssh + 1}" in line for line in lines), lines
    prefix = line_of(FIREWALL_PATH, "if ip_src.startswith(BLOCKED_PREFIX):")
    assert f"      never taken: {FIREWALL_PATH}:{prefix} (the branch to line {prefix + 1})" in lines


def test_the_json_has_the_same_figures(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run("verify", FIREWALL, "--coverage", "--json", str(out))
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())["coverage"]
    lines = block(result.stdout)
    assert {f["name"]: (f["lines_run"], f["lines"], f["branches_taken"], f["branches"])
            for f in data["functions"]} == summaries(lines)
    assert lines[0] == (f"  coverage of the app's code: lines {data['lines_run']}/{data['lines']}, "
                        f"branches {data['branches_taken']}/{data['branches']}")
    shown = {f"      never taken: {f['display_file']}:{b['line']} (the branch to line {b['to']})"
             for f in data["functions"] for b in f["missing_branches"] if f["lines_run"]}
    assert shown == {line for line in lines if "never taken" in line}
    packet_in = next(f for f in data["functions"] if f["name"] == "CoverageFirewall.on_packet_in")
    assert packet_in["kind"] == "handler" and packet_in["file"] == str(ROOT / FIREWALL_PATH)
    assert packet_in["missing_branches"][0]["why"].startswith(f"line {packet_in['missing_branches'][0]['line']} "
                                                              "didn't jump to line")
    assert data["complete"] is True and data["files"] == [str(ROOT / FIREWALL_PATH)]


def test_coverage_is_off_by_default_and_changes_no_count(tmp_path: Path) -> None:
    plain, measured = tmp_path / "plain.json", tmp_path / "measured.json"
    without = run("verify", FIREWALL, "--json", str(plain))
    with_coverage = run("verify", FIREWALL, "--coverage", "--json", str(measured))
    assert without.exit_code == with_coverage.exit_code == 0
    assert "coverage of the app" not in without.stdout and "coverage of the app" in with_coverage.stdout
    first, second = json.loads(plain.read_text()), json.loads(measured.read_text())
    assert "coverage" not in first and "coverage" in second
    keys = ("transitions", "unique_states", "revisits", "max_depth", "verdict")
    assert [first[k] for k in keys] == [second[k] for k in keys]


def _console_script() -> str:
    import shutil
    import sys

    found = shutil.which("nice-attendre", path=str(Path(sys.executable).parent))
    assert found is not None
    return found


def test_deterministic_under_hash_seeds_1_and_2(tmp_path: Path) -> None:
    outputs = {}
    for seed in ("1", "2"):
        out = tmp_path / f"seed{seed}.json"
        done = subprocess.run([_console_script(), "verify", FIREWALL, "--coverage", "--flow", "h1->h2",
                               "--flow", "h1->h2:ip_src=10.9.0.7", "--json", str(out)], cwd=ROOT,
                              env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        outputs[seed] = (block(done.stdout), json.loads(out.read_text())["coverage"])
    assert outputs["1"] == outputs["2"]


def test_workers_are_merged() -> None:
    sequential = run("verify", FIREWALL, "--coverage", "--flow", "h1->h2:proto=tcp,dport=22", "--flow", "h1->h2")
    partitioned = run("verify", FIREWALL, "--coverage", "--flow", "h1->h2:proto=tcp,dport=22", "--flow", "h1->h2",
                      "--workers", "2")
    assert sequential.exit_code == partitioned.exit_code == 0, partitioned.output
    assert "    (merged from 2 of 2 worker processes)" in block(partitioned.stdout)
    assert summaries(block(partitioned.stdout)) == summaries(block(sequential.stdout))
    assert [line for line in block(partitioned.stdout) if "merged" not in line] == block(sequential.stdout)


@pytest.mark.parametrize("extra, word", [(["--engine", "ray"], "--engine ray"),
                                         (["--resume", "checkpoint.bin"], "--resume")])
def test_refused_with_one_line(extra: list[str], word: str) -> None:
    result = run("verify", FIREWALL, "--coverage", *extra)
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith("Error: --coverage") and word in line
    assert "Traceback" not in result.output


def test_a_search_stopped_at_a_violation_says_its_coverage_is_partial() -> None:
    result = run("verify", FIREWALL, "--coverage", "--flow", "h1->h2:proto=tcp,dport=22", "--property", "delivery")
    assert result.exit_code == 1, result.output
    lines = block(result.stdout)
    assert "    (the search stopped early (violation): coverage of the part explored)" in lines
    assert "VIOLATION 1: delivery" in result.stdout


def test_load_balancer_names_the_replica_branch_its_scenario_never_takes() -> None:
    result = run("verify", f"{BALANCER_PATH}:LoadBalancer", "--topology", "star:4", "--scenario",
                 "examples/load_balancer.toml", "--coverage")
    assert result.exit_code == 0, result.output
    choice = line_of(BALANCER_PATH, 'if self.bug == "round-robin":')
    lines = block(result.stdout)
    assert f"      never taken: {BALANCER_PATH}:{choice} (the branch to line {choice + 1})" in lines
    assert not any(f"{BALANCER_PATH}:{choice + 3}" in line for line in lines)  # the replica by source port ran


def test_ryu_app_coverage_in_the_report() -> None:
    path = "tests/data/apps/coverage_ryu.py"
    result = run("verify", f"{path}:CoverageHub", "--coverage")
    assert result.exit_code == 0, result.output
    ipv6 = line_of(path, "if eth.ethertype == IPV6:")
    lines = block(result.stdout)
    assert f"    handler CoverageHub.handle_packet_in ({path}:{line_of(path, 'def handle_packet_in')}): " \
           "lines 8/9, branches 1/2" in lines
    assert f"      never taken: {path}:{ipv6} (the branch to line {ipv6 + 1})" in lines
    # the model delivers port-status (with link faults: wt-L), this run has none
    assert f"    handler CoverageHub.handle_port_status ({path}:{line_of(path, 'def handle_port_status')}): " \
           "lines 0/1, branches 0/0" in lines
    assert "      never called by the search" in lines


def test_the_readme_shows_what_the_command_prints() -> None:
    readme = (ROOT / "README.md").read_text().splitlines()
    start = readme.index("$ nice-attendre verify tests/data/apps/coverage_firewall.py:CoverageFirewall --coverage")
    shown = readme[start + 1:readme.index("```", start)]
    result = run("verify", FIREWALL, "--coverage")
    assert result.exit_code == 0, result.output
    printed = result.stdout.splitlines()
    for line in shown:
        if line.strip() != "...":
            assert line in printed, line


def test_an_app_in_a_folder_whose_name_holds_glob_characters(tmp_path: Path) -> None:
    """coverage.py's include patterns are globs: a folder named ``we[ir]d dir*`` measured
    nothing before (every handler looked never called)."""
    folder = tmp_path / "we[ir]d dir*"
    folder.mkdir()
    app = folder / "fw.py"
    app.write_text((ROOT / FIREWALL_PATH).read_text())
    result = run("verify", f"{app}:CoverageFirewall", "--coverage")
    assert result.exit_code == 0, result.output
    assert summaries(block(result.stdout))["CoverageFirewall.on_packet_in"] == (5, 7, 1, 2)


def test_no_warning_of_coverage_py_when_no_line_of_the_app_ran(tmp_path: Path) -> None:
    """The report says the handler was never called; coverage.py's "No data was collected"
    warning on stderr said it too, as if something had gone wrong."""
    app = tmp_path / "idle.py"
    app.write_text("from nice_attendre.models.app import App\n\n\nclass Idle(App[None]):\n"
                   "    def on_packet_in(self, state, ev, out):\n        return state\n")
    done = subprocess.run([_console_script(), "verify", f"{app}:Idle", "--packets", "0", "--coverage"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert block(done.stdout)[2:] == [f"    handler Idle.on_packet_in ({app}:5): lines 0/1, branches 0/0",
                                      "      never called by the search"]


#: An app whose packet-in handler kills the worker process it runs in (the coordinator runs
#: only the switch joins): the search loses its workers.
KILLS_ITS_WORKER = '''
import multiprocessing, os, signal
from nice_attendre.models.app import App


class KillsItsWorker(App[None]):
    def on_packet_in(self, state, ev, out):
        if multiprocessing.current_process().name.startswith("nice-attendre-shard"):
            os.kill(os.getpid(), signal.SIGKILL)
        return state
'''


def test_a_lost_worker_leaves_its_part_missing_and_says_so(tmp_path: Path) -> None:
    app = tmp_path / "kills.py"
    app.write_text(KILLS_ITS_WORKER)
    out = tmp_path / "report.json"
    done = subprocess.run([_console_script(), "verify", f"{app}:KillsItsWorker", "--workers", "2", "--coverage",
                           "--json", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stdout + done.stderr
    lines = block(done.stdout)
    assert "    (merged from 0 of 2 worker processes (2 ended without reporting: what they ran is missing))" in lines
    assert "    (the search stopped early (worker-lost): coverage of the part explored)" in lines
    data = json.loads(out.read_text())["coverage"]
    assert (data["workers_merged"], data["workers"], data["complete"]) == (0, 2, False)
