"""Partial-order reduction on random slotted systems (no OpenFlow): the reduced depth-first
search reaches exactly the quiescent states of the full one and a violation of every stable
property the full one violates, and each system's declared footprints cover what its
transitions really read and write."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from nice_attendre.checker import dfs
from nice_attendre.errors import InputError
from nice_attendre.por import Alternatives, Footprint, Reducer, dependent, refusal, stubborn_set
from nice_attendre.property import Expectation, Property

# A random system: processes, each a program over its own local slot (pc, register), shared
# variables and FIFO channels, and one flag slot that only grows (its property is stable).
# Instructions (``op``, argument, argument):
#   ("set", v, k)     V[v] = k                     ("load", v, _)   reg = V[v]
#   ("add", v, _)     V[v] = (V[v] + reg) % 3      ("when", v, k)   enabled only if V[v] == k
#   ("send", c, _)    append reg to C[c] (blind)   ("bsend", c, _)  the same, disabled while C[c]
#                                                                   holds 2 items (reads it)
#   ("recv", c, _)    reg = head of C[c], popped   ("len", c, _)    reg = len(C[c]) % 3
#   ("alarm", _, _)   flag = 1                     ("jump", k, v)   pc = k if V[v] == reg, else pc + 1
#   ("note", _, _)    add p to the set N (an add)  ("seen", _, _)   reg = len(N) % 3
# A program's ``jump`` goes back to ``k``; its sends at or after ``k`` are ``bsend`` (bounded),
# so every system is finite, and may have cycles.


@dataclass(frozen=True)
class RandomSystem:
    programs: tuple[tuple[tuple[str, int, int], ...], ...]
    variables: int
    channels: int

    # slots: locals (one per process), variables, channels, flag, the set N
    def local(self, p: int) -> int:
        return p

    def var(self, v: int) -> int:
        return len(self.programs) + v

    def chan(self, c: int) -> int:
        return len(self.programs) + self.variables + c

    @property
    def flag(self) -> int:
        return len(self.programs) + self.variables + self.channels

    @property
    def notes(self) -> int:
        return self.flag + 1

    def initial_states(self) -> tuple[Any, ...]:
        return (tuple([(0, 0)] * len(self.programs) + [0] * self.variables + [()] * self.channels + [0, ()]),)

    def _enabled_at(self, state: Any, p: int, pc: int) -> bool:
        op, a, b = self.programs[p][pc]
        if op == "when":
            return state[self.var(a)] == b
        if op == "recv":
            return bool(state[self.chan(a)])
        if op == "bsend":
            return len(state[self.chan(a)]) < 2
        return True

    def enabled(self, state: Any) -> list[tuple[int, int]]:
        events = []
        for p, program in enumerate(self.programs):
            pc = state[self.local(p)][0]
            if pc < len(program) and self._enabled_at(state, p, pc):
                events.append((p, pc))
        return events

    def apply(self, state: Any, event: tuple[int, int]) -> Any:
        return self.run(state, event, None)

    def run(self, state: Any, event: tuple[int, int], seen: dict[str, set[int]] | None) -> Any:
        """``apply``, recording in ``seen`` the slots really read, written, appended to
        (without reading) and popped."""
        s = list(state)

        def get(slot: int) -> Any:
            if seen is not None:
                seen["reads"].add(slot)
            return s[slot]

        def put(slot: int, value: Any) -> None:
            if seen is not None:
                seen["writes"].add(slot)
            s[slot] = value

        p, pc = event
        op, a, b = self.programs[p][pc]
        pc_read, reg = get(self.local(p))
        assert pc_read == pc
        nxt = pc + 1
        if op == "set":
            put(self.var(a), b)
        elif op == "load":
            reg = get(self.var(a))
        elif op == "add":
            put(self.var(a), (get(self.var(a)) + reg) % 3)
        elif op == "when":
            assert get(self.var(a)) == b
        elif op in ("send", "bsend"):
            slot = self.chan(a)
            if op == "bsend":
                assert len(get(slot)) < 2
            elif seen is not None:
                seen["appends"].add(slot)
            s[slot] = s[slot] + (reg,)
        elif op == "recv":
            slot = self.chan(a)
            if seen is not None:
                seen["pops"].add(slot)
            reg, s[slot] = s[slot][0], s[slot][1:]
        elif op == "len":
            reg = len(get(self.chan(a))) % 3
        elif op == "alarm":
            put(self.flag, 1)
        elif op == "note":
            if seen is not None:
                seen["adds"].add(self.notes)
            s[self.notes] = tuple(sorted(set(s[self.notes]) | {p}))
        elif op == "seen":
            reg = len(get(self.notes)) % 3
        elif op == "jump":
            if get(self.var(b)) == reg:
                nxt = a
        put(self.local(p), (nxt, reg))
        return tuple(s)

    # the Slotted contract: footprints per instruction, the same in every state
    def footprint(self, state: Any, event: tuple[int, int]) -> Footprint:
        p, pc = event
        op, a, b = self.programs[p][pc]
        local = self.local(p)
        reads, writes, appends, pops, adds = {local}, {local}, set(), set(), set()
        guard = {local}
        if op == "set":
            writes.add(self.var(a))
        elif op == "load":
            reads.add(self.var(a))
        elif op == "add":
            reads.add(self.var(a))
            writes.add(self.var(a))
        elif op == "when":
            reads.add(self.var(a))
            guard.add(self.var(a))
        elif op == "send":
            appends.add(self.chan(a))
        elif op == "bsend":
            reads.add(self.chan(a))
            writes.add(self.chan(a))
            guard.add(self.chan(a))
        elif op == "recv":
            pops.add(self.chan(a))
            guard.add(self.chan(a))
        elif op == "len":
            reads.add(self.chan(a))
        elif op == "alarm":
            writes.add(self.flag)
        elif op == "note":
            adds.add(self.notes)
        elif op == "seen":
            reads.add(self.notes)
        elif op == "jump":
            reads.add(self.var(b))
        return Footprint(frozenset(reads), frozenset(writes), frozenset(appends), frozenset(pops),
                         frozenset(guard), frozenset(adds))

    def dormant(self, state: Any, enabled: Any) -> list[tuple[int, int]]:
        enabled = set(enabled)
        return [(p, pc) for p, program in enumerate(self.programs) for pc in range(len(program))
                if (p, pc) not in enabled]


def _program(draw: Any, variables: int, channels: int) -> tuple[tuple[str, int, int], ...]:
    length = draw(st.integers(1, 5))
    loop_at = draw(st.one_of(st.none(), st.integers(0, length - 1)))
    ops = ["set", "load", "add", "when", "send", "recv", "alarm", "note", "seen"]
    if channels == 0:
        ops = [op for op in ops if op not in ("send", "recv")]
    else:
        ops.append("len")
    program = []
    for pc in range(length):
        op = draw(st.sampled_from(ops))
        if op in ("send", "recv", "len"):
            a, b = draw(st.integers(0, channels - 1)), 0
            if op == "send" and loop_at is not None and pc >= loop_at:
                op = "bsend"
        else:
            a, b = draw(st.integers(0, variables - 1)), draw(st.integers(0, 2))
        program.append((op, a, b))
    if loop_at is not None:
        program.append(("jump", loop_at, draw(st.integers(0, variables - 1))))
    return tuple(program)


@st.composite
def systems(draw: Any) -> RandomSystem:
    variables = draw(st.integers(1, 2))
    channels = draw(st.integers(0, 2))
    processes = draw(st.integers(1, 4))
    return RandomSystem(tuple(_program(draw, variables, channels) for _ in range(processes)), variables, channels)


def _graph(system: RandomSystem) -> tuple[set[Any], set[Any]]:
    """Every reachable state and the quiescent ones, by an independent breadth-first walk."""
    start = system.initial_states()[0]
    seen, queue, quiet = {start}, deque([start]), set()
    while queue:
        state = queue.popleft()
        events = system.enabled(state)
        if not events:
            quiet.add(state)
        for event in events:
            after = system.apply(state, event)
            if after not in seen:
                seen.add(after)
                queue.append(after)
    return seen, quiet


def _quiescent(system: RandomSystem, por: bool, **kwargs: Any) -> tuple[set[Any], Any]:
    found: set[Any] = set()
    collect = Property.at_quiescence("collect", lambda state: found.add(state) is None)
    result = dfs(system, [collect], por=por, **kwargs)
    assert result.complete
    return found, result


_EXAMPLES = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@_EXAMPLES
@given(systems())
def test_reduced_search_reaches_exactly_the_quiescent_states(system: RandomSystem) -> None:
    reachable, quiet = _graph(system)
    assume(len(reachable) <= 1500)  # a few seconds per run
    full, full_result = _quiescent(system, False)
    reduced, reduced_result = _quiescent(system, True)
    assert full == quiet
    assert reduced == quiet
    assert reduced_result.stats.unique_states <= full_result.stats.unique_states
    # the same with fingerprints (states keyed by fingerprint on the stack)
    assert _quiescent(system, True, fingerprint=True)[0] == quiet


@_EXAMPLES
@given(systems(), st.booleans())
def test_reduced_search_finds_every_stable_violation(system: RandomSystem, keep_going: bool) -> None:
    reachable, _quiet = _graph(system)
    assume(len(reachable) <= 1500)
    flag = system.flag
    violated = any(state[flag] for state in reachable)
    never = Property("no-alarm", Expectation.ALWAYS, lambda state: state[flag] == 0,
                     stable=True)
    result = dfs(system, [never], por=True, keep_going=keep_going)
    assert bool(result.discoveries) == violated
    # a stable sometimes-property (the flag stays set): the same outcome
    ever = Property("alarm", Expectation.SOMETIMES, lambda state: state[flag] == 1,
                    stable=True)
    outcome = dfs(system, [ever], por=True)
    assert outcome.complete and (not outcome.discoveries) == violated


@settings(max_examples=100, deadline=None)
@given(systems(), st.data())
def test_declared_footprints_cover_what_transitions_really_do(system: RandomSystem, data: Any) -> None:
    reachable, _quiet = _graph(system)
    for state in sorted(reachable, key=repr)[:60]:
        for event in system.enabled(state):
            seen: dict[str, set[int]] = {"reads": set(), "writes": set(), "appends": set(), "pops": set(),
                                         "adds": set()}
            after = system.run(state, event, seen)
            assert after == system.apply(state, event)
            fp = system.footprint(state, event)
            assert seen["reads"] <= fp.reads | fp.pops
            assert seen["writes"] <= fp.writes
            assert seen["appends"] <= fp.appends | fp.writes
            assert seen["pops"] <= fp.pops | fp.writes
            assert seen["adds"] <= fp.adds | fp.writes
            changed = {slot for slot in range(len(state)) if state[slot] != after[slot]}
            assert changed <= fp.writes | fp.appends | fp.pops | fp.adds


def test_independent_processes_are_explored_in_one_order() -> None:
    """Three processes of two local steps each: 27 states in full, 7 along one interleaving."""
    program = (("load", 0, 0), ("load", 0, 0))
    system = RandomSystem((program,) * 3, 1, 0)
    full, full_result = _quiescent(system, False)
    reduced, reduced_result = _quiescent(system, True)
    assert full == reduced and len(full) == 1
    assert full_result.stats.unique_states == 27
    assert reduced_result.stats.unique_states == 7


def test_fifo_append_and_pop_commute() -> None:
    """A producer appending to a channel and a consumer popping from it (while it holds an
    item) are independent: the reduced search follows one order."""
    producer = (("send", 0, 0), ("send", 0, 0))
    consumer = (("recv", 0, 0), ("recv", 0, 0))
    system = RandomSystem((producer, consumer), 1, 1)
    full, full_result = _quiescent(system, False)
    reduced, reduced_result = _quiescent(system, True)
    assert full == reduced
    assert reduced_result.stats.unique_states < full_result.stats.unique_states
    send = system.footprint(None, (0, 0))
    recv = system.footprint(None, (1, 0))
    assert not dependent(send, recv)
    assert dependent(send, send)  # two appends to one queue: their order shows
    assert dependent(recv, system.footprint(None, (1, 1)))  # two pops


def test_adds_commute() -> None:
    """Two processes adding to one set and then stopping: one order; a reader of the set
    is dependent on both."""
    system = RandomSystem(((("note", 0, 0),), (("note", 0, 0),), (("seen", 0, 0),)), 1, 0)
    note = system.footprint(None, (0, 0))
    assert not dependent(note, system.footprint(None, (1, 0)))
    assert dependent(note, system.footprint(None, (2, 0)))
    full, full_result = _quiescent(system, False)
    reduced, reduced_result = _quiescent(system, True)
    assert full == reduced and len(full) == 3  # the reader saw 0, 1 or 2 notes
    assert reduced_result.stats.unique_states < full_result.stats.unique_states


def test_stack_proviso_finds_the_violation_a_cycle_would_ignore() -> None:
    """A process that loops for ever on its own slot and one that raises the alarm: the
    loop's event alone is a stubborn set in every state of the loop, so without the proviso
    the search closes the cycle and never raises the alarm (the ignoring problem)."""
    looper = (("load", 0, 0), ("jump", 0, 0))  # reg = V0 = 0, then back: for ever
    alarm = (("alarm", 0, 0),)
    system = RandomSystem((looper, alarm), 1, 0)
    never = Property("no-alarm", Expectation.ALWAYS, lambda state: state[system.flag] == 0,
                     stable=True)
    assert dfs(system, [never]).discoveries
    assert dfs(system, [never], por=True).discoveries
    assert dfs(system, [never], por=True, fingerprint=True).discoveries


def test_stubborn_set_is_the_smallest_and_depends_on_the_state_only() -> None:
    a = Footprint(frozenset({0}), frozenset({0}))
    b = Footprint(frozenset({1}), frozenset({1, 2}))
    c = Footprint(frozenset({2}), frozenset({2}))
    # b and c share slot 2; a is alone
    assert stubborn_set(["a", "b", "c"], [], [a, b, c]) == [0]
    assert stubborn_set(["b", "c", "a"], [], [b, c, a]) == [2]
    # a dormant event d reads slot 0 and b enables it: a's set must hold b (b may enable d,
    # which a's write then does not commute with), b's is {b} with d (disabled): b wins
    d = Footprint(frozenset({0, 1}), frozenset(), guard=frozenset({1}))
    assert stubborn_set(["a", "b"], ["d"], [a, b, d]) == [1]
    assert stubborn_set(["b", "a"], ["d"], [b, a, d]) == [0]
    with pytest.raises(ValueError):
        Footprint(frozenset({0}), guard=frozenset({1}))


def test_refusals() -> None:
    assert refusal([Property.always("p", bool)]) is not None
    assert refusal([Property.on_transition("t", lambda a, e, b: True)]) is not None
    assert refusal([Property.termination()]) is not None
    assert refusal([Property.eventually("e", bool)]) is not None
    assert refusal([Property.at_quiescence("q", bool)]) is None
    system = RandomSystem(((("load", 0, 0),),), 1, 0)
    with pytest.raises(InputError, match="not known to be stable"):
        dfs(system, [Property.always("p", bool)], por=True)

    class Plain:
        def initial_states(self) -> tuple[int, ...]:
            return (0,)

        def enabled(self, state: int) -> list[int]:
            return []

        def apply(self, state: int, event: int) -> int:
            return state

    with pytest.raises(InputError, match="footprints"):
        dfs(Plain(), [], por=True)


def test_reducer_counts_reduced_states() -> None:
    program = (("load", 0, 0),)
    system = RandomSystem((program, program), 1, 0)
    reducer = Reducer(system)
    assert reducer(system.initial_states()[0]) == [(0, 0)]
    assert reducer.reduced_states == 1


def test_a_dormant_event_with_alternative_enablers_takes_the_cheapest() -> None:
    """Dormant d (reading slot 0, written by the seed a) may be enabled only after b, or
    only after the dormant e (either set suffices); b and c share slot 5. From seed a the
    closure takes the alternative that brings no enabled event: {a} alone. With one set of
    enablers naming b and e, a brings b, which brings c: {b, c} is then the smallest."""
    a = Footprint(frozenset({0}), frozenset({0}))
    b = Footprint(frozenset({1, 5}), frozenset({1, 5}))
    c = Footprint(frozenset({2, 5}), frozenset({2, 5}))
    d = Footprint(frozenset({0, 3}), frozenset(), guard=frozenset({3}))
    e = Footprint(frozenset({4}), frozenset({4}))  # dormant, enabled by nothing
    footprints = [a, b, c, d, e]
    assert stubborn_set(["a", "b", "c"], ["d", "e"], footprints,
                        enablers=[Alternatives(([1], [4])), []]) == [0]
    assert stubborn_set(["a", "b", "c"], ["d", "e"], footprints, enablers=[[1, 4], []]) == [1, 2]


@_EXAMPLES
@given(systems(), st.booleans())
def test_breadth_first_reduced_search_reaches_the_quiescent_states_and_violations(system: RandomSystem,
                                                                                   keep_going: bool) -> None:
    """bfs(por=True) on random systems (with cycles): exactly the quiescent states of the full
    search, and a violation of the stable property whenever one is reachable."""
    from nice_attendre.breadth_first import bfs

    reachable, quiet = _graph(system)
    assume(len(reachable) <= 1500)
    found: set[Any] = set()
    collect = Property.at_quiescence("collect", lambda state: found.add(state) is None)
    result = bfs(system, [collect], por=True)
    assert result.complete and found == quiet
    flag = system.flag
    never = Property("no-alarm", Expectation.ALWAYS, lambda state: state[flag] == 0, stable=True)
    outcome = bfs(system, [never], por=True, keep_going=keep_going)
    assert bool(outcome.discoveries) == any(state[flag] for state in reachable)


def test_breadth_first_proviso_finds_the_violation_a_cycle_would_ignore() -> None:
    """The looping process of the stack-proviso test, breadth-first: without the proviso the
    reduced search closes the loop and never raises the alarm."""
    from nice_attendre.breadth_first import bfs

    looper = (("load", 0, 0), ("jump", 0, 0))
    alarm = (("alarm", 0, 0),)
    system = RandomSystem((looper, alarm), 1, 0)
    never = Property("no-alarm", Expectation.ALWAYS, lambda state: state[system.flag] == 0, stable=True)
    assert bfs(system, [never], por=True).discoveries
    assert bfs(system, [never], por=True, fingerprint=True).discoveries
