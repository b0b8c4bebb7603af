"""Breadth-first search: the same checks as :func:`nice_attendre.checker.dfs`, level by
level, so that every counterexample it reports is a shortest one (``--shortest``).

Counts. A complete breadth-first search applies every enabled event of every unique state
once, like the depth-first one, so ``transitions``, ``unique_states`` and ``revisits`` are
the same (DESIGN.md section 2). ``max_depth`` differs in meaning: here it is the deepest
breadth-first level reached (the length of the longest *shortest* path), where the
depth-first search reports its deepest stack. A search stopped at its first violation
reports the transitions made until then, which differ from a depth-first search's only
because the two stop at different moments.

Traces. Each stored state remembers the state it was first reached from and the event
(a parent pointer, keyed like the visited set: the state, or its 64-bit fingerprint with
``fingerprint``); a trace is rebuilt by walking the pointers back and applying the events
again from the initial state. A state is checked when it is first reached, which in
breadth-first order is by a path of the fewest events: the first violation reported is at
the smallest depth where any violation exists.
"""
from __future__ import annotations

import math
import signal
import time
from collections import deque
from typing import Any, Callable, Hashable, Iterable, Sequence

from nice_attendre.checker import Limits, Progress, ProgressCallback, end_of_search, state_checks
from nice_attendre.errors import ModelError, StopRequest, UnsupportedFeature, escaped
from nice_attendre.fair_cycles import Unfair, group_of
from nice_attendre.fingerprint import fingerprint_functions
from nice_attendre.lasso import eventually_reason, settled, termination_reason
from nice_attendre.property import Expectation, Metric, Property
from nice_attendre.result import Discovery, Result, Stats
from nice_attendre.stored_graph import END, EXPANDED, Abandoned, StoredGraph
from nice_attendre.system import System
from nice_attendre.trace import Step, Trace
from nice_attendre.visited import collision_probability
from nice_attendre.watchdog import CallGuard, Watchdog

_CHECK_EVERY = 1024  # transitions between clock reads (a power of two)


def bfs(system: System[Hashable, Hashable], properties: Iterable[Property] = (), *,
        limits: Limits = Limits(), keep_going: bool = False, fingerprint: bool = False,
        metrics: Iterable[Metric] = (), progress: ProgressCallback | None = None,
        progress_interval: float = 0.5, watchdog: Watchdog | None = None) -> Result:
    """Explore every state reachable in ``system`` breadth-first; check ``properties``.

    The contract is :func:`nice_attendre.checker.dfs`'s (limits, ``keep_going``, metrics,
    the watchdog, a clean stop on Ctrl-C), except that there are no checkpoints, traces are
    shortest paths and ``max_depth`` is the deepest level (see the module docstring). With
    ``fingerprint`` the parent pointers are keyed by 64-bit fingerprints (a plain dict: less
    memory than states, more than the depth-first search's compact table).
    """
    if watchdog is None:
        guard = getattr(system, "guard", None)
        with Watchdog(guard=guard if isinstance(guard, CallGuard) else None, max_seconds=limits.max_seconds,
                      max_memory=limits.max_memory) as own:
            return _bfs(system, tuple(properties), limits, keep_going, fingerprint, tuple(metrics), progress,
                        progress_interval, own)
    return _bfs(system, tuple(properties), limits, keep_going, fingerprint, tuple(metrics), progress,
                progress_interval, watchdog)


def _bfs(system: System[Hashable, Hashable], props: tuple[Property, ...], limits: Limits, keep_going: bool,
         fingerprint: bool, metric_list: tuple[Metric, ...], progress: ProgressCallback | None,
         progress_interval: float, watchdog: Watchdog) -> Result:
    always = tuple(p for p in props if p.expectation is Expectation.ALWAYS)
    at_end = tuple(p for p in props if p.expectation is Expectation.AT_QUIESCENCE)
    on_step = tuple(p for p in props if p.expectation is Expectation.TRANSITION)
    sometimes = [p for p in props if p.expectation is Expectation.SOMETIMES]
    cycles = tuple(p for p in props if p.expectation is Expectation.TERMINATION)
    eventually = tuple(p for p in props if p.expectation is Expectation.EVENTUALLY)
    metric_ranges: dict[str, tuple[int, int]] = {}
    discoveries: list[Discovery] = []
    violated: set[str] = set()
    # key -> (parent key, event); an initial state's parent is None.
    parents: dict[Any, tuple[Any, Any] | None] = {}
    initial_of: dict[Any, Any] = {}  # key of an initial state -> the state
    transitions = revisits = max_depth = 0
    depth_cut = False
    stop_reason: str | None = None
    stop_detail: str | None = None  # (an unsupported feature met mid-search: its message)
    signum: int | None = None
    stop_at: list[float] = [math.inf if limits.max_transitions is None else limits.max_transitions]
    max_states = limits.max_states
    depth_limit = limits.max_depth
    enabled = system.enabled
    apply = system.apply
    if fingerprint:
        fingerprint_of, step = fingerprint_functions(system)
    start = time.monotonic()
    next_progress = start + progress_interval
    # With termination or eventually-properties the search keeps the state graph (see the
    # module docstring): node numbers by key, each node's key, and whether each
    # eventually-property holds in each node.
    track = bool(cycles or eventually)
    graph = StoredGraph()
    node_of: dict[Any, int] = {}
    key_of_node: list[Any] = []
    holds_at = [bytearray() for _ in eventually]

    def trace_to(key: Any, final_event: Any = None, final_state: Any = None) -> Trace:
        """The path to ``key`` (then ``final_event`` into ``final_state``), replayed."""
        events: list[Any] = []
        while parents[key] is not None:
            key, event = parents[key]  # type: ignore[misc]
            events.append(event)
        events.reverse()
        state = initial = initial_of[key]
        steps = []
        for event in events:
            state = apply(state, event)
            steps.append(Step(event, state))
        if final_event is not None:
            steps.append(Step(final_event, final_state))
        return Trace(initial, tuple(steps))

    record, check_state = state_checks(always, at_end, sometimes, metric_list, metric_ranges, enabled,
                                       keep_going, discoveries, violated, lambda key, _state: trace_to(key))

    def store(state: Any, key: Any) -> int:
        """A new node for ``state``."""
        node = graph.add_node()
        node_of[key] = node
        key_of_node.append(key)
        for prop, column in zip(eventually, holds_at):
            column.append(1 if prop.holds(state) else 0)
        return node

    # A frontier entry: (state, its key, its enabled events, its depth, its node).
    frontier: deque[tuple[Any, Any, Sequence[Any], int, int]] = deque()
    watchdog.bind(stop_at)
    try:
        for initial in system.initial_states():
            key = fingerprint_of(initial) if fingerprint else initial
            if key in parents:
                continue
            parents[key] = None
            initial_of[key] = initial
            node = store(initial, key) if track else -1
            bad, events = check_state(initial, key)
            if bad and not keep_going:
                stop_reason = "violation"
                break
            if track and events is not None and not events:
                graph.kinds[node] = END
            if events:
                if depth_limit is not None and depth_limit == 0:
                    depth_cut = True
                else:
                    frontier.append((initial, key, events, 0, node))
                    if track:
                        graph.kinds[node] = EXPANDED
            if max_states is not None and len(parents) >= max_states:
                stop_reason = "max-states"
                break
        while frontier and stop_reason is None:
            state, key, events, depth, node = frontier[0]
            index = 0
            # The events of one state, applied in order; ``frontier[0]`` is dropped once all were.
            while index < len(events):
                if transitions >= stop_at[0]:
                    stop_reason = watchdog.reason or "max-transitions"
                    signum = watchdog.signum
                    break
                event = events[index]
                index += 1
                if fingerprint:
                    new, new_key = step(state, key, event)
                else:
                    new = new_key = apply(state, event)
                transitions += 1
                if on_step:
                    failed = [p for p in on_step if not p.holds(state, event, new)]
                    for prop in failed:
                        if prop.name not in violated or keep_going:
                            record(prop, trace_to(key, event, new), new)
                    if failed:
                        if not keep_going:
                            stop_reason = "violation"
                            break
                        continue
                if new_key in parents:
                    revisits += 1
                    if track:
                        graph.add_edge(node, node_of[new_key])
                else:
                    parents[new_key] = (key, event)
                    if track:
                        new_node = store(new, new_key)
                        graph.add_edge(node, new_node)
                    level = depth + 1
                    if level > max_depth:
                        max_depth = level
                    bad, next_events = check_state(new, new_key)
                    if bad and not keep_going:
                        stop_reason = "violation"
                        break
                    if track and next_events is not None and not next_events:
                        graph.kinds[new_node] = END
                    if next_events:
                        if depth_limit is not None and level >= depth_limit:
                            depth_cut = True
                        else:
                            frontier.append((new, new_key, next_events, level, new_node if track else -1))
                            if track:
                                graph.kinds[new_node] = EXPANDED
                    if max_states is not None and len(parents) >= max_states:
                        stop_reason = "max-states"
                        break
                if not transitions & (_CHECK_EVERY - 1):
                    now = time.monotonic()
                    watchdog.poll(now)
                    if progress is not None and now >= next_progress:
                        next_progress = now + progress_interval
                        progress(Progress(transitions, len(parents), depth, max_depth, now - start))
            if stop_reason is not None:
                break
            frontier.popleft()
        if track and stop_reason is None:  # the search went to its end (perhaps cut by the depth limit)
            stop_reason = _cycles_afterwards(system, graph, node_of, key_of_node, holds_at, initial_of, cycles,
                                             eventually, always, on_step, fingerprint, discoveries, violated,
                                             stop_at, watchdog)
            signum = watchdog.signum if stop_reason is not None else None
    except StopRequest as exc:
        stop_reason, signum = exc.reason, exc.signum
    except KeyboardInterrupt as exc:
        stop_reason, signum = "interrupted", getattr(exc, "signum", signal.SIGINT)
    except UnsupportedFeature as exc:  # the app met, mid-search, a feature the model lacks
        stop_reason, stop_detail = "unsupported-feature", str(exc)
    except MemoryError:
        stop_reason = "out-of-memory"
    except Exception:
        raise
    except BaseException as exc:  # sys.exit or another non-Exception out of user code no guard caught
        raise escaped(exc) from exc
    finally:
        watchdog.unbind()

    stop_reason = end_of_search(stop_reason, depth_cut, sometimes, discoveries)
    unique_states = len(parents)
    stats = Stats(transitions, unique_states, revisits, max_depth, time.monotonic() - start)
    collision = collision_probability(unique_states, unique_states + revisits) if fingerprint else None
    return Result(stats, tuple(discoveries), stop_reason is None, stop_reason, metric_ranges, signal=signum,
                  stop_detail=stop_detail,
                  collision_probability=collision)


def _cycles_afterwards(system: Any, graph: StoredGraph, node_of: dict[Any, int], key_of_node: list[Any],
                       holds_at: list[bytearray], initial_of: dict[Any, Any], cycles: Sequence[Property],
                       eventually: Sequence[Property], always: Sequence[Property], on_step: Sequence[Property],
                       fingerprint: bool, discoveries: list[Discovery], violated: set[str], stop_at: list[float],
                       watchdog: Watchdog) -> str | None:
    """After a breadth-first search that went to its end: the termination and eventually
    discoveries its stored ``graph`` holds (one for each property violated), added to
    ``discoveries``. Returns a stop reason when a limit or a signal cut this short (the
    watchdog asked: ``stop_at`` below 0), else None.

    A lasso's prefix is a shortest path to the cycle's first state (through states where the
    eventually-property fails, for one); its cycle is the one a depth-first walk of the graph
    meets first, not necessarily the shortest. Each path of nodes becomes a trace by applying,
    from the initial state, the first enabled event whose successor has the next node's key."""
    enabled, apply = system.enabled, system.apply
    key_function = fingerprint_functions(system)[0] if fingerprint else (lambda state: state)

    def stop() -> bool:
        watchdog.poll(time.monotonic())
        return stop_at[0] < 0

    def trace_of(path: list[int], cycle: list[int] | None = None) -> Trace:
        nodes = path + (cycle[1:] + cycle[:1] if cycle else [])
        initial = state = initial_of[key_of_node[nodes[0]]]
        steps = []
        for number, target in enumerate(nodes[1:], start=1):
            want = key_of_node[target]
            for event in enabled(state):
                successor = apply(state, event)
                if key_function(successor) == want:
                    steps.append(Step(event, successor))
                    state = successor
                    break
            else:
                raise ModelError(f"step {number} of a trace: no enabled event leads to the stored state; "
                                 "the model is not deterministic")
        return Trace(initial, tuple(steps), cycle_start=len(path) - 1 if cycle else None)

    def fine(before: Any, event: Any, after: Any) -> bool:
        return all(p.holds(after) for p in always) and all(p.holds(before, event, after) for p in on_step)

    roots = [node_of[key] for key in initial_of]
    group = group_of(system)

    def lasso_for(prop: Property, allowed: Callable[[int], bool], acceptable: Callable[[Any, Any, Any], bool]
                  ) -> tuple[Trace, str] | None:
        """The lasso through nodes ``allowed`` that violates ``prop``, with its note, or None:
        a cycle the graph walk meets, settled for ``prop``'s fairness; a component with no
        weakly fair cycle is set aside and the walk goes on without it."""
        cleared = bytearray(len(key_of_node))
        while True:
            found = graph.cycle(roots, allowed, stop=stop, ignore=cleared.__getitem__)
            if found is None:
                return None
            target = found[0]
            path = graph.path(roots, lambda node: node == target, allowed, stop=stop)
            assert path is not None
            outcome = settled(trace_of(path, found), enabled, apply, acceptable, group, prop.fairness == "weak",
                              stop=stop)
            if not isinstance(outcome, Unfair):
                return outcome
            for state in outcome.states:
                node = node_of.get(key_function(state))
                if node is not None:
                    cleared[node] = 1
            if not cleared[target]:  # pragma: no cover - the component holds the cycle's entry
                raise ModelError("a cycle's entry is not a stored state; the model is not deterministic")

    try:
        graph.freeze()
        for prop in cycles:
            outcome = lasso_for(prop, lambda node: True, fine)
            if outcome is not None:
                lasso, note = outcome
                discoveries.append(Discovery(prop.name, prop.expectation, lasso,
                                             termination_reason(lasso, enabled, group, note)))
                violated.add(prop.name)
        for prop, column in zip(eventually, holds_at):
            def allowed(node: int, column: bytearray = column) -> bool:
                return not column[node]

            ends = graph.end(roots, allowed, stop=stop)
            note = ""
            if ends is not None:
                trace = trace_of(ends)
            else:
                outcome = lasso_for(prop, allowed, lambda before, event, after, prop=prop: fine(before, event, after)
                                    and not prop.holds(after))
                if outcome is None:
                    continue
                trace, note = outcome
            reason = eventually_reason(prop.name, trace, enabled, prop.why(trace.final), group, note)
            discoveries.append(Discovery(prop.name, prop.expectation, trace, reason))
            violated.add(prop.name)
    except Abandoned:
        return watchdog.reason or "interrupted"
    return None


def check_shortest(workers: int, engine: str, resume: Any, checkpoint: Any) -> None:
    """Raise :class:`~nice_attendre.errors.InputError` for options ``--shortest`` cannot
    combine with: several workers or Ray (already breadth-first, their traces are shortest
    paths too, but they are another search), a resumed or checkpointed search (checkpoints
    are the depth-first search's)."""
    from nice_attendre.errors import InputError

    if workers > 1 or engine != "processes":
        raise InputError("--shortest is a one-process breadth-first search: drop --workers/--engine "
                         "(a partitioned search is breadth-first already)")
    if resume is not None or checkpoint is not None:
        raise InputError("--shortest cannot be combined with --resume or --checkpoint "
                         "(checkpoints are for the depth-first search)")

