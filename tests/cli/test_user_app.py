"""A user's own app, named by path: from the command line and from Python; replaying a trace."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from nice_attendre import AppLoadError, InputError, ModelError, Trace, UnknownNameError, assert_holds, verify
from nice_attendre.apps.route_flow import RouteFlow
from nice_attendre.frontend.cli import main
from nice_attendre.frontend.loading import load_app, parse_options, resolve_app_class
from nice_attendre.models.app import App

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLE = ROOT / "examples" / "proactive.py"
SPEC = f"{EXAMPLE}:ProactiveRouting"
APPS = ROOT / "tests" / "data" / "apps"
#: (transitions, unique states, revisits, max depth) of ProactiveRouting on linear:3 with 2 packets.
PROACTIVE_COUNTS = (2262, 834, 1429, 30)
FORGOTTEN_REASON = "s1 still holds data h1#0 [h1->h2]; s1 still holds data h1#1 [h1->h2]"


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


def proactive_class() -> type:
    """ProactiveRouting imported the plain Python way (not through nice_attendre's loader)."""
    spec = importlib.util.spec_from_file_location("proactive_example_for_tests", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ProactiveRouting


# ---- from the command line ------------------------------------------------------------------

def test_proactive_from_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = cli("verify", SPEC, "--topology", "linear:3", "--packets", "2", "--json", str(out))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "  app            ProactiveRouting"
    assert "  transitions           2,262" in lines
    assert "  unique states           834" in lines
    assert lines[-1] == "OK: no property violated"
    data = json.loads(out.read_text())
    assert (data["transitions"], data["unique_states"], data["revisits"], data["max_depth"]) == PROACTIVE_COUNTS
    assert data["complete"] is True and data["ok"] is True


def test_proactive_without_early_packets_from_the_cli() -> None:
    result = cli("verify", SPEC, "--topology", "linear:3", "--packets", "2", "-o", "early_packets=false")
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    start = lines.index("VIOLATION 1: no-forgotten-packets (at quiescence)")
    assert lines[start + 1] == f"  {FORGOTTEN_REASON}"
    assert lines[start + 2] == "  trace (12 events):"
    # step 0: the switches join and the app installs its routes (the commands it sent then)
    assert lines[start + 3] == "   0. initial state:"
    assert lines[start + 4] == "      controller: ProactiveRouting.on_switch_join handles switch s1 joined"
    assert lines[start + 5] == "      controller sends flow-mod {eth_dst=h1} -> output:1 to s1"
    assert lines[start + 13] == "   1. h1 sends data h1#0 [h1->h2] to s1:1"
    assert lines[start + 24] == "  12. controller: ProactiveRouting.on_packet_in handles packet-in(s1, port 1, h1#1)"
    assert lines[-1] == "FAILED: no-forgotten-packets, delivery"


# ---- from Python ----------------------------------------------------------------------------

def test_readme_three_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the README's relative path, from the repository root
    assert_holds(verify("examples/proactive.py:ProactiveRouting", topology="linear:3", packets=2))


def test_proactive_from_python_matches_the_cli() -> None:
    result = verify(SPEC, topology="linear:3", packets=2)
    assert result.ok and result.complete
    assert result.stop_reason is None
    assert result.stats.counts() == PROACTIVE_COUNTS
    assert result.discoveries == ()


def test_proactive_without_early_packets_from_python() -> None:
    result = verify(SPEC, topology="linear:3", packets=2, app_options={"early_packets": False})
    assert not result.ok
    assert [d.property for d in result.discoveries] == ["no-forgotten-packets", "delivery"]
    found = result.discovery("no-forgotten-packets")
    assert found is not None and found.reason == FORGOTTEN_REASON
    assert len(found.trace) == 12


def test_app_class_object() -> None:
    cls = proactive_class()
    assert verify(cls, topology="linear:3", packets=2).stats.counts() == PROACTIVE_COUNTS
    bad = verify(cls, topology="linear:3", packets=2, app_options={"early_packets": False})
    assert [d.property for d in bad.discoveries] == ["no-forgotten-packets", "delivery"]


def test_app_instance() -> None:
    cls = proactive_class()
    assert verify(cls(), topology="linear:3", packets=2).stats.counts() == PROACTIVE_COUNTS
    bad = verify(cls(early_packets=False), topology="linear:3", packets=2)
    assert [d.property for d in bad.discoveries] == ["no-forgotten-packets", "delivery"]
    assert bad.discoveries[0].reason == FORGOTTEN_REASON


def test_app_instance_with_options_is_an_input_error() -> None:
    with pytest.raises(InputError, match=r"^app options need an app name or class, not an instance$"):
        verify(proactive_class()(), app_options={"early_packets": False})


class MyRouteFlow(RouteFlow):
    """A subclass defined in a test file: the same behaviour as route-flow."""


def test_subclass_defined_in_a_test_gives_route_flow_counts() -> None:
    result = verify(MyRouteFlow, topology="linear:3", packets=2)
    assert result.stats.counts() == (13107, 4934, 8174, 40)  # route-flow's pinned counts
    assert result.system.app.describe() == "route-flow"


def test_raising_handler_from_python() -> None:
    result = verify(f"{APPS / 'lookup_routing.py'}:LookupRouting")
    [found] = result.discoveries
    assert found.property == "app-exception"
    assert found.reason == "LookupRouting.on_packet_in raised KeyError: 'h2' (handling packet-in(s1, port 1, h1#0))"
    assert len(found.trace) == 3


def test_errors_from_python() -> None:
    with pytest.raises(UnknownNameError, match=r"did you mean 'route-flow'\?"):
        verify("route-flw")
    with pytest.raises(AppLoadError, match=r"failed: RuntimeError: this app file is broken on purpose$"):
        verify(f"{APPS / 'import_fails.py'}:Broken")
    with pytest.raises(AppLoadError, match=r"is not an app"):
        verify(dict)
    with pytest.raises(InputError, match=r"^packets must be a whole number from 0 to 1000, got -1$"):
        verify("route-flow", packets=-1)
    with pytest.raises(InputError, match=r"^packets must be a whole number from 0 to 1000, got 10{20}$"):
        verify("route-flow", packets=10**20)


def test_loading_a_file_twice_gives_the_same_class() -> None:
    assert resolve_app_class(SPEC) is resolve_app_class(SPEC)
    assert issubclass(resolve_app_class(SPEC), App)
    assert isinstance(load_app(SPEC, {"early_packets": False}), resolve_app_class(SPEC))


def test_parse_options_values() -> None:
    assert parse_options(["a=1", "b=true", "c=FALSE", "d=none", "e=0.5", "f=-2", "g=-2.5", "h=1.2.3",
                          "i=inf", "j=", "k=x=y", " l =z"]) == {
        "a": 1, "b": True, "c": False, "d": None, "e": 0.5, "f": -2, "g": -2.5, "h": "1.2.3",
        "i": "inf", "j": "", "k": "x=y", "l": "z"}


# ---- a counterexample replays through the library --------------------------------------------

@pytest.fixture(scope="module")
def buggy_result():
    return verify("route-flow", topology="linear:2", app_options={"bug": "forget-last-hop"})


def test_trace_replays_to_its_final_state(buggy_result) -> None:
    d = buggy_result.discoveries[0]
    assert d.property == "no-forgotten-packets"
    final = d.trace.replay(buggy_result.system)
    assert final == d.trace.final
    assert list(buggy_result.system.enabled(final)) == []  # quiescent: where the property is checked


def test_trace_rebuilds_from_its_events(buggy_result) -> None:
    d = buggy_result.discoveries[0]
    rebuilt = Trace.from_events(buggy_result.system, list(d.trace.events))
    assert rebuilt == d.trace
    assert rebuilt.final == d.trace.final
    assert len(rebuilt) == 6
    assert [str(event) for event in rebuilt.events] == [
        "h1 sends", "s1 processes a packet from port 1", "controller handles a message from s1",
        "s1 processes a command", "s2 processes a packet from port 1", "controller handles a message from s2"]


def test_trace_does_not_replay_on_another_system(buggy_result) -> None:
    other = verify("route-flow", topology="linear:3", max_transitions=1)
    with pytest.raises(ModelError, match=r"^trace does not start in an initial state of this system$"):
        buggy_result.discoveries[0].trace.replay(other.system)
