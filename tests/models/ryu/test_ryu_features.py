"""What Ryu apps send and receive (issue 28, section 1): flow-mod flags and timeouts,
OpenFlow 1.0/1.2/1.4/1.5, load-time refusals, transaction ids, error messages, barrier
replies, port status, randomness and trace names. Apps: tests/data/apps/ryu_*.py."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from nice_attendre import verify
from nice_attendre.frontend.cli import main

pytest.importorskip("os_ken")

APPS = Path(__file__).resolve().parents[2] / "data" / "apps"


def app(file: str, name: str) -> str:
    return f"{APPS / file}:{name}"


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


# ---- flow-mod flags and timeouts ------------------------------------------------------------

EXPIRING = app("ryu_flow_removed.py", "ExpiringSwitch13")
WRONG_FIELD = app("ryu_flow_removed.py", "ForgetfulByTheWrongField13")


def test_idle_timeout_and_send_flow_rem_reach_the_flow_removed_handler() -> None:
    """The entry carries the app's idle timeout and OFPFF_SEND_FLOW_REM; its expiry is an
    EventOFPFlowRemoved (reason, timeout, match as installed) the app's handler gets."""
    result = verify(EXPIRING, topology="linear:2", packets=2, properties=["no-forwarding-loops"])
    assert result.ok and result.complete
    result = cli("verify", WRONG_FIELD, "--topology", "linear:1", "--packets", "2", "--property",
                 "no-forwarding-loops")
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert ("  ForgetfulByTheWrongField13.flow_removed_handler raised KeyError: 'eth_src' at ryu_flow_removed.py:61 "
            "in flow_removed_handler (handling flow-removed(s1, {eth_dst=h1}, idle timeout))") in lines
    assert "      controller sends flow-mod {eth_dst=h1} -> output:1, idle 5s, notify to s1" in lines
    assert "      s1 tells the controller (flow-removed)" in lines


# ---- OpenFlow 1.0, 1.2, 1.4, 1.5 --------------------------------------------------------------

VERSIONS = "ryu_versions.py"
NO_RACE = ["no-forwarding-loops", "no-forgotten-packets"]


@pytest.mark.parametrize("name,version,transitions", [("LearningSwitch12", "1.2", 654), ("LearningSwitch14", "1.4", 1423),
                                                      ("LearningSwitch15", "1.5", 1423)])
def test_openflow_12_14_15_apps_run(name: str, version: str, transitions: int) -> None:
    """1.2 explores as the 1.0 learning switch does (a miss is a packet-in: 654 transitions on
    linear:3, as examples/ryu/learning_switch_10.py), 1.4 and 1.5 as the 1.3 one (1,423)."""
    result = cli("verify", app(VERSIONS, name), "--topology", "linear:3", "--packets", "2",
                 *[arg for p in NO_RACE for arg in ("--property", p)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"  app            {name} (Ryu app, OpenFlow {version})"
    assert ["transitions", f"{transitions:,}"] in [line.split() for line in lines]


def test_openflow_14_renamed_packet_in_reasons() -> None:
    result = verify(app(VERSIONS, "WrongReason14"), topology="linear:2", packets=2, properties=NO_RACE)
    (found,) = result.discoveries
    assert found.property == "app-exception"
    assert "has no attribute 'OFPR_NO_MATCH'" in found.reason


def test_port_statistics_outside_10_and_13_are_refused_when_loaded() -> None:
    from nice_attendre.errors import UnsupportedFeature
    from nice_attendre.frontend.api import build

    with pytest.raises(UnsupportedFeature, match=r"^Ryu apps: port statistics in OpenFlow 1.4 \(.*in Monitoring14\)"):
        build(app(VERSIONS, "Monitoring14"), properties=[], topology="linear:1")


def test_port_status_reaches_the_app_under_link_faults() -> None:
    from nice_attendre.checker import dfs
    from nice_attendre.frontend.api import build
    from nice_attendre.models.ryu.state import thaw
    from nice_attendre.property import Property

    run = build(app(VERSIONS, "NotifiedSwitch10"), properties=[], topology="linear:2", packets=1,
                faults={"link": 1})
    net = run.network
    downs: set[Any] = set()

    def record(state: Any) -> bool:
        for name, frozen in net.value(state, "app"):
            if name == "down":
                downs.update(thaw(frozen, lambda dpid: dpid))
        return True

    result = dfs(net, [Property.always("record", record)])
    assert result.complete
    assert downs == {(1, 1), (1, 2), (2, 1), (2, 2)}


RYU_APPS = Path("/tmp/ryu-apps")


@pytest.mark.skipif(not (RYU_APPS / "simple_switch_15.py").exists(), reason="Ryu's samples are not in /tmp/ryu-apps")
@pytest.mark.parametrize("file,name", [("simple_switch.py", "SimpleSwitch"), ("simple_switch_12.py", "SimpleSwitch12"),
                                       ("simple_switch_14.py", "SimpleSwitch14"),
                                       ("simple_switch_15.py", "SimpleSwitch15")])
def test_ryu_samples_of_every_version_run_unmodified(file: str, name: str) -> None:
    result = verify(f"{RYU_APPS / file}:{name}", topology="linear:3", packets=2, properties=NO_RACE)
    assert result.ok and result.complete, result.discoveries


# ---- refused when loaded, never mid-search --------------------------------------------------

@pytest.mark.parametrize("name,feature", [
    ("SpawnsOnPacketIn", "starting threads (hub.spawn, in SpawnsOnPacketIn.packet_in_handler)"),
    ("GroupsOnPacketIn", "groups (OFPGroupMod, in GroupsOnPacketIn.packet_in_handler)"),
    ("MetersOnPacketIn", "meters (OFPMeterMod, in MetersOnPacketIn.meter)"),
    ("RewritesOnPacketIn", "actions other than output (OFPActionSetField: header rewriting, queues, ..., in "
                           "RewritesOnPacketIn.packet_in_handler)"),
])
def test_unsupported_features_are_refused_before_the_first_transition(name: str, feature: str) -> None:
    """Building the system (before any transition) refuses the app; the CLI says one line."""
    from nice_attendre.errors import UnsupportedFeature
    from nice_attendre.frontend.api import build

    target = app("ryu_refused.py", name)
    with pytest.raises(UnsupportedFeature):
        build(target, properties=[], topology="linear:1")
    result = cli("verify", target, "--topology", "linear:1")
    assert result.exit_code == 2, result.output
    assert result.stderr == f"Error: Ryu apps: {feature} is not supported by the checker's model\n"
    assert result.stdout == ""


def test_a_sample_app_os_ken_lacks_is_the_file_beside_the_app() -> None:
    result = verify(app("ryu_subclass.py", "QuietExpiringSwitch13"), topology="linear:1", packets=1,
                    properties=["no-forwarding-loops"])
    assert result.ok and result.complete
    result = cli("verify", app("ryu_missing_sample.py", "Orphan"))
    assert result.exit_code == 2
    assert result.stderr == (f"Error: cannot load app '{APPS / 'ryu_missing_sample.py'}': os-ken does not ship "
                             "Ryu's sample app ryu_no_such_sample: put ryu_no_such_sample.py next to your app\n")
    result = cli("verify", app("ryu_rest.py", "RestApp"))
    assert result.exit_code == 2
    assert result.stderr == (f"Error: cannot load app '{APPS / 'ryu_rest.py'}': Ryu apps: WSGI (ryu.app.wsgi: a web "
                             "server for REST APIs) is not supported by the checker's model, and os-ken does not "
                             "ship ryu.app.wsgi\n")


@pytest.mark.skipif(not (RYU_APPS / "simple_switch_13.py").exists(), reason="Ryu's samples are not in /tmp/ryu-apps")
@pytest.mark.parametrize("file,name,feature", [
    ("simple_switch_stp_13.py", "SimpleSwitch13", "contexts (_CONTEXTS: stplib, in SimpleSwitch13)"),
    ("simple_switch_lacp_13.py", "SimpleSwitchLacp13", "contexts (_CONTEXTS: lacplib, in SimpleSwitchLacp13)"),
    ("simple_switch_igmp_13.py", "SimpleSwitchIgmp13", "contexts (_CONTEXTS: igmplib, in SimpleSwitchIgmp13)"),
    ("simple_switch_rest_13.py", "SimpleSwitchRest13", "WSGI (ryu.app.wsgi"),
    ("simple_monitor_13.py", "SimpleMonitor13", "starting threads (hub.spawn, in SimpleMonitor13.__init__)"),
])
def test_the_samples_subclassing_simple_switch_13_are_refused_in_one_line(file: str, name: str, feature: str) -> None:
    result = cli("verify", f"{RYU_APPS / file}:{name}")
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and f"Ryu apps: {feature}" in result.stderr


# ---- transaction ids --------------------------------------------------------------------------

def test_xids_grow_per_datapath_over_the_run() -> None:
    """An app keyed on msg.xid works: each datapath numbers its messages 1, 2, 3 ... over the
    run (they restarted at 1 in every handler call), and only per datapath (s1 and s2 both
    give 3 to the barrier after their first packet-out)."""
    result = verify(app("ryu_xids.py", "BarrierKeyedSwitch13"), topology="linear:1", packets=2,
                    properties=["no-forwarding-loops"])
    assert result.ok and result.complete, result.discoveries
    result = verify(app("ryu_xids.py", "SharedXidSwitch13"), topology="linear:2", packets=1,
                    properties=["no-forwarding-loops"])
    (found,) = result.discoveries
    assert found.reason == ("SharedXidSwitch13.packet_in_handler raised AssertionError: xid 3 is already awaited "
                            "at ryu_xids.py:65 in packet_in_handler (handling packet-in(s2, port 1, h1#0))")


def test_xids_cost_no_states_to_an_app_that_never_reads_them() -> None:
    from nice_attendre.models.ryu import adapt
    from nice_attendre.frontend.loading import load_app

    assert adapt(type(load_app(app("ryu_xids.py", "BarrierKeyedSwitch13")).ryu)).tracks_xids
    assert not adapt(type(load_app(EXPIRING).ryu)).tracks_xids


# ---- randomness -------------------------------------------------------------------------------

def test_random_in_a_handler_is_reported_not_seeded() -> None:
    """A handler drawing from the random module's generator is app-nondeterminism (exit 4):
    it was seeded at every call, exploring one outcome of its choice forever, silently. A
    generator the handler seeds itself is deterministic."""
    result = cli("verify", app("ryu_random.py", "RandomFlooder10"), "--topology", "linear:1", "--packets", "1",
                 "--property", "no-forwarding-loops")
    assert result.exit_code == 4, result.output
    assert ("  RandomFlooder10.packet_in_handler read the random module's shared generator (random.random) at "
            "ryu_random.py:19 in choose (handling packet-in(s1, port 1, h1#0))") in result.stdout.splitlines()
    result = verify(app("ryu_random.py", "SeededFlooder10"), topology="linear:1", packets=1,
                    properties=["no-forwarding-loops"])
    assert result.ok and result.complete


# ---- errors -----------------------------------------------------------------------------------

def test_check_overlap_refuses_an_overlapping_add_with_an_error_message() -> None:
    """OFPFF_CHECK_OVERLAP: an add overlapping an entry of the same priority is refused and
    the app gets EventOFPErrorMsg (OFPET_FLOW_MOD_FAILED, OFPFMFC_OVERLAP); the flag was
    refused as unsupported."""
    result = cli("verify", app("ryu_overlap.py", "OverlapUnaware13"), "--topology", "linear:1", "--packets", "1",
                 "--property", "no-forwarding-loops")
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert ("  5. s1 refuses flow-mod {eth_dst=h2} -> flood, check overlap: it overlaps [prio 10 {eth_src=h1} -> "
            "controller] (OFPFF_CHECK_OVERLAP); error sent") in lines
    assert ("  OverlapUnaware13.error_handler raised AssertionError: s1 refused a flow-mod (type 5, code 3) at "
            "ryu_overlap.py:65 in error_handler (handling error(s1, overlap: {eth_dst=h2} priority 10))") in lines
    # The error names the refused flow-mod's xid, which OverlapAware13 asserts (on two switches).
    result = verify(app("ryu_overlap.py", "OverlapAware13"), topology="linear:2", packets=1,
                    properties=["no-forwarding-loops"])
    assert result.ok and result.complete, result.discoveries


def test_a_native_app_gets_the_error_too() -> None:
    from nice_attendre.models.app import App, Out
    from nice_attendre.models.packet import Flood, Match, ToController

    class Checked(App[tuple]):
        def initial_state(self) -> tuple:
            return ()

        def on_switch_join(self, state: tuple, dpid: int, out: Out) -> tuple:
            out.flow_mod(dpid, Match.of(eth_src="h1"), [ToController()], priority=10)
            out.flow_mod(dpid, Match.of(eth_dst="h2"), [Flood()], priority=10, check_overlap=True)
            return state

        def on_error(self, state: tuple, ev: Any, out: Out) -> tuple:
            return state + ((ev.dpid, ev.reason),)

    from nice_attendre.checker import dfs
    from nice_attendre.frontend.api import build
    from nice_attendre.property import Property

    run = build(Checked(), properties=[], topology="linear:1", packets=1)
    seen: set[Any] = set()
    dfs(run.network, [Property.always("record", lambda s: seen.add(run.network.value(s, "app")) or True)])
    assert ((1, "overlap"),) in seen


# ---- trace names ------------------------------------------------------------------------------

def test_traces_name_the_apps_own_handler_methods_and_where_they_raised() -> None:
    """Each step names the Ryu app's handler method (not the checker's on_packet_in), an
    exception its file, line and function, with --debug too."""
    for debug in ((), ("--debug",)):
        result = cli(*debug, "verify", WRONG_FIELD, "--topology", "linear:1", "--packets", "2", "--property",
                     "no-forwarding-loops")
        assert result.exit_code == 1, result.output
        lines = result.stdout.splitlines()
        assert "      controller: ForgetfulByTheWrongField13.switch_features_handler handles switch s1 joined" in lines
        assert ("   6. controller: ForgetfulByTheWrongField13.packet_in_handler handles packet-in(s1, port 1, h1#1)"
                in lines)
        assert any("flow_removed_handler raised KeyError: 'eth_src' at ryu_flow_removed.py:61 in flow_removed_handler"
                   in line for line in lines)
        assert not any("on_packet_in" in line or "on_flow_removed" in line for line in lines)
