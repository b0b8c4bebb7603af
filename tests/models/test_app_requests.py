"""`Out` checks what an app asks for: a malformed request raises BadRequest naming the call.

The platform reports BadRequest as the violation app-exception (tests/cli/test_reliability_cli.py);
here the checks themselves, and that well-formed requests pass unchanged.
"""
from __future__ import annotations

import pytest

from nice_attendre.models.app import BadRequest, Hop, Out
from nice_attendre.models.packet import Flood, GotoTable, Match, Output, ToController
from nice_attendre.models.topology import load_topology

TOPOLOGY = load_topology("linear:2")
MATCH = Match.of(eth_dst="h2")


def out(valid: set | None = None) -> Out:
    return Out(TOPOLOGY, valid)


def test_well_formed_requests_pass() -> None:
    sink = out(set())
    sink.flow_mod(1, MATCH, [Output(2), Flood(), ToController(), GotoTable(3)], priority=0, table_id=2)
    sink.flow_mod(1, MATCH, (), command="delete")
    sink.packet_out(1, [Output(1)], buffer_id=("h1", 0, 0), in_port=1)
    sink.install_path([Hop(1, MATCH, [Output(2)]), Hop(2, MATCH, (Output(2),))], priority=65535)
    sink.request_port_stats(2)
    assert len(sink.requests) == 5
    path = sink.requests[3]
    assert [hop.actions for hop in path.hops] == [(Output(2),), (Output(2),)]  # a list became a tuple


@pytest.mark.parametrize("call, message", [
    (lambda o: o.flow_mod("s1", MATCH, []), "out.flow_mod: dpid must be an int, got str 's1'"),
    (lambda o: o.flow_mod(True, MATCH, []), "out.flow_mod: dpid must be an int, got bool True"),
    (lambda o: o.flow_mod(1, {"eth_dst": "h2"}, []), "out.flow_mod: match must be a Match"),
    (lambda o: o.flow_mod(1, Match((("colour", "red"),)), []), "out.flow_mod: bad match field tuple ('colour', 'red')"),
    (lambda o: o.flow_mod(1, Match((("eth_src", "a"), ("eth_dst", "b"))), []),
     "out.flow_mod: match fields must be sorted by name, each once (use Match.of)"),
    (lambda o: o.flow_mod(1, Match.of(eth_dst=["h2"]), []), "out.flow_mod: match field eth_dst must be a str or an int"),
    (lambda o: o.flow_mod(1, Match((), in_port="1"), []), "out.flow_mod: match in_port must be an int or None"),
    (lambda o: o.flow_mod(1, MATCH, Output(2)), "out.flow_mod: actions must be a list or tuple of actions"),
    (lambda o: o.flow_mod(1, MATCH, "flood"), "out.flow_mod: actions must be a list or tuple of actions"),
    (lambda o: o.flow_mod(1, MATCH, [None]), "out.flow_mod: not an action: NoneType None"),
    (lambda o: o.flow_mod(1, MATCH, [GotoTable(0)]), "out.flow_mod: GotoTable must go to a later table (after 0"),
    (lambda o: o.flow_mod(1, MATCH, [], priority=-1), "out.flow_mod: priority must be an int from 0 to 65535"),
    (lambda o: o.flow_mod(1, MATCH, [], table_id=255), "out.flow_mod: table_id must be an int from 0 to 254"),
    (lambda o: o.flow_mod(1, MATCH, [], buffer_id=7), "out.flow_mod: buffer_id must be None or a packet-in's buffer_id"),
    (lambda o: o.flow_mod(1, MATCH, [], command="upsert"), "out.flow_mod: command must be one of add, modify, modify-or-add, delete"),
    (lambda o: o.packet_out(1, [Output(2)]), "out.packet_out: needs a buffer_id or a packet"),
    (lambda o: o.packet_out(1, [Output(2)], packet="data"), "out.packet_out: packet must be a Packet"),
    (lambda o: o.packet_out(1, [Output(2)], buffer_id=("h1", 0, 0), in_port=-3), "out.packet_out: in_port must be"),
    (lambda o: o.install_path(Hop(1, MATCH, ())), "out.install_path: hops must be a list or tuple of Hop"),
    (lambda o: o.install_path([Hop("1", MATCH, ())]), "out.install_path hop 1: dpid must be an int"),
    (lambda o: o.install_path([Hop(1, MATCH, ()), Hop(2, "m", ())]), "out.install_path hop 2: match must be a Match"),
    (lambda o: o.install_path([Hop(1, MATCH, ())], packet_in="ev"), "out.install_path: packet_in must be"),
    (lambda o: o.request_port_stats(None), "out.request_port_stats: dpid must be an int, got NoneType None"),
])
@pytest.mark.parametrize("valid", [None, set()])
def test_malformed_requests_are_named(call, message: str, valid: set | None) -> None:
    sink = out(valid)
    with pytest.raises(BadRequest) as error:
        call(sink)
    assert str(error.value).startswith(message), str(error.value)
    assert sink.requests == []


def test_checked_values_are_remembered_but_bad_ones_never() -> None:
    valid: set = set()
    out(valid).install_path([Hop(1, MATCH, (Output(2),))])
    out(valid).flow_mod(1, MATCH, [Output(2)])
    assert valid == {MATCH}
    with pytest.raises(BadRequest):
        out(valid).flow_mod(1, Match.of(eth_dst=["h2"]), [])  # unhashable: checked, refused, not kept
    with pytest.raises(BadRequest, match="hop 1: dpid must be an int"):
        out(valid).install_path([Hop(True, MATCH, (Output(2),))])  # a known match, a bad dpid
    with pytest.raises(BadRequest, match="hop 1: Output port must be an int"):
        out(valid).install_path([Hop(1, MATCH, (Output(2.0),))])
    assert valid == {MATCH}
