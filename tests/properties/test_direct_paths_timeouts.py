"""`direct-paths` on apps whose entries time out (issue 29, section 4).

An entry with an idle or hard timeout may expire between two packets of a flow (time is not
modelled), so a packet sent after the flow's first delivery may miss through no fault of the
app: before, every such app failed `direct-paths`. An expiry now starts the flow over: the
packets on their way then, and those sent before a packet of the flow reaches its destination
again, are not judged. An app that does not route the flow again after an expiry still fails.
"""
from __future__ import annotations

import pytest

from nice_attendre import verify
from tests_data_apps import path

ROUTER = path("idle_router.py", "IdleRouter")
TIMEOUTS = path("timeout_routing.py", "TimeoutRouting")
PROTOCOLS = ["openflow", "openflow-b", "attendre"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("app, topology, packets", [(ROUTER, "linear:1", 3), (ROUTER, "linear:2", 2),
                                                    (TIMEOUTS, "linear:1", 3)])
def test_a_correct_router_with_idle_timeouts_keeps_direct_paths(app: str, topology: str, packets: int,
                                                                protocol: str) -> None:
    result = verify(app, topology=topology, packets=packets, protocol=protocol,
                    properties=["direct-paths", "strict-direct-paths", "delivery", "no-forgotten-packets"])
    assert result.ok and result.complete, [d.reason for d in result.discoveries]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_router_that_does_not_route_a_flow_again_after_an_expiry_fails_direct_paths(protocol: str) -> None:
    result = verify(ROUTER, topology="linear:1", packets=3, protocol=protocol, app_options={"bug": "no-reinstall"},
                    properties=["direct-paths"])
    (found,) = result.discoveries
    assert found.property == "direct-paths"
    assert "sent after an earlier packet of the flow had reached" in found.reason
    assert any("expires" in str(event) for event in found.trace.events)  # the entry had expired before


def test_apps_without_timeouts_explore_what_they_did() -> None:
    """The bookkeeping of expiries costs nothing where no entry expires (counts pinned
    before the change)."""
    counts = {}
    for app, topology, packets, protocol, prop in [("route-flow", "linear:3", 3, "attendre", "direct-paths"),
                                                   ("route-flow", "linear:3", 2, "openflow", "direct-paths"),
                                                   ("mac-learning", "linear:2", 2, "openflow", "strict-direct-paths")]:
        result = verify(app, topology=topology, packets=packets, protocol=protocol, properties=[prop])
        assert result.ok
        counts[(app, topology, packets, protocol)] = (result.stats.transitions, result.stats.unique_states)
    assert counts == {("route-flow", "linear:3", 3, "attendre"): (3949, 1334),
                      ("route-flow", "linear:3", 2, "openflow"): (13639, 5142),
                      ("mac-learning", "linear:2", 2, "openflow"): (18874, 7449)}
