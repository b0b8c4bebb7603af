"""Route-flow: pinned counts under the three protocols, its bug found, Attendre's claims."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from nice_attendre import verify

# (protocol, switches, packets) -> (transitions, unique states, revisits, max depth), with the
# default properties (none keeps history in the state: these are the bare state space, and the
# transitions are Fig. 8's). A change here is a change of semantics: explain it in the commit.
PINNED = {
    ("openflow", 1, 1): (9, 10, 0, 9),
    ("openflow", 1, 2): (80, 50, 31, 18),
    ("openflow", 2, 1): (29, 24, 6, 15),
    ("openflow", 2, 2): (1026, 506, 521, 30),
    ("openflow", 3, 1): (128, 77, 52, 22),
    ("openflow", 3, 2): (13107, 4934, 8174, 40),
    ("openflow-b", 1, 1): (9, 10, 0, 9),
    ("openflow-b", 1, 2): (80, 50, 31, 18),
    ("openflow-b", 2, 1): (17, 18, 0, 17),
    ("openflow-b", 2, 2): (281, 161, 121, 34),
    ("openflow-b", 3, 1): (61, 44, 18, 25),
    ("openflow-b", 3, 2): (2131, 864, 1268, 50),
    ("attendre", 1, 1): (9, 10, 0, 9),
    ("attendre", 1, 2): (58, 37, 22, 14),
    ("attendre", 2, 1): (21, 18, 4, 13),
    ("attendre", 2, 2): (158, 83, 76, 20),
    ("attendre", 3, 1): (53, 34, 20, 17),
    ("attendre", 3, 2): (430, 185, 246, 26),
}


@pytest.mark.parametrize("protocol,switches,packets", sorted(PINNED))
def test_pinned_counts(protocol: str, switches: int, packets: int) -> None:
    result = verify("route-flow", topology=f"linear:{switches}", packets=packets, protocol=protocol)
    assert result.ok and result.complete
    assert result.stats.counts() == PINNED[(protocol, switches, packets)]


def test_one_switch_one_packet_is_a_single_path() -> None:
    """No race with one packet and one switch: send, miss, packet-in, flow-mod/packet-out,
    receive+reply, miss, packet-in, flow-mod/packet-out, receive."""
    result = verify("route-flow", topology="linear:1", packets=1)
    assert result.stats.counts() == (9, 10, 0, 9)


@pytest.mark.parametrize("switches,packets", [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1), (3, 2), (1, 3), (4, 1)])
def test_attendre_one_packet_in_per_flow_holds(switches: int, packets: int) -> None:
    result = verify("route-flow", topology=f"linear:{switches}", packets=packets, protocol="attendre",
                    properties=["one-packet-in-per-flow"])
    assert result.ok and result.complete


@pytest.mark.parametrize("switches,packets,holds", [(1, 1, True), (1, 2, False), (2, 1, False), (2, 2, False)])
def test_openflow_one_packet_in_per_flow_fails_with_two_packets_or_switches(
        switches: int, packets: int, holds: bool) -> None:
    result = verify("route-flow", topology=f"linear:{switches}", packets=packets, protocol="openflow",
                    properties=["one-packet-in-per-flow"])
    assert result.ok is holds
    if not holds:
        (found,) = result.discoveries
        assert found.property == "one-packet-in-per-flow" and "second packet-in" in found.reason
        assert found.trace is not None
        found.trace.replay(result.system)


@pytest.mark.parametrize("switches,packets", [(1, 2), (2, 2), (1, 3), (2, 3)])
def test_races_reorder_packets_under_openflow_but_never_under_attendre(switches: int, packets: int) -> None:
    """Type-1/2 races let a later packet overtake one waiting for the controller (except with
    a single switch and two packets, where both wait in the same command queue)."""
    topology = f"linear:{switches}"
    openflow = verify("route-flow", topology=topology, packets=packets, properties=["no-reordering"])
    attendre = verify("route-flow", topology=topology, packets=packets, protocol="attendre",
                      properties=["no-reordering"])
    assert openflow.ok is ((switches, packets) == (1, 2))
    assert attendre.ok and attendre.complete


def test_buggy_variant_is_found_and_its_trace_replays() -> None:
    result = verify("route-flow", topology="linear:2", packets=1, app_options={"bug": "forget-last-hop"})
    assert not result.ok
    found, lost = result.discoveries  # both judged in the same quiescent state
    assert found.property == "no-forgotten-packets"
    assert found.reason == "s2 still holds data h1#0 [h1->h2]"
    assert lost.property == "delivery" and lost.reason == "h1#0 never reached h2"
    final = found.trace.replay(result.system)
    assert result.system.buffered_packets(final)[0][0] == 2
    assert len(found.trace) == 6


def test_buggy_variant_is_found_under_every_protocol() -> None:
    for protocol in ("openflow", "openflow-b", "attendre"):
        result = verify("route-flow", topology="linear:3", packets=2, protocol=protocol,
                        app_options={"bug": "forget-last-hop"})
        assert [d.property for d in result.discoveries] == ["no-forgotten-packets", "delivery"], protocol


def test_unknown_bug_is_an_input_error() -> None:
    from nice_attendre.errors import AppLoadError

    with pytest.raises(AppLoadError, match="unknown route-flow bug 'typo'"):
        verify("route-flow", app_options={"bug": "typo"})


SCRIPT = """
import json, sys
from nice_attendre import verify
out = {}
for proto in ("openflow", "openflow-b", "attendre"):
    r = verify("route-flow", topology="linear:3", packets=2, protocol=proto)
    out[proto] = list(r.stats.counts())
r = verify("route-flow", topology="linear:3", packets=2, app_options={"bug": "forget-last-hop"})
out["trace"] = [str(e) for e in r.discoveries[0].trace.events]
for proto in ("openflow", "attendre"):
    out["mac-" + proto] = list(verify("mac-learning", topology="linear:2", packets=2, protocol=proto).stats.counts())
    out["te-" + proto] = list(verify("energy-te", topology="paths:2,3", packets=2, protocol=proto).stats.counts())
r = verify("mac-learning", topology="linear:1", packets=2, app_options={"bug": "delayed-direct-path"})
out["mac-trace"] = [str(e) for e in r.discoveries[0].trace.events]
print(json.dumps(out))
"""


def test_same_counts_and_traces_under_any_hash_seed() -> None:
    """Route-flow, MAC learning (whose state holds sets of strings) and energy TE."""
    outputs = set()
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
        outputs.add(done.stdout)
    assert len(outputs) == 1
    data = json.loads(outputs.pop())
    assert data["openflow"] == list(PINNED[("openflow", 3, 2)])
    assert data["attendre"] == list(PINNED[("attendre", 3, 2)])
