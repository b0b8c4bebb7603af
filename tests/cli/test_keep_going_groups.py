"""`--keep-going` reports one group per property: the count and the shortest trace found;
the JSON keeps every violation and groups them in `violations_by_property`."""
from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from nice_attendre import verify
from nice_attendre.frontend.cli import main
from nice_attendre.frontend.report import text_report, violation_groups

ARGS = ["verify", "mac-learning", "-t", "linear:2", "-n", "2", "--bug", "delayed-direct-path", "--keep-going"]


def test_text_report_groups_by_property(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = CliRunner().invoke(main, [*ARGS, "--json", str(out)])
    assert result.exit_code == 1
    headings = [line for line in result.output.splitlines() if line.startswith("VIOLATION")]
    data = json.loads(out.read_text())
    count = sum(1 for v in data["violations"] if v["property"] == "strict-direct-paths")
    assert count > 1
    assert headings == [f"VIOLATION 1: strict-direct-paths (always): {count:,} violations; "
                        "first (shortest found) trace below"]
    assert len(re.findall(r"trace \(\d+ events\):", result.output)) == 1
    shown = int(re.search(r"trace \((\d+) events\)", result.output).group(1))  # type: ignore[union-attr]
    lengths = [len(v["trace"]) for v in data["violations"] if v["property"] == "strict-direct-paths"]
    assert shown == min(lengths)
    [group] = data["violations_by_property"]
    assert group["property"] == "strict-direct-paths" and group["count"] == count
    assert len(data["violations"][group["shortest"]]["trace"]) == shown


def test_one_violation_per_property_keeps_the_plain_heading() -> None:
    result = CliRunner().invoke(main, ["verify", "route-flow", "-t", "linear:2", "--bug", "forget-last-hop"])
    assert "VIOLATION 1: no-forgotten-packets (at quiescence)\n" in result.output
    assert "violations;" not in result.output


def test_groups_keep_the_order_first_violated() -> None:
    result = verify("route-flow", topology="linear:2", app_options={"bug": "forget-last-hop"}, keep_going=True)
    order = list(dict.fromkeys(d.property for d in result.discoveries))
    groups = violation_groups(result.discoveries)
    assert [d.property for d, _ in groups] == order
    assert sum(n for _, n in groups) == len(result.discoveries)
    text = text_report(result, [], None)
    assert [line.split(":")[1].split()[0] for line in text.splitlines() if line.startswith("VIOLATION")] == order
