"""`delivery` pairs answers with their requests (issue 29, section 4).

Behind a NAT an answer is addressed to the public address, which is no host's: before,
`delivery` left such an answer unjudged, so a NAT that handed h1's answer to h2 passed
`delivery` and `no-duplicates`. An answer is now meant for the host whose packet it answers
(the flow's `reply`), whatever address it carries.
"""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from nice_attendre import verify
from nice_attendre.frontend.cli import main
from nice_attendre.models.view import View
from tests_data_apps import APPS, path

NAT = path("nat.py", "Nat")
SCENARIO = str(APPS / "nat.toml")
PROTOCOLS = ["openflow", "openflow-b", "attendre"]
#: Everything but delivery: the misdelivering NAT passes all of them.
OTHERS = ["no-forwarding-loops", "no-black-holes", "no-forgotten-packets", "no-duplicates", "no-reordering"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_correct_nat_delivers_every_answer(protocol: str) -> None:
    result = verify(NAT, topology="star:3", scenario=SCENARIO, protocol=protocol, properties=["delivery", *OTHERS])
    assert result.ok and result.complete


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_nat_that_misdelivers_an_answer_fails_delivery(protocol: str) -> None:
    assert verify(NAT, topology="star:3", scenario=SCENARIO, protocol=protocol, app_options={"bug": "port-collision"},
                  properties=OTHERS).ok  # nothing else sees it
    result = verify(NAT, topology="star:3", scenario=SCENARIO, protocol=protocol,
                    app_options={"bug": "port-collision"}, properties=["delivery"])
    (found,) = result.discoveries
    assert found.property == "delivery"
    # h3 answers the public address; the answer to one inside host reached the other
    assert ("h3#0 (the answer to h1#0) never reached h1" in found.reason
            or "h3#1 (the answer to h1#0) never reached h1" in found.reason
            or "h3#0 (the answer to h2#0) never reached h2" in found.reason
            or "h3#1 (the answer to h2#0) never reached h2" in found.reason), found.reason
    assert "meant for" in found.reason, found.reason


def test_the_misdelivering_nat_fails_delivery_on_the_command_line() -> None:
    result = CliRunner().invoke(main, ["verify", NAT, "-t", "star:3", "--scenario", SCENARIO,
                                       "--bug", "port-collision"])
    assert result.exit_code == 1, result.output
    assert "FAILED: delivery" in result.output
    assert "never reached" in result.output


def test_an_answer_says_whom_it_is_for() -> None:
    """The view of what a host sent names each packet's addressee: an answer's is the host
    whose packet it answers, though it is addressed to the NAT's public address."""
    seen: list[tuple[str | None, ...]] = []

    def record(view: View) -> bool:
        answers = view.hosts["h3"].sent
        if len(answers) == 2:
            seen.append(tuple(sent.to for sent in answers))
            assert all(sent.header.eth_dst == "10.0.0.200" for sent in answers)
        for host in ("h1", "h2"):
            assert all(sent.to == "h3" for sent in view.hosts[host].sent)
        return True

    from nice_attendre.properties.custom import always

    result = verify(NAT, topology="star:3", scenario=SCENARIO, properties=[always("record", record)])
    assert result.ok
    assert set(seen) == {("h1", "h2"), ("h2", "h1")}
