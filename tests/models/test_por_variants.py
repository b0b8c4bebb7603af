"""Partial-order reduction under the protocol variants beyond OpenFlow
(models/footprints_variants.py): the state-dependent statements the variants' footprints make,
each on a state built to break it. The variants' footprints are also checked on every
transition of their scenarios in test_footprints.py and test_por_occurrence.py (their
SCENARIOS), and swept over every pinned scenario in test_por_sweep.py."""
from __future__ import annotations

from typing import Any

from nice_attendre.apps.route_flow import RouteFlow
from nice_attendre.models.events import SwitchProcessPacket
from nice_attendre.models.flowtable import make_entry, may_tie
from nice_attendre.models.footprints import Standin
from nice_attendre.models.messages import DEFAULT_PRIORITY
from nice_attendre.models.network import Network
from nice_attendre.models.packet import AttendreCommand, Match, Output, Packet
from nice_attendre.models.protocols.ties import SwitchChoosesEntry
from nice_attendre.models.scenario import Scenario, host_header
from nice_attendre.models.topology import load_topology
from nice_attendre.por import Alternatives

HDR = host_header("h1", "h2")
V = (1, ("h1", 0, 0))


def _attendre(topology: str = "linear:3") -> Network:
    return Network(Scenario.ping(load_topology(topology), 1), RouteFlow(), "attendre")


def _ties(net: Network, state: Any, dpid: int) -> list[Any]:
    return [event for event in net.enabled(state) if type(event) is SwitchChoosesEntry and event.dpid == dpid]


def test_an_attendre_command_in_a_packet_may_make_a_tie() -> None:
    """s2's table holds a forwarding entry for h2; a packet carrying an Attendre Command for
    s2 with the same priority and a narrower match installs a buffer action there: the next
    packet then meets a tie, with no controller event in between. So a tie's enablers are
    not the controller's events alone while such a command is in the network."""
    net = _attendre()
    wide = make_entry(0, DEFAULT_PRIORITY, Match.of(eth_dst="h2"), (Output(2),))
    ac = AttendreCommand(2, Match.exact(HDR), DEFAULT_PRIORITY, 0, V, 2, 1)
    first = Packet(HDR, "h1", 0, trail=((1, 1),), ac=ac)
    second = Packet(HDR, "h1", 1, trail=((1, 1),))
    state = net.encode({"table:2": (wide,), "port:2:1": (first, second)})
    assert not may_tie(net.value(state, "table:2")) and not _ties(net, state, 2)
    after = net.apply(state, SwitchProcessPacket(2, 1))
    assert may_tie(net.value(after, "table:2")) and _ties(net, after, 2)
    enablers = net.enablers(state, Standin("tie", 2))
    options = enablers if type(enablers) is Alternatives else (enablers,)
    assert enablers is None or all(SwitchProcessPacket(2, 1) in option for option in options)
    # without the command, nothing but the controller makes a tie there
    plain = net.encode({"table:2": (wide,), "port:2:1": (second,)})
    found = net.enablers(plain, Standin("tie", 2))
    assert type(found) is Alternatives and tuple(net.por_model()._feeders) in map(tuple, found)


def test_every_protocol_variant_is_reduced() -> None:
    from nice_attendre.models.footprints import SUPPORTED_PROTOCOLS
    from nice_attendre.models.protocols import protocol_names

    assert set(SUPPORTED_PROTOCOLS) == set(protocol_names())


def test_a_protocol_without_footprints_is_refused(monkeypatch: Any) -> None:
    import pytest

    import nice_attendre.models.footprints as footprints
    from nice_attendre.errors import InputError
    from nice_attendre.frontend.api import verify

    monkeypatch.setattr(footprints, "SUPPORTED_PROTOCOLS", ("openflow",))
    with pytest.raises(InputError, match="protocol pif"):
        verify("route-flow", topology="linear:2", packets=1, por=True, protocol="pif")
