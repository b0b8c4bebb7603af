"""Unmodified Ryu-API apps under the other papers' variants: the OpenFlow 1.0 learning switch
handles packet-ins without buffer id (a full buffer) by sending the frame back, which the
shipped native apps do not; what a variant cannot model for a Ryu app is refused in one line."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from nice_attendre import verify
from nice_attendre.frontend.cli import main
from nice_attendre.errors import InputError

ROOT = Path(__file__).resolve().parents[3]
LS10 = f"{ROOT / 'examples' / 'ryu' / 'learning_switch_10.py'}:LearningSwitch10"
LS13 = f"{ROOT / 'examples' / 'ryu' / 'learning_switch_13.py'}:LearningSwitch13"

#: protocol -> (transitions, unique states, revisits, max depth) of LearningSwitch10 on linear:2
#: with 2 packets, checking delivery and no-forgotten-packets (both hold).
PINNED = {
    "openflow": (298, 180, 119, 28),
    "buffer:capacity=0": (431, 261, 171, 32),
    "buffer:capacity=1": (520, 311, 210, 30),
    "batch": (392, 230, 163, 30),
}


@pytest.mark.parametrize("protocol", list(PINNED))
def test_learning_switch_10_delivers_with_a_full_or_no_buffer(protocol: str) -> None:
    result = verify(LS10, topology="linear:2", packets=2, protocol=protocol,
                    properties=["delivery", "no-forgotten-packets", "no-black-holes"])
    assert result.ok and result.complete
    assert result.stats.counts() == PINNED[protocol]


def test_learning_switch_10_under_pif_drop_loses_the_filtered_frame() -> None:
    result = verify(LS10, topology="linear:2", packets=2, protocol="pif:action=drop,expire=never",
                    properties=["delivery"])
    assert [d.property for d in result.discoveries] == ["delivery"]


def test_flow_granularity_and_pif_refuse_what_they_cannot_model() -> None:
    with pytest.raises(InputError, match="the Ryu adapter cannot hand"):
        verify(LS10, protocol="buffer:granularity=flow")
    result = CliRunner().invoke(main, ["verify", LS13, "-P", "pif"])
    assert result.exit_code == 2
    assert result.stderr == ("Error: protocol pif models OpenFlow 1.0 switches (filtering at a table miss); "
                             "LearningSwitch13 (Ryu app, OpenFlow 1.3) speaks OpenFlow 1.3\n")
