"""``--coverage`` with ``--simulate`` (issues 31 and 32): the walks' coverage of the app's code
is the same in one process and merged from two worker processes (a seeded run walks the same
walks whichever worker runs them)."""
from __future__ import annotations

from test_coverage_cli import FIREWALL, at_root, block, run, summaries  # noqa: F401 - at_root is a fixture

WALKS = ("--simulate", "--seed", "3", "--walks", "300", "--coverage", "--flow", "h1->h2:proto=tcp,dport=22",
         "--flow", "h1->h2")


def test_walk_workers_coverage_is_merged_and_equals_one_process() -> None:
    alone = run("verify", FIREWALL, *WALKS)
    workers = run("verify", FIREWALL, *WALKS, "--workers", "2")
    assert alone.exit_code == workers.exit_code == 3, workers.output  # walks never say OK
    merged = block(workers.stdout)
    assert "    (merged from 2 of 2 worker processes)" in merged
    found = summaries(merged)
    assert found == summaries(block(alone.stdout))
    assert found["CoverageFirewall.on_packet_in"][0] > 0, found  # the handlers ran in the workers, and count
    assert [line for line in merged if "merged" not in line] == block(alone.stdout)
