"""Properties, metrics and results on a small game whose counts and traces are pinned.

The game: a pile of 4 stones; a move takes one or two. A state is ``(stones, moves)``;
it is quiescent when the pile is empty, after 2, 3 or 4 moves. Reachable states:
(4,0) (3,1) (2,1) (2,2) (1,2) (1,3) (0,2) (0,3) (0,4), 9 in all; 10 transitions.
Depth-first, ``take1`` before ``take2``::

    (4,0) -take1-> (3,1) -take1-> (2,2) -take1-> (1,3) -take1-> (0,4)   depth 4
                                  (2,2) -take2-> (0,3)
                   (3,1) -take2-> (1,2) -take1-> (0,3)                  revisit
    (4,0) -take2-> (2,1) -take1-> (1,2)                                 revisit
                   (2,1) -take2-> (0,2)
"""
from __future__ import annotations

import pytest

from nice_attendre import (Discovery, Expectation, Limits, Metric, Property, Result, Stats, Step,
                           Trace, dfs)

State = tuple[int, int]


class Game:
    def __init__(self, stones: int = 4) -> None:
        self.stones = stones

    def initial_states(self) -> tuple[State, ...]:
        return ((self.stones, 0),)

    def enabled(self, state: State) -> tuple[str, ...]:
        stones, _ = state
        return ("take1", "take2")[:min(stones, 2)]

    def apply(self, state: State, event: str) -> State:
        stones, moves = state
        match event:
            case "take1":
                return (stones - 1, moves + 1)
            case "take2":
                return (stones - 2, moves + 1)
        raise AssertionError(event)


GAME_COUNTS = (10, 9, 2, 4)  # transitions, unique_states, revisits, max_depth
EVEN_MOVES = Property.at_quiescence("even-moves", lambda s: s[1] % 2 == 0,
                                    "a game ends after an even number of moves",
                                    explain=lambda s: f"ended after {s[1]} moves")


def test_game_counts_pinned() -> None:
    result = dfs(Game())
    assert result.stats.counts() == GAME_COUNTS
    assert result.complete and result.ok and result.stop_reason is None


def test_at_quiescence_violation_trace_pinned() -> None:
    result = dfs(Game(), [EVEN_MOVES])
    assert (result.complete, result.stop_reason) == (False, "violation")
    assert result.discoveries == (Discovery(
        "even-moves", Expectation.AT_QUIESCENCE,
        Trace((4, 0), (Step("take1", (3, 1)), Step("take1", (2, 2)), Step("take2", (0, 3)))),
        "ended after 3 moves"),)
    # Stopped right after storing (0,3): 5 transitions, 6 states, no revisit yet.
    assert result.stats.counts() == (5, 6, 0, 4)


def test_at_quiescence_keep_going_reports_each_quiescent_state_once() -> None:
    result = dfs(Game(), [EVEN_MOVES], keep_going=True)
    assert result.complete
    # (0,3) is reached twice, but reported once: the second time is a revisit.
    assert [d.trace.final for d in result.discoveries] == [(0, 3)]
    assert result.stats.counts() == GAME_COUNTS


def test_at_quiescence_is_not_checked_where_events_are_enabled() -> None:
    seen: list[State] = []
    dfs(Game(), [Property.at_quiescence("log", lambda s: seen.append(s) is None)])
    assert seen == [(0, 4), (0, 3), (0, 2)]


def test_always_violation_is_not_expanded_and_at_quiescence_not_checked_there() -> None:
    seen: list[State] = []
    props = [Property.always("no-pile-of-2", lambda s: s[0] != 2),
             Property.at_quiescence("log", lambda s: seen.append(s) is None)]
    result = dfs(Game(), props, keep_going=True)
    assert [d.trace.final for d in result.discoveries] == [(2, 2), (2, 1)]
    # (2,2) and (2,1) are not expanded: (1,3), (0,4) and (0,2) are never reached, (0,3)
    # still is, through (1,2). Transitions: 4,0->3,1->2,2  3,1->1,2->0,3  4,0->2,1.
    assert seen == [(0, 3)]
    assert result.stats.counts() == (5, 6, 0, 3)


@pytest.mark.parametrize("moves, found", [(4, False), (2, False), (5, True), (0, False)])
def test_sometimes(moves: int, found: bool) -> None:
    prop = Property.sometimes("moves", lambda s: s[1] == moves)
    result = dfs(Game(), [prop])
    assert result.complete
    if found:
        assert result.discoveries == (Discovery("moves", Expectation.SOMETIMES, None,
                                                "no reachable state satisfies it"),)
    else:
        assert result.ok


def test_sometimes_with_violations_under_keep_going() -> None:
    # States behind a violating state are not explored, so (0,4) is never seen.
    props = [Property.always("no-pile-of-2", lambda s: s[0] != 2),
             Property.sometimes("four-moves", lambda s: s[1] == 4)]
    result = dfs(Game(), props, keep_going=True)
    assert [d.property for d in result.discoveries] == ["no-pile-of-2", "no-pile-of-2",
                                                        "four-moves"]
    assert result.discoveries[-1].trace is None


@pytest.mark.parametrize("limits", [Limits(max_depth=3), Limits(max_transitions=4),
                                    Limits(max_states=4), Limits(max_seconds=0.0)])
def test_sometimes_not_claimed_by_a_cut_search(limits: Limits) -> None:
    # Five moves are never made; a cut search must still not say so (max_seconds=0 stops
    # before the first transition), and it is not ok either: it is incomplete.
    result = dfs(Game(), [Property.sometimes("five-moves", lambda s: s[1] == 5)], limits=limits)
    assert not result.complete and result.discoveries == ()
    assert (result.verdict, result.ok) == ("incomplete", False)


def test_metrics_over_quiescent_states() -> None:
    metrics = [Metric("moves", lambda s: s[1], "moves per game"),
               Metric("minus-moves", lambda s: -s[1])]
    result = dfs(Game(), metrics=metrics)
    assert result.metrics == {"moves": (2, 4), "minus-moves": (-4, -2)}


def test_metrics_absent_without_quiescent_state() -> None:
    # max_depth=2 stores (2,2), (1,2), (0,2): (0,2) is quiescent at depth 2.
    assert dfs(Game(), metrics=[Metric("m", lambda s: s[1])],
               limits=Limits(max_depth=2)).metrics == {"m": (2, 2)}
    assert dfs(Game(), metrics=[Metric("m", lambda s: s[1])],
               limits=Limits(max_depth=1)).metrics == {}


def test_max_depth_pinned() -> None:
    result = dfs(Game(), limits=Limits(max_depth=2))
    # Stored: (4,0) (3,1) (2,2)cut (1,2)cut (2,1) (0,2); transitions: 2 from each of
    # (4,0), (3,1), (2,1), of which (2,1)->(1,2) is a revisit.
    assert result.stats.counts() == (6, 6, 1, 2)
    assert (result.complete, result.stop_reason) == (False, "max-depth")


def test_max_depth_limit_that_cuts_nothing() -> None:
    for depth in (4, 5, 100):
        result = dfs(Game(), limits=Limits(max_depth=depth))
        assert result.complete and result.stop_reason is None
        assert result.stats.counts() == GAME_COUNTS


def test_max_transitions_equal_to_the_search_is_complete() -> None:
    assert dfs(Game(), limits=Limits(max_transitions=10)).complete
    cut = dfs(Game(), limits=Limits(max_transitions=9))
    assert (cut.complete, cut.stop_reason, cut.stats.transitions) == (False, "max-transitions", 9)


def test_max_states_pinned() -> None:
    result = dfs(Game(), limits=Limits(max_states=7))
    # Stores: (4,0) (3,1) (2,2) (1,3) (0,4) (0,3) (1,2): the 7th comes with the 6th transition.
    assert result.stats.counts() == (6, 7, 0, 4)
    assert (result.complete, result.stop_reason) == (False, "max-states")


def test_only_initial_states_count_for_max_states() -> None:
    class Many(Game):
        def initial_states(self) -> tuple[State, ...]:
            return ((0, 0), (0, 1), (0, 2), (0, 1))

    assert dfs(Many()).stats.counts() == (0, 3, 0, 0)
    result = dfs(Many(), limits=Limits(max_states=2))
    assert (result.complete, result.stop_reason, result.stats.unique_states) == (
        False, "max-states", 2)


def test_violating_initial_state() -> None:
    result = dfs(Game(), [Property.always("not-start", lambda s: s != (4, 0))])
    (found,) = result.discoveries
    assert found.trace == Trace((4, 0), ())
    assert result.stats.counts() == (0, 1, 0, 0)
    assert (result.complete, result.stop_reason) == (False, "violation")


def test_two_always_properties_failing_in_one_state_are_both_reported() -> None:
    props = [Property.always("a", lambda s: s != (2, 2)), Property.always("b", lambda s: s[0] != 2)]
    result = dfs(Game(), props)
    assert [(d.property, d.trace.final) for d in result.discoveries] == [("a", (2, 2)), ("b", (2, 2))]
    assert result.discovery("b").trace.events == ("take1", "take1")
    assert result.discovery("c") is None


def test_property_constructors_and_why() -> None:
    prop = Property.always("p", bool, "desc", explain=lambda s: f"bad {s}")
    assert (prop.name, prop.expectation, prop.description) == ("p", Expectation.ALWAYS, "desc")
    assert prop.why(3) == "bad 3"
    assert Property.sometimes("q", bool).why(3) == ""
    assert Property.at_quiescence("r", bool).expectation is Expectation.AT_QUIESCENCE
    assert Property.sometimes("q", bool).expectation is Expectation.SOMETIMES


def test_result_and_stats() -> None:
    stats = Stats(10, 9, 2, 4, 0.0)
    assert stats.counts() == (10, 9, 2, 4)
    assert stats.transitions_per_second == 0.0
    assert Stats(10, 9, 2, 4, 2.0).transitions_per_second == 5.0
    result = Result(stats, (), True)
    assert result.ok and result.metrics == {} and result.system is None
    # The explored system is not part of a result's equality.
    assert Result(stats, (), True, system=Game()) == result


@pytest.mark.parametrize("field", ["max_transitions", "max_states", "max_depth", "max_seconds"])
def test_limits_reject_negative_values(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        Limits(**{field: -1})
    assert getattr(Limits(**{field: 0}), field) == 0


@pytest.mark.parametrize("args, message", [
    (("p", lambda s: True, Expectation.ALWAYS), "expectation must be an Expectation"),  # fields out of order
    (("p", "always", lambda s: True), "expectation must be an Expectation"),
    (("p", Expectation.ALWAYS, None), "holds must be callable"),
    (("p", Expectation.ALWAYS, lambda s: True, "", "why"), "explain must be callable or None"),
])
def test_a_property_the_searches_could_not_classify_is_refused(args: tuple, message: str) -> None:
    # it used to be accepted and then never checked by any search: a silent pass
    with pytest.raises(TypeError, match=message):
        Property(*args)
