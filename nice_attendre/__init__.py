"""nice-attendre: an explicit-state model checker for OpenFlow controller applications.

The core (``System``, ``Property``, ``dfs``, ``bfs``, ``Result``, ``Trace``) is domain-free; the
OpenFlow network model lives in ``nice_attendre.models``, the apps in
``nice_attendre.apps``, the properties in ``nice_attendre.properties``.
``verify`` builds a network from names and checks it::

    from nice_attendre import assert_holds, verify
    result = verify("route-flow", topology="linear:3", packets=2, protocol="attendre")
    assert_holds(result)   # on failure, the message is the report with the trace
"""
from __future__ import annotations

from typing import Any

from nice_attendre.breadth_first import bfs
from nice_attendre.checker import Limits, Progress, dfs
from nice_attendre.errors import (AppLoadError, InputError, ModelError, NiceAttendreError,
                                  TopologyError, UnknownNameError)
from nice_attendre.property import Expectation, Metric, Property
from nice_attendre.result import Balance, Discovery, Result, Stats
from nice_attendre.system import System
from nice_attendre.frontend.testing import assert_holds, assert_violates
from nice_attendre.trace import Step, Trace

__all__ = [
    "System", "Property", "Expectation", "Metric", "dfs", "bfs", "Limits", "Progress", "Result", "Stats",
    "Discovery", "Balance", "Trace", "Step", "NiceAttendreError", "InputError", "UnknownNameError",
    "TopologyError", "AppLoadError", "ModelError", "verify", "assert_holds", "assert_violates",
]


def __getattr__(name: str) -> Any:
    # ``verify`` lives in the front end, which imports the models; importing it lazily keeps
    # the core free of model imports (and avoids an import cycle).
    if name == "verify":
        from nice_attendre.frontend.api import verify

        return verify
    raise AttributeError(f"module 'nice_attendre' has no attribute {name!r}")
