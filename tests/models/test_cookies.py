"""Flow cookies in the native API (issue 28, the rest): ``out.flow_mod(cookie=, cookie_mask=)``
carries them to the switch, which keeps an added entry's cookie and lets a modify or delete
with a cookie mask select entries by it (see also tests/models/ryu/test_ryu_values.py)."""
from __future__ import annotations

import pytest

from nice_attendre.models.app import BadRequest, Out
from nice_attendre.models.messages import NO_TIMEOUTS, Timeouts
from nice_attendre.models.packet import Match, Output
from nice_attendre.models.topology import load_topology

TOPOLOGY = load_topology("linear:2")


def test_a_flow_mod_carries_its_cookie_and_mask() -> None:
    out = Out(TOPOLOGY, set())
    out.flow_mod(1, Match.of(eth_dst="h2"), [Output(2)], cookie=0x5A01)
    out.flow_mod(1, Match.of(), [], command="delete", cookie=0x5A00, cookie_mask=0xFF00)
    out.flow_mod(1, Match.of(eth_dst="h1"), [Output(1)])
    add, delete, plain = out.requests
    assert add.timeouts == Timeouts(cookie=0x5A01) and add.timeouts.cookie == 0x5A01
    assert (delete.timeouts.cookie, delete.timeouts.cookie_mask) == (0x5A00, 0xFF00)
    assert plain.timeouts is NO_TIMEOUTS  # (no cookie: the value it always was)


@pytest.mark.parametrize("field, value", [("cookie", -1), ("cookie", 2**64), ("cookie_mask", "ff"), ("cookie", 1.5)])
def test_a_cookie_outside_64_bits_is_a_bad_request(field: str, value: object) -> None:
    with pytest.raises(BadRequest, match=field):
        Out(TOPOLOGY, set()).flow_mod(1, Match.of(), [Output(1)], **{field: value})


def test_an_added_entry_keeps_its_cookie_but_not_the_mask() -> None:
    assert Timeouts(5, 0, True, 7, 0xFF).entry() == Timeouts(5, 0, True, 7)
    assert Timeouts(cookie=7).selects(None) is True  # no mask: every entry
    assert not Timeouts(cookie=7, cookie_mask=0xFF).selects(None)  # an entry without a cookie has 0
