"""Depth-first search with a visited set: the checker loop.

The loop is domain-free: it only calls the three functions of a :class:`System`, the
predicates of the properties, and the metric functions. Reporting lives elsewhere; the
loop only fills a :class:`Result` and calls an optional progress callback.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterable, Sequence

from nice_attendre.fingerprint import fingerprint_functions
from nice_attendre.property import Expectation, Metric, Property
from nice_attendre.result import Discovery, Result, Stats
from nice_attendre.system import System
from nice_attendre.trace import Step, Trace
from nice_attendre.visited import FingerprintTable, collision_probability


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on a search; ``None`` means unbounded.

    * ``max_transitions``: stop after this many ``apply`` calls (the search is then
      incomplete if another ``apply`` was pending);
    * ``max_states``: stop once this many unique states are stored;
    * ``max_depth``: do not expand states at this depth (the search is then incomplete
      if any state was cut);
    * ``max_seconds``: stop after this much wall-clock time (checked every 1024 transitions).
    """

    max_transitions: int | None = None
    max_states: int | None = None
    max_depth: int | None = None
    max_seconds: float | None = None

    def __post_init__(self) -> None:
        for name in ("max_transitions", "max_states", "max_depth", "max_seconds"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"{name} must not be negative, got {value}")


@dataclass(frozen=True, slots=True)
class Progress:
    """A snapshot passed to the progress callback while a search runs."""

    transitions: int
    unique_states: int
    depth: int
    max_depth: int
    elapsed: float

    @property
    def rate(self) -> float:
        """Transitions per second so far."""
        return self.transitions / self.elapsed if self.elapsed > 0 else 0.0


ProgressCallback = Callable[[Progress], None]

_CHECK_EVERY = 1024  # transitions between clock reads (a power of two)


def dfs(system: System[Hashable, Hashable], properties: Iterable[Property] = (), *,
        limits: Limits = Limits(), keep_going: bool = False, fingerprint: bool = False,
        metrics: Iterable[Metric] = (), progress: ProgressCallback | None = None,
        progress_interval: float = 0.5) -> Result:
    """Explore every state reachable in ``system`` depth-first; check ``properties``.

    Events are explored in the order ``enabled`` returns them, so counts and traces are
    deterministic. Every ``apply`` counts as a transition; a transition into a stored
    state is a revisit and is not explored further. A state that violates an ``always``
    property is reported and not expanded; the search stops at the first violation unless
    ``keep_going``. With ``fingerprint`` the visited set stores each state's stable 64-bit
    fingerprint (the system's ``fingerprint``/``apply_fingerprinted`` if it has them, see
    :class:`~nice_attendre.system.Fingerprinted`) in a compact table
    (:class:`~nice_attendre.visited.FingerprintTable`) instead of the state: much less
    memory, and a collision may wrongly merge two states, with the probability
    ``result.collision_probability`` (TLC's estimate).

    Ctrl-C (KeyboardInterrupt) and the limits end the search cleanly: the result then has
    ``complete=False`` and ``stop_reason`` says why. ``metrics`` are evaluated at every
    quiescent state reached and reported as (min, max).
    """
    props = tuple(properties)
    always = tuple(p for p in props if p.expectation is Expectation.ALWAYS)
    at_end = tuple(p for p in props if p.expectation is Expectation.AT_QUIESCENCE)
    sometimes = [p for p in props if p.expectation is Expectation.SOMETIMES]
    metric_list = tuple(metrics)
    metric_ranges: dict[str, tuple[int, int]] = {}
    discoveries: list[Discovery] = []
    violated: set[str] = set()

    max_transitions = limits.max_transitions
    max_states = limits.max_states
    depth_limit = limits.max_depth
    deadline = None if limits.max_seconds is None else time.monotonic() + limits.max_seconds
    start = time.monotonic()
    next_progress = start + progress_interval

    enabled = system.enabled
    apply = system.apply
    visited: Any = FingerprintTable() if fingerprint else set()
    if fingerprint:
        fingerprint_of, step = fingerprint_functions(system)
    add_visited = visited.add
    transitions = 0
    revisits = 0
    max_depth = 0
    stop_reason: str | None = None
    depth_cut = False
    # A frame is [state, events, next index, event that led here, its key in `visited`].
    stack: list[list[Any]] = []

    def trace_to(final_event: Any, final_state: Any) -> Trace:
        steps = [Step(frame[3], frame[0]) for frame in stack[1:]]
        if final_event is not None:
            steps.append(Step(final_event, final_state))
        initial = stack[0][0] if stack else final_state
        return Trace(initial, tuple(steps))

    def record(prop: Property, trace: Trace, state: Any) -> None:
        discoveries.append(Discovery(prop.name, prop.expectation, trace, prop.why(state)))
        violated.add(prop.name)

    def check_state(state: Any, event: Any) -> tuple[bool, Sequence[Any] | None]:
        """Check a new state; return (violating, enabled events or None if not expanded)."""
        bad = False
        for prop in always:
            if not prop.holds(state):
                if prop.name not in violated or keep_going:
                    record(prop, trace_to(event, state), state)
                bad = True
        if sometimes:
            for prop in list(sometimes):
                if prop.holds(state):
                    sometimes.remove(prop)
        if bad:
            return True, None
        events = enabled(state)
        if not events:
            for prop in at_end:
                if not prop.holds(state):
                    if prop.name not in violated or keep_going:
                        record(prop, trace_to(event, state), state)
                    bad = True
            for metric in metric_list:
                value = metric.value(state)
                low, high = metric_ranges.get(metric.name, (value, value))
                metric_ranges[metric.name] = (min(low, value), max(high, value))
        return bad, events

    try:
        for initial in system.initial_states():
            key = fingerprint_of(initial) if fingerprint else initial
            if key in visited:
                continue
            add_visited(key)
            stack.append([initial, (), 0, None, key])
            bad, events = check_state(initial, None)
            stack.pop()
            if bad and not keep_going:
                stop_reason = "violation"
                break
            if max_states is not None and len(visited) >= max_states:
                stop_reason = "max-states"
                break
            if events is None:
                continue
            if depth_limit is not None and depth_limit == 0 and events:
                depth_cut = True
                continue
            stack.append([initial, events, 0, None, key])
            while stack:
                frame = stack[-1]
                events = frame[1]
                index = frame[2]
                if index >= len(events):
                    stack.pop()
                    continue
                if max_transitions is not None and transitions >= max_transitions:
                    stop_reason = "max-transitions"
                    break
                frame[2] = index + 1
                event = events[index]
                if fingerprint:
                    state, key = step(frame[0], frame[4], event)
                else:
                    state = key = apply(frame[0], event)
                transitions += 1
                if key in visited:
                    revisits += 1
                else:
                    add_visited(key)
                    depth = len(stack)
                    if depth > max_depth:
                        max_depth = depth
                    bad, next_events = check_state(state, event)
                    if bad and not keep_going:
                        stop_reason = "violation"
                        break
                    if next_events:
                        if depth_limit is not None and depth >= depth_limit:
                            depth_cut = True
                        else:
                            stack.append([state, next_events, 0, event, key])
                    if max_states is not None and len(visited) >= max_states:
                        stop_reason = "max-states"
                        break
                if not transitions & (_CHECK_EVERY - 1):
                    now = time.monotonic()
                    if deadline is not None and now >= deadline:
                        stop_reason = "max-seconds"
                        break
                    if progress is not None and now >= next_progress:
                        next_progress = now + progress_interval
                        progress(Progress(transitions, len(visited), len(stack) - 1, max_depth,
                                          now - start))
            if stop_reason is not None:
                break
    except KeyboardInterrupt:
        stop_reason = "interrupted"

    elapsed = time.monotonic() - start
    if stop_reason is None and depth_cut:
        stop_reason = "max-depth"
    if stop_reason is None:
        for prop in sometimes:
            discoveries.append(Discovery(prop.name, prop.expectation, None,
                                         "no reachable state satisfies it"))
    stats = Stats(transitions, len(visited), revisits, max_depth, elapsed)
    collision = (collision_probability(len(visited), len(visited) + revisits) if fingerprint
                 else None)
    return Result(stats, tuple(discoveries), stop_reason is None, stop_reason, metric_ranges,
                  collision_probability=collision)
