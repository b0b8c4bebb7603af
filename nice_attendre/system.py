"""The contract between a model and the checkers.

A model is a value with three pure, deterministic functions. The checkers (`dfs`, and
later `bfs` or random walks) consume any model that satisfies :class:`System`.
"""
from __future__ import annotations

from typing import Hashable, Protocol, Sequence, TypeVar

S = TypeVar("S", bound=Hashable)
E = TypeVar("E", bound=Hashable)


class System(Protocol[S, E]):
    """A finite transition system explored by the checkers.

    Contracts:

    * states and events are immutable and hashable, and equal states behave equally;
    * ``enabled(state)`` returns the events possible in ``state`` in a defined order that
      depends only on ``state`` (never on hash or set iteration order); an empty sequence
      means the state is quiescent (the end of a path);
    * ``apply(state, event)`` returns the successor state and never mutates ``state``;
      it is only called with an event that ``enabled(state)`` returned.
    """

    def initial_states(self) -> Sequence[S]:
        """The states exploration starts from, in a defined order."""
        ...

    def enabled(self, state: S) -> Sequence[E]:
        """The events possible in ``state``, in a defined order."""
        ...

    def apply(self, state: S, event: E) -> S:
        """The state after ``event`` happens in ``state``."""
        ...
