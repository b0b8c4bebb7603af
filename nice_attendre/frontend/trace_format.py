"""A counterexample trace as a file: text, JSON (to replay) or a Mermaid sequence diagram
(front end: it reads the network model).

``nice-attendre verify --trace-out FILE --trace-format text|json|mermaid`` writes the first
violation's trace (the shortest one with ``--shortest``).

The JSON schema (``"format": "nice-attendre-trace"``, ``"version": 1``) is stable: a change
that an older reader would misread gets a new version number. Its fields:

* ``format``, ``version``: ``"nice-attendre-trace"`` and ``1``;
* ``app``, ``protocol``: the app's and the protocol's description (for people);
* ``build``: what rebuilds the network, as given on the command line (paths relative to the
  folder the command ran in): ``app`` (a registered name or ``file.py:Class``),
  ``app_options``, ``topology``, ``packets``, ``flows``, ``scenario``, ``sender``,
  ``receiver``, ``protocol`` (with its ``:key=value`` parameters), ``properties``,
  ``command_order``, ``threaded_controller``, ``faults`` (budgets by kind), ``count_load``,
  ``joins_first`` (the start-up semantics; missing or null: hosts send from the start);
  these are the keywords of :func:`nice_attendre.frontend.api.build`;
* ``protocol_params``: the protocol's parameters with their defaults filled in;
* ``property``, ``expectation``, ``reason``: the violation;
* ``events``: the events, in order, each encoded by
  :func:`nice_attendre.models.event_codec.encode_event`;
* ``fingerprints``: the stable 64-bit fingerprint (16 hex digits) of the initial state and
  of the state after each event (``len(events) + 1`` items), so a replay can tell where the
  app now behaves differently;
* ``initial_narration``: lines saying how the initial state was built (switches joining);
* ``narration``: per event, the lines saying what it did (the first one is its summary);
* ``cycle_start`` (only in a lasso: an execution that never ends, violating ``termination``
  or an ``eventually`` property): the index, among the states (0 the initial state), of the
  state the last event leads back to; the events after it are the cycle. ``replay``
  reproduces a lasso when every event replays and the last state is that state again (the
  cycle closes, so it can repeat for ever; for an ``eventually`` property, also when the
  property holds in none of the states). A trace without it simply ends.

The Mermaid output is a ``sequenceDiagram`` with one participant per host and switch and
one for the controller, and exactly one arrow per event (a packet sent or processed goes
between host and switch lanes, a packet-in or other message from a switch to the
controller, a command from the controller to a switch; an event local to one node, such as
an entry expiring, is an arrow from the node to itself). The app's state changes and the
commands it sent are notes over the controller. A lasso's cycle is a ``loop`` block.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from nice_attendre.frontend.report import Narrate, discovery_lines, printable
from nice_attendre.result import Discovery, Result

FORMAT = "nice-attendre-trace"
VERSION = 1
TRACE_FORMATS = ("text", "json", "mermaid")

#: The keywords of :func:`nice_attendre.frontend.api.build` a saved trace keeps (all JSON values).
BUILD_KEYS = ("app", "app_options", "topology", "packets", "flows", "scenario", "sender", "receiver",
              "protocol", "properties", "command_order", "threaded_controller", "faults", "count_load",
              "joins_first")


def first_traced(result: Result) -> Discovery | None:
    """The first discovery that has a trace (a ``sometimes`` property that never held has none)."""
    return next((d for d in result.discoveries if d.trace is not None), None)


def _narration(discovery: Discovery, narrate: Narrate | None) -> tuple[list[str], list[list[str]]]:
    trace = discovery.trace
    assert trace is not None
    said = getattr(narrate, "initial", None)
    initial = list(said(trace.initial)) if callable(said) else []
    steps: list[list[str]] = []
    state = trace.initial
    for step in trace.steps:
        lines = narrate(state, step.event) if narrate is not None else []
        steps.append(list(lines) or [str(step.event)])
        state = step.state
    return initial, steps


def trace_document(discovery: Discovery, net: Any, build: Mapping[str, Any],
                   narrate: Narrate | None) -> dict[str, Any]:
    """The JSON document of ``discovery``'s trace through network ``net`` (see the module
    docstring); ``build`` holds the :data:`BUILD_KEYS` that rebuild ``net``.

    Raises :class:`~nice_attendre.errors.InputError` when the app is not named by a string
    (an object cannot be saved) or a build value is not JSON."""
    from nice_attendre.errors import InputError
    from nice_attendre.models.event_codec import encode_event

    trace = discovery.trace
    if trace is None:
        raise InputError(f"{discovery.property}: no trace to save")
    if not isinstance(build.get("app"), str):
        raise InputError("a trace can be saved only for an app named by a string (a name or file.py:Class)")
    kept = {key: build.get(key) for key in BUILD_KEYS}
    try:
        json.dumps(kept)
    except (TypeError, ValueError) as exc:
        raise InputError(f"cannot save the trace: its options are not JSON ({exc})") from None
    initial, steps = _narration(discovery, narrate)
    return {
        "format": FORMAT,
        "version": VERSION,
        "app": net.app.describe(),
        "protocol": net.protocol.label(),
        "build": kept,
        "protocol_params": net.protocol.settings_json(),
        "property": discovery.property,
        "expectation": discovery.expectation.value,
        "reason": discovery.reason,
        "events": [encode_event(event) for event in trace.events],
        "fingerprints": [f"{net.fingerprint(state):016x}" for state in trace.states()],
        "initial_narration": initial,
        "narration": steps,
        **({"cycle_start": trace.cycle_start} if trace.cycle_start is not None else {}),
    }


# ---- Mermaid ---------------------------------------------------------------------------

CONTROLLER = "controller"


def _lane(node: Any) -> str:
    return node if isinstance(node, str) else f"s{node}"


def _label(text: str) -> str:
    """Text safe after a Mermaid arrow's colon (no statement separators or entity codes)."""
    return printable(" ".join(text.split())).replace(";", ",")


def _host_switch(net: Any, state: Any, host: str) -> str:
    """The lane of the switch ``host`` is attached to in ``state`` (a mobile host may have moved)."""
    where = None
    if state is not None:
        where = getattr(net.value(state, f"host:{host}"), "location", None)
    return _lane(where[0] if where else net.topology.host_port[host][0])


def event_lanes(event: Any, net: Any, state: Any = None) -> tuple[str, str]:
    """The (from, to) lanes of ``event``'s arrow, taken in ``state`` (see the module docstring)."""
    from nice_attendre.models.events import (ControllerHandle, ControllerStats, HostAnswer, HostMove,
                                             HostReceive, HostSend, SwitchProcessCommand, SwitchProcessPacket)

    from nice_attendre.models.protocols.ties import SwitchChoosesEntry, ordinary

    topology = net.topology
    kind = type(event)
    if kind is SwitchChoosesEntry:  # drawn as the ordinary event it makes another choice in
        base = ordinary(event.base, event.dpid, event.args)
        if base is not None:
            return event_lanes(base, net, state)
    if kind in (HostSend, HostAnswer):
        return event.host, _host_switch(net, state, event.host)
    if kind is HostMove:
        return event.host, _lane(event.dpid)
    if kind is HostReceive:
        return _host_switch(net, state, event.host), event.host
    if kind is SwitchProcessPacket:  # the packet came over the link at that port
        peer = net.attached(state, event.dpid, event.port) if state is not None else None
        if peer is None:
            peer = topology.links.get((event.dpid, event.port))
        node = peer if isinstance(peer, str) else getattr(peer, "node", event.dpid)
        return _lane(node), _lane(event.dpid)
    if kind is SwitchProcessCommand:
        return CONTROLLER, _lane(event.dpid)
    if kind in (ControllerHandle, ControllerStats):
        return _lane(event.dpid), CONTROLLER
    to_switch = getattr(event, "to_switch", None)
    dpid = getattr(event, "dpid", None)
    if dpid is not None and to_switch is not None:  # a control message lost
        return (CONTROLLER, _lane(dpid)) if to_switch else (_lane(dpid), CONTROLLER)
    if dpid is not None:
        return _lane(dpid), _lane(dpid)
    host = getattr(event, "host", None)
    if host is not None:
        return host, host
    return CONTROLLER, CONTROLLER


def _is_note(line: str) -> bool:
    return line.startswith(("app state:", "controller sends", "ALERT"))


def mermaid_lines(discovery: Discovery, net: Any, narrate: Narrate | None) -> list[str]:
    """A Mermaid ``sequenceDiagram`` of ``discovery``'s trace (see the module docstring)."""
    trace = discovery.trace
    assert trace is not None
    initial, steps = _narration(discovery, narrate)
    topology = net.topology
    lines = ["sequenceDiagram", f"    participant {CONTROLLER}"]
    lines += [f"    participant s{dpid}" for dpid in topology.switches]
    lines += [f"    participant {host}" for host in topology.hosts]
    notes = [line for line in initial if _is_note(line)]
    for note in notes:
        lines.append(f"    Note over {CONTROLLER}: {_label('at join: ' + note)}")
    states = list(trace.states())
    for number, (event, said) in enumerate(zip(trace.events, steps), start=1):
        if trace.cycle_start is not None and number == trace.cycle_start + 1:  # a lasso's cycle
            lines.append(f"    loop {_label('repeats for ever')}")
        source, target = event_lanes(event, net, states[number - 1])
        lines.append(f"    {source}->>{target}: {number}. {_label(said[0])}")
        for line in said[1:]:
            if _is_note(line):
                lines.append(f"    Note over {CONTROLLER}: {_label(line)}")
    if trace.cycle_start is not None:
        lines.append("    end")
    lines.append(f"    Note over {CONTROLLER}: {_label(f'VIOLATION {discovery.property}: {discovery.reason}')}")
    return lines


# ---- writing ---------------------------------------------------------------------------

def render(trace_format: str, discovery: Discovery, net: Any, build: Mapping[str, Any],
           narrate: Narrate | None, header: Iterable[tuple[str, str]] = ()) -> str:
    """The file's text for ``trace_format`` (``text``, ``json`` or ``mermaid``)."""
    if trace_format == "json":
        return json.dumps(trace_document(discovery, net, build, narrate), indent=2) + "\n"
    if trace_format == "mermaid":
        return "\n".join(mermaid_lines(discovery, net, narrate)) + "\n"
    if trace_format == "text":
        from nice_attendre.frontend.report import LABEL_WIDTH

        lines = [f"  {label:<{LABEL_WIDTH}} {value}" for label, value in header]
        lines += ["", *discovery_lines(1, discovery, narrate)]
        return "\n".join(printable(line) for line in lines) + "\n"
    from nice_attendre.errors import InputError

    raise InputError(f"unknown trace format {trace_format!r} (known: {', '.join(TRACE_FORMATS)})")


def write_trace(path: Path, trace_format: str, result: Result, net: Any, build: Mapping[str, Any],
                narrate: Narrate | None, header: Sequence[tuple[str, str]] = ()) -> bool:
    """Write the first traced violation of ``result`` to ``path`` atomically; False (and
    nothing written) when there is none."""
    from nice_attendre.output import write_atomic

    discovery = first_traced(result)
    if discovery is None:
        return False
    write_atomic(path, render(trace_format, discovery, net, build, narrate, header), "--trace-out")
    return True
