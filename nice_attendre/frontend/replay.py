"""Replaying a saved trace (``nice-attendre replay trace.json``) against the app as it is now
(front end: it rebuilds networks from names).

:func:`load_document` reads and checks a file written by ``verify --trace-format json``
(:mod:`nice_attendre.frontend.trace_input`; the schema is in
:mod:`nice_attendre.frontend.trace_format`); :func:`replay_document` rebuilds the network
from its ``build`` options, decodes the events and applies them one by one from the
initial state. The outcome says either that the trace reproduces the violation, or exactly
where it leaves the recorded path:

* ``reproduced``: every event was enabled where recorded, every state has the recorded
  fingerprint, and the property is violated at the end (or at an earlier step); for a
  property of whole executions (``termination``, ``eventually``), the trace is a lasso whose
  last state is the state its cycle starts from (``cycle_start``: the cycle can repeat for
  ever), or, for ``eventually``, a trace that ends where nothing is enabled; and an
  ``eventually`` property holds in none of its states;
* ``diverged``: an event is not enabled where the trace takes it; or a state differs from
  the recorded one (its stable fingerprint; the app or the model changed: "step 7 leads to
  a different state"); or the whole trace replays and the property now holds.

The replay imports and reads only what the user names: a trace that names an app,
topology, property or scenario by a file or module is refused unless the user names it too
(:mod:`nice_attendre.frontend.replay_sources`).

Bad input (not JSON, another format or version, missing fields, an unknown app or event, a
file the user did not name) raises :class:`~nice_attendre.models.event_codec.TraceFormatError`
or another :class:`~nice_attendre.errors.InputError`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nice_attendre.frontend.replay_sources import Sources, UntrustedTraceError, trusted_build
from nice_attendre.frontend.trace_input import TraceFileError, check_document, load_document
from nice_attendre.property import EXECUTION_EXPECTATIONS, Expectation

__all__ = ["ReplayOutcome", "Sources", "TraceFileError", "UntrustedTraceError", "check_document", "load_document",
           "replay_document"]


@dataclass(frozen=True)
class ReplayOutcome:
    """What replaying a saved trace gave.

    ``kind`` is ``reproduced`` or ``diverged``; ``step`` is the step (1-based; 0 for the
    initial state) where the property was violated or where the replay diverged; ``message``
    is the one-line verdict; ``lines`` narrate the steps replayed (as the reports do).
    """

    kind: str
    step: int
    message: str
    lines: list[str] = field(default_factory=list)

    @property
    def reproduced(self) -> bool:
        return self.kind == "reproduced"


def _fingerprint(net: Any, state: Any) -> str:
    return f"{net.fingerprint(state):016x}"


def replay_document(data: dict[str, Any], max_handler_seconds: float | None = None,
                    sources: Sources = Sources()) -> ReplayOutcome:
    """Rebuild the network of saved trace ``data`` and replay its events (see the module
    docstring). ``data`` must have passed :func:`check_document`.

    The app, topology, properties and scenario the trace names by a file or module are
    imported or read only as the user names them in ``sources`` (``--app``, ``--topology``,
    ``--property``, ``--scenario``): else :class:`UntrustedTraceError`, raised before
    anything is imported (see :mod:`nice_attendre.frontend.replay_sources`).

    Each call into the app may run ``max_handler_seconds`` (default: as in ``verify``); a
    handler that runs longer becomes an app exception, as in a search, so an edited app
    stuck in a loop makes the replay diverge instead of hanging it."""
    from nice_attendre.frontend.api import DEFAULT_HANDLER_SECONDS
    from nice_attendre.watchdog import Watchdog

    options = trusted_build(data["build"], sources)  # before anything is imported or read
    limit = DEFAULT_HANDLER_SECONDS if max_handler_seconds is None else max_handler_seconds
    with Watchdog(call_seconds=limit, signals=False) as watchdog:
        return _replay(data, options, watchdog)


def _replay(data: dict[str, Any], trusted: dict[str, Any], watchdog: Any) -> ReplayOutcome:
    """:func:`replay_document` of ``data`` built with the ``trusted`` options, under
    ``watchdog``'s per-call time limit."""
    from nice_attendre.frontend.api import build
    from nice_attendre.models.event_codec import decode_event

    options = {key: value for key, value in trusted.items() if value is not None}
    app = options.pop("app")
    run = build(app, **options, guard=watchdog.guard)
    net = run.network
    wanted = [p for p in run.properties if p.name == data["property"]]
    if not wanted:
        raise TraceFileError(f"the trace's property {data['property']!r} is not checked in the rebuilt run "
                             f"(checked: {', '.join(p.name for p in run.properties)})")
    prop = wanted[0]
    types = net.event_types()
    events = [decode_event(item, types, f"event {index}") for index, item in enumerate(data["events"], start=1)]
    recorded = data["fingerprints"]
    narration = data.get("narration") if isinstance(data.get("narration"), list) else None
    lines: list[str] = []
    state = net.initial_states()[0]
    width = len(str(len(events)))
    if _fingerprint(net, state) != recorded[0]:
        return ReplayOutcome("diverged", 0, "the app changed: the initial state (after the switches joined) "
                             "differs from the recorded one", lines)
    execution = prop.expectation in EXECUTION_EXPECTATIONS
    states = [state]
    if _violated(prop, net, state, None, None):
        return ReplayOutcome("reproduced", 0, f"trace reproduced: property {prop.name} violated in the "
                             "initial state", lines)
    for number, event in enumerate(events, start=1):
        enabled = net.enabled(state)
        if event not in enabled:
            shown = ", ".join(f"`{e}`" for e in enabled) or "nothing (the network is quiescent)"
            return ReplayOutcome("diverged", number, f"step {number}: event `{event}` is not enabled here; "
                                 f"enabled: {shown}", lines)
        new, said = net.narrate(state, event)
        said = said or [str(event)]
        lines.append(f"  {number:>{width}}. {said[0]}")
        lines.extend(f"  {'':>{width}}  {line}" for line in said[1:])
        if _fingerprint(net, new) != recorded[number]:
            was = narration[number - 1] if narration is not None and number - 1 < len(narration) else None
            detail = f" (recorded: {'; '.join(map(str, was))})" if isinstance(was, list) and was else ""
            return ReplayOutcome("diverged", number, f"the app changed: step {number} (`{event}`) leads to a "
                                 f"different state than recorded{detail}", lines)
        if _violated(prop, net, new, state, event):
            return ReplayOutcome("reproduced", number, f"trace reproduced: property {prop.name} violated at "
                                 f"step {number}", lines)
        state = new
        states.append(state)
    if execution:
        return _execution(prop, net, states, data.get("cycle_start"), lines)
    return ReplayOutcome("diverged", len(events), f"the property {prop.name} now holds: all {len(events)} "
                         "events replay but the end state does not violate it", lines)


def _execution(prop: Any, net: Any, states: list[Any], cycle_start: int | None, lines: list[str]) -> ReplayOutcome:
    """The outcome of a replayed trace of a property of whole executions: ``states`` are the
    replayed states (the initial one first), each with its recorded fingerprint."""
    last = len(states) - 1
    if prop.expectation is Expectation.EVENTUALLY:
        for number, state in enumerate(states):
            if prop.holds(state):
                where = "the initial state" if number == 0 else f"step {number}"
                return ReplayOutcome("diverged", number, f"the property {prop.name} now holds at {where}: the "
                                     "replayed execution satisfies it", lines)
    if cycle_start is None:
        if prop.expectation is Expectation.EVENTUALLY and not net.enabled(states[-1]):
            return ReplayOutcome("reproduced", last, f"trace reproduced: property {prop.name} violated: the "
                                 f"execution ends at step {last} and {prop.name} never held", lines)
        why = ("the execution no longer ends there: events are enabled after the last step"
               if prop.expectation is Expectation.EVENTUALLY else "the trace has no cycle (no cycle_start)")
        return ReplayOutcome("diverged", last, f"the property {prop.name} is not violated: {why}", lines)
    if states[-1] != states[cycle_start]:
        return ReplayOutcome("diverged", last, f"the cycle does not close: step {last} does not lead back to the "
                             f"state after step {cycle_start}", lines)
    where = "the initial state" if cycle_start == 0 else f"the state after step {cycle_start}"
    return ReplayOutcome("reproduced", last, f"trace reproduced: property {prop.name} violated: step {last} leads "
                         f"back to {where}, so steps {cycle_start + 1}-{last} can repeat for ever", lines)


def _violated(prop: Any, net: Any, state: Any, before: Any, event: Any) -> bool:
    """Whether ``state`` (reached from ``before`` by ``event``) violates ``prop``."""
    if prop.expectation is Expectation.ALWAYS:
        return not prop.holds(state)
    if prop.expectation is Expectation.AT_QUIESCENCE:
        return not net.enabled(state) and not prop.holds(state)
    if prop.expectation is Expectation.TRANSITION:
        return event is not None and not prop.holds(before, event, state)
    return False
