"""no-stale-routes where entries of equal priority tie (issue 29): the switch may choose any
of them, so the property follows each one; which one a checker happens to look at first
must not decide the verdict."""
from __future__ import annotations

import pytest

from nice_attendre import verify
from nice_attendre.models.app import Out
from nice_attendre.models.packet import Match, Output

from tests_data_apps import load

MirrorEth = load("equal_priority.py", "MirrorEth")
MirrorIp = load("equal_priority.py", "MirrorIp")


class DropEth(MirrorEth):
    """Forward h1->h2 by {eth_dst=h2}, and drop h1's traffic by {ip_src=10.0.0.1}, at equal priority."""

    def on_switch_join(self, state: None, dpid: int, out: Out) -> None:
        out.flow_mod(dpid, self.forward(), [Output(2)], priority=100)
        out.flow_mod(dpid, self.mirror(), [], priority=100)
        out.flow_mod(dpid, Match.of(eth_dst="h1"), [Output(1)], priority=200)
        return state


class DropIp(DropEth):
    """The same entries, the fields named the other way round."""

    forward = MirrorIp.forward
    mirror = MirrorIp.mirror


@pytest.mark.parametrize("app", [DropEth, DropIp], ids=["eth", "ip"])
def test_a_tied_entry_that_drops_is_a_stale_route_whichever_way_its_fields_are_named(app: type) -> None:
    # Before, the property followed only the first tied entry in the table's canonical
    # order: one naming passed, the other failed.
    result = verify(app(), properties=["no-stale-routes"], packets=1)
    assert result.verdict == "violated"
    (found,) = {d.property for d in result.discoveries}
    assert found == "no-stale-routes"
    assert "drops packets" in result.discoveries[0].reason
