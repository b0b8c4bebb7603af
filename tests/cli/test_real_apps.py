"""Real controller apps, run as a user runs them (issue 28, section 3).

Our own OpenFlow 1.3 learning switch (tests/data/apps/table_miss_switch.py, written the way
Ryu's samples are) on trees and on the triangle (tests/data/topologies/triangle.edges, the
smallest cycle). Ryu's own sample apps cannot be part of the repository: their tests run only
when they were fetched into /tmp/ryu-apps (see docs/real-apps.md) and are skipped otherwise."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from nice_attendre.frontend.cli import main
from tests_data_apps import path

SWITCH = path("table_miss_switch.py", "TableMissSwitch")
TRIANGLE = str(Path(__file__).resolve().parent.parent / "data" / "topologies" / "triangle.edges")
RYU = Path("/tmp/ryu-apps")
PROTOCOLS = ("openflow", "openflow-b", "attendre")
TREE_PROPERTIES = ("no-forwarding-loops", "no-forgotten-packets", "no-stale-routes", "no-duplicates")
needs_ryu = pytest.mark.skipif(not (RYU / "simple_switch_13.py").exists(),
                               reason="Ryu's sample apps are not in /tmp/ryu-apps (see docs/real-apps.md)")


def verify(app: str, topology: str, *options: str) -> Result:
    return CliRunner().invoke(main, ["verify", app, "-t", topology, *options])


def properties(*names: str) -> list[str]:
    return [option for name in names for option in ("-p", name)]


def moved(output: str) -> list[str]:
    """The trace's lines where the app's MAC table changes a port it had learned (``a -> b``)."""
    return [line.strip() for line in output.splitlines() if re.search(r"app state: .*: \d+ -> \d+$", line)]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_flooding_learning_switch_loops_on_the_triangle(protocol: str) -> None:
    result = verify(SWITCH, TRIANGLE, "-n", "1", "-P", protocol, "--joins-first", "--shortest")
    assert result.exit_code == 1, result.output
    assert result.output.splitlines()[-1] == "FAILED: no-forwarding-loops"
    assert "topology       triangle.edges (3 switches, hosts h1, h2)" in result.output
    # the flood comes back to s1 around the cycle and the app learns h1 behind the wrong port
    assert any("'h1'" in line for line in moved(result.output)), result.output


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_learning_switch_passes_the_tree_properties_on_a_path(protocol: str) -> None:
    result = verify(SWITCH, "linear:3", "-n", "2", "-P", protocol, *properties(*TREE_PROPERTIES))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "OK: no property violated"


SAMPLES = {"simple_switch": "SimpleSwitch", "simple_switch_12": "SimpleSwitch12", "simple_switch_13": "SimpleSwitch13",
           "simple_switch_14": "SimpleSwitch14", "simple_switch_15": "SimpleSwitch15",
           "example_switch_13": "ExampleSwitch13", "cbench": "Cbench"}
LEARNING = tuple(app for app in SAMPLES if app != "cbench")


def ryu(app: str) -> str:
    return f"{RYU / app}.py:{SAMPLES[app]}"


@needs_ryu
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_simple_switch_13_delivers_after_the_joins(protocol: str) -> None:
    result = verify(ryu("simple_switch_13"), "linear:2", "-n", "2", "-P", protocol, "--joins-first", "-p", "delivery")
    assert result.exit_code == 0, result.output
    assert "start-up       traffic after every switch has joined and executed its join commands" in result.output
    assert result.output.splitlines()[-1] == "OK: no property violated"


@needs_ryu
def test_simple_switch_13_races_its_table_miss_entry_by_default() -> None:
    result = verify(ryu("simple_switch_13"), "linear:2", "-n", "2", "-p", "no-black-holes", "--shortest")
    assert result.exit_code == 1, result.output
    assert "start-up       hosts may send while switches join (the table-miss race is real)" in result.output
    assert "there is no table-miss entry (OpenFlow 1.3 drops it)" in result.output


@needs_ryu
def test_simple_switch_passes_its_defaults() -> None:
    # OpenFlow 1.0: a miss is a packet-in, there is no table-miss entry to race
    result = verify(ryu("simple_switch"), "linear:3", "-n", "2")
    assert result.exit_code == 0, result.output
    assert "app            SimpleSwitch (Ryu app, OpenFlow 1.0)" in result.output


@needs_ryu
@pytest.mark.parametrize("app", LEARNING)
def test_ryu_learning_switches_loop_on_the_triangle(app: str) -> None:
    result = verify(ryu(app), TRIANGLE, "-n", "1", "--joins-first", "--shortest")
    assert result.exit_code == 1, result.output
    assert result.output.splitlines()[-1] == "FAILED: no-forwarding-loops"
    assert any("'00:00:00:00:00:01'" in line for line in moved(result.output)), result.output


@needs_ryu
@pytest.mark.parametrize("app", LEARNING)
def test_ryu_learning_switches_pass_the_tree_properties(app: str) -> None:
    result = verify(ryu(app), "linear:3", "-n", "2", "--joins-first", *properties(*TREE_PROPERTIES, "delivery"))
    assert result.exit_code == 0, result.output


@needs_ryu
def test_cbench_never_releases_what_it_buffers() -> None:
    result = verify(ryu("cbench"), "linear:1", "-n", "1", "--joins-first", "-p", "no-forgotten-packets")
    assert result.exit_code == 1, result.output
    assert "s1 still holds data h1#0 [h1->h2]" in result.output
