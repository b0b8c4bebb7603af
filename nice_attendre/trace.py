"""Counterexample traces: an initial state and the events that lead from it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable, Iterator

from nice_attendre.errors import ModelError, NondeterminismError
from nice_attendre.system import System


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a trace: ``event`` happened and led to ``state``."""

    event: Any
    state: Any


@dataclass(frozen=True, slots=True)
class Trace:
    """A path through a system: ``initial`` followed by ``steps``.

    A trace is replayable: :meth:`replay` applies its events again from ``initial`` and
    checks that the system reproduces every recorded state, which is how determinism
    of a model is checked and how a user re-runs a counterexample.

    A *lasso* (an execution that never ends) has ``cycle_start``: the index, among
    :meth:`states` (0 is the initial state), of the state its last step returns to. Its
    steps are the prefix (up to that state) and then the cycle, which can repeat for ever:
    the steps after state ``cycle_start`` lead back to it, so :attr:`final` equals that
    state. ``None`` for a trace that simply ends.
    """

    initial: Any
    steps: tuple[Step, ...]
    cycle_start: int | None = None

    def __post_init__(self) -> None:
        start = self.cycle_start
        if start is not None and (type(start) is not int or not 0 <= start < len(self.steps)):
            raise ValueError(f"cycle_start must be the index of a state before the last one (0 to "
                             f"{len(self.steps) - 1}), got {start!r}")
        if start is not None:
            back = self.initial if start == 0 else self.steps[start - 1].state
            if back != self.steps[-1].state:
                raise ValueError(f"not a lasso: the last state differs from state {start}, where the cycle starts")

    def __setstate__(self, state: list[Any]) -> None:
        """Unpickle (a checkpoint's discoveries); a trace pickled before ``cycle_start`` existed
        is one that simply ends."""
        values = list(state) + [None] * (3 - len(state))
        for name, value in zip(("initial", "steps", "cycle_start"), values):
            object.__setattr__(self, name, value)

    def __getstate__(self) -> list[Any]:
        return [self.initial, self.steps, self.cycle_start]

    @property
    def is_lasso(self) -> bool:
        """Whether the trace ends in a cycle (an execution that can go on for ever)."""
        return self.cycle_start is not None

    @property
    def cycle(self) -> tuple[Step, ...]:
        """The steps of the cycle (empty for a trace that is not a lasso): steps
        ``cycle_start + 1`` to the last, counting from 1."""
        return () if self.cycle_start is None else self.steps[self.cycle_start:]

    @property
    def events(self) -> tuple[Any, ...]:
        """The events of the trace, in order."""
        return tuple(step.event for step in self.steps)

    @property
    def final(self) -> Any:
        """The last state of the trace."""
        return self.steps[-1].state if self.steps else self.initial

    def __len__(self) -> int:
        return len(self.steps)

    def states(self) -> Iterator[Any]:
        """Every state of the trace, the initial one first."""
        yield self.initial
        for step in self.steps:
            yield step.state

    def replay(self, system: System[Hashable, Hashable]) -> Any:
        """Apply the events again from the initial state; return the final state.

        Raises :class:`ModelError` when an event is not enabled where the trace took it, or
        when ``apply`` gives a different state than recorded: either means the model is not
        deterministic (its ``enabled`` or ``apply`` depends on something outside the state),
        or the trace belongs to another system.

        A system that caches transitions (the network's memo) replays with its
        ``apply_uncached`` when it has one, so every step really runs again: a cached step
        would repeat the recorded one and hide a nondeterministic model. A step whose
        difference the system's ``time_limited_step(state, event, recorded, replayed,
        notes)`` explains (a call that hit a time limit in one run only) is not
        nondeterminism: the replay goes on from the recorded state.
        """
        if self.initial not in system.initial_states():
            raise ModelError("trace does not start in an initial state of this system")
        apply = getattr(system, "apply_uncached", None) or system.apply
        explain = getattr(system, "time_limited_step", None)
        state = self.initial
        for index, step in enumerate(self.steps, start=1):
            enabled = system.enabled(state)
            if step.event not in enabled:
                raise ModelError(
                    f"step {index}: event {step.event!r} is not enabled in the replayed state; "
                    "the model's enabled() is not a function of the state, or the trace is from "
                    "another system")
            before, state = state, apply(state, step.event)
            if state != step.state:
                if explain is not None and explain(before, step.event, step.state, state, []) is not None:
                    state = step.state
                    continue
                raise ModelError(
                    f"step {index}: applying {step.event!r} gave a different state than recorded; "
                    "the model's apply() is not deterministic (it reads something outside the "
                    "state: a clock, a global, hash order or unseeded randomness)")
        if self.cycle_start is not None:
            back = self.initial if self.cycle_start == 0 else self.steps[self.cycle_start - 1].state
            if state != back:
                raise ModelError(f"the cycle does not close: the last state differs from the state after step "
                                 f"{self.cycle_start}, where the cycle starts")
        return state

    @staticmethod
    def from_events(system: System[Hashable, Hashable], events: list[Any],
                    initial: Any | None = None) -> "Trace":
        """Build a trace by applying ``events`` from ``initial`` (default: the first initial state).

        Raises :class:`ModelError` when an event is not enabled on the way.
        """
        state = system.initial_states()[0] if initial is None else initial
        steps = []
        for index, event in enumerate(events, start=1):
            if event not in system.enabled(state):
                raise ModelError(f"step {index}: event {event!r} is not enabled")
            state = system.apply(state, event)
            steps.append(Step(event, state))
        return Trace(initial if initial is not None else system.initial_states()[0], tuple(steps))


def narrate_trace(trace: Trace, step_with_notes: Any,
                  said: dict[tuple[Any, Any], list[str]] | None = None) -> list[list[str]]:
    """What each step of ``trace`` did, one list of lines per step, replaying it once.

    ``step_with_notes(state, event) -> (next state, lines)`` applies an event and says what
    happened (a model's narration). Every replayed state is compared with the recorded one:
    a difference raises :class:`NondeterminismError` naming the step, so a trace is never
    printed with narration that contradicts it. ``said`` maps (state, event) to lines already
    narrated (by an earlier trace with the same steps); it is used and filled, so no step runs
    twice.

    A step that differs only because a call hit a time limit in one run and not in the other
    is not the model's nondeterminism: when ``step_with_notes`` is a method of an object with
    ``time_limited_step(state, event, recorded, replayed, notes) -> lines | None`` (the
    network's), a difference it explains is narrated with its lines and the replay goes on
    from the recorded state.
    """
    said = {} if said is None else said
    lines: list[list[str]] = []
    state = trace.initial
    explain = getattr(getattr(step_with_notes, "__self__", None), "time_limited_step", None)
    for index, step in enumerate(trace.steps, start=1):
        key = (state, step.event)
        found = said.get(key)
        if found is None:
            replayed, found = step_with_notes(state, step.event)
            if replayed != step.state:
                explained = explain(state, step.event, step.state, replayed, found) if explain else None
                if explained is None:
                    raise NondeterminismError(index, step.event, found)
                found = explained
            said[key] = found
        lines.append(found)
        state = step.state
    return lines
