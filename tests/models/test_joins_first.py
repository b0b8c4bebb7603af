"""The start-up phase (``joins_first``): hosts act only once the switches have executed what the
app sent them at join and the app has handled their answers; by default the race with the
joins is explored (an OpenFlow 1.3 switch drops a frame that beats its table-miss entry).

The app is our own OpenFlow 1.3 learning switch (tests/data/apps/table_miss_switch.py), which
installs its table-miss entry at join as every Ryu OpenFlow 1.3 sample does."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from nice_attendre import verify
from nice_attendre.checkpoint import CheckpointError
from nice_attendre.errors import InputError
from nice_attendre.frontend.cli import main
from nice_attendre.models.app import App, Out
from nice_attendre.models.events import (ControllerHandle, HostSend, SwitchProcessCommand,
                                         SwitchProcessPacket)
from nice_attendre.models.messages import BarrierReply
from nice_attendre.models.network import STARTUP_JOINS_FIRST, STARTUP_RACE, Network, Options
from nice_attendre.models.packet import Match, ToController
from nice_attendre.models.scenario import Scenario
from nice_attendre.models.topology import load_topology
from nice_attendre.trace import Trace
from tests_data_apps import load, path

SWITCH = path("table_miss_switch.py", "TableMissSwitch")
TableMissSwitch = load("table_miss_switch.py", "TableMissSwitch")
PROTOCOLS = ("openflow", "openflow-b", "attendre")


def network(app: App[Any], topology: str = "linear:2", packets: int = 2, joins_first: bool = True) -> Network:
    return Network(Scenario.ping(load_topology(topology), packets), app, "openflow", Options(joins_first=joins_first))


def kinds(events: list[Any]) -> set[type]:
    return {type(event) for event in events}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_by_default_a_first_frame_beats_the_table_miss_entry(protocol: str) -> None:
    result = verify(SWITCH, topology="linear:2", packets=2, protocol=protocol)
    [found] = result.discoveries
    assert found.property == "no-black-holes"
    assert [type(e) for e in found.trace.events] == [HostSend, HostSend, SwitchProcessPacket]
    assert "there is no table-miss entry" in found.reason


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_with_joins_first_every_frame_arrives(protocol: str) -> None:
    result = verify(SWITCH, topology="linear:2", packets=2, protocol=protocol, joins_first=True)
    assert result.ok and result.complete, result.discoveries
    assert result.stats.transitions > 100  # the traffic was explored, not only the start-up


def test_the_buggy_variant_still_fails_delivery_with_joins_first() -> None:
    result = verify(SWITCH, topology="linear:2", packets=1, app_options={"bug": "no-flood"}, joins_first=True)
    [found] = result.discoveries
    assert found.property == "delivery"
    # the start-up first: both switches install their table-miss entry, then h1 sends
    assert list(found.trace.events[:3]) == [SwitchProcessCommand(1), SwitchProcessCommand(2), HostSend("h1")]


def test_no_host_acts_until_every_join_command_ran() -> None:
    net = network(TableMissSwitch())
    state = net.initial_states()[0]
    assert net.enabled(state) == [SwitchProcessCommand(1), SwitchProcessCommand(2)]
    state = Trace.from_events(net, [SwitchProcessCommand(2)]).final
    assert net.enabled(state) == [SwitchProcessCommand(1)]
    state = Trace.from_events(net, [SwitchProcessCommand(2), SwitchProcessCommand(1)]).final
    assert net.enabled(state) == [HostSend("h1")]


def test_without_the_option_hosts_send_from_the_first_step() -> None:
    net = network(TableMissSwitch(), joins_first=False)
    assert HostSend("h1") in net.enabled(net.initial_states()[0])


def test_once_traffic_started_hosts_act_while_commands_are_pending() -> None:
    net = network(TableMissSwitch(), topology="linear:1", packets=2)
    # h1's first frame reaches the controller, which floods it: s1 has a command pending
    state = Trace.from_events(net, [SwitchProcessCommand(1), HostSend("h1"), SwitchProcessPacket(1, 1),
                                    ControllerHandle(1)]).final
    assert net.value(state, "cmdq:1")
    assert HostSend("h1") in net.enabled(state)


class BarrierFirst(App[tuple[Any, ...]]):
    """OpenFlow 1.3: at join a barrier only; the table-miss entry when its reply arrives (a
    start-up that needs the controller to handle what the switches answer)."""

    openflow_version = "1.3"

    def initial_state(self) -> tuple[Any, ...]:
        return ()

    def on_switch_join(self, state: tuple[Any, ...], dpid: int, out: Out) -> tuple[Any, ...]:
        out.barrier(dpid, "joined")
        return state

    def on_barrier_reply(self, state: tuple[Any, ...], ev: BarrierReply, out: Out) -> tuple[Any, ...]:
        out.flow_mod(ev.dpid, Match.of(), [ToController()], priority=0)
        return state + (ev.dpid,)


def test_the_start_up_includes_the_answers_to_join_commands_and_what_the_app_sends_then() -> None:
    net = network(BarrierFirst(), topology="linear:1", packets=1)
    state = net.initial_states()[0]
    for event in (SwitchProcessCommand(1), ControllerHandle(1), SwitchProcessCommand(1)):
        assert net.enabled(state) == [event]  # no host event yet
        state = Trace.from_events(net, [event], initial=state).final
    assert net.enabled(state) == [HostSend("h1")]


def test_a_start_up_of_answers_and_replies_makes_no_black_hole() -> None:
    app = BarrierFirst()
    assert verify(app, topology="linear:1", packets=1, properties="no-black-holes").discoveries
    assert verify(app, topology="linear:1", packets=1, properties="no-black-holes", joins_first=True).ok


def test_the_option_must_be_a_boolean() -> None:
    with pytest.raises(InputError, match="joins_first must be True or False"):
        Options(joins_first="yes")  # type: ignore[arg-type]


def test_the_options_say_the_start_up_semantics() -> None:
    assert Options().describe_startup() == STARTUP_RACE
    assert Options(joins_first=True).describe_startup() == STARTUP_JOINS_FIRST
    assert STARTUP_RACE == "hosts may send while switches join (the table-miss race is real)"
    assert STARTUP_JOINS_FIRST == "traffic after every switch has joined and executed its join commands"


def counts(result: Any) -> tuple[int, int, bool]:
    return result.stats.transitions, result.stats.unique_states, result.ok


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_search_counts_the_same_with_joins_first(protocol: str) -> None:
    options = dict(topology="linear:2", packets=2, protocol=protocol, joins_first=True)
    expected = counts(verify(SWITCH, **options))
    assert counts(verify(SWITCH, fingerprint=True, **options)) == expected
    assert counts(verify(SWITCH, shortest=True, **options)) == expected
    assert counts(verify(SWITCH, memo=False, **options)) == expected
    assert counts(verify(SWITCH, workers=2, **options)) == expected


def test_a_checkpointed_search_with_joins_first_resumes_to_the_same_counts(tmp_path: Path) -> None:
    options = dict(topology="linear:2", packets=2, joins_first=True)
    whole = verify(SWITCH, **options)
    checkpoint = tmp_path / "run.ckpt"
    first = verify(SWITCH, max_transitions=100, checkpoint=checkpoint, **options)
    assert not first.complete
    rest = verify(SWITCH, resume=checkpoint, **options)
    assert counts(rest) == counts(whole)


def test_a_checkpoint_resumes_only_with_the_same_start_up(tmp_path: Path) -> None:
    checkpoint = tmp_path / "run.ckpt"
    verify(SWITCH, topology="linear:2", packets=2, joins_first=True, max_transitions=100, checkpoint=checkpoint)
    with pytest.raises(CheckpointError, match="another run"):
        verify(SWITCH, topology="linear:2", packets=2, resume=checkpoint)


def saved_trace(tmp_path: Path, *options: str) -> Path:
    out = tmp_path / "trace.json"
    args = ["verify", SWITCH, "-t", "linear:2", "-n", "1", "--shortest", *options,
            "--trace-out", str(out), "--trace-format", "json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    return out


def replay(trace: Path) -> Any:
    return CliRunner().invoke(main, ["replay", "--app", SWITCH, str(trace)])


def test_a_trace_saved_with_joins_first_replays_with_it(tmp_path: Path) -> None:
    trace = saved_trace(tmp_path, "--joins-first", "--bug", "no-flood")
    assert json.loads(trace.read_text())["build"]["joins_first"] is True
    result = replay(trace)
    assert result.exit_code == 1, result.output
    assert result.output.splitlines()[-1] == "trace reproduced: property delivery violated at step 5"


def test_replay_builds_the_start_up_the_trace_names(tmp_path: Path) -> None:
    # the race: h1 sends first and s1 drops the frame; the same trace under --joins-first
    # diverges at once (no host acts before the join commands ran)
    trace = saved_trace(tmp_path)
    data = json.loads(trace.read_text())
    assert data["build"]["joins_first"] is False
    assert replay(trace).exit_code == 1
    data["build"]["joins_first"] = True
    trace.write_text(json.dumps(data))
    result = replay(trace)
    assert result.exit_code == 4, result.output
    assert "step 1: event `h1 sends` is not enabled here" in result.output
