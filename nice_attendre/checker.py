"""Depth-first search with a visited set: the checker loop.

The loop is domain-free: it only calls the three functions of a :class:`System`, the
predicates of the properties, and the metric functions. Reporting lives elsewhere; the
loop only fills a :class:`Result` and calls an optional progress callback.
"""
from __future__ import annotations

import math
import signal
import time
from dataclasses import dataclass
from types import FrameType
from typing import Any, Callable, Hashable, Iterable, Sequence

from nice_attendre.checkpoint import SearchState
from nice_attendre.errors import InputError, ModelError, StopRequest, UnsupportedFeature, escaped
from nice_attendre.fingerprint import fingerprint_functions, keyed_functions, peek_functions
from nice_attendre.fair_cycles import Unfair, group_of
from nice_attendre.lasso import eventually_reason, settled, termination_reason
from nice_attendre.por import TERMINATION_CHECKPOINTED, TERMINATION_UNDECIDED, Reducer, refusal, unsupported
from nice_attendre.property import Expectation, Metric, Property
from nice_attendre.result import Discovery, Result, Stats
from nice_attendre.system import System
from nice_attendre.trace import Step, Trace
from nice_attendre.visited import FingerprintTable, KeyedStates, collision_probability
from nice_attendre.watchdog import CallGuard, Watchdog


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on a search; ``None`` means unbounded.

    * ``max_transitions``: stop after this many ``apply`` calls (the search is then
      incomplete if another ``apply`` was pending); counted over the whole search, including
      the part before a resume;
    * ``max_states``: stop once this many unique states are stored;
    * ``max_depth``: do not expand states at this depth (the search is then incomplete
      if any state was cut);
    * ``max_seconds``: stop after this much wall-clock time (a finite number);
    * ``max_memory``: stop once the process's resident memory exceeds this many bytes.

    The time and memory limits are enforced by a :class:`~nice_attendre.watchdog.Watchdog`
    (a timer signal, and the loop's own check every 1024 transitions), so a slow transition
    cannot outlast them. Negative or non-finite values raise
    :class:`~nice_attendre.errors.InputError`.
    """

    max_transitions: int | None = None
    max_states: int | None = None
    max_depth: int | None = None
    max_seconds: float | None = None
    max_memory: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_transitions", "max_states", "max_depth", "max_seconds", "max_memory"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InputError(f"{name} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise InputError(f"{name} must be a finite number, got {value}")
            if value < 0:
                raise InputError(f"{name} must not be negative, got {value}")
        if self.max_memory is not None and self.max_memory == 0:
            raise InputError("max_memory must be positive")


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
CheckpointCallback = Callable[[SearchState], None]

_CHECK_EVERY = 1024  # transitions between clock reads (a power of two)


StateCheck = Callable[[Any, Any], "tuple[bool, Sequence[Any] | None]"]


def state_checks(always: Sequence[Property], at_end: Sequence[Property], sometimes: list[Property],
                 metric_list: Sequence[Metric], metric_ranges: dict[str, tuple[int, int]],
                 enabled: Callable[[Any], Sequence[Any]], keep_going: bool, discoveries: list[Discovery],
                 violated: set[str], trace: Callable[[Any, Any], Trace]
                 ) -> tuple[Callable[[Property, Trace, Any], None], StateCheck]:
    """What every search does with a new state, shared by :func:`dfs` and
    :func:`nice_attendre.breadth_first.bfs`: ``(record, check_state)``.

    ``record(prop, trace, state)`` notes a violation. ``check_state(state, at)`` checks the
    ``always`` properties, ticks off ``sometimes`` ones that hold, and, when the state has no
    enabled event, the at-quiescence properties and the metrics; it returns (whether a
    property is violated, the enabled events, or None when a violation stops the state from
    being expanded). ``trace(at, state)`` builds the trace to ``state`` (``at`` is what the
    search knows it by: the event that led there for the depth-first search, the state's key
    for the breadth-first one); it is called only for a violation reported."""

    def record(prop: Property, found: Trace, state: Any) -> None:
        discoveries.append(Discovery(prop.name, prop.expectation, found, prop.why(state)))
        violated.add(prop.name)

    def check_state(state: Any, at: Any) -> tuple[bool, Sequence[Any] | None]:
        bad = False
        for prop in always:
            if not prop.holds(state):
                if prop.name not in violated or keep_going:
                    record(prop, trace(at, state), state)
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
                        record(prop, trace(at, state), state)
                    bad = True
            for metric in metric_list:
                value = metric.value(state)
                low, high = metric_ranges.get(metric.name, (value, value))
                metric_ranges[metric.name] = (min(low, value), max(high, value))
        return bad, events

    return record, check_state


def end_of_search(stop_reason: str | None, depth_cut: bool, unmet: Iterable[Property],
                  discoveries: list[Discovery]) -> str | None:
    """The reason a search ended, shared by every search: a search that cut states at the
    depth limit is incomplete (``max-depth``) unless it stopped for another reason; a
    complete one reports each ``unmet`` sometimes-property in ``discoveries``."""
    if stop_reason is None and depth_cut:
        stop_reason = "max-depth"
    if stop_reason is None:
        for prop in unmet:
            discoveries.append(Discovery(prop.name, prop.expectation, None, "no reachable state satisfies it"))
    return stop_reason


def dfs(system: System[Hashable, Hashable], properties: Iterable[Property] = (), *,
        limits: Limits = Limits(), keep_going: bool = False, fingerprint: bool = False,
        metrics: Iterable[Metric] = (), progress: ProgressCallback | None = None,
        progress_interval: float = 0.5, watchdog: Watchdog | None = None,
        checkpoint: CheckpointCallback | None = None, checkpoint_interval: float = 60.0,
        resume: SearchState | None = None, por: bool = False) -> Result:
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

    Ctrl-C, the limits and exhausted memory end the search cleanly: the result then has
    ``complete=False``, ``stop_reason`` says why (``interrupted``, ``max-transitions``,
    ``max-states``, ``max-depth``, ``max-seconds``, ``max-memory``, ``out-of-memory``) and
    its ``verdict`` is never ``ok``. ``metrics`` are evaluated at every quiescent state
    reached and reported as (min, max).

    ``watchdog`` enforces the time and memory limits and turns Ctrl-C into a clean stop
    between transitions; without one, ``dfs`` runs its own from ``limits`` (a given one
    brings its own limits: ``limits.max_seconds`` and ``max_memory`` are then not used).
    A system may expose ``guard`` (a :class:`~nice_attendre.watchdog.CallGuard`) marking its
    calls into user code, which the watchdog may then interrupt.

    ``checkpoint(search_state)`` is called every ``checkpoint_interval`` seconds (at a
    clock read) and when the search ends, unless it ended where its state may be
    inconsistent (a forced second Ctrl-C outside a transition, exhausted memory); it must
    save the state at once (it is the live search). ``resume`` continues a saved search of
    the same system and properties: the final counts and verdicts are those of an
    uninterrupted search.

    With ``por`` the search explores, in each state, the enabled events of a stubborn set
    (:mod:`nice_attendre.por`; the system must declare footprints) and expands a state fully
    when one of its reduced successors is on the stack (the stack proviso): every quiescent
    state and a violation of every stable property that the full search reaches are reached,
    and the counts are those of the reduced graph. Properties the reduction cannot check
    (:func:`nice_attendre.por.refusal`) raise :class:`~nice_attendre.errors.InputError`.
    """
    if watchdog is None:
        guard = getattr(system, "guard", None)
        with Watchdog(guard=guard if isinstance(guard, CallGuard) else None, max_seconds=limits.max_seconds,
                      max_memory=limits.max_memory) as own:
            return _dfs(system, properties, limits, keep_going, fingerprint, metrics, progress,
                        progress_interval, own, checkpoint, checkpoint_interval, resume, por)
    return _dfs(system, properties, limits, keep_going, fingerprint, metrics, progress, progress_interval,
                watchdog, checkpoint, checkpoint_interval, resume, por)


def _running_search(frame: FrameType | None) -> tuple[Stats, tuple[Discovery, ...]] | None:
    """The counts and discoveries so far of the depth-first search on ``frame``'s stack (the
    main thread's, stuck in user code), read from the frame of :func:`_dfs`: what a hard stop
    reports (see :class:`~nice_attendre.watchdog.HardStop`). The loop publishes nothing: its
    locals are read once, when the process is about to end."""
    code = _dfs.__code__
    while frame is not None and frame.f_code is not code:
        frame = frame.f_back
    if frame is None:
        return None
    found = frame.f_locals
    visited = found.get("visited")
    unique = len(visited) if visited is not None else found.get("unique", 0)
    elapsed = found["elapsed_before"] + time.monotonic() - found["start"]
    return (Stats(found["transitions"], unique, found["revisits"], found["max_depth"], elapsed),
            tuple(found["discoveries"]))


def _dfs(system: System[Hashable, Hashable], properties: Iterable[Property], limits: Limits, keep_going: bool,
         fingerprint: bool, metrics: Iterable[Metric], progress: ProgressCallback | None,
         progress_interval: float, watchdog: Watchdog, checkpoint: CheckpointCallback | None,
         checkpoint_interval: float, resume: SearchState | None, por: bool = False) -> Result:
    props = tuple(properties)
    if por:
        problem = unsupported(system) or refusal(props, cycles=True)
        if problem is not None:
            raise InputError(problem)
    always = tuple(p for p in props if p.expectation is Expectation.ALWAYS)
    at_end = tuple(p for p in props if p.expectation is Expectation.AT_QUIESCENCE)
    on_step = tuple(p for p in props if p.expectation is Expectation.TRANSITION)
    cycles = tuple(p for p in props if p.expectation is Expectation.TERMINATION)
    eventually = tuple(p for p in props if p.expectation is Expectation.EVENTUALLY)
    if eventually and (checkpoint is not None or resume is not None):
        raise InputError(f"eventually-properties ({', '.join(p.name for p in eventually)}) cannot be "
                         "checkpointed or resumed: run the search in one go")
    metric_list = tuple(metrics)
    if resume is None:
        sometimes = [p for p in props if p.expectation is Expectation.SOMETIMES]
        metric_ranges: dict[str, tuple[int, int]] = {}
        discoveries: list[Discovery] = []
        violated: set[str] = set()
        visited: Any = (FingerprintTable() if fingerprint
                         else KeyedStates() if getattr(system, "large_states", False) is True
                         and hasattr(system, "apply_keyed") else set())
        # A frame is [state, events, next index, event that led here, its key in `visited`];
        # with eventually-properties also [its pending mask, whether it is the state's first
        # expansion] (see "Cycles" below).
        stack: list[list[Any]] = []
        transitions = revisits = max_depth = next_initial = 0
        depth_cut = False
        elapsed_before = 0.0
    else:
        left = set(resume.sometimes_left)
        sometimes = [p for p in props if p.expectation is Expectation.SOMETIMES and p.name in left]
        metric_ranges = dict(resume.metric_ranges)
        discoveries = list(resume.discoveries)
        violated = set(resume.violated)
        visited = resume.visited
        stack = resume.stack
        transitions, revisits, max_depth = resume.transitions, resume.revisits, resume.max_depth
        next_initial, depth_cut, elapsed_before = resume.next_initial, resume.depth_cut, resume.elapsed

    max_states = limits.max_states
    depth_limit = limits.max_depth
    # The loop stops before an apply once ``transitions >= stop_at[0]``; the watchdog lowers
    # it to -1 when a time or memory limit or a signal asks the search to stop.
    stop_at: list[float] = [math.inf if limits.max_transitions is None else limits.max_transitions]
    start = time.monotonic()
    next_progress = start + progress_interval
    next_checkpoint = start + checkpoint_interval

    enabled = system.enabled
    full_enabled = enabled
    #: with por, the termination properties not decided, and why (see nice_attendre.por)
    undecided: dict[str, str] = {}
    if por:
        enabled = Reducer(system)  # type: ignore[arg-type]
        if checkpoint is not None or resume is not None:
            undecided.update((p.name, TERMINATION_CHECKPOINTED) for p in cycles)
    apply = system.apply
    # Keys in ``visited``: states, fingerprints, or (fingerprint, state) pairs for systems
    # whose states are too large to hash in full at every transition.
    keyed = isinstance(visited, KeyedStates)
    hashed = fingerprint or keyed
    # With fingerprints and no property of transitions, a successor is built only when it is
    # new: most are revisits, dropped at their fingerprint.
    lazy = fingerprint and not on_step
    if lazy:
        fingerprint_of, peek, build = peek_functions(system)
    elif fingerprint:
        fingerprint_of, step = fingerprint_functions(system)
    elif keyed:
        fingerprint_of, step = keyed_functions(system)
    add_visited = visited.add
    stop_reason: str | None = None
    stop_detail: str | None = None  # (an unsupported feature met mid-search: its message)
    signum: int | None = None
    unique = 0
    consistent = True  # whether the search state is one a resume can continue from
    rolled_back = False  # whether an exception out of ``apply`` put its event back

    # Cycles. ``on_stack`` maps each state on the stack (its key; a keyed state by its
    # fingerprint, the state compared on a hit) to its frame's index: a successor on the
    # stack closes a cycle (a back edge). In a depth-first search that expands every state
    # it stores, the graph has a cycle iff some edge is a back edge, so a complete search
    # finds one iff there is one (the ``termination`` property). ``under`` keeps the index a
    # clash of fingerprints hid (two keyed states with one fingerprint on the stack).
    #
    # ``eventually`` properties put a bit per property in the search, not in the state: a
    # frame's mask has bit i while property i has not held on the path to it. A state is
    # expanded once per bit: ``pending[i]`` holds the states expanded (or on the stack) with
    # bit i. A state stored while the bit was off (the property held earlier on that path)
    # and reached again with it on is expanded once more (a frame with ``fresh`` False): it
    # applies its events again, counts nothing (the counts are the state graph's) and goes
    # only where bit i stays on. A path with bit i on that ends (a quiescent state) or
    # closes a cycle on the stack violates property i. Masks only shrink up the stack, so the
    # frames with bit i form a depth-first search of the states reached by paths where
    # property i never held: the same back-edge argument holds per property.
    track = bool(cycles or eventually or por)  # with por: the stack proviso
    ev_mode = bool(eventually)
    on_stack: dict[Any, int] = {}
    on_stack_get = on_stack.get
    under: dict[int, int] = {}
    all_bits = (1 << len(eventually)) - 1
    pending: list[Any] = [FingerprintTable() if fingerprint else KeyedStates() if keyed else set()
                          for _ in eventually]
    rework = 0  # applies of the frames that expand a state again (not transitions)
    # Weak fairness: per property, the states of strongly connected components with no weakly
    # fair cycle (a back edge into one closes no cycle that property counts).
    unfair: dict[str, set[Any]] = {}
    group = group_of(system)

    def trace_to(final_event: Any, final_state: Any) -> Trace:
        steps = [Step(frame[3], frame[0]) for frame in stack[1:]]
        if final_event is not None:
            steps.append(Step(final_event, final_state))
        initial = stack[0][0] if stack else final_state
        return Trace(initial, tuple(steps))

    def lasso_to(at: int, final_event: Any) -> Trace:
        """The trace along the stack, then ``final_event`` back to the state of frame ``at``."""
        steps = [Step(frame[3], frame[0]) for frame in stack[1:]]
        steps.append(Step(final_event, stack[at][0]))
        return Trace(stack[0][0], tuple(steps), cycle_start=at)

    def mark(key: Any) -> None:
        """The top frame (state ``key``) is on the stack."""
        index = len(stack) - 1
        if keyed:
            found = on_stack.get(key[0])
            if found is not None:
                under[index] = found
            on_stack[key[0]] = index
        else:
            on_stack[key] = index

    def where(key: Any) -> int | None:
        """The index of the frame of state ``key`` on the stack, or None."""
        if not keyed:
            return on_stack.get(key)
        at = on_stack.get(key[0])
        while at is not None and stack[at][4] != key:
            at = under.get(at)
        return at

    def expand_fully(frame: list[Any]) -> None:
        """The stack proviso: ``frame``'s state has a reduced successor on the stack, so it
        explores every enabled event (those not in its stubborn set after the others)."""
        chosen = set(frame[1])
        rest = [event for event in full_enabled(frame[0]) if event not in chosen]
        if rest:
            frame[1] = list(frame[1]) + rest

    def mask_of(mask: int, state: Any) -> int:
        """The bits of ``mask`` whose eventually-property does not hold in ``state``."""
        bit = 0
        while mask >> bit:
            if mask >> bit & 1 and eventually[bit].holds(state):
                mask &= ~(1 << bit)
            bit += 1
        return mask

    def record_cycle(prop: Property, trace: Trace) -> bool:
        """``trace`` (a lasso, or for an eventually-property a path that ends) violates ``prop``,
        unless it is a lasso and ``prop`` assumes weak fairness, which no cycle through the
        cycle's entry satisfies: then its strongly connected component is set aside for
        ``prop`` (``unfair``) and nothing is recorded. A lasso is first made as fair as it can
        be (:func:`~nice_attendre.lasso.settled`). True when ``prop`` is violated."""
        if prop.name in violated and not keep_going:
            return True
        note = ""
        if trace.is_lasso:
            cleared = unfair.setdefault(prop.name, set())
            start = trace.cycle_start
            entry = trace.steps[start - 1].state if start else trace.initial
            if entry in cleared:
                return False
            acceptable = fine if prop.expectation is Expectation.TERMINATION else (
                lambda before, event, after: fine(before, event, after) and not prop.holds(after))
            # fairness is judged on the system's events, all of them (with por too)
            found = settled(trace, full_enabled, apply, acceptable, group, prop.fairness == "weak",
                            stop=lambda: stop_at[0] < 0)
            if isinstance(found, Unfair):
                cleared.update(found.states)
                if por:  # a fair cycle may be among the interleavings left out
                    undecided.setdefault(prop.name, TERMINATION_UNDECIDED)
                return False
            trace, note = found
        if prop.expectation is Expectation.TERMINATION:
            reason = termination_reason(trace, full_enabled, group, note)
        else:
            reason = eventually_reason(prop.name, trace, full_enabled, prop.why(trace.final), group, note)
        discoveries.append(Discovery(prop.name, prop.expectation, trace, reason))
        violated.add(prop.name)
        return True

    def fine(before: Any, event: Any, after: Any) -> bool:
        """Whether a step a lasso may gain violates no property the search checks on steps."""
        return all(p.holds(after) for p in always) and all(p.holds(before, event, after) for p in on_step)

    def record_bits(mask: int, trace: Trace) -> bool:
        """``trace`` violates the eventually-properties of the bits ``mask``: True if it
        violates one (see ``record_cycle``)."""
        found = False
        for bit, prop in enumerate(eventually):
            if mask >> bit & 1:
                found = record_cycle(prop, trace) or found
        return found

    def again(state: Any, key: Any, event: Any, mask: int) -> bool:
        """``state`` (stored, key ``key``), reached by ``event`` from the top frame with the
        bits ``mask`` on (its properties do not hold in it): record the cycle it closes, or
        expand it again for the bits it was not expanded with. True if a violation was found."""
        nonlocal depth_cut
        at = where(key)
        if at is not None:  # every state from frame ``at`` up to here has the bits on
            return record_bits(mask, lasso_to(at, event))
        fresh = 0
        for bit, seen in enumerate(pending):
            if mask >> bit & 1 and key not in seen:
                fresh |= 1 << bit
        if not fresh:
            return False
        for bit, seen in enumerate(pending):
            if fresh >> bit & 1:
                seen.add(key)
        next_events = enabled(state)
        if not next_events:
            return record_bits(fresh, trace_to(event, state))
        if depth_limit is not None and len(stack) >= depth_limit:
            depth_cut = True
            return False
        stack.append([state, next_events, 0, event, key, fresh, False])
        mark(key)
        return False

    record, check_state = state_checks(always, at_end, sometimes, metric_list, metric_ranges, enabled,
                                       keep_going, discoveries, violated, trace_to)

    watchdog.bind(stop_at, snapshot=_running_search)
    stored = len(visited)  # states in ``visited``, kept up to date in the loop
    try:
        initials = system.initial_states()
        if resume is not None and stack and (next_initial < 1 or stack[0][0] != initials[next_initial - 1]):
            raise ModelError("the saved search does not start in an initial state of this system")
        if resume is not None and resume.finished:  # it ended for good: the same result again
            stack, next_initial, stop_reason = [], len(initials), resume.stop_reason
        if track:  # a resumed stack: its states are on it
            for depth, frame in enumerate(stack):
                if keyed:
                    found = on_stack.get(frame[4][0])
                    if found is not None:
                        under[depth] = found
                    on_stack[frame[4][0]] = depth
                else:
                    on_stack[frame[4]] = depth
        while True:
            while stack:
                frame = stack[-1]
                events = frame[1]
                index = frame[2]
                if index >= len(events):
                    stack.pop()
                    if track:
                        top = len(stack)
                        if keyed:
                            below = under.pop(top, None)
                            if below is None:
                                del on_stack[frame[4][0]]
                            else:
                                on_stack[frame[4][0]] = below
                        else:
                            del on_stack[frame[4]]
                    continue
                if transitions >= stop_at[0] and (stop_at[0] < 0 or not ev_mode or frame[6]):
                    stop_reason = watchdog.reason or "max-transitions"
                    signum = watchdog.signum
                    break
                frame[2] = index + 1
                event = events[index]
                if ev_mode and not frame[6]:  # a state expanded again for its eventually-bits
                    try:
                        if lazy:
                            key, handle = peek(frame[0], frame[4], event)
                        elif hashed:
                            state, key = step(frame[0], frame[4], event)
                        else:
                            state = key = apply(frame[0], event)
                    except BaseException:
                        frame[2] = index
                        rolled_back = True
                        raise
                    rework += 1
                    if not rework & (_CHECK_EVERY - 1):
                        watchdog.poll(time.monotonic())
                    if on_step and not all(p.holds(frame[0], event, state) for p in on_step):
                        continue  # the search does not follow a violating step
                    if key not in visited:  # below a state the depth limit cut: not expanded
                        depth_cut = True
                        continue
                    if lazy:
                        state = build(frame[0], handle)
                    mask = mask_of(frame[5], state)
                    if mask and again(state, key, event, mask) and not keep_going:
                        stop_reason = "violation"
                        break
                    continue
                try:
                    if lazy:
                        key, handle = peek(frame[0], frame[4], event)
                    elif hashed:
                        state, key = step(frame[0], frame[4], event)
                    else:
                        state = key = apply(frame[0], event)
                except BaseException:
                    frame[2] = index  # not applied: a resumed search applies it again
                    rolled_back = True
                    raise
                transitions += 1
                if on_step:
                    failed = [p for p in on_step if not p.holds(frame[0], event, state)]
                    for prop in failed:
                        if prop.name not in violated or keep_going:
                            record(prop, trace_to(event, state), state)
                    if failed:
                        if not keep_going:
                            stop_reason = "violation"
                            break
                        continue  # a violating step is not followed further
                # one lookup, not two: add, and see whether the visited set grew
                if hashed:
                    is_new = add_visited(key)
                else:
                    add_visited(key)
                    is_new = len(visited) != stored
                if not is_new:
                    revisits += 1
                    if track:
                        if por and (where(key) if keyed else on_stack_get(key)) is not None:
                            expand_fully(frame)
                        if cycles:
                            at = where(key) if keyed else on_stack_get(key)
                            if at is not None:  # a back edge: the stack from ``at`` is a cycle
                                found_trace = lasso_to(at, event)
                                found_any = False
                                for prop in cycles:
                                    found_any = record_cycle(prop, found_trace) or found_any
                                if found_any and not keep_going:
                                    stop_reason = "violation"
                                    break
                        if ev_mode and frame[5]:
                            if lazy:
                                state = build(frame[0], handle)
                            mask = mask_of(frame[5], state)
                            if mask and again(state, key, event, mask) and not keep_going:
                                stop_reason = "violation"
                                break
                else:
                    stored += 1
                    if lazy:
                        state = build(frame[0], handle)
                    depth = len(stack)
                    if depth > max_depth:
                        max_depth = depth
                    bad, next_events = check_state(state, event)
                    if bad and not keep_going:
                        stop_reason = "violation"
                        break
                    if ev_mode:
                        mask = mask_of(frame[5], state) if frame[5] else 0
                        if next_events is None:  # never expanded: never to be expanded again either
                            for seen in pending:
                                seen.add(key)
                        elif mask:
                            for bit, seen in enumerate(pending):
                                if mask >> bit & 1:
                                    seen.add(key)
                            if not next_events:  # the execution ends and they never held
                                if record_bits(mask, trace_to(event, state)) and not keep_going:
                                    stop_reason = "violation"
                                    break
                    if next_events:
                        if depth_limit is not None and depth >= depth_limit:
                            depth_cut = True
                        else:
                            stack.append([state, next_events, 0, event, key, mask, True] if ev_mode
                                         else [state, next_events, 0, event, key])
                            if track:
                                if keyed:
                                    mark(key)
                                else:
                                    on_stack[key] = depth
                    if max_states is not None and len(visited) >= max_states:
                        stop_reason = "max-states"
                        break
                if not transitions & (_CHECK_EVERY - 1):
                    now = time.monotonic()
                    watchdog.poll(now)
                    if progress is not None and now >= next_progress:
                        next_progress = now + progress_interval
                        progress(Progress(transitions, len(visited), len(stack) - 1, max_depth,
                                          now - start))
                    if checkpoint is not None and now >= next_checkpoint:
                        # (built here, not in a nested function: a closure over the counters
                        # would make every access to them slower)
                        checkpoint(SearchState(next_initial, visited, stack, transitions, revisits, max_depth,
                                               depth_cut, discoveries, violated, [p.name for p in sometimes],
                                               metric_ranges, elapsed_before + now - start))
                        next_checkpoint = time.monotonic() + checkpoint_interval
            if stop_reason is not None or next_initial >= len(initials):
                break
            if stop_at[0] < 0:
                stop_reason, signum = watchdog.reason, watchdog.signum
                break
            initial = initials[next_initial]
            next_initial += 1
            key = fingerprint_of(initial) if hashed else initial
            if key in visited:
                if ev_mode:  # reached from another initial state: perhaps with other bits
                    mask = mask_of(all_bits, initial)
                    if mask and again(initial, key, None, mask) and not keep_going:
                        stop_reason = "violation"
                        break
                continue
            add_visited(key)
            stored += 1
            stack.append([initial, (), 0, None, key])
            bad, events = check_state(initial, None)
            stack.pop()
            if bad and not keep_going:
                stop_reason = "violation"
                break
            mask = 0
            if ev_mode:
                mask = mask_of(all_bits, initial)
                if events is None:
                    for seen in pending:
                        seen.add(key)
                elif mask:
                    for bit, seen in enumerate(pending):
                        if mask >> bit & 1:
                            seen.add(key)
                    if not events:
                        record_bits(mask, Trace(initial, ()))
                        if not keep_going:
                            stop_reason = "violation"
                            break
            if events is not None:
                if depth_limit is not None and depth_limit == 0 and events:
                    depth_cut = True
                elif events:
                    stack.append([initial, events, 0, None, key, mask, True] if ev_mode
                                 else [initial, events, 0, None, key])
                    if track:
                        mark(key)
            if max_states is not None and len(visited) >= max_states:
                stop_reason = "max-states"
                break
    except StopRequest as exc:  # raised inside a call into user code: an app handler (``apply``
        stop_reason, signum = exc.reason, exc.signum  # was rolled back) or a user's property
        consistent = rolled_back  # (its state stored, its checks not done: no final checkpoint)
    except KeyboardInterrupt as exc:
        stop_reason, signum = "interrupted", getattr(exc, "signum", signal.SIGINT)
        consistent = rolled_back
    except UnsupportedFeature as exc:  # the app met, mid-search, a feature the model lacks: what was
        stop_reason, stop_detail = "unsupported-feature", str(exc)  # explored is reported, the feature named
        consistent = rolled_back
    except MemoryError:
        stop_reason, consistent = "out-of-memory", False
        unique = len(visited)
        visited = add_visited = None  # give the memory back for the report
        on_stack = pending = None  # type: ignore[assignment]
    except Exception:
        raise
    except BaseException as exc:  # sys.exit or another non-Exception out of user code no guard caught
        raise escaped(exc) from exc
    finally:
        watchdog.unbind()

    now = time.monotonic()
    unique_states = len(visited) if visited is not None else unique
    if checkpoint is not None and consistent:
        finished = stop_reason is None or stop_reason == "violation"
        checkpoint(SearchState(next_initial, visited, stack, transitions, revisits, max_depth, depth_cut,
                               discoveries, violated, [p.name for p in sometimes], metric_ranges,
                               elapsed_before + now - start, finished, stop_reason))
    stop_reason = end_of_search(stop_reason, depth_cut, sometimes, discoveries)
    stats = Stats(transitions, unique_states, revisits, max_depth, elapsed_before + now - start)
    collision = (collision_probability(unique_states, unique_states + revisits) if fingerprint
                 and visited is not None else None)
    return Result(stats, tuple(discoveries), stop_reason is None, stop_reason, metric_ranges, signal=signum,
                  stop_detail=stop_detail,
                  collision_probability=collision,
                  unchecked=tuple((name, why) for name, why in undecided.items() if name not in violated))
