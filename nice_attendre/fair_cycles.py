"""Weak fairness: whether a cycle of states can repeat for ever under a fair scheduler
(domain-free).

An event can be one of several that resolve the same activity: which command a switch takes
next, which of two tied entries a packet meets, which answer a statistics request gets. A
*process* is such an activity; a system names the process of each event with an optional
``fairness_group(event) -> Hashable`` (without one, every event is its own process).

A scheduler is *weakly fair* when a process that is enabled in every state from some point on
eventually moves (takes one of its events). Real switches and controllers are: a timer fires, a
queued command is taken, a packet at a port is processed. An infinite execution that repeats a
cycle is weakly fair when every process enabled in every state of the cycle moves on the cycle.

:func:`weakly_fair_cycle` decides whether a state lies on such a cycle. It explores the states
reachable from it (within a budget), takes its strongly connected component ``S`` (the states
that it reaches and that reach it back), and applies the classic test: ``S`` holds a weakly fair
cycle iff every process enabled in every state of ``S`` moves on some step inside ``S`` (a cycle
through every step of ``S`` then lets every process move or be disabled; conversely a process
enabled everywhere in ``S`` that never moves inside it is enabled and starved on every cycle in
``S``). When it does, a fair cycle through the state is built by adding, for each process still
starved, a detour that moves it or visits a state where it is disabled; when it does not, no
cycle through any state of ``S`` is weakly fair, and the caller may set the whole component
aside.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Sequence

from nice_attendre.trace import Step

#: States explored from a cycle's entry, at most, before :func:`weakly_fair_cycle` gives up.
BUDGET = 100_000

Group = Callable[[Any], Hashable]


def group_of(system: Any) -> Group:
    """``system``'s ``fairness_group``, or the identity (every event its own process)."""
    found = getattr(system, "fairness_group", None)
    return found if callable(found) else identity


def identity(event: Any) -> Hashable:
    return event


@dataclass(frozen=True, slots=True)
class Unfair:
    """No weakly fair cycle goes through any of ``states`` (the entry's strongly connected
    component): each of ``starved`` (an event of each such process) is enabled in every one
    of them and never moves on a step between them."""

    states: frozenset[Any]
    starved: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Undecided:
    """The question was not decided: more than ``explored`` states are reachable from the
    entry (the budget), or ``stopped`` (the search was asked to stop)."""

    explored: int
    stopped: bool = False


def weakly_fair_cycle(entry: Any, enabled: Callable[[Any], Sequence[Any]], apply: Callable[[Any, Any], Any],
                      group: Group = identity,
                      allowed: Callable[[Any, Any, Any], bool] | None = None, budget: int | None = None,
                      stop: Callable[[], bool] | None = None) -> tuple[Step, ...] | Unfair | Undecided:
    """A weakly fair cycle through ``entry``: its steps, from ``entry`` back to it (states may
    repeat on the way); or :class:`Unfair` when there is none through any state of ``entry``'s
    strongly connected component; or :class:`Undecided`.

    Only steps ``allowed(before, event, after)`` belong to the graph (a search that does not
    follow some steps, such as those into a state that violates a property, passes them as
    not allowed); a process's being enabled is judged on ``enabled`` alone. ``stop()``, read
    every 256 states, abandons the question. Deterministic: states are explored in
    ``enabled``'s order, breadth first. ``budget`` defaults to :data:`BUDGET`."""
    if budget is None:
        budget = BUDGET
    index: dict[Any, int] = {entry: 0}
    states = [entry]
    succ: list[list[tuple[Any, int]]] = []
    groups: list[dict[Hashable, Any]] = []  # per state: its enabled processes, each with its first event
    at = 0
    while at < len(states):
        if stop is not None and at % 256 == 0 and stop():
            return Undecided(len(states), stopped=True)
        state = states[at]
        out: list[tuple[Any, int]] = []
        mine: dict[Hashable, Any] = {}
        for event in enabled(state):
            mine.setdefault(group(event), event)
            after = apply(state, event)
            if allowed is not None and not allowed(state, event, after):
                continue
            found = index.get(after)
            if found is None:
                if len(states) >= budget:
                    return Undecided(len(states))
                found = index[after] = len(states)
                states.append(after)
            out.append((event, found))
        succ.append(out)
        groups.append(mine)
        at += 1
    component = _component(succ)
    inside = [node for node in range(len(states)) if component[node]]
    if not any(component[target] for _, target in succ[0]):
        return Unfair(frozenset([entry]), ())  # no cycle through ``entry`` at all
    everywhere = dict(groups[0])
    for node in inside:
        for key in list(everywhere):
            if key not in groups[node]:
                del everywhere[key]
    moving = {group(event) for node in inside for event, target in succ[node] if component[target]}
    starved = tuple(event for key, event in everywhere.items() if key not in moving)
    if starved:
        return Unfair(frozenset(states[node] for node in inside), starved)
    return _fair_cycle(states, succ, groups, component, group)


def _component(succ: Sequence[Sequence[tuple[Any, int]]]) -> list[bool]:
    """Which nodes reach node 0 (all are reached from it): its strongly connected component."""
    preds: list[list[int]] = [[] for _ in succ]
    for node, out in enumerate(succ):
        for _, target in out:
            preds[target].append(node)
    member = [False] * len(succ)
    member[0] = True
    queue = deque([0])
    while queue:
        node = queue.popleft()
        for source in preds[node]:
            if not member[source]:
                member[source] = True
                queue.append(source)
    return member


def _path(succ: Sequence[Sequence[tuple[Any, int]]], component: Sequence[bool], start: int,
          goal: Callable[[int], bool], nonempty: bool = False) -> list[tuple[Any, int]] | None:
    """A shortest path inside the component from ``start`` to a node that meets ``goal``, as
    ``(event, node)`` steps (``[]`` when ``start`` meets it, unless ``nonempty``), or None
    when no node of the component meets it (every node of a strongly connected component
    reaches every other)."""
    if not nonempty and goal(start):
        return []
    parent: dict[int, tuple[int, Any]] = {}
    queue = deque([start])
    seen = {start} if not nonempty else set()
    while queue:
        node = queue.popleft()
        for event, target in succ[node]:
            if not component[target] or target in seen:
                continue
            seen.add(target)
            parent[target] = (node, event)
            if goal(target):
                steps: list[tuple[Any, int]] = []
                at = target
                while True:
                    source, via = parent[at]
                    steps.append((via, at))
                    if source == start:
                        return steps[::-1]
                    at = source
            queue.append(target)
    return None


def _must(path: list[tuple[Any, int]] | None) -> list[tuple[Any, int]]:
    """``path``, which exists (its goal is a node of the component)."""
    assert path is not None, "a node of a strongly connected component is unreachable"
    return path


def _fair_cycle(states: list[Any], succ: list[list[tuple[Any, int]]], groups: list[dict[Hashable, Any]],
                component: list[bool], group: Group) -> tuple[Step, ...]:
    """A weakly fair cycle from node 0 back to it, in a component where one exists: the
    shortest cycle through node 0, then for each process still enabled on every node of the
    cycle and never moving on it (in node 0's order), a detour from node 0 that moves it, or
    failing that one through a node where it is disabled. Each detour settles its process for
    good, so there are at most as many as processes."""
    cycle = _must(_path(succ, component, 0, lambda node: node == 0, nonempty=True))
    while True:
        nodes = {0, *(node for _, node in cycle)}
        taken = {group(event) for event, _ in cycle}
        waiting = [key for key in groups[0]
                   if key not in taken and all(key in groups[node] for node in nodes)]
        if not waiting:
            return tuple(Step(event, states[node]) for event, node in cycle)
        key = waiting[0]

        def moves(node: int, key: Hashable = key) -> bool:
            return any(group(event) == key and component[target] for event, target in succ[node])

        to = _path(succ, component, 0, moves)
        if to is not None:
            node = to[-1][1] if to else 0
            event, target = next((event, target) for event, target in succ[node]
                                 if group(event) == key and component[target])
            detour = [*to, (event, target)]
        else:  # it never moves in the component: visit a node where it is disabled
            detour = _must(_path(succ, component, 0, lambda node, key=key: key not in groups[node]))
            target = detour[-1][1]
        detour += _must(_path(succ, component, target, lambda node: node == 0))
        cycle = cycle + detour
