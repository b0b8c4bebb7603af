"""The random-walk engine (:mod:`nice_attendre.simulate`) on small systems written here:
walks, their ends, biases, the prefix of walk numbers a run counts, and determinism across
worker counts and answer orders."""
from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import dataclass

import pytest

from nice_attendre import Expectation, Limits, Property, Trace
from nice_attendre.errors import InputError
from nice_attendre.simulate import (CYCLE, DEPTH, QUIESCENT, VIOLATION, Bias, InProcessWalks, Tally, Walker,
                                    WalkOptions, WalkResult, WalkWorker, favour, simulate, walk_seed)


@dataclass(frozen=True)
class Grid:
    """States (x, y), 0 <= x, y <= top; events "x" and "y" add one; quiescent at (top, top)."""

    top: int = 3

    def initial_states(self) -> tuple[tuple[int, int], ...]:
        return ((0, 0),)

    def enabled(self, state: tuple[int, int]) -> tuple[str, ...]:
        x, y = state
        return tuple(name for name, value in (("x", x), ("y", y)) if value < self.top)

    def apply(self, state: tuple[int, int], event: str) -> tuple[int, int]:
        x, y = state
        return (x + 1, y) if event == "x" else (x, y + 1)


@dataclass(frozen=True)
class Ring:
    """States 0..n-1 in a ring: event "next" goes round for ever (every walk cycles)."""

    n: int = 4

    def initial_states(self) -> tuple[int, ...]:
        return (0,)

    def enabled(self, state: int) -> tuple[str, ...]:
        return ("next",)

    def apply(self, state: int, event: str) -> int:
        return (state + 1) % self.n


def group(event: str) -> str:
    return event


NOT_TWO_ZERO = Property.always("not-2-0", lambda s: s != (2, 0), explain=lambda s: f"at {s}")


class Scrambled:
    """``workers`` walk workers in this process, each a chunk of at most ``per_chunk`` walks
    per round, answering in a scrambled order (the last worker first): a cluster whose timing
    differs from one process's."""

    def __init__(self, make_walker, workers: int, per_chunk: int = 3) -> None:
        self.workers = workers
        self._workers = [WalkWorker(make_walker(), index, workers) for index in range(workers)]
        self._bound: list[float | None] = [None] * workers
        self.per_chunk = per_chunk

    def start(self, bound: float) -> None:
        self._bound = [bound] * self.workers

    def lower(self, bound: float) -> None:
        self._bound = [None if b is None else min(b, bound) for b in self._bound]

    def answers(self, timeout: float):
        got = []
        for index in reversed(range(self.workers)):
            bound = self._bound[index]
            if bound is None:
                continue
            worker = self._workers[index]
            results, done = worker.run(min(bound, worker.next + self.per_chunk * self.workers), seconds=math.inf)
            done = worker.next >= bound
            if done:
                self._bound[index] = None
            got.append((index, results, done))
        return got

    def stop(self) -> None:
        pass

    def close(self) -> None:
        pass

    def memory(self) -> int:
        return 0


def outcome(result):
    """What must not depend on the workers: counts, coverage and violations with traces."""
    coverage = result.simulation.as_json()
    coverage.pop("workers")
    return (result.stats.counts(), result.stop_reason, coverage,
            [(d.property, d.reason, d.trace.events if d.trace else None) for d in result.discoveries])


def test_walk_seeds_are_pinned_numbers() -> None:
    # BLAKE2b of (seed, walk): the same in every process and hash seed (never hash())
    assert walk_seed(0, 0) == walk_seed(0, 0)
    assert walk_seed(0, 1) != walk_seed(0, 0) != walk_seed(1, 0)
    code = "from nice_attendre.simulate import walk_seed; print(walk_seed(7, 3))"
    seen = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert seen == {f"{walk_seed(7, 3)}\n"}


def test_a_walk_goes_to_quiescence_and_checks_properties() -> None:
    options = WalkOptions(seed=1)
    walker = Walker(Grid(), [NOT_TWO_ZERO], [], options)
    ends = {walker.walk(i).end for i in range(50)}
    assert ends == {QUIESCENT, VIOLATION}
    violating = next(r for r in (walker.walk(i) for i in range(50)) if r.violations)
    assert violating.violations == (("not-2-0", "always", "at (2, 0)"),)
    assert violating.events == ("x", "x")
    quiet = next(r for r in (walker.walk(i) for i in range(50)) if r.end == QUIESCENT)
    assert quiet.depth == 6 and quiet.events is None and dict(quiet.kinds) == {"str": 6}


def test_the_same_seed_gives_the_same_walks_and_another_seed_others() -> None:
    def walks(seed: int) -> list[WalkResult]:
        walker = Walker(Grid(8), [], [], WalkOptions(seed=seed))
        return [walker.walk(i) for i in range(20)]

    assert walks(5) == walks(5)
    assert walks(5) != walks(6)


def test_a_simulation_is_never_ok_and_counts_its_coverage() -> None:
    result = simulate(Grid(), [Property.always("true", lambda s: True)], options=WalkOptions(seed=3), walks=40)
    assert not result.ok and not result.complete
    assert result.verdict == "incomplete" and result.stop_reason == "walks"
    coverage = result.simulation
    assert coverage.walks == 40 and coverage.ends == {QUIESCENT: 40}
    assert result.stats.transitions == 40 * 6 == coverage.transitions
    assert coverage.deepest == result.stats.max_depth == 6
    assert 7 <= coverage.distinct_states == result.stats.unique_states <= 16
    assert coverage.checked == ("true",) and not coverage.saturated


def test_first_violation_stops_the_run_and_its_trace_replays() -> None:
    result = simulate(Grid(), [NOT_TWO_ZERO], options=WalkOptions(seed=3), walks=1000, shrink=False)
    assert result.verdict == "violated" and result.stop_reason == "violation"
    (found,) = result.discoveries
    assert found.trace is not None and found.trace.events == ("x", "x") and found.reason == "at (2, 0)"
    assert found.trace.replay(Grid()) == (2, 0)
    assert result.simulation.walks == result.simulation.violating_walk["not-2-0"] + 1


def test_keep_going_reports_each_property_once_with_its_count() -> None:
    other = Property.always("not-0-2", lambda s: s != (0, 2))
    result = simulate(Grid(), [NOT_TWO_ZERO, other], options=WalkOptions(seed=3), walks=200, keep_going=True)
    assert result.stop_reason == "walks"
    assert sorted(d.property for d in result.discoveries) == ["not-0-2", "not-2-0"]
    counts = result.simulation.violating_walks
    assert counts["not-2-0"] > 1 and counts["not-0-2"] > 1
    assert result.simulation.ends[VIOLATION] == counts["not-2-0"] + counts["not-0-2"]


def test_at_quiescence_and_transition_properties() -> None:
    at_end = Property.at_quiescence("never-ends", lambda s: False)
    result = simulate(Grid(), [at_end], options=WalkOptions(seed=1), walks=10, shrink=False)
    assert result.discoveries[0].trace.final == (3, 3) and result.simulation.walks == 1
    step = Property.on_transition("no-y-first", lambda before, event, after: not (before == (0, 0) and event == "y"))
    result = simulate(Grid(), [step], options=WalkOptions(seed=1), walks=100)
    assert result.discoveries[0].trace.events == ("y",)


def test_sometimes_properties_are_seen_or_not_never_violated() -> None:
    seen = Property.sometimes("corner", lambda s: s == (3, 0))
    unseen = Property.sometimes("outside", lambda s: s == (9, 9))
    result = simulate(Grid(), [seen, unseen], options=WalkOptions(seed=2), walks=300)
    assert result.verdict == "incomplete" and not result.discoveries
    assert result.simulation.sometimes_seen == ("corner",) and result.simulation.sometimes_unseen == ("outside",)


def test_a_repeated_state_ends_the_walk_and_reaches_the_cycle_hook() -> None:
    lassos = []

    def on_cycle(initial, events, loop_start):
        lassos.append((initial, tuple(events), loop_start))
        return [("terminates", "termination", "a cycle")] if len(lassos) == 1 else []

    walker = Walker(Ring(), [], [], WalkOptions(seed=0), on_cycle=on_cycle)
    first, second = walker.walk(0), walker.walk(1)
    assert first.end == VIOLATION and first.loop_start == 0 and first.depth == 4
    assert first.violations == (("terminates", "termination", "a cycle"),)
    assert second.end == CYCLE and second.violations == ()
    assert lassos[0] == (0, ("next",) * 4, 0)
    result = simulate(Ring(), [], options=WalkOptions(seed=0), walks=5)
    assert result.simulation.ends == {CYCLE: 5}


def test_depth_bounds_are_spread_per_walk() -> None:
    options = WalkOptions(seed=4, walk_depth=8)
    assert options.depths() == (8, 4, 2)
    walker = Walker(Grid(10), [], [], options)
    results = [walker.walk(i) for i in range(60)]
    assert {r.depth_bound for r in results} == {8, 4, 2}
    assert all(r.end == DEPTH and r.depth == r.depth_bound for r in results)
    assert WalkOptions(seed=4, walk_depth=8, spread_depth=False).depths() == (8,)


def test_a_favoured_group_goes_first_and_a_weight_leans_towards_it() -> None:
    first = Walker(Grid(), [], [], WalkOptions(seed=0, biases=(favour("y"),), group_of=group))
    for index in range(20):
        result = first.walk(index)
        assert result.depth == 6
    always_y = Property.always("y-first", lambda s: s[0] == 0 or s[1] == 3)
    result = simulate(Grid(), [always_y], options=WalkOptions(seed=0, biases=(favour("y"),), group_of=group),
                      walks=50)
    assert not result.discoveries and result.simulation.biases == {"y-first": 50}
    heavy = WalkOptions(seed=0, biases=(Bias("y-heavy", frozenset({"y"}), 50.0),), group_of=group)
    x_step_first = Property.always("x-first-step", lambda s: s != (1, 0))
    walker = Walker(Grid(), [x_step_first], [], heavy)
    results = [walker.walk(i) for i in range(400)]
    assert 0 < sum(1 for r in results if r.violations) < 30  # x first: 1 in 51 (uniform: 1 in 2)


def test_a_swarm_draws_each_walks_bias_from_its_stream() -> None:
    options = WalkOptions(seed=9, biases=(Bias("uniform"), favour("x"), favour("y")), group_of=group)
    result = simulate(Grid(), [], options=options, walks=90)
    assert set(result.simulation.biases) == {"uniform", "x-first", "y-first"}
    assert all(count > 10 for count in result.simulation.biases.values())


def test_options_are_checked() -> None:
    with pytest.raises(InputError, match="seed"):
        WalkOptions(seed=-1)
    with pytest.raises(InputError, match="group_of"):
        WalkOptions(seed=1, biases=(favour("x"),))
    with pytest.raises(InputError, match="walk_depth"):
        WalkOptions(seed=1, walk_depth=0)
    with pytest.raises(InputError, match="max_depth"):
        simulate(Grid(), [], options=WalkOptions(seed=1), limits=Limits(max_depth=3))
    with pytest.raises(InputError, match="max_states"):
        simulate(Grid(), [], options=WalkOptions(seed=1), limits=Limits(max_states=3))
    with pytest.raises(InputError, match="walks"):
        simulate(Grid(), [], options=WalkOptions(seed=1), walks=0)


@pytest.mark.parametrize("workers", [2, 3, 5])
@pytest.mark.parametrize("keep_going", [False, True])
def test_the_result_does_not_depend_on_the_workers(workers: int, keep_going: bool) -> None:
    props = [Property.always("rare", lambda s: s != (5, 0)), Property.always("rarer", lambda s: s != (6, 1))]
    options = WalkOptions(seed=11, biases=(Bias("uniform"), favour("x")), group_of=group)

    def run(count: int):
        if count == 1:
            return simulate(Grid(8), props, options=options, walks=400, keep_going=keep_going, shrink=False)
        return simulate(Grid(8), props, options=options, walks=400, keep_going=keep_going, shrink=False,
                        cluster=lambda stop_at: Scrambled(lambda: Walker(Grid(8), props, [], options,
                                                                          stop_at=stop_at), count))

    one, many = run(1), run(workers)
    assert one.discoveries, "the test needs a violation"
    assert outcome(one) == outcome(many)
    assert many.simulation.workers == workers


def test_max_transitions_ends_with_the_walk_that_reached_it() -> None:
    result = simulate(Grid(), [], options=WalkOptions(seed=1), limits=Limits(max_transitions=20))
    assert result.stop_reason == "max-transitions"
    assert result.stats.transitions == 24 and result.simulation.walks == 4  # 6 events a walk


def test_tally_counts_a_prefix_of_walk_numbers() -> None:
    options = WalkOptions(seed=0)
    tally = Tally([], [], options, walks=10, max_transitions=None, keep_going=False)

    def result(index: int, violation: bool = False) -> WalkResult:
        return WalkResult(index, 0, None, 3, VIOLATION if violation else QUIESCENT, b"", (("str", 3),),
                          violations=(("p", "always", ""),) if violation else (), events=("x",) if violation else None)

    tally.add(result(1))
    tally.add(result(4, violation=True))
    assert tally.bound == 5 and tally.walks == 0  # walk 0 is not in yet
    tally.add(result(6))  # beyond the first violation: never counted
    tally.add(result(0))
    tally.add(result(3))
    assert tally.walks == 2 and not tally.finished
    tally.add(result(2))
    assert tally.finished and tally.walks == 5 and tally.bound_reason == "violation"
    assert [r.index for r, _v in tally.reported()] == [4]


def test_a_stop_counts_what_was_done_and_says_why() -> None:
    class Stopping(InProcessWalks):
        """This process's walks; after two chunks, a stop as the watchdog's (stop_at below 0)."""

        chunks = 0

        def answers(self, timeout):
            Stopping.chunks += 1
            if Stopping.chunks == 3:
                self.worker.walker.stop_at[0] = -1
            return super().answers(timeout)

    class Dog:  # the watchdog's interface, with its reason ready
        deadline = 1.0
        reason = "max-seconds"
        signum = None

        def bind(self, stop_at, **_):
            pass

        def unbind(self):
            pass

    result = simulate(Grid(30), [], options=WalkOptions(seed=0), watchdog=Dog(),
                      cluster=lambda stop_at: Stopping(Walker(Grid(30), [], [], WalkOptions(seed=0), stop_at=stop_at)))
    assert result.stop_reason == "max-seconds" and result.verdict == "incomplete"
    coverage = result.simulation
    assert coverage.walks >= 2 and coverage.partial_walks <= 1
    assert result.stats.transitions == coverage.transitions


def test_shrunk_traces_of_a_simulation_replay_and_are_shorter() -> None:
    corner = Property.always("corner", lambda s: s != (3, 3))
    raw = simulate(Grid(), [corner], options=WalkOptions(seed=5), walks=10, shrink=False)
    shrunk = simulate(Grid(), [corner], options=WalkOptions(seed=5), walks=10)
    assert len(raw.discoveries[0].trace) == 6 == len(shrunk.discoveries[0].trace)  # nothing to spare
    assert shrunk.discoveries[0].unshrunk_length == 6 and raw.discoveries[0].unshrunk_length is None
    assert isinstance(shrunk.discoveries[0].trace, Trace)
    assert shrunk.discoveries[0].expectation is Expectation.ALWAYS


def test_a_walk_that_does_not_replay_is_nondeterminism() -> None:
    from nice_attendre.errors import NondeterminismError
    from nice_attendre.simulate import walk_trace

    assert walk_trace(Grid(), (0, 0), ("x", "y")).final == (1, 1)
    with pytest.raises(NondeterminismError, match="step 4"):
        walk_trace(Grid(), (0, 0), ("x", "x", "x", "x"))


class Exhausting(Grid):
    """A Grid whose memory runs out at its 30th ``apply``."""

    def __init__(self) -> None:
        super().__init__(3)
        object.__setattr__(self, "calls", [0])

    def apply(self, state, event):
        self.calls[0] += 1
        if self.calls[0] == 30:
            raise MemoryError
        return super().apply(state, event)


def test_exhausted_memory_ends_the_run_with_what_was_counted() -> None:
    result = simulate(Exhausting(), [], options=WalkOptions(seed=0), walks=100)
    assert result.stop_reason == "out-of-memory" and result.verdict == "incomplete"
    assert result.simulation.walks == 4 and result.stats.transitions == 24  # the walks before the 30th apply
