"""Traces: building, replaying, and catching models that break determinism."""
from __future__ import annotations

import pytest

from nice_attendre import ModelError, NiceAttendreError, Property, Step, Trace, dfs


class Ring:
    """States 0..size-1; ``next`` goes to (s+1) % size, ``back`` (only from odd states) to s-1."""

    def __init__(self, size: int = 5) -> None:
        self.size = size

    def initial_states(self) -> tuple[int, ...]:
        return (0, 2)

    def enabled(self, state: int) -> tuple[str, ...]:
        return ("next", "back") if state % 2 else ("next",)

    def apply(self, state: int, event: str) -> int:
        match event:
            case "next":
                return (state + 1) % self.size
            case "back":
                return state - 1
        raise AssertionError(event)


class CountingApply(Ring):
    """Breaks the contract: ``apply`` depends on how often it was called."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def apply(self, state: int, event: str) -> int:
        self.calls += 1
        return (state + self.calls) % self.size


class FlakyEnabled(Ring):
    """Breaks the contract: ``enabled`` offers ``back`` only the first time it is asked."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    def enabled(self, state: int) -> tuple[str, ...]:
        self.asked += 1
        return ("next", "back") if self.asked == 1 else ("next",)


def test_from_events_and_accessors() -> None:
    trace = Trace.from_events(Ring(), ["next", "back", "next", "next"])
    assert trace == Trace(0, (Step("next", 1), Step("back", 0), Step("next", 1), Step("next", 2)))
    assert trace.events == ("next", "back", "next", "next")
    assert list(trace.states()) == [0, 1, 0, 1, 2]
    assert (trace.final, len(trace)) == (2, 4)
    assert trace.replay(Ring()) == 2
    assert Trace.from_events(Ring(), ["next"], initial=2) == Trace(2, (Step("next", 3),))
    empty = Trace(2, ())
    assert (empty.final, len(empty), empty.events, empty.replay(Ring())) == (2, 0, (), 2)


def test_discovery_trace_replays() -> None:
    result = dfs(Ring(), [Property.always("not-4", lambda s: s != 4)])
    (found,) = result.discoveries
    assert found.trace.events == ("next",) * 4
    assert found.trace.replay(Ring()) == 4


def test_replay_rejects_a_nondeterministic_apply() -> None:
    trace = Trace.from_events(Ring(), ["next", "next"])
    with pytest.raises(ModelError, match=r"step 2: applying 'next' gave a different state"):
        # First call: 0 + 1 = 1 as recorded; second call: 1 + 2 = 3, recorded 2.
        trace.replay(CountingApply())
    system = CountingApply()
    recorded = Trace.from_events(system, ["next", "next"])
    assert recorded.events == ("next", "next")
    with pytest.raises(ModelError, match="not deterministic"):
        recorded.replay(system)


def test_replay_rejects_an_event_that_is_not_enabled() -> None:
    bogus = Trace(0, (Step("back", 4),))
    with pytest.raises(ModelError, match=r"step 1: event 'back' is not enabled"):
        bogus.replay(Ring())
    later = Trace(0, (Step("next", 1), Step("next", 2), Step("back", 1)))
    with pytest.raises(ModelError, match=r"step 3: event 'back' is not enabled"):
        later.replay(Ring())


def test_replay_rejects_a_flaky_enabled() -> None:
    trace = Trace.from_events(Ring(), ["next", "back", "next", "back"])
    system = FlakyEnabled()
    with pytest.raises(ModelError, match="step 2: event 'back' is not enabled"):
        trace.replay(system)


def test_replay_rejects_a_foreign_initial_state() -> None:
    with pytest.raises(ModelError, match="initial state"):
        Trace(1, ()).replay(Ring())


def test_from_events_rejects_an_event_that_is_not_enabled() -> None:
    with pytest.raises(ModelError, match=r"step 3: event 'back' is not enabled"):
        Trace.from_events(Ring(), ["next", "next", "back"])
    with pytest.raises(ModelError, match=r"step 1: event 'back' is not enabled"):
        Trace.from_events(Ring(), ["back"])


def test_model_error_is_a_library_error() -> None:
    assert issubclass(ModelError, NiceAttendreError)
    assert not issubclass(ModelError, ValueError)
