"""Issue 28, section 4: each Ryu feature's app of our own, correct and buggy, under the three
protocols (with --joins-first, so the OpenFlow 1.3 table-miss race does not hide what each
app is about): the correct one passes every default property, the buggy one fails the
property its bug breaks."""
from __future__ import annotations

from pathlib import Path

import pytest

from nice_attendre.frontend.api import verify

APPS = Path(__file__).resolve().parents[2] / "data" / "apps"
PROTOCOLS = ("openflow", "openflow-b", "attendre")

#: (file, correct class, buggy class, the property the buggy one fails)
PAIRS = [
    ("ryu_flow_removed.py", "ExpiringSwitch13", "ForgetfulByTheWrongField13", "app-exception"),  # flow-removed
    ("ryu_overlap.py", "OverlapAware13", "OverlapUnaware13", "app-exception"),  # CHECK_OVERLAP's error message
    ("ryu_random.py", "SeededFlooder10", "RandomFlooder10", "app-nondeterminism"),  # a random choice
    ("ryu_versions.py", "LearningSwitch14", "WrongReason14", "app-exception"),  # OpenFlow 1.4's packet-in
    ("ryu_xids.py", "BarrierKeyedSwitch13", "SharedXidSwitch13", "app-exception"),  # xid-keyed barriers
]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("file, correct, buggy, broken", PAIRS)
def test_correct_passes_and_buggy_fails(file: str, correct: str, buggy: str, broken: str, protocol: str) -> None:
    good = verify(f"{APPS / file}:{correct}", protocol=protocol, joins_first=True)
    assert good.ok, [(d.property, d.reason) for d in good.discoveries]
    bad = verify(f"{APPS / file}:{buggy}", protocol=protocol, joins_first=True)
    found = bad.discovery(broken)
    assert found is not None and not bad.ok, [(d.property, d.reason) for d in bad.discoveries]
    assert found.trace is not None and len(found.trace.steps) > 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_sample_subclass_with_its_parent_beside_it_runs(protocol: str) -> None:
    assert verify(f"{APPS / 'ryu_subclass.py'}:QuietExpiringSwitch13", protocol=protocol, joins_first=True).ok
