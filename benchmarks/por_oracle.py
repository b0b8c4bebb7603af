"""The exact oracle of partial-order reduction: how far ``--por`` is from the best reduction by
one persistent event per state, measured on full state graphs (domain-free).

The oracle explores the full state graph of a system first, then, in each state, finds the
enabled events that are *persistent* alone: an event ``t`` enabled in ``s`` such that in
every state reachable from ``s`` by events other than ``t`` (``s`` included), ``t`` is enabled
and independent of every other enabled event ``u`` (each stays enabled after the other, and
``t`` then ``u`` reaches the same state as ``u`` then ``t``). That is Godefroid's persistent
set of one event, decided on the graph itself rather than on declared footprints, so no
footprint-based set can beat it by being a singleton more often: it is the best choice of a
single event per state. The reduced graph takes, in each state, the first such event in
``enabled`` order, or every enabled event when there is none. A persistent-set search
reaches every quiescent state of the full graph (Godefroid, Theorem 4.3): :func:`reduce`
asserts it.

This is a measuring instrument for small graphs (it holds the full graph in memory and
walks it once per distinct event), not a search. Other choices of sets, several events in a
state or another event than the first, may legitimately explore fewer states than the
oracle: its counts are a guide, not a bound.

    python benchmarks/por_oracle.py                       # the default scenarios
    python benchmarks/por_oracle.py --scenario route-flow:linear:3:2:openflow

Prints, per scenario, the full graph's unique states and transitions, the oracle's and
``--por``'s (the depth-first search with ``por=True``), and each factor.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Hashable, Sequence

from nice_attendre.system import System


@dataclass(frozen=True)
class Graph:
    """A full state graph: ``succ[s]`` maps each enabled event of state ``s`` (in ``enabled``
    order) to its successor; states are the system's own (hashable) values."""

    initial: tuple[Hashable, ...]
    succ: dict[Hashable, dict[Hashable, Hashable]]

    @property
    def transitions(self) -> int:
        return sum(len(edges) for edges in self.succ.values())

    def quiescent(self) -> set[Hashable]:
        """The states with no enabled event."""
        return {state for state, edges in self.succ.items() if not edges}


def explore(system: System[Any, Any], max_states: int = 200_000) -> Graph:
    """The full state graph of ``system`` (breadth-first); raises ``OverflowError`` beyond
    ``max_states`` states (the oracle is for small graphs)."""
    initial = tuple(system.initial_states())
    succ: dict[Hashable, dict[Hashable, Hashable]] = {}
    work = deque(state for state in initial)
    for state in initial:
        succ.setdefault(state, {})
    while work:
        state = work.popleft()
        edges = succ[state]
        for event in system.enabled(state):
            after = system.apply(state, event)
            edges[event] = after
            if after not in succ:
                if len(succ) >= max_states:
                    raise OverflowError(f"the oracle is for small graphs: more than {max_states:,} states")
                succ[after] = {}
                work.append(after)
    return Graph(initial, succ)


def _independent_everywhere(graph: Graph, event: Hashable) -> set[Hashable]:
    """The states where ``event`` is enabled and independent of every other enabled event."""
    succ = graph.succ
    good = set()
    for state, edges in succ.items():
        after = edges.get(event)
        if after is None:
            continue
        moved = succ[after]
        for other, via in edges.items():
            if other == event:
                continue
            # each stays enabled after the other, and both orders meet
            back = succ[via].get(event)
            if back is None or moved.get(other) != back:
                break
        else:
            good.add(state)
    return good


def persistent_events(graph: Graph) -> dict[Hashable, set[Hashable]]:
    """Per state, the enabled events that are persistent alone there (see the module
    docstring); states with none are absent."""
    succ = graph.succ
    events = list(dict.fromkeys(event for edges in succ.values() for event in edges))
    # predecessors by edges of other events, for the backward closure per event
    preds: dict[Hashable, list[tuple[Hashable, Hashable]]] = {state: [] for state in succ}
    for state, edges in succ.items():
        for event, after in edges.items():
            preds[after].append((state, event))
    persistent: dict[Hashable, set[Hashable]] = {}
    for event in events:
        good = _independent_everywhere(graph, event)
        # bad: a state from which a state where ``event`` is not independent (or not
        # enabled) is reachable without ``event``
        bad = set(succ) - good
        work = list(bad)
        while work:
            state = work.pop()
            for before, via in preds[state]:
                if via != event and before not in bad:
                    bad.add(before)
                    work.append(before)
        for state in good - bad:
            persistent.setdefault(state, set()).add(event)
    return persistent


def persistent_singletons(graph: Graph) -> dict[Hashable, Hashable]:
    """Per state, the first enabled event (in ``enabled`` order) that is persistent alone
    there; states with none are absent."""
    succ = graph.succ
    chosen = {}
    for state, found in persistent_events(graph).items():
        for event in succ[state]:
            if event in found:
                chosen[state] = event
                break
    return chosen


@dataclass(frozen=True)
class Reduced:
    """The oracle's reduced graph: its unique states, transitions and quiescent states."""

    states: int
    transitions: int
    quiescent: frozenset[Hashable]


def reduce(graph: Graph) -> Reduced:
    """Explore ``graph`` taking, in each state, its persistent event alone when it has one;
    asserts that every quiescent state of the full graph is reached."""
    chosen = persistent_singletons(graph)
    seen = set(graph.initial)
    work = list(graph.initial)
    transitions = 0
    while work:
        state = work.pop()
        edges = graph.succ[state]
        event = chosen.get(state)
        targets: Sequence[Hashable] = list(edges.values()) if event is None else [edges[event]]
        for after in targets:
            transitions += 1
            if after not in seen:
                seen.add(after)
                work.append(after)
    quiet = frozenset(state for state in seen if not graph.succ[state])
    missing = graph.quiescent() - quiet
    assert not missing, f"the oracle missed {len(missing)} quiescent states: persistence wrongly decided"
    return Reduced(len(seen), transitions, quiet)


#: name -> (app, build options): small scenarios the oracle can hold (full graphs of at most
#: a few tens of thousands of states)
SCENARIOS: dict[str, tuple[str, dict[str, Any]]] = {
    "route-flow:linear:3:2:openflow": ("route-flow", {"topology": "linear:3", "packets": 2}),
    "route-flow:linear:3:2:openflow-b": ("route-flow", {"topology": "linear:3", "packets": 2,
                                                        "protocol": "openflow-b"}),
    "mac-learning:linear:2:2:openflow": ("mac-learning", {"topology": "linear:2", "packets": 2}),
    "energy-te:paths:2,3:1:openflow": ("energy-te", {"topology": "paths:2,3", "packets": 1}),
    "route-flow:linear:3:2:attendre": ("route-flow", {"topology": "linear:3", "packets": 2, "protocol": "attendre"}),
    "route-flow:linear:4:3:attendre": ("route-flow", {"topology": "linear:4", "packets": 3, "protocol": "attendre"}),
}


def measure(name: str) -> dict[str, Any]:
    """The full graph's, the oracle's and ``--por``'s counts for scenario ``name`` (``--por``'s
    None where it refuses the scenario)."""
    from nice_attendre.checker import dfs
    from nice_attendre.frontend.api import build
    from nice_attendre.por import unsupported

    app, options = SCENARIOS[name]
    run = build(app, properties=[], **options)
    started = time.perf_counter()
    graph = explore(run.network)
    oracle = reduce(graph)
    seconds = time.perf_counter() - started
    network = build(app, properties=[], **options).network
    reduced = None if unsupported(network) else dfs(network, (), por=True).stats
    return {"scenario": name, "states": len(graph.succ), "transitions": graph.transitions,
            "oracle_states": oracle.states, "oracle_transitions": oracle.transitions,
            "por_states": None if reduced is None else reduced.unique_states,
            "por_transitions": None if reduced is None else reduced.transitions,
            "oracle_seconds": round(seconds, 1)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS),
                        help="a scenario (repeat for several; default: all)")
    args = parser.parse_args(argv)
    rows = [measure(name) for name in (args.scenario or SCENARIOS)]
    header = f"{'scenario':36} {'states':>8} {'oracle':>8} {'--por':>8} {'oracle x':>9} {'--por x':>8}"
    print(header)
    for row in rows:
        por = row["por_states"]
        print(f"{row['scenario']:36} {row['states']:>8,} {row['oracle_states']:>8,} "
              f"{'refused' if por is None else format(por, ','):>8} {row['states'] / row['oracle_states']:>8.2f}x "
              f"{'-' if por is None else format(row['states'] / por, '.2f') + 'x':>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
