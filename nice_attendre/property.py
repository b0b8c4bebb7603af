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
      states too, since the step itself is new);
    * ``EVENTUALLY``: on every maximal execution, one that ends (a quiescent state) or one
      that goes on for ever (a cycle), ``holds(state)`` becomes true at some state (a
      liveness property; violated by a trace that ends, or by a lasso, where it never holds);
    * ``TERMINATION``: every execution ends: the reachable state graph has no cycle (a state
      that reaches itself). Violated by a lasso (a trace whose cycle can repeat for ever);
      ``holds`` is not called.

    The last two are about whole executions, not single states: they need a search that sees
    cycles (the depth-first and breadth-first ones; see ``docs/termination.md``).
    """

    ALWAYS = "always"
    AT_QUIESCENCE = "at_quiescence"
    SOMETIMES = "sometimes"
    TRANSITION = "transition"
    EVENTUALLY = "eventually"
    TERMINATION = "termination"


#: The expectations about whole executions, which only a search that sees cycles can check.
EXECUTION_EXPECTATIONS = frozenset({Expectation.EVENTUALLY, Expectation.TERMINATION})

#: The fairness assumptions a property of whole executions may make (see :class:`Property`).
FAIRNESS = ("weak", "none")


@dataclass(frozen=True, slots=True)
class Property:
    """A named predicate ``holds(state) -> bool`` with its expectation.

    ``description`` is one line for listings. ``explain(state) -> str``, when given, says
    why the predicate fails in ``state`` (used in reports); it is only called on failing
    states. ``fairness`` matters to the properties of whole executions (``TERMINATION``,
    ``EVENTUALLY``) only: ``"weak"`` (the default) judges only the executions of a weakly
    fair scheduler, under which a process enabled for ever eventually moves (see
    :mod:`nice_attendre.fair_cycles`); ``"none"`` every execution, whatever the scheduler.
    """

    name: str
    expectation: Expectation
    holds: Callable[[Any], bool]
    description: str = ""
    explain: Callable[[Any], str] | None = None
    fairness: str = "weak"

    def __post_init__(self) -> None:
        # A property the searches cannot classify would never be checked: refuse it here
        # (``Property("p", predicate, Expectation.ALWAYS)``, the fields out of order, was
        # accepted and then silently ignored by every search).
        if not isinstance(self.expectation, Expectation):
            raise TypeError(f"property {self.name!r}: expectation must be an Expectation, got "
                            f"{self.expectation!r} (use Property.always(name, holds), ...)")
        if not callable(self.holds):
            raise TypeError(f"property {self.name!r}: holds must be callable, got {self.holds!r}")
        if self.fairness not in FAIRNESS:
            raise TypeError(f"property {self.name!r}: fairness must be one of {', '.join(FAIRNESS)}, "
                            f"got {self.fairness!r}")
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

    @staticmethod
    def eventually(name: str, holds: Callable[[Any], bool], description: str = "",
                   explain: Callable[[Any], str] | None = None, fairness: str = "weak") -> "Property":
        """A property that must become true on every maximal execution (one that ends, or one
        that repeats a cycle for ever): a path where ``holds`` is false in every state and that
        reaches a quiescent state or a cycle violates it (a cycle only if a weakly fair
        scheduler can repeat it, unless ``fairness`` is ``"none"``). ``explain`` gets the last
        state of the trace."""
        return Property(name, Expectation.EVENTUALLY, holds, description, explain, fairness)

    @staticmethod
    def termination(name: str = "termination", description: str = "", fairness: str = "weak") -> "Property":
        """A property that every execution ends: no reachable state reaches itself on a cycle
        that a weakly fair scheduler can repeat (with ``fairness="none"``: on any cycle)."""
        return Property(name, Expectation.TERMINATION, _not_called, description, fairness=fairness)

    def why(self, state: Hashable) -> str:
        """The reason the property fails in ``state`` (empty when no explainer is given)."""
        return self.explain(state) if self.explain is not None else ""


def _not_called(state: Any) -> bool:
    """The predicate of a ``termination`` property, which has none: the searches look at the
    state graph's cycles, not at states."""
    return True


@dataclass(frozen=True, slots=True)
class Metric:
    """A named integer function of quiescent states; the checker reports its min and max.

    Used for measurements per complete execution (for example control-plane messages).
    """

    name: str
    value: Callable[[Any], int]
    description: str = ""
