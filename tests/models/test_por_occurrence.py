"""The state-dependent parts of the network's footprints, checked on every transition of
route-flow (and its bug), mac-learning (and a bug), energy-te, an app with timeouts and one
with equal-priority ties: an enabled event whose one transition (its occurrence footprint)
is declared independent of another event's footprint commutes with it (both orders, the
same state, neither disabled), and a switch step that writes a slot with the value it had
declares it a read only."""
from __future__ import annotations

from typing import Any

import pytest

from nice_attendre.models.events import ControllerHandle, SwitchEntryExpires
from nice_attendre.models.footprints import Standin
from nice_attendre.models.protocols.ties import SwitchChoosesEntry
from nice_attendre.por import Alternatives, dependent
from test_footprints import SCENARIOS, _family, _network, _states


@pytest.mark.parametrize("app, topology, packets, options", SCENARIOS)
def test_an_occurrence_declared_independent_commutes(app: str, topology: str | None, packets: int,
                                                      options: dict[str, Any]) -> None:
    net = _network(app, topology, packets, options)
    pairs = 0
    for state in _states(net, 1200):
        events = net.enabled(state)
        for a in events:
            occurrence = net.occurrence(state, a)
            if occurrence is None:
                continue
            for b in events:
                if b == a or dependent(occurrence, net.footprint(state, b)):
                    continue
                after_a, after_b = net.apply(state, a), net.apply(state, b)
                assert b in net.enabled(after_a) and a in net.enabled(after_b), (a, b)
                assert net.apply(after_a, b) == net.apply(after_b, a), (a, b)
                pairs += 1
    assert pairs > 0


def test_a_flow_mod_adding_an_entry_already_there_only_reads_the_table() -> None:
    """Route-flow, linear:3, 2 packets: some command steps add an entry the table already
    holds; their occurrence reads the table and does not write it."""
    net = _network("route-flow", "linear:3", 2, {})
    seen = 0
    for state in _states(net, 3000):
        for event in net.enabled(state):
            if type(event).__name__ != "SwitchProcessCommand":
                continue
            table = net.slot_table[event.dpid]
            if net.apply(state, event)[table] != state[table]:
                continue
            occurrence = net.occurrence(state, event)
            assert table in occurrence.reads and table not in occurrence.writes
            seen += 1
    assert seen > 0


def _without(net: Any, start: Any, most: int, left_out: Any = lambda event: False,
             controller: bool = False) -> list[Any]:
    """States reachable from ``start`` by events other than those ``left_out`` says and,
    unless ``controller``, the controller's (at most ``most``)."""
    seen, stack, found = {start}, [start], []
    while stack and len(found) < most:
        state = stack.pop()
        found.append(state)
        for event in net.enabled(state):
            if (not controller and type(event).__name__.startswith("Controller")) or left_out(event):
                continue
            after = net.apply(state, event)
            if after not in seen:
                seen.add(after)
                stack.append(after)
    return found


def _named(event: Any, enablers: set[Any]) -> bool:
    """Whether ``event`` is among ``enablers`` or stands in their stand-ins' families."""
    if event in enablers:
        return True
    kind = "expiry" if type(event) is SwitchEntryExpires else "tie" if type(event) is SwitchChoosesEntry else None
    return kind is not None and Standin(kind, event.dpid) in enablers


@pytest.mark.parametrize("app, topology, packets, options", SCENARIOS)
def test_arrivals_cover_every_packet_before_the_controller_acts(app: str, topology: str | None, packets: int,
                                                                 options: dict[str, Any]) -> None:
    """Every packet in a switch's input port, on a path on which the controller does not
    act, has a header the state's arrivals name for that port; on a path that also leaves
    out a dormant controller step's named enablers, that step stays disabled."""
    net = _network(app, topology, packets, options)
    model = net.por_model()
    checked = waited = 0
    for index, state in enumerate(_states(net, 400)):
        if index % 7:
            continue
        arrivals = dict(model.arrivals(state))
        for later in _without(net, state, 150):
            for (dpid, port), slot in net.slot_port.items():
                for packet in net.value(later, net.slot_names[slot]):
                    assert packet.hdr in arrivals[(dpid, port)], (dpid, port, packet)
                    checked += 1
        for dormant in model.dormant(state, net.enabled(state)):
            if type(dormant) is not ControllerHandle:
                continue
            enablers = set(net.enablers(state, dormant))
            for later in _without(net, state, 150, lambda event: _named(event, enablers)):
                assert dormant not in net.enabled(later), dormant
                waited += 1
    assert checked > 0 and waited > 0


@pytest.mark.parametrize("app, topology, packets, options", SCENARIOS)
def test_dormant_events_stay_disabled_on_paths_without_their_enablers(app: str, topology: str | None,
                                                                     packets: int, options: dict[str, Any]) -> None:
    """A dormant event that names its enablers (each alternative on its own) stays disabled,
    with every event it stands for, on every path (up to a bound) that leaves them out."""
    net = _network(app, topology, packets, options)
    model = net.por_model()
    waited = 0
    for index, state in enumerate(_states(net, 300)):
        if index % 5:
            continue
        for dormant in model.dormant(state, net.enabled(state)):
            named = net.enablers(state, dormant)
            if named is None:
                continue
            options = named if type(named) is Alternatives else (named,)
            for option in options:
                enablers = set(option)
                for later in _without(net, state, 60, lambda event: _named(event, enablers), controller=True):
                    assert not _family(net, later, dormant), (dormant, option)
                    waited += 1
    assert waited > 0
