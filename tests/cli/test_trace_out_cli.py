"""`verify --trace-out FILE --trace-format text|json|mermaid`: the first violation's trace
as a file (nice_attendre/frontend/trace_format.py)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from nice_attendre.frontend.cli import main
from nice_attendre.frontend.trace_format import FORMAT, VERSION

MAC_BUG = ["verify", "mac-learning", "-t", "linear:2", "-n", "2", "--bug", "delayed-direct-path", "--shortest"]
ARROW = re.compile(r"^    (\S+)->>(\S+): (\d+)\. ")


def write(tmp_path: Path, trace_format: str, args: list[str] = MAC_BUG) -> tuple[Path, str]:
    out = tmp_path / f"trace.{trace_format}"
    result = CliRunner().invoke(main, [*args, "--trace-out", str(out), "--trace-format", trace_format])
    assert result.exit_code == 1, result.output
    return out, result.output


def test_json_schema_and_round_trip(tmp_path: Path) -> None:
    from nice_attendre.frontend.api import build
    from nice_attendre.models.event_codec import decode_event, encode_event

    out, printed = write(tmp_path, "json")
    data = json.loads(out.read_text())
    assert data["format"] == FORMAT and data["version"] == VERSION == 1
    assert data["property"] == "strict-direct-paths" and data["expectation"] == "always"
    assert data["build"]["app"] == "mac-learning" and data["build"]["app_options"] == {"bug": "delayed-direct-path"}
    assert data["build"]["topology"] == "linear:2" and data["build"]["packets"] == 2
    assert data["protocol"] == "openflow"
    assert len(data["events"]) == len(data["narration"]) == 18 == len(data["fingerprints"]) - 1
    assert "trace (18 events)" in printed
    options = {k: v for k, v in data["build"].items() if v is not None}
    net = build(options.pop("app"), **options).network
    events = [decode_event(item, net.event_types()) for item in data["events"]]
    assert [encode_event(e) for e in events] == data["events"]
    assert data["narration"][2][0].startswith("controller: MacLearning.on_packet_in handles")
    assert "app state: ports += {(1, 'h1'): 1}" in data["narration"][2]


def test_json_is_the_same_under_any_hash_seed(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    outputs = []
    for seed in ("0", "12345"):
        out = tmp_path / f"t{seed}.json"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", "from nice_attendre.frontend.cli import main; main()", *MAC_BUG,
                               "--trace-out", str(out), "--trace-format", "json"], env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 1, done.stderr
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1]


def test_mermaid_participants_and_one_arrow_per_event(tmp_path: Path) -> None:
    out, _ = write(tmp_path, "mermaid")
    lines = out.read_text().splitlines()
    assert lines[0] == "sequenceDiagram"
    participants = [line.split()[1] for line in lines if line.startswith("    participant ")]
    assert participants == ["controller", "s1", "s2", "h1", "h2"]
    arrows = [ARROW.match(line) for line in lines if "->>" in line]
    assert all(arrows) and [int(m.group(3)) for m in arrows] == list(range(1, 19))  # type: ignore[union-attr]
    lanes = {(m.group(1), m.group(2)) for m in arrows}  # type: ignore[union-attr]
    assert ("h1", "s1") in lanes and ("s1", "controller") in lanes and ("controller", "s1") in lanes
    assert ("s2", "h2") in lanes and ("s1", "s2") in lanes
    assert all(a in participants and b in participants for a, b in lanes)
    assert not any(";" in line for line in lines)
    assert any(line.startswith("    Note over controller: app state: ports += ") for line in lines)


def test_mermaid_shows_join_commands(tmp_path: Path) -> None:
    app = str(Path(__file__).resolve().parent.parent / "data" / "apps" / "firewall.py") + ":Firewall"
    out, _ = write(tmp_path, "mermaid", ["verify", app, "-t", "linear:2"])
    text = out.read_text()
    assert "Note over controller: at join: controller sends flow-mod" in text


def test_text_trace_is_the_report_section(tmp_path: Path) -> None:
    out, printed = write(tmp_path, "text")
    text = out.read_text()
    assert "VIOLATION 1: strict-direct-paths (always)" in text and "trace (18 events):" in text
    assert "  app            mac-learning (bug: delayed-direct-path)" in text
    section = printed[printed.index("VIOLATION 1"):printed.index("FAILED")].rstrip()
    assert text.rstrip().endswith(section)


def test_no_violation_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    result = CliRunner().invoke(main, ["verify", "route-flow", "-t", "linear:2", "--trace-out", str(out),
                                       "--trace-format", "json"])
    assert result.exit_code == 0 and not out.exists()
    assert "nothing written" in result.output


def test_bad_trace_format_is_input_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, [*MAC_BUG, "--trace-out", str(tmp_path / "x"), "--trace-format", "svg"])
    assert result.exit_code == 2


@pytest.mark.parametrize("where", ["missing/dir/t.json"])
def test_unwritable_trace_out_fails_before_the_search(tmp_path: Path, where: str) -> None:
    result = CliRunner().invoke(main, [*MAC_BUG, "--trace-out", str(tmp_path / where)])
    assert result.exit_code == 2 and "--trace-out" in result.output


def test_mermaid_follows_a_moved_host(tmp_path: Path) -> None:
    args = ["verify", "mac-learning", "-t", "linear:2", "-n", "1", "--bug", "host-unreachable", "--shortest"]
    out, _ = write(tmp_path, "mermaid", args)
    lines = out.read_text().splitlines()
    moved = next(line for line in lines if "h2 moves from s2:2 to s2:3" in line)
    assert moved.startswith("    h2->>s2: ")
    from_new_port = next(line for line in lines if "->>" in line and "from port 3" in line)
    assert from_new_port.startswith("    h2->>s2: ")  # the spare port, where h2 now is


def test_mermaid_draws_a_tie_choice_as_the_step_it_chooses_in(tmp_path: Path) -> None:
    # A packet step that takes another of the tied entries of equal priority (issue 29) was
    # drawn as an arrow from the switch to itself; it is the packet coming over its link.
    from tests_data_apps import path

    args = ["verify", path("equal_priority.py", "MirrorEth"), "-p", "delivery", "--shortest"]
    out, _ = write(tmp_path, "mermaid", args)
    text = out.read_text()
    choices = [line for line in text.splitlines() if "->>" in line and "leaves the choice to the switch" in line]
    assert choices, text
    assert all(not re.match(r"^    (\S+)->>\1: ", line) for line in choices), choices
