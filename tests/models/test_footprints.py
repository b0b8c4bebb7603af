"""The network's declared footprints (models/footprints.py) against what its transitions
really do: on every transition of several scenarios, the slots the memo's tracking list
records as read, written and appended to are within the declared footprint (queues popped
lose exactly their head, queues appended to keep their items in front, the alerts only
grow); every two enabled events declared independent commute and neither disables the
other; and a dormant event stays disabled under every event that leaves what keeps it
disabled alone."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from nice_attendre.frontend.api import build
from nice_attendre.models.events import SwitchEntryExpires
from nice_attendre.models.footprints import Standin
from nice_attendre.models.network import MemoTx
from nice_attendre.models.protocols.ties import SwitchChoosesEntry
from nice_attendre.por import Alternatives, dependent, unsupported

DATA = Path(__file__).resolve().parents[1] / "data" / "apps"

SCENARIOS = [
    ("route-flow", "linear:3", 2, {}),
    ("route-flow", "linear:2", 2, {"bug": "forget-last-hop"}),
    ("mac-learning", "linear:2", 2, {}),
    ("mac-learning", "linear:2", 1, {"bug": "host-unreachable"}),
    ("energy-te", None, 1, {}),
    (f"{DATA}/timeout_routing.py:TimeoutRouting", "linear:2", 1, {}),
    (f"{DATA}/equal_priority.py:MirrorEth", None, 1, {}),
    # OpenFlow-B: the same events; barriers, and messages the platform holds until replies
    ("route-flow", "linear:3", 2, {"protocol": "openflow-b"}),
    ("route-flow", "linear:2", 2, {"bug": "forget-last-hop", "protocol": "openflow-b"}),
    # a Ryu app for OpenFlow 1.2: a flow-mod's buffered packet goes through the table
    (f"{DATA}/ryu_openflow12.py:QuarantineAfter12", "linear:2", 2, {}),
    # Attendre: packet steps write the table (Attendre Commands, buffer entries, encaps used
    # once); a command step finishing a message set re-matches the waiting packets
    ("route-flow", "linear:4", 3, {"protocol": "attendre"}),
    ("route-flow", "linear:3", 2, {"bug": "forget-last-hop", "protocol": "attendre"}),
    ("mac-learning", "linear:2", 2, {"protocol": "attendre"}),
    ("mac-learning", "linear:2", 1, {"bug": "host-unreachable", "protocol": "attendre"}),
    ("energy-te", "paths:2,3", 2, {"protocol": "attendre"}),
    (f"{DATA}/timeout_routing.py:TimeoutRouting", "linear:2", 1, {"protocol": "attendre"}),
    (f"{DATA}/equal_priority.py:MirrorEth", None, 1, {"protocol": "attendre"}),
    # batched flow-mods: stored in ext:, applied by a threshold, a barrier or the timer event
    ("route-flow", "linear:3", 2, {"protocol": "batch"}),
    ("route-flow", "linear:3", 2, {"bug": "forget-last-hop", "protocol": "batch:threshold=3"}),
    ("mac-learning", "linear:2", 2, {"protocol": "batch"}),
    ("energy-te", "paths:2,3", 2, {"protocol": "batch"}),
    (f"{DATA}/timeout_routing.py:TimeoutRouting", "linear:2", 1, {"protocol": "batch"}),
    (f"{DATA}/equal_priority.py:MirrorEth", None, 1, {"protocol": "batch:timer=never"}),
    # switch buffers: a finite capacity; flow granularity queues a flow's packets in ext:,
    # a release sends them all, a timeout is another way of processing a packet
    ("route-flow", "linear:3", 2, {"protocol": "buffer:granularity=flow,timeout=event"}),
    ("route-flow", "linear:3", 2, {"bug": "forget-last-hop", "protocol": "buffer:capacity=1"}),
    ("mac-learning", "linear:2", 2, {"protocol": "buffer:granularity=flow,capacity=1"}),
    ("energy-te", "paths:2,3", 2, {"protocol": "buffer:capacity=0"}),
    (f"{DATA}/timeout_routing.py:TimeoutRouting", "linear:2", 1, {"protocol": "buffer:granularity=flow,timeout=event"}),
    # packet-in filtering: pending tables in ext:, meter drops, pending expiries, a rule that floods
    ("route-flow", "linear:3", 2, {"protocol": "pif"}),
    ("route-flow", "linear:3", 2, {"bug": "forget-last-hop", "protocol": "pif:action=flood"}),
    ("mac-learning", "linear:2", 2, {"protocol": "pif:action=flood"}),
    ("energy-te", "paths:2,3", 2, {"protocol": "pif:action=drop,limit=global"}),
    (f"{DATA}/timeout_routing.py:TimeoutRouting", "linear:2", 1, {"protocol": "pif"}),
]



def _budgeted(scenarios: list[Any]) -> list[Any]:
    """``scenarios`` with each variant's (attendre, batch, buffer, pif) after its first two
    marked slow: the default run stays under ten minutes, -m slow checks them all."""
    seen: dict[str, int] = {}
    marked = []
    for scenario in scenarios:
        variant = str(scenario[3].get("protocol", "openflow")).split(":")[0]
        seen[variant] = seen.get(variant, 0) + 1
        slow = variant not in ("openflow", "openflow-b") and seen[variant] > 2
        marked.append(pytest.param(*scenario, marks=[pytest.mark.slow] if slow else []))
    return marked


SCENARIOS = _budgeted(SCENARIOS)

PROPERTIES = ["no-forwarding-loops", "no-black-holes", "no-forgotten-packets", "delivery"]


#: Options of the scenarios that are build()'s, not the app's (test_por_options.py's scenarios)
BUILD_OPTIONS = ("faults", "command_order", "threaded_controller", "joins_first", "properties")


def _network(app: str, topology: str | None, packets: int, app_options: dict[str, Any]) -> Any:
    """The scenario's network; ``app_options`` may name its ``protocol`` (default openflow)
    and build()'s options (:data:`BUILD_OPTIONS`)."""
    options = dict(app_options)
    protocol = options.pop("protocol", "openflow")
    built = {"properties": PROPERTIES} | {key: options.pop(key) for key in BUILD_OPTIONS if key in options}
    return build(app, topology=topology, packets=packets, app_options=options, protocol=protocol, memo=False,
                 **built).network


def _states(net: Any, most: int = 2500) -> Iterator[Any]:
    """Reachable states, depth-first, at most ``most``."""
    start = net.initial_states()[0]
    seen, stack = {start}, [start]
    while stack and len(seen) <= most:
        state = stack.pop()
        yield state
        for event in net.enabled(state):
            after = net.apply(state, event)
            if after not in seen:
                seen.add(after)
                stack.append(after)


def _locations(net: Any, slot: int) -> set[int]:
    """The locations of ``slot`` (a host's slot is two; the options split others)."""
    found = net._footprints()
    if slot in found.options.parts:
        return set(found.options.parts[slot])
    for host, host_slot in net.slot_host.items():
        if host_slot == slot:
            return set(found.host_parts(host))
    return {slot}


@pytest.mark.parametrize("app, topology, packets, options", SCENARIOS)
def test_transitions_stay_within_their_footprints(app: str, topology: str | None, packets: int,
                                                  options: dict[str, Any]) -> None:
    net = _network(app, topology, packets, options)
    assert unsupported(net) is None
    checked = 0
    for state in _states(net):
        for event in net.enabled(state):
            fp = net.footprint(state, event)
            tx = MemoTx(net, state)
            net._handlers[type(event)](tx, event)
            tracked = tx.s
            assert not tracked.opaque
            after = tuple(tracked.current(slot) for slot in range(len(state)))
            assert after == net.apply(state, event)
            looked = fp.reads | fp.pops | fp.writes | fp.adds
            for slot in tracked.reads:
                assert _locations(net, slot) & looked, (event, net.slot_names[slot], "read")
            for slot in tracked.written:
                name = net.slot_names[slot]
                if slot in tracked.appends:
                    assert slot in fp.appends | fp.writes, (event, name, "appended")
                    continue
                locations = _locations(net, slot)
                if locations & fp.writes:
                    continue
                if slot in fp.pops:  # the head taken, nothing else
                    assert net.interned(slot)[after[slot]] == net.interned(slot)[state[slot]][1:], (event, name)
                elif slot in fp.appends:  # appended after reading it: its items still in front
                    old, new = net.interned(slot)[state[slot]], net.interned(slot)[after[slot]]
                    assert new[:len(old)] == old, (event, name)
                elif slot in fp.adds:  # the alerts (a set) only grow
                    old, new = net.interned(slot)[state[slot]], net.interned(slot)[after[slot]]
                    assert set(old) <= set(new), (event, name)
                else:
                    raise AssertionError(f"{event} wrote {name} outside its footprint")
            checked += 1
    assert checked > 20


@pytest.mark.parametrize("app, topology, packets, options", SCENARIOS)
def test_independent_events_commute(app: str, topology: str | None, packets: int, options: dict[str, Any]) -> None:
    net = _network(app, topology, packets, options)
    pairs = 0
    for state in _states(net, 1200):
        events = net.enabled(state)
        for i, a in enumerate(events):
            for b in events[i + 1:]:
                if dependent(net.footprint(state, a), net.footprint(state, b)):
                    continue
                after_a, after_b = net.apply(state, a), net.apply(state, b)
                assert b in net.enabled(after_a) and a in net.enabled(after_b), (a, b)
                assert net.apply(after_a, b) == net.apply(after_b, a), (a, b)
                pairs += 1
    assert pairs > 0


def _family(net: Any, state: Any, standin: Any) -> set[Any]:
    """The enabled events a dormant stand-in stands for in ``state``."""
    events = net.enabled(state)
    if hasattr(standin, "stands_for"):  # a variant's own stand-in (models/footprints_variants.py)
        return {e for e in events if standin.stands_for(e)}
    if isinstance(standin, Standin):
        kind = SwitchEntryExpires if standin.kind == "expiry" else SwitchChoosesEntry
        return {e for e in events if isinstance(e, kind) and e.dpid == standin.dpid}
    return {standin} & set(events)


@pytest.mark.parametrize("app, topology, packets, options", SCENARIOS)
def test_dormant_events_stay_disabled_until_their_guard_changes(app: str, topology: str | None, packets: int,
                                                                options: dict[str, Any]) -> None:
    net = _network(app, topology, packets, options)
    checked = 0
    for state in _states(net, 800):
        for dormant in net.dormant(state, net.enabled(state)):
            guard = net.disabled_by(state, dormant)
            before = _family(net, state, dormant)
            for event in net.enabled(state):
                fp = net.footprint(state, event)
                if guard & (fp.writes | fp.appends | fp.pops | fp.adds):
                    continue
                after = net.apply(state, event)
                # no event of the family that was not there already (an enabled expiry's
                # siblings: the stand-in covers the others)
                assert _family(net, after, dormant) <= before, (dormant, event)
                checked += 1
    assert checked > 0


@pytest.mark.parametrize("app, topology, packets, options", SCENARIOS)
def test_command_steps_stay_within_their_bounded_footprint(app: str, topology: str | None, packets: int,
                                                           options: dict[str, Any]) -> None:
    """A switch processing every command now in its channel, one after the other (no new
    command in between: the controller's events are the feeders), stays within the bounded
    footprint of the first state."""
    net = _network(app, topology, packets, options)
    checked = 0
    for state in _states(net, 1500):
        for event in net.enabled(state):
            found = net.bounded(state, event)
            if found is None:
                continue
            fp, feeders = found
            # the controller's events (and the restarts, which run the app)
            assert feeders and all(type(f).__name__.startswith("Controller") or type(f).__name__ == "SwitchRestart"
                                   for f in feeders)
            current = state
            while event in net.enabled(current):
                tx = MemoTx(net, current)
                net._handlers[type(event)](tx, event)
                tracked = tx.s
                for slot in tracked.reads:
                    assert _locations(net, slot) & (fp.reads | fp.pops | fp.adds), (event, net.slot_names[slot], "read")
                for slot in tracked.written:
                    allowed = fp.appends | fp.writes if slot in tracked.appends else fp.writes | fp.pops | fp.adds
                    assert _locations(net, slot) & allowed, (event, net.slot_names[slot], "written")
                current = net.apply(current, event)
                checked += 1
    assert checked > 0


def _unchanged(net: Any, state: Any, dormant: Any, event: Any) -> bool:
    """Whether ``event`` may be left out of what may enable ``dormant`` in ``state``."""
    explicit = net.enablers(state, dormant)
    if type(explicit) is Alternatives:  # each alternative must hold on its own
        return any(event not in option for option in explicit)
    if explicit is not None:
        return event not in explicit
    guard = net.disabled_by(state, dormant)
    fp = net.footprint(state, event)
    return not guard & (fp.writes | fp.appends | fp.pops | fp.adds)


@pytest.mark.parametrize("app, topology, packets, options", SCENARIOS)
def test_dormant_events_stay_disabled_without_their_enablers(app: str, topology: str | None, packets: int,
                                                             options: dict[str, Any]) -> None:
    """A dormant event (or one its stand-in stands for) is not enabled by an event its
    explicit enablers (or its guard's writers) leave out."""
    net = _network(app, topology, packets, options)
    checked = 0
    for state in _states(net, 800):
        for dormant in net.dormant(state, net.enabled(state)):
            before = _family(net, state, dormant)
            for event in net.enabled(state):
                if _unchanged(net, state, dormant, event):
                    assert _family(net, net.apply(state, event), dormant) <= before, (dormant, event)
                    checked += 1
    assert checked > 0
