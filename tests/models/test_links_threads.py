"""Links, controller threads and link faults as real networks have them (issue 29).

* A link that goes down loses the packets already on it, in both directions, and what a
  host sends into it while it is down.
* ``--fault link=N:SCOPE`` limits the links that may fail; ``no-stale-routes`` says when a
  route leads into a link that is down.
* ``--threaded-controller per-switch`` (the option alone, ``True``) handles each switch's
  messages in order, as os-ken does; ``any`` is the old threaded controller, which also
  reorders them. Every report names the mode.
"""
from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nice_attendre import InputError, verify
from nice_attendre.apps.route_flow import RouteFlow
from nice_attendre.frontend.api import build
from nice_attendre.frontend.cli import main
from nice_attendre.models.app import App
from nice_attendre.models.events import ControllerHandle, HostReceive, HostSend, SwitchProcessCommand, \
    SwitchProcessPacket
from nice_attendre.models.faults import ControlLoss, LinkChange, parse_budgets, split_budgets
from nice_attendre.models.messages import FlowMod
from nice_attendre.models.network import Network, Options
from nice_attendre.models.packet import Header, Packet
from nice_attendre.models.scenario import Scenario
from nice_attendre.models.topology import load_topology
from nice_attendre.trace import Trace
from tests_data_apps import path


def square() -> nx.Graph:
    """h1 - s1, two paths s1 - s2 - s4 and s1 - s3 - s4, s4 - h2."""
    graph = nx.Graph()
    graph.add_edges_from([("h1", "s1"), ("s1", "s2"), ("s2", "s4"), ("s1", "s3"), ("s3", "s4"), ("s4", "h2")])
    return graph


def link_network(**options: object):  # type: ignore[no-untyped-def]
    return build("route-flow", topology="linear:2", packets=1, faults={"link": 1}, properties=[],
                 **options).network  # type: ignore[arg-type]


def packet(src: str, dst: str, seq: int = 0) -> Packet:
    return Packet(Header(src, dst, f"ip-{src}", f"ip-{dst}"), src, seq)


# ---- a link that fails loses what is on it -------------------------------------------------

def test_a_failing_switch_link_loses_the_packets_on_it_both_ways() -> None:
    net = link_network()
    state = net.encode({"port:1:2": (packet("h2", "h1"),), "port:2:1": (packet("h1", "h2"), packet("h1", "h2", 1))})
    down = net.apply(state, LinkChange(1, 2, False))
    assert net.value(down, "port:1:2") == () and net.value(down, "port:2:1") == ()
    notes = net.narrate(state, LinkChange(1, 2, False))[1]
    assert any(line.startswith("FAULT: lost with the link: ") for line in notes)


def test_a_failing_host_link_loses_the_packets_on_it_both_ways() -> None:
    net = link_network()
    state = net.encode({"port:2:2": (packet("h2", "h1"),), "inbox:h2": (packet("h1", "h2"),)})
    down = net.apply(state, LinkChange(2, 2, False))
    assert net.value(down, "port:2:2") == () and net.value(down, "inbox:h2") == ()
    assert HostReceive("h2") not in net.enabled(down)
    # the other links keep theirs
    other = net.apply(state, LinkChange(1, 2, False))
    assert len(net.value(other, "inbox:h2")) == 1 and len(net.value(other, "port:2:2")) == 1


def test_a_host_sending_into_a_link_that_is_down_loses_the_packet() -> None:
    net = link_network()
    state = Trace.from_events(net, [LinkChange(1, 1, False), HostSend("h1")]).final
    assert net.value(state, "port:1:1") == ()
    assert [seq for seq, _hdr, _kind in net.value(state, "host:h1").sent_log] == [0]  # it was sent
    notes = net.narrate(net.apply(net.initial_states()[0], LinkChange(1, 1, False)), HostSend("h1"))[1]
    assert notes[-1].endswith("is lost") and "link to s1:1 is down" in notes[-1]


def test_a_packet_on_a_failed_link_is_never_delivered() -> None:
    """Every execution in which the link into h2 fails while a packet is on it ends with the
    packet undelivered (before: the packet was still delivered)."""
    net = link_network()
    state = net.encode({"inbox:h2": (packet("h1", "h2"),)})
    down = net.apply(state, LinkChange(2, 2, False))
    assert not any(isinstance(event, HostReceive) for event in net.enabled(down))


# ---- the scope of link faults ---------------------------------------------------------------

@pytest.mark.parametrize("scope,ends", [
    ("all", [(1, 1), (1, 2), (2, 2)]), ("switches", [(1, 2)]), ("hosts", [(1, 1), (2, 2)])])
def test_the_scope_chooses_the_links_that_may_fail(scope: str, ends: list[tuple[int, int]]) -> None:
    net = build("route-flow", topology="linear:2", packets=1, faults={"link": f"1:{scope}"},
                properties=[]).network
    changes = [(e.dpid, e.port) for e in net.enabled(net.initial_states()[0]) if isinstance(e, LinkChange)]
    assert changes == ends
    assert net.options.link_scope == scope


def test_budgets_with_a_scope_parse_and_check() -> None:
    assert parse_budgets(["link=1:switches", "loss=1"]) == {"link": "1:switches", "loss": 1}
    assert split_budgets({"link": "2:hosts"}) == ((0, 0, 0, 2, 0, 0), "hosts")
    assert split_budgets({"link": 1}) == ((0, 0, 0, 1, 0, 0), "all")
    for bad, message in ((["link=1:cables"], "unknown link fault scope 'cables'"),
                         (["loss=1:switches"], "expected KIND=N"), (["link=x:switches"], "expected KIND=N")):
        with pytest.raises(InputError, match=message):
            parse_budgets(bad)
    with pytest.raises(InputError, match="link='one:hosts'"):
        split_budgets({"link": "one:hosts"})


def test_a_scoped_link_budget_from_the_command_line() -> None:
    result = CliRunner().invoke(main, ["verify", "route-flow", "-t", "linear:2", "--fault", "link=1:switches",
                                       "-p", "no-forwarding-loops"])
    assert result.exit_code == 0, result.output
    assert "  faults         link 1 (links between switches only)" in result.stdout.splitlines()
    bad = CliRunner().invoke(main, ["verify", "route-flow", "--fault", "link=1:cables"])
    assert bad.exit_code == 2
    assert bad.stderr == "Error: unknown link fault scope 'cables' (known: all, switches, hosts)\n"


def test_only_switch_links_fail_so_no_host_is_cut_off() -> None:
    """route-flow computes paths once: a failed switch link is a stale route; a failed host
    link is one too with scope all, never with scope switches (linear:2 has one switch link)."""
    everywhere = verify("route-flow", topology="linear:2", packets=1, faults={"link": 1},
                        properties=["no-stale-routes"], keep_going=True)
    switches = verify("route-flow", topology="linear:2", packets=1, faults={"link": "1:switches"},
                      properties=["no-stale-routes"], keep_going=True)
    cut = [d for d in everywhere.discoveries if any(e in (LinkChange(1, 1, False), LinkChange(2, 2, False))
                                                   for e in d.trace.events)]
    assert cut
    assert all(LinkChange(1, 2, False) in d.trace.events for d in switches.discoveries)
    assert switches.stats.transitions < everywhere.stats.transitions


def test_no_stale_routes_says_the_link_is_down() -> None:
    app = path("rerouting.py", "Rerouting")
    stuck = verify(app, app_options={"bug": "ignore-failures"}, faults={"link": "1:switches"}, topology=square(),
                   packets=1)
    (found,) = stuck.discoveries
    assert found.property == "no-stale-routes"
    assert "whose link is down" in found.reason and "nothing is attached" not in found.reason


# ---- controller threads: per-switch (os-ken) or any ------------------------------------------

IN_ORDER_SOURCE = '''
from nice_attendre.models.app import App, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Flood
from nice_attendre.properties.custom import always


class InOrder(App[tuple]):
    """Logs its packet-ins (switch, packet), in the order it handles them, and floods the packets."""

    def initial_state(self) -> tuple:
        return ()

    def on_packet_in(self, state: tuple, ev: PacketIn, out: Out) -> tuple:
        out.packet_out(ev.dpid, [Flood()], buffer_id=ev.buffer_id, in_port=ev.in_port)
        return state + ((ev.dpid, ev.packet.origin, ev.packet.seq),)


def in_order(view) -> bool:
    seen = {}
    for dpid, origin, seq in view.app:  # a switch's packet-ins of one host's packets in their order
        if seq < seen.get((dpid, origin), -1):
            return False
        seen[(dpid, origin)] = seq
    return True


IN_ORDER = always("handled-in-order", in_order,
                  "the controller handles each switch's packet-ins in the order they were sent")
'''
_namespace: dict = {}
exec(compile(IN_ORDER_SOURCE, "in_order.py", "exec"), _namespace)  # the app of the CLI tests, in-process
InOrder, IN_ORDER = _namespace["InOrder"], _namespace["IN_ORDER"]


def threads_network(threads: object, app: App | None = None, topology: str = "linear:1",
                    packets: int = 2) -> Network:
    return Network(Scenario.ping(load_topology(topology), packets), app or RouteFlow(), "openflow",
                   Options(threaded_controller=threads))  # type: ignore[arg-type]


def test_true_means_per_switch_and_modes_are_checked() -> None:
    assert Options(threaded_controller=True).threaded_controller == "per-switch"
    assert Options(threaded_controller=False).threaded_controller is False
    assert Options(threaded_controller="any").threaded_controller == "any"
    with pytest.raises(InputError, match="unknown threaded controller 'all'"):
        Options(threaded_controller="all")


@pytest.mark.parametrize("threads,handles", [("per-switch", [ControllerHandle(1)]),
                                             ("any", [ControllerHandle(1, 0), ControllerHandle(1, 1)])])
def test_per_switch_threads_handle_one_switchs_messages_in_order(threads: str, handles: list) -> None:
    net = threads_network(threads, InOrder())
    state = Trace.from_events(net, [HostSend("h1"), HostSend("h1"), SwitchProcessPacket(1, 1),
                                    SwitchProcessPacket(1, 1)]).final
    assert [e for e in net.enabled(state) if isinstance(e, ControllerHandle)] == handles


def test_only_any_threads_reorder_one_switchs_packet_ins() -> None:
    """A false alarm of the old threaded controller: the app sees s1's packet-ins out of order."""
    options = dict(topology="linear:1", packets=2, properties=[IN_ORDER])
    assert verify(InOrder(), threaded_controller=True, **options).ok
    assert verify(InOrder(), threaded_controller="per-switch", **options).ok
    (found,) = verify(InOrder(), threaded_controller="any", **options).discoveries
    assert found.property == "handled-in-order"


def test_per_switch_calls_of_one_switch_send_in_order() -> None:
    """Two packet-ins of s1 handled one after the other: their commands to s2 form one FIFO
    (the second call ran after the first had sent everything); under any threads they race."""
    events = [HostSend("h1"), HostSend("h1"), SwitchProcessPacket(1, 1), SwitchProcessPacket(1, 1),
              ControllerHandle(1), ControllerHandle(1)]
    per_switch = threads_network("per-switch", topology="linear:2")
    state = Trace.from_events(per_switch, events).final
    (batch,) = per_switch.value(state, "cmdq:2")
    assert [type(m) for m in batch] == [FlowMod, FlowMod]
    assert [e for e in per_switch.enabled(state) if isinstance(e, SwitchProcessCommand) and e.dpid == 2] == [
        SwitchProcessCommand(2, 0, 0)]
    anyway = threads_network("any", topology="linear:2")
    state = Trace.from_events(anyway, events).final
    assert len(anyway.value(state, "cmdq:2")) == 2


def test_per_switch_calls_of_two_switches_race() -> None:
    """The type-3 race stays: s2's redundant packet-in and s1's flow-mod race to s2."""
    net = threads_network("per-switch", topology="linear:2", packets=1)
    state = Trace.from_events(net, [HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1),
                                    SwitchProcessCommand(1), SwitchProcessPacket(2, 1), ControllerHandle(2)]).final
    assert len(net.value(state, "cmdq:2")) == 2
    assert [e for e in net.enabled(state) if isinstance(e, SwitchProcessCommand) and e.dpid == 2] == [
        SwitchProcessCommand(2, 0), SwitchProcessCommand(2, 1)]


def test_a_lost_command_under_per_switch_threads_is_a_command() -> None:
    net = build("route-flow", topology="linear:2", packets=1, threaded_controller=True, faults={"control": 1},
                properties=[]).network
    state = Trace.from_events(net, [HostSend("h1"), SwitchProcessPacket(1, 1), ControllerHandle(1)]).final
    lost = net.apply(state, ControlLoss(2, True))
    assert net.value(lost, "cmdq:2") == ()
    assert any("FlowMod" in line or "flow-mod" in line for line in net.narrate(state, ControlLoss(2, True))[1])


#: (protocol, switches, packets) -> counts with threaded_controller="any": what True gave
#: before per-switch threads (tests/models/test_controller_threads.py pins per-switch).
ANY = {
    ("openflow", 1, 2): (170, 105, 66, 18),
    ("openflow", 2, 1): (68, 41, 28, 16),
    ("openflow", 2, 2): (4740, 1644, 3097, 30),
    ("openflow-b", 2, 2): (658, 364, 295, 34),
}


@pytest.mark.parametrize("protocol,switches,packets", sorted(ANY))
def test_any_threads_are_the_old_threaded_controller(protocol: str, switches: int, packets: int) -> None:
    options = dict(topology=f"linear:{switches}", packets=packets, protocol=protocol)
    anyway = verify("route-flow", threaded_controller="any", **options)
    per_switch = verify("route-flow", threaded_controller="per-switch", **options)
    assert anyway.ok and anyway.complete and per_switch.ok
    assert anyway.stats.counts() == ANY[(protocol, switches, packets)]
    assert per_switch.stats.transitions <= anyway.stats.transitions


@pytest.mark.parametrize("threads", ["per-switch", "any"])
def test_memo_fingerprints_and_workers_change_no_threaded_count(threads: str) -> None:
    options = dict(topology="linear:2", packets=2, threaded_controller=threads, command_order="any")
    plain = verify("route-flow", memo=False, **options)
    assert verify("route-flow", **options).stats.counts() == plain.stats.counts()
    assert verify("route-flow", fingerprint=True, **options).stats.counts()[:3] == plain.stats.counts()[:3]
    assert verify("route-flow", workers=2, **options).stats.counts()[:3] == plain.stats.counts()[:3]


@pytest.mark.parametrize("flag,line,mode", [
    ([], "single-threaded controller", False),
    (["--threaded-controller"], "threaded controller, per-switch (calls for different switches race; "
                                "each switch's messages in order)", "per-switch"),
    (["--threaded-controller", "per-switch"], "threaded controller, per-switch", "per-switch"),
    (["--threaded-controller=any"], "threaded controller, any (handler calls race; each switch's messages in "
                                    "any order)", "any")])
def test_every_report_names_the_threads(tmp_path: Path, flag: list[str], line: str, mode: object) -> None:
    out = tmp_path / "report.json"
    result = CliRunner().invoke(main, ["verify", "route-flow", "-t", "linear:2", *flag, "--json", str(out)])
    assert result.exit_code == 0, result.output
    (channels,) = [text for text in result.stdout.splitlines() if text.startswith("  channels ")]
    assert line in channels
    assert json.loads(out.read_text())["threaded_controller"] == mode
    compared = CliRunner().invoke(main, ["compare", "route-flow", "-t", "linear:2", "--protocols", "openflow",
                                         *flag, "--json", str(out)])
    assert compared.exit_code == 0, compared.output
    assert line in compared.stdout
    assert json.loads(out.read_text())["threaded_controller"] == mode


def test_a_bad_thread_mode_is_one_line() -> None:
    result = CliRunner().invoke(main, ["verify", "--threaded-controller", "route-flow"])
    assert result.exit_code == 2
    assert "'route-flow' is not one of per-switch, any (given alone, the option means per-switch" in result.stderr
    assert "Traceback" not in result.output


def test_a_trace_saved_with_the_old_threaded_flag_replays_as_any(tmp_path: Path) -> None:
    """Saved traces said ``"threaded_controller": true`` for what is now ``any``."""
    source = tmp_path / "in_order.py"
    source.write_text(IN_ORDER_SOURCE)
    app, prop, trace = f"{source}:InOrder", f"{source}:IN_ORDER", tmp_path / "trace.json"
    found = CliRunner().invoke(main, ["verify", app, "-t", "linear:1", "-n", "2", "--threaded-controller", "any",
                                      "-p", prop, "--trace-format", "json", "--trace-out", str(trace)])
    assert found.exit_code == 1, found.output
    data = json.loads(trace.read_text())
    assert data["build"]["threaded_controller"] == "any"
    # (IN_ORDER is violated only when s1's second packet-in is handled first; which index the
    # trace's pick has depends on the channel's canonical order, by the messages' stable hashes)
    data["build"]["threaded_controller"] = True
    trace.write_text(json.dumps(data))
    again = CliRunner().invoke(main, ["replay", str(trace), "--app", app, "--property", prop])
    assert again.exit_code == 1, again.output
    assert "handled-in-order" in again.output


# ---- the options as an input boundary ------------------------------------------------------------------

@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fault=st.sampled_from(["link=1:switches", "link=1:hosts", "link=1:all", "link=1:", "link=:hosts",
                              "link=1:x", "loss=1:switches", "link", "link=21:hosts", "link=1:switches:2",
                              "link=-1", "restart=1"]),
       threads=st.sampled_from([[], ["--threaded-controller"], ["--threaded-controller=any"],
                                ["--threaded-controller=per-switch"], ["--threaded-controller=all"],
                                ["--threaded-controller="]]))
def test_fuzzed_fault_scopes_and_thread_modes_are_runs_or_one_line_errors(fault: str, threads: list[str]) -> None:
    result = CliRunner().invoke(main, ["verify", "route-flow", "-t", "linear:2", "-p", "no-forwarding-loops",
                                       "--fault", fault, *threads, "--max-transitions", "3000"])
    assert result.exit_code in (0, 1, 2, 3, 4), (result.exit_code, result.output)
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output
