"""Partial-order reduction over every pinned scenario it supports (the tables the memo test
reads: route-flow, mac-learning, energy-te, the variant counts, the Ryu learning switch, the
bugs): with and without ``por`` the same verdicts and the same quiescent states (by
fingerprint), and the reduced search's traces replay, for every property of the scenario
--por checks (the monitors that keep history too), with faults, command order any and threaded
controllers too, and every protocol variant (models/footprints_variants.py). What --por refuses
(properties of executions or not known to be stable; the variants with those options) is
left out here and tested as refused in test_por_network.py. Scenarios of more than 3,000 transitions run
with ``-m slow``."""
from __future__ import annotations

from typing import Any

import pytest

from nice_attendre.checker import dfs
from nice_attendre.frontend.api import build
from nice_attendre.models.footprints import HISTORY_MONITORS, SUPPORTED_PROTOCOLS
from nice_attendre.models.protocols import resolve
from nice_attendre.por import refusal, unsupported
from nice_attendre.property import EXECUTION_EXPECTATIONS, Property
from pinned import load_test_module

_OPTIONS = ("properties", "app_options", "keep_going", "count_load", "faults", "command_order",
            "threaded_controller", "joins_first")


def _supported() -> list[Any]:
    found = []
    for param in load_test_module("models/test_memo_pinned.py").scenarios():
        app, topology, packets, protocol, extra = param.values
        if resolve(protocol).name not in SUPPORTED_PROTOCOLS or set(extra) - set(_OPTIONS):
            continue
        found.append(pytest.param(app, topology, packets, protocol, extra, id=param.id, marks=param.marks))
    return found


def _checkable(app: str, topology: str, packets: int, options: dict[str, Any]) -> list[str]:
    """The scenario's properties (its own or the defaults) that --por checks: not those of
    executions, not those it refuses (not stable; under the variants beyond OpenFlow, the
    monitors that keep history)."""
    run = build(app, topology=topology, packets=packets, **options)
    openflow = resolve(options.get("protocol", "openflow")).name in ("openflow", "openflow-b")
    return [p.name for p in run.properties if p.expectation not in EXECUTION_EXPECTATIONS
            and refusal([p]) is None and p.name != "app-exception"
            and p.name != "app-nondeterminism" and (openflow or p.name not in HISTORY_MONITORS)]


def _explore(app: str, topology: str, packets: int, protocol: str, extra: dict[str, Any],
             por: bool) -> tuple[Any, set[int], Any]:
    options = {key: value for key, value in extra.items() if key != "keep_going"}
    options["protocol"] = protocol
    options["properties"] = _checkable(app, topology, packets, options)
    run = build(app, topology=topology, packets=packets, **options)
    net = run.network
    assert net.protocol.name == protocol.split(":")[0]  # the scenario's own variant is the one swept
    properties = tuple(p for p in run.properties if p.expectation not in EXECUTION_EXPECTATIONS)
    assert not por or not (unsupported(net) or refusal(properties)), unsupported(net) or refusal(properties)
    quiet: set[int] = set()
    collect = Property.at_quiescence("collect", lambda state: quiet.add(net.fingerprint(state)) is None)
    result = dfs(net, properties + (collect,), keep_going=True, por=por)
    assert result.complete
    return result, quiet, net


@pytest.mark.parametrize("app,topology,packets,protocol,extra", _supported())
def test_reduced_search_agrees_on_every_pinned_scenario(app: str, topology: str, packets: int, protocol: str,
                                                        extra: dict[str, Any]) -> None:
    reduced, reduced_quiet, net = _explore(app, topology, packets, protocol, extra, True)
    full, full_quiet, _net = _explore(app, topology, packets, protocol, extra, False)
    assert reduced_quiet == full_quiet
    assert {d.property for d in reduced.discoveries} == {d.property for d in full.discoveries}
    assert reduced.stats.unique_states <= full.stats.unique_states
    for found in reduced.discoveries[:10]:
        found.trace.replay(net)


def test_the_sweep_covers_the_shipped_apps() -> None:
    names = {str(param.values[0]).rsplit("/", 1)[-1] for param in _supported()}
    assert {"route-flow", "mac-learning", "energy-te"} <= names
    assert any("learning_switch_10" in name for name in names)


def test_the_sweep_covers_the_options() -> None:
    """The pinned scenarios with faults, command order any and a threaded controller, and
    those whose properties keep history, are swept too."""
    extras = [param.values[4] for param in _supported()]
    assert any("faults" in extra for extra in extras)
    assert any(extra.get("command_order") == "any" for extra in extras)
    assert any(extra.get("threaded_controller") for extra in extras)
    history = {"direct-paths", "strict-direct-paths", "one-packet-in-per-flow"}
    assert any(history & set(_checkable(app, topology, packets, {k: v for k, v in extra.items() if k != "keep_going"}))
               for app, topology, packets, _protocol, extra in (param.values for param in _supported()))


def test_the_sweep_covers_each_supported_variant() -> None:
    protocols = {resolve(param.values[3]).name for param in _supported()}
    assert protocols == set(SUPPORTED_PROTOCOLS)
