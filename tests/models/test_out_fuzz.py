"""No app input ends in an internal error: the native ``Out`` API fuzzed (issue 29, section 1).

Hypothesis writes small apps whose handlers (switch join, packet-in) make random requests:
flow-mods with random matches (fields, prefixes, in-ports, malformed ones), actions (outputs
to any port, TABLE included, floods, outputs to the controller, goto-table, set-field),
priorities, tables, buffer ids, timeouts and commands; packet-outs; paths; barriers and
port statistics requests. Each runs through ``verify`` (the library, small limits) on a
small topology under a random protocol variant and OpenFlow version. Every run must end
with a verdict (ok, violated, incomplete) or a clean input error (InputError: exit 2 on
the command line), never anything else (exit 70). The CLI boundary is checked too, for a
few of the same apps: exit 0-3 and no traceback.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nice_attendre import verify
from nice_attendre.errors import InputError
from nice_attendre.models.app import FLOW_MOD_COMMANDS, App, Hop, Out
from nice_attendre.models.messages import TABLE
from nice_attendre.models.packet import HEADER_FIELDS, Flood, GotoTable, Match, Output, SetField, ToController

PROTOCOLS = ("openflow", "openflow-b", "attendre", "pif", "batch", "buffer", "buffer:granularity=flow,capacity=1")

#: A placeholder for "the packet-in's own value" in a scripted request.
EV = "<ev>"


def requests_of(bad: bool, join: bool = False) -> st.SearchStrategy[list[Any]]:
    """Lists of scripted requests: with ``bad``, a value is malformed about once in 6 (so that
    runs still go past the first request); otherwise every value is well-formed. ``join``:
    for a switch join (no packet-outs: there is no packet)."""

    def mostly(good: st.SearchStrategy[Any], wrong: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(good, good, good, good, good, wrong) if bad else good

    ports = mostly(st.sampled_from([1, 2, 3, TABLE]), st.sampled_from([0, 7, -5]))
    field_values = {
        "eth_src": mostly(st.sampled_from(["h1", "h2", "h3"]), st.sampled_from(["10.0.0.0/24", "", 0])),
        "eth_dst": mostly(st.sampled_from(["h1", "h2", "h3", "ff:ff:ff:ff:ff:ff"]), st.sampled_from(["10.0.0.1", -1])),
        "ip_src": mostly(st.sampled_from(["10.0.0.1", "10.0.0.2", "10.0.0.0/24", "0.0.0.0/0"]),
                         st.sampled_from(["10.0.0.0/33", "h1", "10.0.0.1/8", 7])),
        "ip_dst": mostly(st.sampled_from(["10.0.0.1", "10.0.0.2", "10.0.0.0/8", "10.0.0.2/32"]),
                         st.sampled_from(["300.1.1.1", "::1", "10.0.0.0/24/1"])),
        "tp_src": mostly(st.sampled_from([0, 80, 1234]), st.sampled_from([-1, 70000])),
        "tp_dst": mostly(st.sampled_from([0, 80]), st.just("80")),
        "ip_proto": mostly(st.sampled_from([0, 6, 17]), st.just(256)),
    }
    fields = st.fixed_dictionaries({}, optional=field_values)
    in_ports = mostly(st.sampled_from([None, None, 1, 2, 3]), st.sampled_from([-1, 0, 9]))
    matches = mostly(
        st.builds(lambda f, p: ("match", f, p), fields, in_ports),  # Match.of runs in the handler (it may raise)
        st.sampled_from([Match((("zz", 1),)), Match((("eth_src", "a"), ("eth_dst", "b"))), "{eth_dst=h2}", None,
                         Match((), in_port="1"), Match((("eth_dst", 1.5),)), Match((("eth_dst", ("h2",)),)),
                         Match((("ip_dst", "10.0.0.7/24"),)), Match((("ip_src", "10.0.0.0/33"),)),
                         Match((("eth_dst", "10.0.0.0/8"),))]),
    )
    set_fields = st.builds(lambda f, v: ("set", f, v), mostly(st.sampled_from(HEADER_FIELDS), st.just("colour")),
                           mostly(st.sampled_from(["h1", "h2", "h3", "10.0.0.1", "10.0.0.9", 80, 6]),
                                  st.just("10.0.0.0/24")))
    actions = mostly(st.lists(st.one_of(
        st.builds(Output, ports), st.builds(Output, ports),
        st.just(Flood()),
        st.builds(ToController, st.booleans()),
        st.builds(GotoTable, mostly(st.sampled_from([1, 2]), st.sampled_from([0, 254, 255]))),
        set_fields,
    ), max_size=3), st.sampled_from([None, "flood", [Output("2")], [None]]))
    buffer_ids = mostly(st.sampled_from([None, EV, EV]), st.sampled_from([("h1", 0, 0), ("flow", "10.0.0.1", 0,
                                                                                       "10.0.0.2", 0, 0), 7, ()]))
    dpids = mostly(st.sampled_from([EV, EV, 1, 2, 3]), st.sampled_from([0, 99, -1, "s1", None, True]))
    numbers = mostly(st.sampled_from([0, 0, 0, 1, 10]), st.sampled_from([65535, 65536, -1]))
    priorities = mostly(st.sampled_from([0, 1, 100, 100, 100, 32768, 65535]), st.sampled_from([65536, -1, "1"]))
    table_ids = mostly(st.sampled_from([0, 0, 0, 1, 2]), st.sampled_from([254, 255, -1]))
    commands = mostly(st.sampled_from(FLOW_MOD_COMMANDS), st.just("bogus"))

    flow_mods = st.builds(
        lambda dpid, match, acts, priority, table_id, buffer_id, command, idle, hard, notify:
        ("flow_mod", dpid, match, acts, {"priority": priority, "table_id": table_id, "buffer_id": buffer_id,
                                         "command": command, "idle_timeout": idle, "hard_timeout": hard,
                                         "notify_removed": notify}),
        dpids, matches, actions, priorities, table_ids, buffer_ids, commands, numbers, numbers, st.booleans())
    packet_outs = st.builds(
        lambda dpid, acts, buffer_id, in_port, carried: ("packet_out", dpid, acts, {
            "buffer_id": buffer_id, "in_port": in_port, "packet": EV if carried else None}),
        dpids, actions, buffer_ids, mostly(st.sampled_from([EV, EV, 1, 2]), st.sampled_from([0, -1, 9])), st.booleans())
    hops = st.lists(st.builds(lambda d, m, a, t: ("hop", d, m, a, t), dpids, matches, actions, table_ids), max_size=3)
    paths = st.builds(lambda hs, priority, with_ev, idle: ("install_path", hs, {
        "priority": priority, "packet_in": EV if with_ev else None, "idle_timeout": idle}),
        hops, priorities, st.booleans(), numbers)
    others = st.one_of(st.builds(lambda d, x: ("barrier", d, x), dpids, st.sampled_from([None, 1, "x"])),
                       st.builds(lambda d: ("request_port_stats", d), dpids))
    if join and not bad:
        return st.lists(st.one_of(flow_mods, flow_mods, paths, others), max_size=3)
    return st.lists(st.one_of(flow_mods, flow_mods, flow_mods, packet_outs, packet_outs, paths, others), max_size=4)


def _resolve(value: Any, ev: Any, name: str, join: int | None = None) -> Any:
    """``value``, or for the placeholder the packet-in's field ``name`` (``""``: the packet-in
    itself; outside a packet-in None, or for the dpid the joining switch ``join``)."""
    if type(value) is str and value == EV:
        if ev is None:
            return join if name == "dpid" else None
        return ev if not name else getattr(ev, name)
    return value


def _actions(scripted: Any) -> Any:
    """Scripted actions as objects; a set-field is built in the handler (it may raise).
    Anything but a list is passed on as it is (Out refuses it)."""
    if type(scripted) is not list:
        return scripted
    return [SetField(a[1], a[2]) if type(a) is tuple else a for a in scripted]


def _match(scripted: Any) -> Any:
    """A scripted match as an object; ``Match.of`` runs in the handler (it may raise)."""
    if type(scripted) is tuple and scripted and scripted[0] == "match":
        return Match.of(in_port=scripted[2], **scripted[1])
    return scripted


def perform(out: Out, script: tuple[Any, ...], ev: Any, join: int | None = None) -> None:
    """Make the scripted requests of ``script`` (with the packet-in ``ev``, or at the join of
    switch ``join``)."""
    for request in script:
        kind = request[0]
        if kind == "flow_mod":
            _, dpid, match, acts, options = request
            options = dict(options, buffer_id=_resolve(options["buffer_id"], ev, "buffer_id"))
            out.flow_mod(_resolve(dpid, ev, "dpid", join), _match(match), _actions(acts), **options)
        elif kind == "packet_out":
            _, dpid, acts, options = request
            options = {"buffer_id": _resolve(options["buffer_id"], ev, "buffer_id"),
                       "in_port": _resolve(options["in_port"], ev, "in_port"),
                       "packet": _resolve(options["packet"], ev, "packet")}
            out.packet_out(_resolve(dpid, ev, "dpid", join), _actions(acts), **options)
        elif kind == "install_path":
            _, scripted, options = request
            path = [Hop(_resolve(d, ev, "dpid", join), _match(m), _actions(a), t) for _, d, m, a, t in scripted]
            out.install_path(path, priority=options["priority"], packet_in=_resolve(options["packet_in"], ev, ""),
                             idle_timeout=options["idle_timeout"])
        elif kind == "barrier":
            out.barrier(_resolve(request[1], ev, "dpid", join), request[2])
        else:
            out.request_port_stats(_resolve(request[1], ev, "dpid", join))


class Scripted(App[int]):
    """An app making scripted requests when a switch joins and at each packet-in (its state
    counts packet-ins, up to 3, so later ones may differ from the first)."""

    def __init__(self, version: str, join: tuple[Any, ...], packet_in: tuple[Any, ...],
                 repeat: tuple[Any, ...]) -> None:
        self.openflow_version = version  # type: ignore[misc]  # configuration, per instance here
        self.join, self.first, self.repeat = join, packet_in, repeat

    def initial_state(self) -> int:
        return 0

    def on_switch_join(self, state: int, dpid: int, out: Out) -> int:
        perform(out, self.join, None, dpid)
        return state

    def on_packet_in(self, state: int, ev: Any, out: Out) -> int:
        perform(out, self.first if state == 0 else self.repeat, ev)
        return min(state + 1, 3)


apps = st.booleans().flatmap(lambda bad: st.builds(Scripted, st.sampled_from(["1.0", "1.0", "1.3"]),
                                                     requests_of(bad, join=True), requests_of(bad),
                                                     requests_of(bad)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(app=apps, protocol=st.sampled_from(PROTOCOLS), topology=st.sampled_from(["linear:2", "linear:3"]),
       packets=st.integers(1, 2))
def test_every_request_ends_in_a_verdict_or_an_input_error(app: Scripted, protocol: str, topology: str,
                                                           packets: int) -> None:
    try:
        result = verify(app, topology=topology, packets=packets, protocol=protocol, max_transitions=1500,
                        keep_going=True)
    except InputError:
        return  # a clean one-line error (exit 2): a variant refusing the app's OpenFlow version
    assert result.verdict in ("ok", "violated", "incomplete")


# ---- the command line --------------------------------------------------------------------------

CLI_APP = '''
from nice_attendre.models.app import App
from nice_attendre.models.messages import TABLE
from nice_attendre.models.packet import Match, Output, Flood, GotoTable, SetField, ToController

class Fuzzed(App[None]):
    openflow_version = {version!r}

    def on_switch_join(self, state, dpid, out):
        {join}
        return state

    def on_packet_in(self, state, ev, out):
        {packet_in}
        return state
'''

cli_calls = st.sampled_from([
    "out.flow_mod(1, Match.of(eth_dst='h2'), [Output(TABLE)])",
    "out.flow_mod(dpid, Match.of(), [Output(TABLE)], priority=0)",
    "out.flow_mod(ev.dpid, Match.of(eth_dst=ev.packet.hdr.eth_dst), [Output(TABLE)], buffer_id=ev.buffer_id)",
    "out.flow_mod(ev.dpid, Match.of(eth_dst=ev.packet.hdr.eth_dst), [Output(2)], buffer_id=ev.buffer_id, "
    "command='modify')",
    "out.packet_out(ev.dpid, [Output(TABLE), Output(TABLE)], buffer_id=ev.buffer_id, in_port=ev.in_port)",
    "out.packet_out(ev.dpid, [Output(TABLE)], packet=ev.packet, in_port=ev.in_port)",
    "out.flow_mod(ev.dpid, Match.of(ip_dst='10.0.0.0/8'), [SetField('ip_dst', '10.0.0.9'), GotoTable(1)])",
    "out.flow_mod(ev.dpid, Match.of(), [Flood()], table_id=1, idle_timeout=5, notify_removed=True)",
    "out.flow_mod(ev.dpid, Match.of(in_port=1), [ToController(True)], priority=65535, hard_timeout=1)",
    "out.flow_mod(ev.dpid, Match.of(), [], command='delete', buffer_id=ev.buffer_id)",
    "pass",
])


def _restore_sigint() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(version=st.sampled_from(["1.0", "1.3"]), join=cli_calls, first=cli_calls, second=cli_calls,
       protocol=st.sampled_from(["openflow", "openflow-b", "attendre"]))
def test_the_cli_ends_0_to_3_without_a_traceback(tmp_path: Path, version: str, join: str, first: str, second: str,
                                                 protocol: str) -> None:
    join = join.replace("ev.dpid", "dpid") if "ev." not in join.replace("ev.dpid", "") else "pass"
    source = CLI_APP.format(version=version, join=join, packet_in=f"{first}\n        {second}")
    app = tmp_path / "fuzzed.py"
    app.write_text(textwrap.dedent(source))
    done = subprocess.run([sys.executable, "-c", "from nice_attendre.frontend.cli import main; main()",
                           "verify", f"{app}:Fuzzed",
                           "--topology", "linear:2", "--packets", "2", "--protocol", protocol,
                           "--max-transitions", "1000"],
                          capture_output=True, text=True, timeout=300, preexec_fn=_restore_sigint)
    assert done.returncode in (0, 1, 2, 3), (source, done.stdout[-2000:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr, done.stderr


# ---- what the fuzzing found --------------------------------------------------------------------

@pytest.mark.parametrize("protocol", ["pif", "pif:expire=event"])
def test_entries_that_time_out_under_packet_in_filtering(protocol: str) -> None:
    """pif's pending-entry expiry handler was named ``expire`` and so replaced the switch's
    flow-entry expiry: the first idle timeout of an app under pif ended in a TypeError (exit 70)."""
    from tests_data_apps import path

    result = verify(path("timeout_routing.py", "TimeoutRouting"), topology="linear:2", packets=1, protocol=protocol)
    assert result.ok, result.discoveries


@pytest.mark.parametrize("match, message", [
    (Match((("ip_dst", "10.0.0.7/24"),)), "ip_dst='10.0.0.7/24' has host bits set; write '10.0.0.0/24'"),
    (Match((("ip_src", "10.0.0.0/33"),)), "bad IPv4 prefix '10.0.0.0/33'"),
    (Match((("eth_dst", "10.0.0.0/8"),)), "only ip_src and ip_dst take a prefix, not eth_dst='10.0.0.0/8'"),
])
def test_a_match_built_by_hand_with_a_bad_prefix_is_the_apps_finding(match: Match, message: str) -> None:
    """A Match built without Match.of may hold a prefix that is not one: a delete covering
    entries with it, or a packet matched against it, raised ValueError in the switch (exit 70)."""

    class HandMade(App[None]):
        def on_switch_join(self, state: None, dpid: int, out: Out) -> None:
            out.flow_mod(dpid, Match.of(ip_dst="10.0.0.0/8"), [Output(2)])
            out.flow_mod(dpid, match, [], command="delete")
            return state

    result = verify(HandMade(), topology="linear:2", packets=1)
    assert result.verdict == "violated"
    assert message in result.discoveries[0].reason


@pytest.mark.parametrize("action, message", [
    (SetField("eth_src", 80), "SetField eth_src takes a str, got int 80"),
    (SetField("tp_dst", "80"), "SetField tp_dst takes an int, got str '80'"),
])
def test_a_set_field_of_the_wrong_type_is_the_apps_finding(action: SetField, message: str) -> None:
    """A packet rewritten with a value of another type than its field's (a number for a MAC
    address) made the switch compare headers of mixed types: under pif the pending entries
    could not be sorted, a TypeError (exit 70)."""

    class Rewrites(App[None]):
        def on_packet_in(self, state: None, ev: Any, out: Out) -> None:
            out.packet_out(ev.dpid, [action, GotoTable(1)], packet=ev.packet, in_port=ev.in_port)
            return state

    result = verify(Rewrites(), topology="linear:2", packets=1, protocol="pif")
    assert result.verdict == "violated"
    assert message in result.discoveries[0].reason
