"""Flow tables as OpenFlow defines them (issue 29, section 1): where the specification
leaves a choice to the switch the checker explores every choice, where it defines the
outcome the model follows it, and where a switch refuses a request the app hears of it.

* ``Output(TABLE)`` in a flow entry: OpenFlow allows OFPP_TABLE only in packet-outs; a
  switch answers such a flow-mod with an error, so the request is the app's finding
  (app-exception naming the call), never a crash of the checker (it recursed until exit 70).
"""
from __future__ import annotations

import pytest

from nice_attendre import verify
from nice_attendre.models.app import BadRequest, Hop, Out
from nice_attendre.models.messages import TABLE
from nice_attendre.models.packet import Match, Output
from nice_attendre.models.topology import load_topology
from tests_data_apps import path

PROTOCOLS = ("openflow", "openflow-b", "attendre")


# ---- Output(TABLE) in a flow entry ------------------------------------------------------------

@pytest.mark.parametrize("valid", [None, set()])
@pytest.mark.parametrize("call", [
    lambda o: o.flow_mod(1, Match.of(eth_dst="h2"), [Output(TABLE)]),
    lambda o: o.flow_mod(1, Match.of(eth_dst="h2"), (Output(2), Output(TABLE)), command="modify"),
    lambda o: o.flow_mod(1, Match.of(eth_dst="h2"), [Output(TABLE)], buffer_id=("h1", 0, 0)),
    lambda o: o.install_path([Hop(1, Match.of(eth_dst="h2"), (Output(TABLE),))]),
    lambda o: o.install_path([Hop(1, Match.of(eth_dst="h2"), (Output(2),)),
                              Hop(2, Match.of(eth_dst="h2"), [Output(TABLE)])]),
], ids=["add", "modify", "with-buffer", "path", "path-hop-2"])
def test_an_entry_never_outputs_to_the_table(call, valid) -> None:
    sink = Out(load_topology("linear:2"), valid)
    if valid is not None:
        valid.add(Match.of(eth_dst="h2"))  # the fast path of a known match checks it too
    with pytest.raises(BadRequest, match=r"Output\(TABLE\) is valid only in a packet-out's actions"):
        call(sink)
    assert sink.requests == []


def test_a_packet_out_and_a_delete_may_name_the_table() -> None:
    sink = Out(load_topology("linear:2"), set())
    sink.packet_out(1, [Output(TABLE)], buffer_id=("h1", 0, 0), in_port=1)
    sink.flow_mod(1, Match.of(eth_dst="h2"), [Output(TABLE)], command="delete")  # actions ignored
    assert len(sink.requests) == 2


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_output_table_in_an_entry_is_the_apps_finding(protocol: str) -> None:
    result = verify(path("resubmit.py", "ResubmitInEntry"), topology="linear:3", packets=2, protocol=protocol)
    assert result.verdict == "violated"
    (found,) = result.discoveries
    assert found.property == "app-exception"
    assert "ResubmitInEntry.on_packet_in made a malformed request: out.flow_mod: Output(TABLE)" in found.reason


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_output_table_in_a_packet_out_is_fine(protocol: str) -> None:
    result = verify(path("resubmit.py", "ResubmitByPacketOut"), topology="linear:3", packets=2, protocol=protocol)
    assert result.ok, result.discoveries
