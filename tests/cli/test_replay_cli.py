"""`nice-attendre replay TRACE.json`: a saved trace reproduces, or replay says where it
diverges after the app changed; bad trace files are one-line errors (exit 2)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from nice_attendre.frontend.cli import main
from nice_attendre.frontend.exit_codes import ExitCode

APPS = Path(__file__).resolve().parent.parent / "data" / "apps"
MAC_BUG = ["verify", "mac-learning", "-t", "linear:2", "-n", "2", "--bug", "delayed-direct-path", "--shortest"]


def run(*args: str) -> object:
    return CliRunner().invoke(main, list(args))


def saved(tmp_path: Path, args: list[str]) -> Path:
    out = tmp_path / "trace.json"
    result = CliRunner().invoke(main, [*args, "--trace-out", str(out), "--trace-format", "json"])
    assert result.exit_code == ExitCode.VIOLATION, result.output
    return out


def test_unchanged_app_reproduces(tmp_path: Path) -> None:
    trace = saved(tmp_path, MAC_BUG)
    result = CliRunner().invoke(main, ["replay", str(trace)])
    assert result.exit_code == ExitCode.VIOLATION, result.output
    lines = result.output.splitlines()
    assert lines[-1] == "trace reproduced: property strict-direct-paths violated at step 18"
    assert lines[0].startswith("  replaying") and "18 events" in lines[0]
    assert any("app state: ports += {(1, 'h1'): 1}" in line for line in lines)
    quiet = CliRunner().invoke(main, ["replay", "-q", str(trace)])
    assert quiet.output.splitlines()[1:] == [lines[-1]]


FIXED = '''        if out.topology.host_port[hdr.eth_src][0] != ev.dpid:
            return state  # "cannot happen": the path is installed from the first switch
'''


def test_fixed_app_diverges(tmp_path: Path) -> None:
    app = tmp_path / "first_hop_only.py"
    shutil.copy(APPS / "first_hop_only.py", app)
    trace = saved(tmp_path, ["verify", f"{app}:FirstHopOnly", "-t", "linear:3", "--shortest"])
    data = json.loads(trace.read_text())
    assert data["property"] == "no-forgotten-packets"
    # The fix: every switch's packet-in installs the rest of the path.
    source = app.read_text()
    assert FIXED in source
    app.write_text(source.replace(FIXED, ""))
    # a new process, as a user would run it (this one has imported the old file)
    done = subprocess.run([sys.executable, "-c", "from nice_attendre.frontend.cli import main; main()", "replay",
                           "--app", f"{app}:FirstHopOnly", str(trace)], capture_output=True, text=True, timeout=300)
    assert done.returncode == ExitCode.NONDETERMINISTIC, done.stdout + done.stderr
    last = done.stdout.splitlines()[-1]
    assert last.startswith("the app changed: step ") and "leads to a different state than recorded" in last
    step = int(last.split()[4])
    assert "FirstHopOnly.on_packet_in handles packet-in(s2" in data["narration"][step - 1][0]
    # ... and the fixed app verifies
    fixed = subprocess.run([sys.executable, "-c", "from nice_attendre.frontend.cli import main; main()", "verify",
                            f"{app}:FirstHopOnly", "-t", "linear:3"], capture_output=True, text=True, timeout=300)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr


def test_event_no_longer_enabled(tmp_path: Path) -> None:
    trace = saved(tmp_path, MAC_BUG)
    data = json.loads(trace.read_text())
    data["events"][5], data["events"][6] = data["events"][6], data["events"][5]
    trace.write_text(json.dumps(data))
    result = CliRunner().invoke(main, ["replay", str(trace)])
    assert result.exit_code == ExitCode.NONDETERMINISTIC
    last = result.output.splitlines()[-1]
    assert last.startswith("step 6: event `s2 processes a command` is not enabled here; enabled: ")
    assert "`controller handles a message from s2`" in last


def test_property_now_holds(tmp_path: Path) -> None:
    trace = saved(tmp_path, MAC_BUG)
    data = json.loads(trace.read_text())
    del data["events"][-1], data["narration"][-1], data["fingerprints"][-1]
    trace.write_text(json.dumps(data))
    result = CliRunner().invoke(main, ["replay", str(trace)])
    assert result.exit_code == ExitCode.NONDETERMINISTIC
    assert result.output.splitlines()[-1].startswith("the property strict-direct-paths now holds: all 17 events")


@pytest.mark.parametrize("content, message", [
    ("not json", "is not JSON"),
    ("[]", "is not a nice-attendre trace"),
    (json.dumps({"format": "nice-attendre-trace", "version": 2}), "version 2 is not supported"),
    (json.dumps({"format": "nice-attendre-trace", "version": 1, "build": {"app": "x"}, "property": "p",
                 "events": []}), "'fingerprints' is missing"),
    (json.dumps({"format": "nice-attendre-trace", "version": 1, "build": {"app": "no-such-app"},
                 "property": "p", "events": [], "fingerprints": ["0" * 16]}), "no-such-app"),
    (json.dumps({"format": "nice-attendre-trace", "version": 1, "build": {"app": "route-flow", "colour": 1},
                 "property": "p", "events": [], "fingerprints": ["0"]}), "unknown build option 'colour'"),
])
def test_bad_trace_files(tmp_path: Path, content: str, message: str) -> None:
    trace = tmp_path / "bad.json"
    trace.write_text(content)
    result = CliRunner().invoke(main, ["replay", str(trace)])
    assert result.exit_code == ExitCode.INPUT, result.output
    assert message in result.output and len(result.output.strip().splitlines()) == 1


def test_unknown_event_in_trace(tmp_path: Path) -> None:
    trace = saved(tmp_path, MAC_BUG)
    data = json.loads(trace.read_text())
    data["events"][0] = {"event": "BatchTimerFires", "dpid": 1}
    trace.write_text(json.dumps(data))
    result = CliRunner().invoke(main, ["replay", str(trace)])
    assert result.exit_code == ExitCode.INPUT and "unknown event 'BatchTimerFires'" in result.output


def test_missing_file() -> None:
    result = CliRunner().invoke(main, ["replay", "/nonexistent/trace.json"])
    assert result.exit_code == ExitCode.INPUT and "cannot read trace" in result.output


def test_replay_with_protocol_parameters_and_faults(tmp_path: Path) -> None:
    args = ["verify", "route-flow", "-t", "linear:2", "--bug", "forget-last-hop", "-P", "buffer:capacity=1",
            "--fault", "loss=1", "--threaded-controller", "--command-order", "any", "--shortest"]
    trace = saved(tmp_path, args)
    data = json.loads(trace.read_text())
    assert data["build"]["protocol"] == "buffer:capacity=1" and data["build"]["faults"] == {"loss": 1}
    result = CliRunner().invoke(main, ["replay", str(trace)])
    assert result.exit_code == ExitCode.VIOLATION, result.output
    assert result.output.splitlines()[-1].startswith("trace reproduced: property ")


def test_help_names_the_divergence_exit_code() -> None:
    result = CliRunner().invoke(main, ["replay", "--help"])
    text = " ".join(result.output.split())
    assert "4 the app is not deterministic, or a replayed trace diverges" in text


STUCK = '''        hdr = ev.packet.hdr
        while hdr.eth_src:  # an edit gone wrong: the handler never returns
            pass
'''


def test_an_edited_app_stuck_in_a_handler_diverges_instead_of_hanging(tmp_path: Path) -> None:
    app = tmp_path / "first_hop_only.py"
    shutil.copy(APPS / "first_hop_only.py", app)
    trace = saved(tmp_path, ["verify", f"{app}:FirstHopOnly", "-t", "linear:3", "--shortest"])
    source = app.read_text()
    assert "        hdr = ev.packet.hdr\n" in source
    app.write_text(source.replace("        hdr = ev.packet.hdr\n", STUCK))
    done = subprocess.run([sys.executable, "-c", "from nice_attendre.frontend.cli import main; main()", "replay",
                           "--app", f"{app}:FirstHopOnly", "--max-handler-seconds", "0.3", str(trace)], capture_output=True, text=True, timeout=120)
    assert done.returncode == ExitCode.NONDETERMINISTIC, done.stdout + done.stderr
    assert "ALERT app-exception: FirstHopOnly.on_packet_in did not return within 0.3 s" in done.stdout, done.stdout
    assert done.stdout.splitlines()[-1].startswith("the app changed: step ")
