"""Executions that never end: the ``termination`` and ``eventually`` expectations of the
searches, on random finite graphs against oracles written here.

A graph's states are the ints ``0..n-1``, its events its edges (see
``test_core_dfs_graphs.py``). The oracles use reachability only, not a depth-first search:

* termination is violated iff some state reachable from an initial state reaches itself by
  one edge or more (a self-loop is a cycle);
* ``eventually(p)`` is violated iff, among the states reached from an initial state by paths
  where ``p`` never holds (the initial state included), one is quiescent (no edge leaves it)
  or one reaches itself through such states;
* under weak fairness (the default), a cycle counts only if a strongly connected component
  of those states (networkx's, over the graph of the region) holds a step of every process
  enabled in all of its states: the textbook test, written here independently of
  :mod:`nice_attendre.fair_cycles`. A process is an edge (``Graph``) or a label (``Grouped``:
  the ``a`` edges are one process, the ``b`` edges another).

Every reported trace must be one the graph has (replayed), a lasso must close, the states of
an eventually-trace must all fail the predicate, and the counts must be those of the search
without these properties: the properties only look at edges the search follows.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Hashable

import networkx as nx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nice_attendre import Expectation, Limits, Property, Step, Trace, bfs, dfs
from nice_attendre.errors import InputError

from test_core_dfs_graphs import Graph  # noqa: E402 - the graph system (events are edges)

SETTINGS = settings(max_examples=200, deadline=None)

#: The searches that check termination and eventually: depth-first as it goes, breadth-first
#: (``--shortest``) over the graph it keeps.
SEARCHES = {"dfs": dfs, "bfs": bfs}
searches = st.sampled_from(sorted(SEARCHES))


class Keyed(Graph):
    """The same graph as a system with large states: stored under a deliberately poor hash
    (three values), so that states on the stack share hashes."""

    large_states = True

    def state_key(self, state: int) -> int:
        return state % 3

    def apply_keyed(self, state: int, key: int, event: tuple[str, int]) -> tuple[int, int]:
        successor = self.apply(state, event)
        return successor, successor % 3


class Grouped(Graph):
    """The same graph where the edges of one label are alternatives of one process."""

    def fairness_group(self, event: tuple[str, int]) -> Hashable:
        return event[0]


class KeyedGrouped(Keyed, Grouped):
    """Large states and processes by label."""


def system_of(graph: Graph, mode: str, grouped: bool) -> Graph:
    """``graph`` as the system a test explores: keyed or not, processes by edge or label."""
    kind = {(False, False): Graph, (True, False): Keyed, (False, True): Grouped,
            (True, True): KeyedGrouped}[mode == "keyed", grouped]
    return kind(graph.n, graph.edges, graph.initials)


def process(system: Graph) -> Callable[[Any], Hashable]:
    return getattr(system, "fairness_group", lambda event: event)


@st.composite
def graphs(draw: st.DrawFn, max_nodes: int = 9, max_edges: int = 22) -> Graph:
    n = draw(st.integers(1, max_nodes))
    node = st.integers(0, n - 1)
    edges = draw(st.lists(st.tuples(node, st.sampled_from("ab"), node), max_size=max_edges))
    initials = draw(st.lists(node, min_size=1, max_size=3))
    return Graph(n, tuple(edges), tuple(initials))


# ---- oracles ---------------------------------------------------------------------------

def successors(graph: Graph, allowed: set[int] | None = None) -> dict[int, set[int]]:
    """Each state's successors (only states in ``allowed``, and only from them)."""
    found: dict[int, set[int]] = {state: set() for state in range(graph.n)}
    for src, _label, dst in graph.edges:
        if allowed is None or (src in allowed and dst in allowed):
            found[src].add(dst)
    return found


def reach(starts: set[int], succ: dict[int, set[int]]) -> set[int]:
    """The states reachable from ``starts`` (included) along ``succ``."""
    seen, todo = set(starts), list(starts)
    while todo:
        for nxt in succ[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def has_cycle(states: set[int], succ: dict[int, set[int]]) -> bool:
    """Whether some state of ``states`` reaches itself by one edge or more along ``succ``."""
    return any(state in reach(succ[state], succ) for state in states)


def fair_component(graph: Graph, region: set[int], cut: frozenset[int], group: Callable[[Any], Hashable]) -> bool:
    """Whether a strongly connected component of ``region`` (its edges between its states,
    none out of ``cut`` states) holds a weakly fair cycle: it has an edge, and every process
    enabled in all its states (by ``graph.out``) has an edge inside it."""
    inside = [(src, (label, index), dst) for index, (src, label, dst) in enumerate(graph.edges)
              if src in region and dst in region and src not in cut]
    digraph = nx.DiGraph()
    digraph.add_nodes_from(region)
    digraph.add_edges_from((src, dst) for src, _event, dst in inside)
    for component in nx.strongly_connected_components(digraph):
        steps = [event for src, event, dst in inside if src in component and dst in component]
        if not steps:
            continue
        everywhere = set.intersection(*({group(event) for event in graph.out[state]} for state in component))
        if everywhere <= {group(event) for event in steps}:
            return True
    return False


def oracle_cycle(graph: Graph, cut: frozenset[int] = frozenset(), fairness: str = "none",
                 group: Callable[[Any], Hashable] = lambda event: event) -> bool:
    """Termination fails: a cycle among the reachable states (``cut`` states have no
    successors), under weak fairness one a fair scheduler can repeat."""
    succ = successors(graph)
    for state in cut:
        succ[state] = set()
    region = reach(set(graph.initials), succ)
    if fairness == "weak":
        return fair_component(graph, region, cut, group)
    return has_cycle(region, succ)


def oracle_eventually(graph: Graph, holds: frozenset[int], cut: frozenset[int] = frozenset(),
                      fairness: str = "none", group: Callable[[Any], Hashable] = lambda event: event) -> bool:
    """``eventually(holds)`` fails (``cut`` states are neither expanded nor ends)."""
    never = set(range(graph.n)) - holds
    succ = successors(graph, never)
    for state in cut:
        succ[state] = set()
    region = reach({s for s in graph.initials if s in never}, succ)
    ends = {s for s in region if not graph.out[s] and s not in cut}
    if ends:
        return True
    if fairness == "weak":
        return fair_component(graph, region, cut, group)
    return has_cycle(region, succ)


# ---- checks of what is reported -------------------------------------------------------

def check_lasso(graph: Graph, trace: Trace) -> None:
    """``trace`` is a path of ``graph`` that ends back in the state where its cycle starts."""
    assert trace.is_lasso
    trace.replay(graph)  # every event enabled, every state as recorded, and the cycle closes
    states = list(trace.states())
    assert states[-1] == states[trace.cycle_start]
    assert len(trace.cycle) >= 1


def check_eventually_trace(graph: Graph, trace: Trace, holds: frozenset[int]) -> None:
    """An eventually-trace: the predicate holds nowhere on it; it closes a cycle or ends."""
    trace.replay(graph)
    assert not any(state in holds for state in trace.states())
    if trace.is_lasso:
        check_lasso(graph, trace)
    else:
        assert not graph.out[trace.final]


def member(states: frozenset[int]):
    return lambda state: state in states


subsets = st.frozensets(st.integers(0, 8), max_size=9)


# ---- termination ---------------------------------------------------------------------

fairnesses = st.sampled_from(["weak", "none"])


@SETTINGS
@given(graphs(), st.booleans(), st.sampled_from(["exact", "fingerprint", "keyed"]), searches, fairnesses,
       st.booleans())
@example(Graph(1, ((0, "a", 0),), (0,)), False, "exact", "dfs", "none", False)  # a self-loop
@example(Graph(3, ((0, "a", 1), (1, "a", 2), (2, "a", 1)), (0,)), True, "keyed", "dfs", "none", False)
# a cycle through a state finished before (0 -> 2 -> 1 -> 0 found after 0 -> 1 -> 0's region)
@example(Graph(4, ((0, "a", 3), (0, "b", 1), (3, "a", 1), (1, "a", 2), (2, "a", 3)), (0,)), False, "exact", "dfs",
         "none", False)
# a self-loop that starves the exit, enabled all along: unfair as an edge, fair as a label
@example(Graph(2, ((0, "a", 0), (0, "a", 1)), (0,)), False, "exact", "dfs", "weak", False)
@example(Graph(2, ((0, "a", 0), (0, "a", 1)), (0,)), False, "exact", "bfs", "weak", True)
# the first cycle met (0 -> 1 -> 0) starves b at 0 and 1; the component {0, 1, 2} is fair
@example(Graph(3, ((0, "a", 1), (1, "a", 0), (0, "b", 2), (1, "b", 2), (2, "a", 0)), (0,)), False, "exact", "dfs",
         "weak", False)
def test_termination_matches_the_oracle(graph: Graph, keep_going: bool, mode: str, search: str, fairness: str,
                                        grouped: bool) -> None:
    system = system_of(graph, mode, grouped)
    result = SEARCHES[search](system, [Property.termination(fairness=fairness)], keep_going=keep_going,
                              fingerprint=mode == "fingerprint")
    plain = SEARCHES[search](system, [], fingerprint=mode == "fingerprint")
    cycle = oracle_cycle(graph, fairness=fairness, group=process(system))
    assert (result.discovery("termination") is not None) == cycle
    assert result.ok == (not cycle)
    for found in result.discoveries:
        assert found.expectation is Expectation.TERMINATION
        check_lasso(graph, found.trace)
        assert "never ends" in found.reason
        if fairness == "weak":
            assert "no weak fairness" not in found.reason  # the reported cycle is a fair one
    if keep_going or not cycle or search == "bfs":  # the search went to its end: the graph's counts
        assert result.stats.counts() == plain.stats.counts()


@SETTINGS
@given(graphs(), subsets, searches, fairnesses, st.booleans())
def test_termination_with_cut_states(graph: Graph, bad: frozenset[int], search: str, fairness: str,
                                     grouped: bool) -> None:
    """States that violate an always-property are not expanded (with --keep-going): a cycle
    is one among the states the search expands."""
    bad = frozenset(s for s in bad if s < graph.n)
    system = system_of(graph, "exact", grouped)
    props = [Property.always("good", lambda s: s not in bad), Property.termination(fairness=fairness)]
    result = SEARCHES[search](system, props, keep_going=True)
    assert (result.discovery("termination") is not None) == oracle_cycle(graph, bad, fairness, process(system))
    for found in result.discoveries:
        if found.property == "termination":
            check_lasso(graph, found.trace)


@SETTINGS
@given(graphs(), st.integers(0, 6), st.integers(0, 30), searches, fairnesses)
def test_termination_under_limits_reports_only_real_cycles(graph: Graph, depth: int, transitions: int,
                                                           search: str, fairness: str) -> None:
    for limits in (Limits(max_depth=depth), Limits(max_transitions=transitions)):
        result = SEARCHES[search](graph, [Property.termination(fairness=fairness)], limits=limits, keep_going=True)
        for found in result.discoveries:
            check_lasso(graph, found.trace)
        if result.discoveries:
            assert oracle_cycle(graph, fairness=fairness)
        if not oracle_cycle(graph, fairness=fairness):
            assert not result.discoveries


def test_the_lasso_of_a_cycle_and_its_reason() -> None:
    # 0 -a-> 1 -a-> 2 -a-> 3 -a-> 1 ; 2 -b-> 4 (an exit never taken on the cycle)
    graph = Graph(5, ((0, "a", 1), (1, "a", 2), (2, "a", 3), (3, "a", 1), (2, "b", 4)), (0,))
    result = dfs(graph, [Property.termination()])
    found = result.discovery("termination")
    assert found is not None and not result.ok
    trace = found.trace
    assert [step.state for step in trace.steps] == [1, 2, 3, 1]
    assert trace.cycle_start == 1
    assert [step.event for step in trace.cycle] == [("a", 1), ("a", 2), ("a", 3)]
    assert found.reason.startswith("an execution that never ends: from the state after step 1, steps 2-4 lead "
                                   "back to it, and can repeat for ever (repeating: ('a', 1); ('a', 2); ('a', 3)).")
    assert found.reason.endswith("These events are enabled again and again on the cycle but never happen: ('b', 4) "
                                 "(a strongly fair scheduler would take them; a weakly fair one may not).")


def test_a_fair_cycle_says_so() -> None:
    graph = Graph(2, ((0, "a", 1), (1, "a", 0)), (0,))
    found = dfs(graph, [Property.termination()]).discovery("termination")
    assert found.trace.cycle_start == 0 and len(found.trace) == 2
    assert "from the initial state, steps 1-2 lead back to it" in found.reason
    assert found.reason.endswith("Every event enabled on the cycle is one of its steps: it needs no unfair "
                                 "scheduler.")


def test_a_cycle_that_starves_an_event_enabled_all_along() -> None:
    # 0 -a-> 0 (a self-loop) while 0 -b-> 1 is enabled all along, and ends it: no violation
    # under weak fairness, one under any scheduler
    graph = Graph(2, ((0, "a", 0), (0, "b", 1)), (0,))
    assert dfs(graph, [Property.termination()]).ok and bfs(graph, [Property.termination()]).ok
    found = dfs(graph, [Property.termination(fairness="none")]).discovery("termination")
    assert found.trace.cycle_start == 0 and found.trace.events == (("a", 0),)
    assert "from the initial state, step 1 leads back to it" in found.reason
    assert found.reason.endswith("It repeats only while these events, enabled in every state of the cycle, never "
                                 "happen: ('b', 1); after any of them the cycle's events, repeated 4 times, come back "
                                 "to no state (this execution needs a scheduler that lets them wait for ever: no "
                                 "weak fairness).")


@dataclass(frozen=True)
class Pair:
    """States ``(x, y)``: ``a`` flips x for ever (while y is 0 unless ``free``); ``b`` sets y to 1
    once. ``b`` is enabled in every state of a's cycle and never taken on it."""

    free: bool

    def initial_states(self) -> tuple[tuple[int, int], ...]:
        return ((0, 0),)

    def enabled(self, state: tuple[int, int]) -> tuple[str, ...]:
        x, y = state
        return (("a",) if self.free or not y else ()) + (("b",) if not y else ())

    def apply(self, state: tuple[int, int], event: str) -> tuple[int, int]:
        return (1 - state[0], state[1]) if event == "a" else (state[0], 1)


@pytest.mark.parametrize("search", sorted(SEARCHES))
def test_an_event_the_cycle_does_not_need_happens_on_the_lasso(search: str) -> None:
    """The waiting event changes nothing the cycle needs: the reported lasso lets it happen,
    and its cycle then leaves nothing waiting (no unfair scheduler needed)."""
    found = SEARCHES[search](Pair(free=True), [Property.termination()]).discovery("termination")
    trace = found.trace
    trace.replay(Pair(free=True))
    assert "b" in trace.events[:trace.cycle_start] and set(step.event for step in trace.cycle) == {"a"}
    assert found.reason.endswith("it needs no unfair scheduler.")


@pytest.mark.parametrize("search", sorted(SEARCHES))
def test_an_event_that_ends_the_cycle_stays_waiting(search: str) -> None:
    assert SEARCHES[search](Pair(free=False), [Property.termination()]).ok  # not under weak fairness
    found = SEARCHES[search](Pair(free=False), [Property.termination(fairness="none")]).discovery("termination")
    assert "b" not in found.trace.events
    assert "never happen: b; after any of them the cycle's events, repeated 4 times, come back to no state" \
        in found.reason


def test_a_lasso_must_close() -> None:
    with pytest.raises(ValueError, match="not a lasso"):
        Trace(0, (Step(("a", 0), 1), Step(("a", 1), 2)), cycle_start=0)
    with pytest.raises(ValueError, match="cycle_start"):
        Trace(0, (Step(("a", 0), 0),), cycle_start=1)


# ---- eventually -----------------------------------------------------------------------

@SETTINGS
@given(graphs(), subsets, subsets, st.booleans(), st.sampled_from(["exact", "fingerprint", "keyed"]), searches,
       fairnesses, st.booleans())
@example(Graph(1, (), (0,)), frozenset(), frozenset(), False, "exact", "dfs", "none", False)  # ends at once
# 1 is first reached through 2, where p holds; then from 0 by a path where it never held
@example(Graph(4, ((0, "a", 2), (2, "a", 1), (0, "b", 1), (1, "a", 3), (3, "a", 1)), (0,)),
         frozenset({2}), frozenset(), False, "exact", "dfs", "none", False)
def test_eventually_matches_the_oracle(graph: Graph, p: frozenset[int], q: frozenset[int], keep_going: bool,
                                       mode: str, search: str, fairness: str, grouped: bool) -> None:
    p = frozenset(s for s in p if s < graph.n)
    q = frozenset(s for s in q if s < graph.n)
    system = system_of(graph, mode, grouped)
    props = [Property.eventually("p", member(p), fairness=fairness),
             Property.eventually("q", member(q), fairness=fairness)]
    result = SEARCHES[search](system, props, keep_going=keep_going, fingerprint=mode == "fingerprint")
    plain = SEARCHES[search](system, [], fingerprint=mode == "fingerprint")
    group = process(system)
    want = {"p": oracle_eventually(graph, p, fairness=fairness, group=group),
            "q": oracle_eventually(graph, q, fairness=fairness, group=group)}
    if keep_going or search == "bfs":
        assert {name: result.discovery(name) is not None for name in want} == want
        assert result.stats.counts() == plain.stats.counts()
    else:
        assert result.ok == (not any(want.values()))
    for found in result.discoveries:
        assert want[found.property]
        assert found.expectation is Expectation.EVENTUALLY
        check_eventually_trace(graph, found.trace, p if found.property == "p" else q)


@SETTINGS
@given(graphs(), subsets, subsets, searches)
def test_eventually_with_cut_states(graph: Graph, p: frozenset[int], bad: frozenset[int], search: str) -> None:
    p = frozenset(s for s in p if s < graph.n)
    bad = frozenset(s for s in bad if s < graph.n)
    props = [Property.always("good", lambda s: s not in bad), Property.eventually("p", member(p)),
             Property.termination()]
    result = SEARCHES[search](graph, props, keep_going=True)
    assert (result.discovery("p") is not None) == oracle_eventually(graph, p, bad, "weak")
    assert (result.discovery("termination") is not None) == oracle_cycle(graph, bad, "weak")
    for found in result.discoveries:
        if found.property == "p":
            check_eventually_trace(graph, found.trace, p)


@SETTINGS
@given(graphs(), subsets, st.integers(0, 6), searches)
def test_eventually_under_a_depth_limit_reports_only_real_violations(graph: Graph, p: frozenset[int],
                                                                     depth: int, search: str) -> None:
    p = frozenset(s for s in p if s < graph.n)
    result = SEARCHES[search](graph, [Property.eventually("p", member(p))], limits=Limits(max_depth=depth),
                              keep_going=True)
    plain = SEARCHES[search](graph, [], limits=Limits(max_depth=depth))
    assert result.stats.counts() == plain.stats.counts()
    assert result.complete == plain.complete or bool(result.discoveries)
    for found in result.discoveries:
        check_eventually_trace(graph, found.trace, p)


def test_eventually_reasons() -> None:
    ends = Graph(2, ((0, "a", 1),), (0,))
    found = dfs(ends, [Property.eventually("done", lambda s: False, explain=lambda s: f"in {s}")]).discovery("done")
    assert found.trace.events == (("a", 0),) and not found.trace.is_lasso
    assert found.reason == "the execution ends (nothing is enabled) and done never held on it (in 1)"
    loops = Graph(2, ((0, "a", 1), (1, "a", 1), (1, "b", 0)), (0,))
    found = dfs(loops, [Property.eventually("done", lambda s: False)]).discovery("done")
    assert found.trace.is_lasso
    # the self-loop at 1 starves b, enabled all along; the fair cycle takes it and comes back
    assert found.reason.startswith("an execution that never ends and where done never holds: from the state after "
                                   "step 1, steps 2-4 lead back to it")
    assert found.trace.events[1:] == (("a", 1), ("b", 2), ("a", 0))
    assert found.reason.endswith("it needs no unfair scheduler.")


def test_eventually_holds_when_every_path_reaches_it() -> None:
    graph = Graph(4, ((0, "a", 1), (0, "b", 2), (1, "a", 3), (2, "a", 3), (3, "a", 3)), (0,))
    assert dfs(graph, [Property.eventually("at 3", lambda s: s == 3)]).ok  # the self-loop is at 3
    assert dfs(graph, [Property.eventually("at 1", lambda s: s == 1)]).discovery("at 1") is not None


def test_eventually_is_not_checkpointed(tmp_path) -> None:
    graph = Graph(1, (), (0,))
    with pytest.raises(InputError, match="cannot be checkpointed or resumed"):
        dfs(graph, [Property.eventually("p", lambda s: True)], checkpoint=lambda search: None)


# ---- checkpoints ------------------------------------------------------------------------

@SETTINGS
@given(graphs(), st.booleans(), st.lists(st.integers(0, 30), min_size=1, max_size=3), st.sampled_from(
    ["exact", "fingerprint"]))
def test_termination_resumed_gives_the_uninterrupted_result(graph: Graph, keep_going: bool, cuts: list[int],
                                                            mode: str) -> None:
    """A resumed search knows the states on the saved stack: a back edge to one of them is
    still a cycle (the stack is in the checkpoint; the on-stack table is rebuilt from it)."""
    import pickle

    props = [Property.termination()]
    fingerprint = mode == "fingerprint"
    whole = dfs(graph, props, keep_going=keep_going, fingerprint=fingerprint)
    saved = None
    for cut in sorted(cuts):
        kept: list[bytes] = []
        part = dfs(graph, props, limits=Limits(max_transitions=cut), keep_going=keep_going, fingerprint=fingerprint,
                   checkpoint=lambda state: kept.append(pickle.dumps(state)), resume=saved)
        saved = pickle.loads(kept[-1])
        if part.complete or part.discoveries and not keep_going:
            break
    final = dfs(graph, props, keep_going=keep_going, fingerprint=fingerprint, resume=saved)
    assert final.stats.counts() == whole.stats.counts()
    assert [(d.trace.steps, d.trace.cycle_start) for d in final.discoveries] == \
           [(d.trace.steps, d.trace.cycle_start) for d in whole.discoveries]


def test_a_trace_pickled_before_lassos_is_one_that_ends() -> None:
    """Checkpoints written before ``cycle_start`` existed pickled a trace as two fields."""
    trace = Trace.__new__(Trace)
    trace.__setstate__([0, (Step(("a", 0), 1),)])
    assert trace == Trace(0, (Step(("a", 0), 1),)) and not trace.is_lasso
    import pickle

    lasso = Trace(0, (Step(("a", 0), 0),), cycle_start=0)
    assert pickle.loads(pickle.dumps(lasso)) == lasso
