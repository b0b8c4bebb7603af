"""Issue 32, sections 2 and 2b: discovery of representative packets (``nice-attendre
discover``, ``verify --discover``) with CrossHair."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from nice_attendre.frontend.cli import main

ROOT = Path(__file__).resolve().parents[2]
FIREWALL_PATH = "tests/data/apps/discover_firewall.py"
CORRECT = f"{FIREWALL_PATH}:QuarantineFirewall"
BUGGY = f"{FIREWALL_PATH}:ForgetfulFirewall"
#: Generous: the path limit (engine.MAX_PATHS) ends these searches first on an idle machine.
SECONDS = "60"


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def line_of(path: str, text: str) -> int:
    found = [n for n, line in enumerate((ROOT / path).read_text().splitlines(), start=1) if text in line]
    assert len(found) == 1, (text, found)
    return found[0]


@pytest.fixture(autouse=True)
def at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


needs_crosshair = pytest.mark.skipif(
    __import__("importlib").util.find_spec("crosshair") is None,
    reason="needs the 'discover' extra: pip install -e '.[discover]'")


@needs_crosshair
def test_the_firewall_bug_is_found_by_discovery_only(tmp_path: Path) -> None:
    plain = run("verify", BUGGY, "--coverage")
    assert plain.exit_code == 0, plain.output
    branch = line_of(FIREWALL_PATH, "if quarantined(hdr.ip_src, hdr.tp_dst):")
    assert f"never taken: {FIREWALL_PATH}:{branch} (the branch to line {branch + 1})" in plain.output

    report = tmp_path / "report.json"
    found = run("verify", BUGGY, "--discover", "--discover-seconds", SECONDS, "--coverage", "--json", str(report))
    assert found.exit_code == 1, found.output
    data = __import__("json").loads(report.read_text())["discovery"]
    assert {"packets", "branches", "solver_seconds", "fallbacks", "flows"} <= set(data)
    quarantined = [p for p in data["packets"] if p["tp_dst"] == 8080 and p["ip_src"] == "10.66.0.0"]
    assert quarantined and quarantined[0]["branch"] in data["branches"]
    assert f"{FIREWALL_PATH}:{line_of(FIREWALL_PATH, 'self.drop_quarantined(ev, out)')}" in quarantined[0]["lines"]
    assert "VIOLATION 1: no-forgotten-packets" in found.output
    assert "FAILED: no-forgotten-packets" in found.output
    assert "0->8080" in found.output  # the discovered packet, in the trace
    assert f"never taken: {FIREWALL_PATH}:{branch} " not in found.output
    drop = line_of(FIREWALL_PATH, "self.drop_quarantined(ev, out)")
    assert f"takes {FIREWALL_PATH}:" in found.output
    block = found.output.split("discovery:", 1)[1].split("\n\n", 1)[0]
    assert any(str(drop) in line for line in block.splitlines() if "takes" in line), block


@needs_crosshair
@pytest.mark.parametrize("protocol", ["openflow", pytest.param("openflow-b", marks=pytest.mark.slow),
                                      pytest.param("attendre", marks=pytest.mark.slow)])  # ~7 s each
def test_the_correct_firewall_passes_with_discovery(protocol: str) -> None:
    from nice_attendre import verify

    result = verify(CORRECT, protocol=protocol, discover=True, discover_seconds=float(SECONDS))
    assert result.ok, result.discoveries
    found = result.packets_discovered
    quarantined = [f.packet for f in found.packets if f.packet.tp_dst == 8080 and f.packet.ip_src.startswith("10.66.")]
    assert quarantined, [f.packet for f in found.packets]
    for item in found.packets:  # only plain values left the solver's process
        assert all(type(getattr(item.packet, name)) in (int, str) for name in item.packet.__dataclass_fields__)


@needs_crosshair
def test_the_load_balancer_gets_both_replicas() -> None:
    from nice_attendre.discover import discover

    found = discover("examples/load_balancer.py:LoadBalancer", topology="star:4", seconds=float(SECONDS))
    rewrites = " ".join(str(item.behaviour) for item in found.packets)
    assert "set:eth_dst=h2" in rewrites and "set:eth_dst=h3" in rewrites, rewrites
    to_vip = [item.packet for item in found.packets if item.packet.ip_dst == "10.0.0.100"]
    assert {packet.tp_src % 2 for packet in to_vip} == {0, 1}


@needs_crosshair
def test_a_ryu_app_gets_its_in_port_branch_not_its_header_branch() -> None:
    pytest.importorskip("os_ken")
    from nice_attendre.discover import discover

    app_path = "tests/data/apps/discover_ryu.py"
    found = discover(f"{app_path}:DiscoverRyuHub", seconds=float(SECONDS))
    ran = {line for item in found.packets for _path, line in item.lines}
    flood = line_of(app_path, "actions = [parser.OFPActionOutput(ofp.OFPP_FLOOD)]")
    port_one = line_of(app_path, "actions = [parser.OFPActionOutput(1)]")
    telnet = line_of(app_path, "actions = []")
    assert {flood, port_one} <= ran  # the in port is discovered
    assert telnet not in ran  # the TCP port is not: the header became bytes
    assert all(item.packet.tp_dst != 23 for item in found.packets)
    assert any("Ryu app" in note for note in found.notes)


@needs_crosshair
@pytest.mark.slow  # about 7 s: two discoveries in child processes (the canonical order: test_discover_parts.py)
def test_the_scenario_is_the_same_under_any_hash_seed(tmp_path: Path) -> None:
    """Two processes at once (PYTHONHASHSEED 1 and 2) write the same scenario file."""
    outs = [tmp_path / f"scenario-{seed}.toml" for seed in ("1", "2")]
    children = [subprocess.Popen([str(Path(sys.executable).parent / "nice-attendre"), "discover", CORRECT,
                                  "--discover-seconds", SECONDS, "--scenario-out", str(out)],
                                 cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": seed}, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True,
                                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
                for seed, out in zip(("1", "2"), outs)]
    for child in children:
        _out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
    texts = [out.read_text() for out in outs]
    assert texts[0] == texts[1]
    assert 'dport = 8080' in texts[0] and 'ip_src = "10.66.0.0"' in texts[0]
    again = run("verify", CORRECT, "--scenario", str(outs[0]))
    assert again.exit_code == 0, again.output


def test_without_crosshair_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real = builtins.__import__

    def no_crosshair(name: str, *args, **kwargs):
        if name == "crosshair" or name.startswith("crosshair."):
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_crosshair)
    for args in (("discover", CORRECT), ("verify", CORRECT, "--discover")):
        done = CliRunner().invoke(main, list(args))
        assert done.exit_code == 2, done.output
        assert done.output.strip().splitlines()[-1].endswith(
            "discovery needs the 'discover' extra: pip install 'nice-attendre[discover]'"), done.output
        assert "Traceback" not in done.output


@needs_crosshair
def test_an_app_without_a_packet_in_handler_is_refused() -> None:
    done = run("discover", "tests/data/apps/discover_no_handler.py:JoinOnly")
    assert done.exit_code == 2, done.output
    assert "JoinOnly has no packet-in handler (on_packet_in)" in done.output
    assert "Traceback" not in done.output


def test_discover_with_a_scenario_file_is_refused(tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text('[[flow]]\nfrom = "h1"\nto = "h2"\n')
    done = run("verify", CORRECT, "--discover", "--scenario", str(scenario))
    assert done.exit_code == 2, done.output
    assert "not with --scenario" in done.output


@needs_crosshair
def test_a_budget_too_small_falls_back_and_says_so() -> None:
    done = run("verify", CORRECT, "--discover", "--discover-seconds", "1")
    assert done.exit_code == 0, done.output  # the default traffic is verified all the same
    assert "fallback: app state 0: the solver reached its time budget" in done.output
    assert "h1->h2 (default traffic)" in done.output
    assert "OK: no property violated" in done.output
