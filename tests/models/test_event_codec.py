"""Every event class a network can handle round-trips through the saved-trace codec
(models/event_codec.py). The classes are found from the networks themselves (every protocol
variant, faults, threaded controllers, timeouts), and instances from explored states, so
a new event class is caught without editing this test."""
from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any

import pytest

from nice_attendre.frontend.api import build
from nice_attendre.models.event_codec import TraceFormatError, decode_event, encode_event
from nice_attendre.models.events import HostSend, SwitchProcessCommand
from nice_attendre.models.faults import KINDS
from nice_attendre.models.protocols import protocol_names

APPS = Path(__file__).resolve().parent.parent / "data" / "apps"
EVERY_FAULT = {kind: 1 for kind in KINDS}

#: Scenarios whose explored states enable every kind of event (build keywords).
SCENARIOS: list[dict[str, Any]] = [
    *({"app": "route-flow", "topology": "linear:2", "packets": 2, "protocol": name} for name in protocol_names()),
    {"app": "route-flow", "topology": "linear:2", "packets": 1, "faults": EVERY_FAULT},
    {"app": "route-flow", "topology": "linear:2", "packets": 2, "threaded_controller": True, "command_order": "any"},
    {"app": "mac-learning", "topology": "linear:2", "packets": 1},
    {"app": "energy-te", "packets": 1},
    {"app": f"{APPS / 'timeout_routing.py'}:TimeoutRouting", "topology": "linear:2", "packets": 1},
    {"app": f"{APPS / 'equal_priority.py'}:MirrorEth", "packets": 2},  # equal-priority ties
    {"app": "route-flow", "topology": "linear:2", "packets": 2, "protocol": "buffer:granularity=flow,timeout=event"},
    {"app": "route-flow", "topology": "linear:2", "packets": 2, "protocol": "batch:threshold=2,timer=event"},
    {"app": "mac-learning", "topology": "linear:2", "packets": 2, "protocol": "pif:action=drop"},
]


def explored_events(options: dict[str, Any], max_states: int = 3000) -> tuple[set[type], dict[type, Any]]:
    """(the event classes the network handles, one enabled event of each class met in the
    first ``max_states`` states breadth-first)."""
    options = dict(options)
    net = build(options.pop("app"), properties=[], **options).network
    found: dict[type, Any] = {}
    start = net.initial_states()[0]
    seen = {start}
    queue = deque([start])
    while queue and len(seen) < max_states:
        state = queue.popleft()
        for event in net.enabled(state):
            found.setdefault(type(event), event)
            new = net.apply(state, event)
            if new not in seen:
                seen.add(new)
                queue.append(new)
    return set(net.event_types()), found


@pytest.fixture(scope="module")
def explored() -> tuple[set[type], dict[type, Any], dict[type, set[type]]]:
    registered: set[type] = set()
    found: dict[type, Any] = {}
    types_of: dict[type, set[type]] = {}
    for options in SCENARIOS:
        types, events = explored_events(options)
        registered |= types
        for cls, event in events.items():
            found.setdefault(cls, event)
            types_of.setdefault(cls, types)
    return registered, found, types_of


def test_every_registered_event_class_was_met(explored: Any) -> None:
    registered, found, _ = explored
    missing = sorted(cls.__name__ for cls in registered - set(found))
    assert not missing, f"no scenario enables {missing}: add one to SCENARIOS"
    from typing import get_args

    from nice_attendre.models import faults
    from nice_attendre.models.events import Event

    assert set(get_args(Event)) <= registered  # every class of models/events.py
    assert {faults.LinkFault, faults.LinkChange, faults.ControlLoss, faults.SwitchRestart} <= registered
    variants = {cls.__module__.rsplit(".", 1)[-1] for cls in registered}
    assert {"batch", "buffer", "pif", "faults", "events"} <= variants


def test_every_event_round_trips_through_json(explored: Any) -> None:
    registered, found, types_of = explored
    for cls, event in sorted(found.items(), key=lambda item: item[0].__name__):
        encoded = json.loads(json.dumps(encode_event(event)))
        assert encoded["event"] == cls.__name__
        back = decode_event(encoded, types_of[cls])
        assert back == event and type(back) is cls and hash(back) == hash(event)


def test_tuples_come_back_as_tuples() -> None:
    from nice_attendre.models.protocols.pif import PendingEntryExpires

    event = PendingEntryExpires(1, 0, (1, "h1", ("x", 2)))
    back = decode_event(json.loads(json.dumps(encode_event(event))), [PendingEntryExpires])
    assert back == event and isinstance(back.key, tuple) and isinstance(back.key[2], tuple)


@pytest.mark.parametrize("data, message", [
    ([1], "expected an object"),
    ({"event": "Nope"}, "unknown event 'Nope'"),
    ({"event": "HostSend", "host": "h1", "colour": 1}, "no field 'colour'"),
    ({"event": "HostSend"}, "cannot build HostSend"),
    ({"event": "HostSend", "host": {"a": 1}}, "is not a value"),
])
def test_malformed_events_are_refused(data: Any, message: str) -> None:
    with pytest.raises(TraceFormatError, match=message):
        decode_event(data, [HostSend, SwitchProcessCommand])


def test_encoding_refuses_non_events() -> None:
    with pytest.raises(TypeError):
        encode_event("h1 sends")
