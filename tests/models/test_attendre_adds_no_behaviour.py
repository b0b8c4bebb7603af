"""Paper IV.D: Attendre's behaviour is a special case of OpenFlow's.

Over a grid of scenarios: every quiescent outcome (what each host received, in order) reached
under Attendre is also reached under OpenFlow, and Attendre violates no property that
OpenFlow satisfies on the same scenario.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nice_attendre.frontend.api import build
from nice_attendre.checker import dfs
from tests_data_apps import path
from outcomes import outcomes

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

SCENARIOS = [
    ("route-flow", {"topology": "linear:1", "packets": 1}),
    ("route-flow", {"topology": "linear:1", "packets": 3}),
    ("route-flow", {"topology": "linear:2", "packets": 2}),
    ("route-flow", {"topology": "linear:3", "packets": 1}),
    ("route-flow", {"topology": "linear:3", "packets": 2}),
    ("route-flow", {"topology": "linear:2", "packets": 3}),
    (f"{EXAMPLES / 'proactive.py'}:ProactiveRouting", {"topology": "linear:2", "packets": 2}),
    # Several paths in one handler call (both directions of a flow): two ACs of one set per switch.
    (path("both_ways.py", "BothWays"), {"topology": "linear:2", "packets": 1}),
    (path("both_ways.py", "BothWays"), {"topology": "linear:3", "packets": 1}),
    (path("both_ways.py", "BothWays"), {"topology": "linear:2", "packets": 2}),
    pytest.param(path("both_ways.py", "BothWays"), {"topology": "linear:3", "packets": 2}, marks=pytest.mark.slow),
]

CHECKED = ("no-forwarding-loops", "no-black-holes", "no-forgotten-packets", "direct-paths",
           "strict-direct-paths", "no-reordering")


@pytest.mark.parametrize("app,options", SCENARIOS)
def test_attendre_outcomes_are_openflow_outcomes(app: str, options: dict[str, Any]) -> None:
    openflow = outcomes(app, "openflow", **options)
    attendre = outcomes(app, "attendre", **options)
    assert attendre and attendre <= openflow
    assert outcomes(app, "openflow-b", **options) <= openflow


def verdicts(app: str, protocol: str, options: dict[str, Any]) -> dict[str, bool]:
    run = build(app, protocol=protocol, properties=CHECKED, **options)
    result = dfs(run.network, run.properties, keep_going=True)
    assert result.complete or result.stop_reason is None
    failed = {d.property for d in result.discoveries}
    return {p.name: p.name not in failed for p in run.properties}


@pytest.mark.parametrize("app,options", SCENARIOS)
def test_attendre_violates_nothing_openflow_satisfies(app: str, options: dict[str, Any]) -> None:
    openflow = verdicts(app, "openflow", options)
    attendre = verdicts(app, "attendre", options)
    assert [name for name, ok in openflow.items() if ok and not attendre[name]] == []
