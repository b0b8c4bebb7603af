"""The README's walkthrough of a user's own app runs as it says (examples/load_balancer*)."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from nice_attendre import assert_holds, verify
from nice_attendre.frontend.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
APP = f"{EXAMPLES / 'load_balancer.py'}:LoadBalancer"
SCENARIO = str(EXAMPLES / "load_balancer.toml")
AFFINITY = f"{EXAMPLES / 'load_balancer_properties.py'}:AFFINITY"


def test_the_round_robin_balancer_fails_as_the_readme_shows() -> None:
    result = CliRunner().invoke(main, ["verify", APP, "--bug", "round-robin", "-t", "star:4",
                                       "--scenario", SCENARIO, "-p", AFFINITY])
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    start = lines.index("VIOLATION 1: flow-affinity (always)")
    assert lines[start + 1] == "  h2 got h1#0 (port 1000); h3 got h1#1 (port 1000)"
    assert lines[-1] == "FAILED: flow-affinity"


def test_the_fixed_balancer_passes_from_pytest() -> None:
    result = verify(APP, topology="star:4", scenario=SCENARIO, properties=[AFFINITY, "no-black-holes"])
    assert_holds(result)  # as the README writes it
    assert result.ok and result.complete


def test_the_round_robin_balancer_passes_under_attendre() -> None:
    assert verify(APP, topology="star:4", scenario=SCENARIO, protocol="attendre", properties=[AFFINITY],
                  app_options={"bug": "round-robin"}).ok
