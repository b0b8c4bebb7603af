"""Flow tables as OpenFlow defines them (issue 29, section 1): where the specification
leaves a choice to the switch the checker explores every choice, where it defines the
outcome the model follows it, and where a switch refuses a request the app hears of it.

* A MODIFY flow-mod with a buffer id applies to the buffered packet as an add does (OpenFlow
  1.0: "buffered packet to apply to"; 1.3: the flow-mod then a packet-out to TABLE); only
  deletes ignore the buffer id. The packet stayed buffered: false no-forgotten-packets and
  delivery for an app answering a repeated packet-in with a modify, under every variant.
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


# ---- MODIFY with a buffer id ------------------------------------------------------------------

@pytest.mark.parametrize("protocol, properties", [
    ("openflow", ["no-forgotten-packets", "delivery"]),
    ("openflow-b", ["no-forgotten-packets", "delivery"]),
    ("attendre", ["no-forgotten-packets", "delivery"]),
    ("batch", ["no-forgotten-packets", "delivery"]),
    ("buffer", ["no-forgotten-packets", "delivery"]),
    ("pif", ["no-forgotten-packets"]),  # its rate-limit meter may drop a repeat: delivery fails for any app
])
def test_a_modify_with_a_buffer_id_releases_the_packet(protocol: str, properties: list[str]) -> None:
    result = verify(path("modify_repeat.py", "ModifyRepeat"), topology="linear:3", packets=2, protocol=protocol,
                    properties=properties)
    assert result.ok, result.discoveries


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_modify_with_a_buffer_id_releases_the_packet_through_the_table_in_openflow13(protocol: str) -> None:
    result = verify(path("modify_repeat.py", "ModifyRepeat13"), topology="linear:3", packets=2, protocol=protocol,
                    properties=["no-forgotten-packets"])
    assert result.ok, result.discoveries


@pytest.mark.parametrize("protocol", ("openflow", "openflow-b", "pif", "batch", "buffer"))
def test_a_modify_without_the_buffer_id_forgets_the_packet(protocol: str) -> None:
    result = verify(path("modify_repeat.py", "ModifyForgets"), topology="linear:3", packets=2, protocol=protocol,
                    properties=["no-forgotten-packets"])
    assert result.verdict == "violated"
    assert "s1 still holds data h1#1" in result.discoveries[0].reason


def test_a_ryu_apps_modify_with_a_buffer_id_releases_the_frame() -> None:
    pytest.importorskip("os_ken")
    result = verify(path("ryu_modify.py", "ModifyLearningSwitch10"), topology="linear:2", packets=2)
    assert result.ok, result.discoveries  # it was refused: "a modify flow-mod with a buffer id", exit 2


@pytest.mark.parametrize("version", ["1.0", "1.3"])
@pytest.mark.parametrize("command", ["modify", "modify-or-add", "delete", "delete-strict"])
def test_only_a_delete_ignores_the_buffer_id(command: str, version: str) -> None:
    from nice_attendre.frontend.api import build
    from nice_attendre.models.app import App
    from nice_attendre.models.network import Tx
    from nice_attendre.models.messages import FlowMod
    from nice_attendre.models.packet import Header, Packet

    class Quiet(App[None]):
        openflow_version = version

    net = build(Quiet(), topology="linear:2", properties=[]).network
    state = net.initial_states()[0]
    packet = Packet(Header("h1", "h2", "10.0.0.1", "10.0.0.2"), "h1", 0)
    tx = Tx(net, state)
    protocol = net.protocol
    buffer_id = protocol.buffer_packet(tx, 1, 1, packet)
    if version == "1.3":  # the packet goes through the table: an entry must send it on
        protocol.install(tx, 1, FlowMod(Match.of(), (Output(2),), priority=0))
    protocol.flow_mod(tx, 1, FlowMod(Match.of(eth_dst="h2"), (Output(2),), buffer_id=buffer_id, command=command))
    still_buffered = bool(tx.get(net.slot_buffer[1]))
    assert still_buffered == command.startswith("delete")
    assert bool(tx.get(net.slot_port[(2, 1)])) != still_buffered  # released: on its way to s2
