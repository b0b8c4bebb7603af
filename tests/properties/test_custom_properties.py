"""Users' own properties: objects and names mixed, from files, shipped by apps, over a readable view."""
from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from nice_attendre import InputError, Property, UnknownNameError, verify
from nice_attendre.frontend.api import build
from nice_attendre.frontend.cli import main
from nice_attendre.models.app import App, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output
from nice_attendre.models.scenario import HostSpec, Scenario, host_header
from nice_attendre.models.topology import Topology
from nice_attendre.models.view import View
from nice_attendre.properties.custom import PropertySpec, always, at_quiescence, on_transition
from tests_data_apps import APPS, path

POLICIES = APPS.parent / "properties" / "policies.py"


def firewall(bug: str | None = None) -> Any:
    from tests_data_apps import load

    cls = load("firewall.py", "Firewall")

    class Firewall(cls):  # type: ignore[misc, valid-type]
        """The test firewall, with the client opening ports 80 and 22."""

        def scenario(self, topology: Topology, packets: int, sender: str | None = None,
                     receiver: str | None = None) -> Scenario:
            client = ((host_header("h2", "h1", 1000, 80), "data"), (host_header("h2", "h1", 1001, 22), "data"))
            return Scenario(topology, (HostSpec("h1"), HostSpec("h2", client, replies=False)))

    return Firewall(bug)


def only_web(view: View) -> bool:
    return all(r.header.tp_dst == 80 for r in view.hosts["h1"].received_from("h2"))


ONLY_WEB = always("only-web", only_web, "h1 gets only port-80 traffic from h2")


# ---- what verify accepts ----------------------------------------------------------------------

def test_a_single_property_object_works() -> None:
    assert verify(firewall(), properties=ONLY_WEB).ok
    caught = verify(firewall("open"), properties=ONLY_WEB)
    assert [d.property for d in caught.discoveries] == ["only-web"]


def test_a_single_name_is_one_name_not_letters() -> None:
    run = build("route-flow", properties="no-black-holes")
    assert [p.name for p in run.properties] == ["no-black-holes", "app-exception", "app-nondeterminism"]
    assert verify("route-flow", properties="no-black-holes").ok


def test_names_and_objects_mixed() -> None:
    run = build(firewall(), properties=["no-black-holes", ONLY_WEB, "no-forgotten-packets"])
    assert [p.name for p in run.properties] == ["no-black-holes", "only-web", "no-forgotten-packets",
                                                "app-exception", "app-nondeterminism"]
    assert "no-black-holes" in run.network.options.monitors


def test_a_core_property_object_reads_raw_states() -> None:
    seen: list[Any] = []
    raw = Property.always("raw", lambda state: seen.append(state) or True)
    assert verify("route-flow", topology="linear:1", properties=[raw]).ok
    assert seen and isinstance(seen[0], tuple)


@pytest.mark.parametrize("bad,message", [
    (42, "properties must be names or property objects, got int"),
    ([42], "not a property: 42"),
    (["no-such-thing"], "unknown property 'no-such-thing'"),
    ([ONLY_WEB, always("only-web", lambda view: True)], "two different properties are named 'only-web'"),
])
def test_bad_properties_are_input_errors(bad: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        verify("route-flow", properties=bad)


def test_an_unknown_name_suggests_a_close_one() -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'no-black-holes'"):
        verify("route-flow", properties=["no-black-hole"])


# ---- from files, on the command line ---------------------------------------------------------

def cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def test_property_from_a_file_on_the_command_line() -> None:
    spec = path("firewall.py", "Firewall")
    ok = cli("verify", spec, "-t", "linear:2", "-p", f"{POLICIES}:ONLY_WEB", "-p", "no-black-holes")
    assert ok.exit_code == 0, ok.output
    assert "  properties     only-web, no-black-holes, app-exception, app-nondeterminism" in ok.stdout.splitlines()


def test_a_file_may_export_a_list_of_properties() -> None:
    run = build("route-flow", properties=[f"{POLICIES}:BOTH"])
    assert [p.name for p in run.properties] == ["only-web", "nothing-left", "app-exception", "app-nondeterminism"]


@pytest.mark.parametrize("spec,message", [
    (f"{POLICIES}:ONLY_WEBB", "has no property 'ONLY_WEBB'; did you mean 'ONLY_WEB'?"),
    (f"{POLICIES}:NOT_A_PROPERTY", "is not a property"),
    ("/no/such/file.py:X", "not found"),
])
def test_bad_property_files_are_one_line_errors(spec: str, message: str) -> None:
    result = cli("verify", "route-flow", "-p", spec)
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("Error: ") and message in line


# ---- a predicate that raises -------------------------------------------------------------------

def test_a_predicate_that_raises_is_a_violation_naming_the_property() -> None:
    result = cli("verify", "route-flow", "-t", "linear:1", "-p", f"{POLICIES}:BROKEN")
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    start = lines.index("VIOLATION 1: broken (always)")
    assert lines[start + 1] == "  the property 'broken' raised KeyError: 'nobody'"
    assert lines[start + 2] == "  trace (0 events):"
    assert "Traceback" not in result.output


def _spins_after_delivery(view: View) -> bool:
    while view.hosts["h2"].received_from("h1"):
        pass
    return True


def _spins_on_the_step_that_delivers(before: View, event: Any, after: View) -> bool:
    while after.hosts["h2"].received_from("h1") and not before.hosts["h2"].received_from("h1"):
        pass
    return True


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("spec", [always("spins", _spins_after_delivery),
                                  on_transition("spins", _spins_on_the_step_that_delivers)],
                         ids=["always", "on-transition"])
def test_a_predicate_stuck_in_a_loop_is_a_violation_from_python(spec: PropertySpec, workers: int) -> None:
    result = verify("route-flow", topology="linear:2", properties=[spec, "no-black-holes"], workers=workers,
                    max_handler_seconds=0.3)
    (found,) = result.discoveries
    assert (found.property, found.reason) == (
        "spins", "the property 'spins' did not return within 0.3 s (stuck in a loop or waiting?)")
    assert found.trace is not None and found.trace.steps


# ---- apps that ship their own properties --------------------------------------------------------

class RoutingWithPolicy(App[None]):
    """route-flow-like, shipping a property of its own and naming it in its defaults."""

    properties = {"h2-hears-from-h1": at_quiescence(
        "h2-hears-from-h1", lambda view: bool(view.hosts["h2"].received_from("h1")), "h1 reaches h2")}
    default_properties = ("no-forgotten-packets", "h2-hears-from-h1")

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        port = out.topology.next_port(ev.dpid, ev.packet.hdr.eth_dst)
        out.flow_mod(ev.dpid, Match.exact(ev.packet.hdr), [Output(port)], buffer_id=ev.buffer_id)
        return state


def test_an_app_ships_its_properties_by_name() -> None:
    run = build(RoutingWithPolicy(), topology="linear:2")
    assert [p.name for p in run.properties] == ["no-forgotten-packets", "h2-hears-from-h1", "app-exception",
                                                "app-nondeterminism"]
    assert verify(RoutingWithPolicy(), topology="linear:2").ok
    # And a user can name it on the command line too.
    assert [p.name for p in build(RoutingWithPolicy(), properties=["h2-hears-from-h1"]).properties][0] == \
        "h2-hears-from-h1"


# ---- the view ---------------------------------------------------------------------------------

def test_the_view_reads_hosts_links_switches_and_the_app() -> None:
    from nice_attendre.models.events import ControllerHandle, HostSend, SwitchProcessPacket
    from nice_attendre.trace import Trace

    run = build("mac-learning", topology="linear:1", packets=1, properties=[])
    net = run.network
    state = Trace.from_events(net, [HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1)]).final
    view = View(net, state)
    assert [s.seq for s in view.hosts["h1"].sent] == [0]
    assert view.hosts["h1"].sent[0].header.eth_dst == "h2"
    assert view.hosts["h2"].received == () and view.hosts["h2"].location == (1, 2)
    assert view.in_flight == ()
    assert [p.uid for p in view.switches[1].buffered] == [("h1", 0)]
    assert [str(m) for m in view.switches[1].pending] == ["packet-out -> output:2,output:3"]  # a flood
    assert view.to_controller[1] == ()
    assert dict(view.app.ports) == {(1, "h1"): 1}
    assert not view.quiescent


# ---- a property over a transition --------------------------------------------------------------

def test_a_transition_property_sees_each_step() -> None:
    def step_ok(before: View, event: Any, after: View) -> bool:
        new = after.hosts["h1"].received[len(before.hosts["h1"].received):]
        return all(r.header.tp_dst == 80 for r in new if r.origin == "h2")

    monitor = on_transition("only-web-step", step_ok, "no step delivers non-web traffic from h2 to h1",
                            explain=lambda view: f"h1 got {view.hosts['h1'].received[-1].header}")
    assert verify(firewall(), properties=[monitor]).ok
    caught = verify(firewall("open"), properties=[monitor])
    (found,) = caught.discoveries
    assert found.property == "only-web-step" and found.expectation.value == "transition"
    assert found.reason == "h1 got h2->h1:1001->22"
    # The trace ends with the step that broke the claim: h1 receiving the port-22 packet.
    assert str(found.trace.events[-1]) == "h1 receives"
    assert found.trace.replay(caught.system) == found.trace.final


@pytest.mark.parametrize("protocol", ["openflow", "openflow-b", "attendre"])
def test_the_partitioned_search_checks_transition_properties(protocol: str) -> None:
    """With --workers the properties of transitions were never checked: the buggy firewall
    passed. Now the same verdicts and, going on after violations, the same counts (a
    violating step is not followed further, as in the DFS) for any number of workers; the
    trace ends with the violating step and replays."""
    def step_ok(before: View, event: Any, after: View) -> bool:
        new = after.hosts["h1"].received[len(before.hosts["h1"].received):]
        return all(r.header.tp_dst == 80 for r in new if r.origin == "h2")

    monitor = on_transition("only-web-step", step_ok, "no step delivers non-web traffic from h2 to h1",
                            explain=lambda view: f"h1 got {view.hosts['h1'].received[-1].header}")
    runs = {workers: verify(firewall(), properties=[monitor], protocol=protocol, workers=workers)
            for workers in (1, 2, 3)}
    assert all(r.ok and r.complete for r in runs.values())
    assert len({(r.stats.transitions, r.stats.unique_states, r.stats.revisits) for r in runs.values()}) == 1
    kept = {workers: verify(firewall("open"), properties=[monitor], protocol=protocol, workers=workers,
                            keep_going=True) for workers in (1, 2, 3)}
    counts = {(r.stats.transitions, r.stats.unique_states, r.stats.revisits, len(r.discoveries)) for r in kept.values()}
    assert len(counts) == 1, counts
    (transitions, states, revisits, violations), = counts
    assert violations > 0 and transitions == states - 1 + revisits + violations  # each violating step counted once
    for workers in (2, 3):
        caught = verify(firewall("open"), properties=[monitor], protocol=protocol, workers=workers)
        (found,) = caught.discoveries
        assert (found.property, found.reason) == ("only-web-step", "h1 got h2->h1:1001->22")
        assert str(found.trace.events[-1]) == "h1 receives"
        assert found.trace.replay(caught.system) == found.trace.final
        steps = found.trace.steps
        before = steps[-2].state if len(steps) > 1 else found.trace.initial
        assert not monitor(caught.system).holds(before, steps[-1].event, steps[-1].state)


def test_spec_needs_a_name_and_a_callable() -> None:
    with pytest.raises(ValueError, match="needs a name"):
        always("", only_web)
    with pytest.raises(ValueError, match="must be callable"):
        PropertySpec("x", ONLY_WEB.expectation, 3)
