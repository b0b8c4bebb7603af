"""A scenario made of flows is bounded as ``--packets`` is: at most MAX_PACKETS packets in
all and MAX_MOVES moves, refused (exit 2, one line) before the scenario is built, so that a
million flows cannot grow memory without bound before the search and its limits start."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from nice_attendre.errors import InputError
from nice_attendre.frontend.api import MAX_PACKETS as CLI_PACKETS
from nice_attendre.frontend.cli import main
from nice_attendre.frontend.exit_codes import ExitCode
from nice_attendre.models.flows import Flow
from nice_attendre.models.scenario import MAX_MOVES, MAX_PACKETS, Scenario
from nice_attendre.models.topology import load_topology

LINEAR_2 = load_topology("linear:2")


def test_the_bound_is_that_of_packets() -> None:
    assert MAX_PACKETS == CLI_PACKETS


def test_a_million_flows_are_refused_before_any_is_parsed() -> None:
    class Counting(list):  # counts how many flows were looked at
        taken = 0

        def __iter__(self):  # type: ignore[no-untyped-def]
            for item in super().__iter__():
                Counting.taken += 1
                yield item

    flows = Counting(["h1->h2:packets=1000"] * 1_000_000)
    with pytest.raises(InputError, match=r"^a scenario may send at most 1000 packets in all \(as --packets\), "
                                         r"and it has 1000000 flows$"):
        Scenario.from_flows(LINEAR_2, flows)
    assert Counting.taken == 0


def test_flows_that_send_too_many_packets_in_all_are_refused() -> None:
    with pytest.raises(InputError, match=r"at most 1000 packets in all \(as --packets\), and its 2 flows send 1001$"):
        Scenario.from_flows(LINEAR_2, [Flow("h1", "h2", 1000), Flow("h2", "h1", 1)])


def test_a_scenario_at_the_bound_is_built() -> None:
    scenario = Scenario.from_flows(LINEAR_2, [Flow("h1", "h2", 600), Flow("h2", "h1", 400)])
    assert sum(len(spec.script) for spec in scenario.hosts) == MAX_PACKETS
    scenario = Scenario.from_flows(LINEAR_2, ["h1->h2"] * MAX_PACKETS)
    assert len(scenario.spec("h1").streams) == MAX_PACKETS


def test_too_many_moves_are_refused() -> None:
    with pytest.raises(InputError, match=f"at most {MAX_MOVES} moves, got {MAX_MOVES + 1}$"):
        Scenario.from_flows(LINEAR_2, ["h1->h2"], [("h2", "s1")] * (MAX_MOVES + 1))


def test_the_command_line_refuses_a_scenario_file_of_too_many_flows(tmp_path: Path) -> None:
    scenario = tmp_path / "many.toml"
    scenario.write_text('[[flow]]\nfrom = "h1"\nto = "h2"\npackets = 1000\n' * 1000)
    result = CliRunner().invoke(main, ["verify", "route-flow", "-t", "linear:2", "--scenario", str(scenario)])
    assert result.exit_code == ExitCode.INPUT, result.output
    assert result.stderr.strip() == ("Error: a scenario may send at most 1000 packets in all (as --packets), and its "
                                     "1000 flows send 1000000")


def test_the_command_line_refuses_too_many_flow_options() -> None:
    flows = [arg for _ in range(1001) for arg in ("--flow", "h1->h2")]
    result = CliRunner().invoke(main, ["verify", "route-flow", "-t", "linear:2", *flows])
    assert result.exit_code == ExitCode.INPUT, result.output
    assert "at most 1000 packets in all (as --packets), and it has 1001 flows" in result.stderr
