"""What an app handler changed in its state, as trace lines (models/app_diff.py), and the
lines in narrated traces."""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from nice_attendre import verify
from nice_attendre.models.app_diff import state_changes
from nice_attendre.frontend.report import CheckedNarrator, text_report


class Learned(NamedTuple):
    ports: tuple = ()
    passed: frozenset = frozenset()


@dataclass(frozen=True)
class Counter:
    table: tuple = ()
    total: int = 0


def test_pairs_tuple_is_a_mapping() -> None:
    before = Learned()
    after = Learned(((("s1", "h1"), 1),), frozenset({(1, "h1", "h2")}))
    assert state_changes(before, after) == ["ports += {('s1', 'h1'): 1}", "passed += {(1, 'h1', 'h2')}"]


def test_changed_and_removed_keys_and_scalars() -> None:
    before = Counter(((1, 1), (2, 5)), 3)
    after = Counter(((1, 2), (3, 0)), 4)
    assert state_changes(before, after) == ["table += {3: 0}", "table -= {2}", "table[1]: 1 -> 2", "total: 3 -> 4"]


def test_plain_mapping_set_and_scalar_roots() -> None:
    assert state_changes({"a": {"x": 1}}, {"a": {"x": 1, "y": 2}}) == ["a += {'y': 2}"]
    assert state_changes(frozenset({1}), frozenset({2})) == ["+= {2}", "-= {1}"]
    assert state_changes(1, 2) == ["1 -> 2"]
    assert state_changes({3: 1}, {3: 2}) == ["[3]: 1 -> 2"]
    assert state_changes(Learned(), Learned()) == []


def test_ryu_frozen_dicts() -> None:
    before = (("mac_to_port", ("dict", ((1, ("dict", ())),))),)
    after = (("mac_to_port", ("dict", ((1, ("dict", (("h1", 1),))),))),)
    assert state_changes(dict(before), dict(after)) == ["mac_to_port[1] += {'h1': 1}"]


def test_long_changes_are_cut() -> None:
    lines = state_changes({}, {i: i for i in range(3)}, limit=2) + state_changes(
        frozenset(), frozenset(range(3)), limit=2)
    assert lines == ["+= {0: 0, 1: 1, 2: 2}", "+= {0, 1, 2}"]
    many = state_changes(Counter((), 0), Counter(((1, 1),), 1), limit=1)
    assert many == ["... and 2 more changes"]


def test_mac_learning_trace_shows_app_state_diff() -> None:
    result = verify("mac-learning", topology="linear:2", packets=2, app_options={"bug": "delayed-direct-path"},
                    shortest=True)
    net = result.system
    text = text_report(result, [], CheckedNarrator(result, net.narrate, net.narrate_initial))
    assert "      app state: ports += {(1, 'h1'): 1}" in text
    assert "      app state: passed += {(1, 'h1', 'h2')}" in text
    # the line follows the handler call it describes, before the commands it sent
    lines = text.splitlines()
    at = lines.index("      app state: ports += {(1, 'h1'): 1}")
    assert "MacLearning.on_packet_in handles packet-in(s1, port 1, h1#0)" in lines[at - 1]
    assert lines[at + 2].strip().startswith("controller sends packet-out")


def test_join_commands_are_step_zero() -> None:
    from pathlib import Path

    app = str(Path(__file__).resolve().parent.parent / "data" / "apps" / "firewall.py") + ":Firewall"
    result = verify(app, topology="linear:2")
    net = result.system
    text = text_report(result, [], CheckedNarrator(result, net.narrate, net.narrate_initial))
    lines = text.splitlines()
    zero = next(i for i, line in enumerate(lines) if line.strip() == "0. initial state:")
    assert "Firewall.on_switch_join handles switch s1 joined" in lines[zero + 1]
    assert lines[zero + 2].strip().startswith("controller sends flow-mod") and lines[zero + 2].endswith("to s1")
    assert lines.index(next(line for line in lines if line.strip().startswith("1. "))) > zero + 2


def test_no_step_zero_when_join_does_nothing() -> None:
    result = verify("route-flow", topology="linear:2", app_options={"bug": "forget-last-hop"})
    net = result.system
    text = text_report(result, [], CheckedNarrator(result, net.narrate, net.narrate_initial))
    assert "initial state:" not in text


def test_json_report_has_step_zero(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json
    from pathlib import Path

    from click.testing import CliRunner

    from nice_attendre.frontend.cli import main

    app = str(Path(__file__).resolve().parent.parent / "data" / "apps" / "firewall.py") + ":Firewall"
    out = tmp_path / "r.json"
    assert CliRunner().invoke(main, ["verify", app, "-t", "linear:2", "--json", str(out)]).exit_code == 1
    initial = json.loads(out.read_text())["violations"][0]["initial"]
    assert initial[0] == "controller: Firewall.on_switch_join handles switch s1 joined"
    assert initial[1].startswith("controller sends flow-mod") and initial[1].endswith("to s1")
