"""Named predicates over states, with an expectation of when they must hold."""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Callable, Hashable


class Expectation(enum.Enum):
    """When a property's predicate must hold.

    * ``ALWAYS``: in every reachable state (checked once per new state);
    * ``AT_QUIESCENCE``: in every state where nothing is enabled (NICE's "path end");
    * ``SOMETIMES``: in at least one reachable state (an example must exist);
    * ``TRANSITION``: on every transition the search performs: ``holds(before, event, after)``
      (a monitor, for claims about what a step does; checked on transitions into known
      states too, since the step itself is new).
    """

    ALWAYS = "always"
    AT_QUIESCENCE = "at_quiescence"
    SOMETIMES = "sometimes"
    TRANSITION = "transition"


@dataclass(frozen=True, slots=True)
class Property:
    """A named predicate ``holds(state) -> bool`` with its expectation.

    ``description`` is one line for listings. ``explain(state) -> str``, when given, says
    why the predicate fails in ``state`` (used in reports); it is only called on failing
    states.
    """

    name: str
    expectation: Expectation
    holds: Callable[[Any], bool]
    description: str = ""
    explain: Callable[[Any], str] | None = None

    def __post_init__(self) -> None:
        # A property the searches cannot classify would never be checked: refuse it here
        # (``Property("p", predicate, Expectation.ALWAYS)``, the fields out of order, was
        # accepted and then silently ignored by every search).
        if not isinstance(self.expectation, Expectation):
            raise TypeError(f"property {self.name!r}: expectation must be an Expectation, got "
                            f"{self.expectation!r} (use Property.always(name, holds), ...)")
        if not callable(self.holds):
            raise TypeError(f"property {self.name!r}: holds must be callable, got {self.holds!r}")
        if self.explain is not None and not callable(self.explain):
            raise TypeError(f"property {self.name!r}: explain must be callable or None, got {self.explain!r}")

    @staticmethod
    def always(name: str, holds: Callable[[Any], bool], description: str = "",
               explain: Callable[[Any], str] | None = None) -> "Property":
        """A property that must hold in every reachable state."""
        return Property(name, Expectation.ALWAYS, holds, description, explain)

    @staticmethod
    def at_quiescence(name: str, holds: Callable[[Any], bool], description: str = "",
                      explain: Callable[[Any], str] | None = None) -> "Property":
        """A property that must hold wherever no event is enabled."""
        return Property(name, Expectation.AT_QUIESCENCE, holds, description, explain)

    @staticmethod
    def sometimes(name: str, holds: Callable[[Any], bool], description: str = "",
                  explain: Callable[[Any], str] | None = None) -> "Property":
        """A property that must hold in at least one reachable state."""
        return Property(name, Expectation.SOMETIMES, holds, description, explain)

    @staticmethod
    def on_transition(name: str, holds: Callable[[Any, Any, Any], bool], description: str = "",
                      explain: Callable[[Any], str] | None = None) -> "Property":
        """A property of every transition: ``holds(before, event, after)``; ``explain`` gets
        the state after the failing transition."""
        return Property(name, Expectation.TRANSITION, holds, description, explain)

    def why(self, state: Hashable) -> str:
        """The reason the property fails in ``state`` (empty when no explainer is given)."""
        return self.explain(state) if self.explain is not None else ""


@dataclass(frozen=True, slots=True)
class Metric:
    """A named integer function of quiescent states; the checker reports its min and max.

    Used for measurements per complete execution (for example control-plane messages).
    """

    name: str
    value: Callable[[Any], int]
    description: str = ""
