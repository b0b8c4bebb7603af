"""Issue 32, section 1: the coverage of the app's code by a search (library ``coverage=True``).

Apps of our own: tests/data/apps/coverage_firewall.py (SSH and a prefix the default ping
never uses), coverage_ryu.py (a Ryu-API hub), and examples/load_balancer.py.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from nice_attendre import verify
from nice_attendre.errors import InputError
from nice_attendre.frontend.coverage import AppCoverage, FunctionCoverage, ranges

ROOT = Path(__file__).resolve().parents[2]
APPS = ROOT / "tests" / "data" / "apps"
FIREWALL_FILE = APPS / "coverage_firewall.py"
FIREWALL = f"{FIREWALL_FILE}:CoverageFirewall"
RYU_FILE = APPS / "coverage_ryu.py"
BALANCER_FILE = ROOT / "examples" / "load_balancer.py"
BALANCER = f"{BALANCER_FILE}:LoadBalancer"
BALANCER_SCENARIO = ROOT / "examples" / "load_balancer.toml"

#: the default ping, and traffic that takes every rule of the firewall
PING: dict[str, Any] = {}
EVERY_RULE = {"flows": ["h1->h2", "h1->h2:proto=tcp,dport=22", "h1->h2:ip_src=10.9.0.7"]}


def line_of(path: Path, text: str) -> int:
    """The number of the one line of ``path`` that holds ``text``."""
    found = [n for n, line in enumerate(path.read_text().splitlines(), start=1) if text in line]
    assert len(found) == 1, (text, found)
    return found[0]


def function(coverage: AppCoverage, name: str) -> FunctionCoverage:
    [found] = [f for f in coverage.functions if f.name == name]
    return found


def firewall_lines() -> dict[str, int]:
    return {"ssh": line_of(FIREWALL_FILE, "if tp_dst == SSH:"),
            "prefix": line_of(FIREWALL_FILE, "if ip_src.startswith(BLOCKED_PREFIX):"),
            "blocked?": line_of(FIREWALL_FILE, "if blocked(hdr.ip_src, hdr.tp_dst):"),
            "drop": line_of(FIREWALL_FILE, "# drop it")}


# ---- the firewall: branches the default traffic never takes -----------------------------------------

def test_the_default_ping_never_takes_the_firewall_rules_and_the_report_names_them() -> None:
    result = verify(FIREWALL, coverage=True)
    assert result.ok
    lines = firewall_lines()
    packet_in = function(result.coverage, "CoverageFirewall.on_packet_in")
    assert packet_in.handler and packet_in.lines_run > 0
    assert lines["drop"] in packet_in.missing_lines
    assert [(start, end) for start, end, _why in packet_in.missing_branches] == [(lines["blocked?"], lines["drop"])]
    blocked = function(result.coverage, "blocked")
    assert not blocked.handler
    assert {(start, end) for start, end, _ in blocked.missing_branches} == {
        (lines["ssh"], lines["ssh"] + 1), (lines["prefix"], lines["prefix"] + 1)}
    text = "\n".join(result.coverage.text_lines())
    shown = f"{FIREWALL_FILE.relative_to(ROOT)}" if Path.cwd() == ROOT else str(FIREWALL_FILE)
    assert f"never taken: {shown}:{lines['ssh']} (the branch to line {lines['ssh'] + 1})" in text
    assert f"never taken: {shown}:{lines['blocked?']} (the branch to line {lines['drop']})" in text


def test_flows_that_exercise_the_rules_cover_their_lines() -> None:
    result = verify(FIREWALL, coverage=True, **EVERY_RULE)
    assert result.ok
    lines = firewall_lines()
    packet_in = function(result.coverage, "CoverageFirewall.on_packet_in")
    assert (packet_in.lines_run, packet_in.missing_lines, packet_in.missing_branches) == (packet_in.lines, (), ())
    blocked = function(result.coverage, "blocked")
    assert (blocked.lines_run, blocked.branches_taken) == (blocked.lines, blocked.branches) == (5, 4)
    assert lines["drop"] not in packet_in.missing_lines


def test_only_the_ssh_flow_leaves_the_prefix_rule_untaken() -> None:
    result = verify(FIREWALL, coverage=True, flows=["h1->h2", "h1->h2:proto=tcp,dport=22"])
    lines = firewall_lines()
    blocked = function(result.coverage, "blocked")
    assert blocked.missing_lines == (lines["prefix"] + 1,)
    assert [(start, end) for start, end, _why in blocked.missing_branches] == [(lines["prefix"], lines["prefix"] + 1)]


def test_a_handler_never_called_is_reported_with_its_lines() -> None:
    result = verify(FIREWALL, coverage=True)
    removed = function(result.coverage, "CoverageFirewall.on_flow_removed")
    assert removed.handler and removed.lines_run == 0 and removed.lines == 3
    assert "handler CoverageFirewall.on_flow_removed" in "\n".join(result.coverage.text_lines())
    assert "never called by the search" in "\n".join(result.coverage.text_lines())


def test_only_the_apps_own_file_is_measured() -> None:
    result = verify(FIREWALL, coverage=True)
    assert result.coverage.files == (str(FIREWALL_FILE),)
    assert {f.file for f in result.coverage.functions} == {str(FIREWALL_FILE)}
    # the App base class's methods the app does not override are not the app's handlers
    assert {f.name for f in result.coverage.functions if f.handler} == {
        "CoverageFirewall.on_switch_join", "CoverageFirewall.on_packet_in", "CoverageFirewall.on_flow_removed"}


def test_switch_joins_count() -> None:
    """The joins run while the network is built: the measurement has started by then."""
    result = verify(FIREWALL, coverage=True)
    join = function(result.coverage, "CoverageFirewall.on_switch_join")
    assert (join.lines_run, join.lines) == (1, 1)


# ---- the load balancer: both replica branches ----------------------------------------------------

def balancer_lines() -> dict[str, int]:
    return {"vip?": line_of(BALANCER_FILE, "if hdr.ip_dst != VIP:"),
            "round-robin?": line_of(BALANCER_FILE, 'if self.bug == "round-robin":'),
            "by turn": line_of(BALANCER_FILE, "replica = REPLICAS[state % len(REPLICAS)]"),
            "by port": line_of(BALANCER_FILE, "replica = REPLICAS[hdr.tp_src % len(REPLICAS)]")}


def test_load_balancer_both_replica_branches() -> None:
    """The replica is chosen by source port (the app) or in turn (its round-robin bug): each run
    covers its branch and names the other as never taken; the two together cover both."""
    lines = balancer_lines()
    by_port = verify(BALANCER, topology="star:4", scenario=BALANCER_SCENARIO, coverage=True)
    in_turn = verify(BALANCER, topology="star:4", scenario=BALANCER_SCENARIO, app_options={"bug": "round-robin"},
                     coverage=True, keep_going=True)
    port = function(by_port.coverage, "LoadBalancer.on_packet_in")
    turn = function(in_turn.coverage, "LoadBalancer.on_packet_in")
    assert lines["by port"] not in port.missing_lines and lines["by turn"] in port.missing_lines
    assert lines["by turn"] not in turn.missing_lines and lines["by port"] in turn.missing_lines
    assert (lines["round-robin?"], lines["by turn"]) in {(s, e) for s, e, _ in port.missing_branches}
    assert (lines["round-robin?"], lines["by port"]) in {(s, e) for s, e, _ in turn.missing_branches}
    # the scenario sends only to the virtual IP: the ordinary-traffic branch is never taken
    assert (lines["vip?"], lines["vip?"] + 1) in {(s, e) for s, e, _ in port.missing_branches}


def test_load_balancer_ordinary_and_virtual_ip_traffic_cover_the_whole_handler() -> None:
    result = verify(BALANCER, topology="star:4", coverage=True,
                    flows=["h1->h4", "h1->10.0.0.100:proto=tcp,sport=1000,dport=80"])
    packet_in = function(result.coverage, "LoadBalancer.on_packet_in")
    lines = balancer_lines()
    # left: the round-robin bug's branch, and a destination with no port (every host has one)
    no_port = line_of(BALANCER_FILE, "if port is not None:")
    assert packet_in.missing_lines == (lines["by turn"],)
    assert [(s, e) for s, e, _ in packet_in.missing_branches] == [(no_port, no_port + 2),
                                                                  (lines["round-robin?"], lines["by turn"])]


# ---- a Ryu-API app --------------------------------------------------------------------------------

def test_ryu_packet_in_handler_coverage() -> None:
    result = verify(f"{RYU_FILE}:CoverageHub", coverage=True)
    assert result.ok
    packet_in = function(result.coverage, "CoverageHub.handle_packet_in")
    ipv6 = line_of(RYU_FILE, "if eth.ethertype == IPV6:")
    assert packet_in.handler and packet_in.line == line_of(RYU_FILE, "def handle_packet_in")
    assert packet_in.missing_lines == (ipv6 + 1,)
    assert [(s, e) for s, e, _ in packet_in.missing_branches] == [(ipv6, ipv6 + 1)]
    assert packet_in.lines_run == packet_in.lines - 1
    status = function(result.coverage, "CoverageHub.handle_port_status")
    # the model delivers port-status (with link faults: wt-L), this run has none
    assert status.lines_run == 0 and status.never_called is None
    assert result.coverage.files == (str(RYU_FILE),)  # os-ken and the adapter are not measured


# ---- what coverage must not change ---------------------------------------------------------------

@pytest.mark.parametrize("options", [PING, EVERY_RULE], ids=["ping", "every-rule"])
def test_coverage_changes_no_count_and_is_off_by_default(options: dict[str, Any]) -> None:
    plain = verify(FIREWALL, **options)
    measured = verify(FIREWALL, coverage=True, **options)
    assert plain.coverage is None
    assert plain.stats.counts() == measured.stats.counts()
    assert plain.verdict == measured.verdict


def test_coverage_off_imports_no_coverage_library() -> None:
    code = ("import sys; from nice_attendre import verify; "
            f"r = verify({FIREWALL!r}); assert r.coverage is None; print('coverage' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_the_measurement_gives_back_the_trace_function() -> None:
    before = sys.gettrace()
    verify(FIREWALL, coverage=True)
    assert sys.gettrace() is before


def test_the_memo_changes_no_coverage() -> None:
    """Memoised calls repeat known outcomes: the figures are those of calling every handler."""
    with_memo = verify(FIREWALL, coverage=True, **EVERY_RULE)
    without = verify(FIREWALL, coverage=True, memo=False, **EVERY_RULE)
    assert with_memo.coverage.functions == without.coverage.functions
    assert "memoised calls repeat known outcomes" in with_memo.coverage.text_lines()[1]


def test_workers_data_is_merged() -> None:
    """The packet-ins are handled in the worker processes only: without their data the
    handler would look never called."""
    sequential = verify(FIREWALL, coverage=True, flows=["h1->h2"])
    partitioned = verify(FIREWALL, coverage=True, flows=["h1->h2"], workers=2)
    assert partitioned.coverage.functions == sequential.coverage.functions
    assert (partitioned.coverage.workers, partitioned.coverage.expected_workers) == (2, 2)
    assert function(partitioned.coverage, "CoverageFirewall.on_packet_in").lines_run > 0
    assert "merged from 2 of 2 worker processes" in "\n".join(partitioned.coverage.text_lines())


def test_a_search_cut_short_says_its_coverage_is_partial() -> None:
    result = verify(FIREWALL, coverage=True, max_transitions=3)
    assert not result.complete
    assert result.coverage.partial is not None and "max-transitions" in result.coverage.partial
    assert result.coverage.as_json()["complete"] is False
    complete = verify(FIREWALL, coverage=True)
    assert complete.coverage.partial is None and complete.coverage.as_json()["complete"] is True


@pytest.mark.parametrize("options, word", [({"engine": "ray"}, "--engine ray"),
                                            ({"resume": "/nonexistent/checkpoint"}, "--resume")])
def test_what_coverage_cannot_measure_is_refused(options: dict[str, Any], word: str) -> None:
    with pytest.raises(InputError, match=word):
        verify(FIREWALL, coverage=True, **options)


def test_ranges() -> None:
    assert ranges([]) == ""
    assert ranges([3]) == "3"
    assert ranges([3, 4, 5, 9, 11, 12]) == "3-5, 9, 11-12"


def test_the_handlers_are_those_the_app_runs_not_those_of_other_classes_of_its_file() -> None:
    """CoverageFirewall and PlainRouter (its subclass) share a file: each one's handlers are
    the functions its events call (before, PlainRouter.on_packet_in, being named alike and
    below, was taken for one of CoverageFirewall's handlers)."""
    firewall = verify(FIREWALL, coverage=True)
    assert {f.name for f in firewall.coverage.functions if f.handler} == {
        "CoverageFirewall.on_switch_join", "CoverageFirewall.on_packet_in", "CoverageFirewall.on_flow_removed"}
    router = verify(f"{FIREWALL_FILE}:PlainRouter", coverage=True)
    assert {f.name for f in router.coverage.functions if f.handler} == {
        "CoverageFirewall.on_switch_join", "PlainRouter.on_packet_in", "CoverageFirewall.on_flow_removed"}
    assert "blocked" not in {f.name for f in router.coverage.functions}  # never run: not listed
    packet_in = function(router.coverage, "PlainRouter.on_packet_in")
    assert packet_in.lines_run == packet_in.lines == 3


def test_a_shipped_app_is_measured_never_the_checkers_code() -> None:
    result = verify("route-flow", coverage=True)
    [measured] = result.coverage.files
    assert Path(measured).name == "route_flow.py" and Path(measured).parent.name == "apps"
    packet_in = function(result.coverage, "RouteFlow.on_packet_in")
    assert packet_in.handler and packet_in.lines_run > 0


def test_the_apps_methods_are_listed_run_or_not_but_not_its_app_api_overrides() -> None:
    result = verify(FIREWALL, coverage=True)
    audit = function(result.coverage, "CoverageFirewall.audit")
    assert not audit.handler and (audit.lines_run, audit.lines) == (0, 1)
    assert "    function CoverageFirewall.audit" in "\n".join(result.coverage.text_lines())
    # describe ran (while the network was built) but is the App API's, not the app's logic
    assert "CoverageFirewall.describe" not in {f.name for f in result.coverage.functions}
