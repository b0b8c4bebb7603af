"""Properties users write themselves, over a readable view of each state.

A predicate gets a :class:`~nice_attendre.models.view.View` (hosts' sent and received
packets with headers, packets in flight, each switch's table, buffer and pending commands,
messages to the controller and those OpenFlow-B holds at the platform, the app's state, the
topology, which links are up, the fault budgets left) and returns whether the claim holds. Build one with :func:`always`,
:func:`at_quiescence`, :func:`sometimes`, :func:`eventually` or :func:`on_transition`; the result is a
:class:`PropertySpec`, which ``verify(properties=[...])`` and ``--property file.py:name``
accept next to the registered names::

    from nice_attendre.properties.custom import always

    def only_web_traffic(view):
        return all(r.header.tp_dst == 80 for r in view.hosts["h1"].received_from("h2"))

    ONLY_WEB = always("only-web", only_web_traffic, "h1 gets only port-80 traffic from h2")

A predicate that raises is reported as a violation of its property whose reason names the
exception, with the trace to the state where it raised (never as a crash of the checker); so
is one that runs longer than the handler time limit (``--max-handler-seconds``), and a time
limit or Ctrl-C stops the search inside a predicate (see ``_guarded`` in
:mod:`nice_attendre.properties`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from nice_attendre.models.view import View
from nice_attendre.property import FAIRNESS, Expectation, Property

if TYPE_CHECKING:
    from nice_attendre.models.network import Network


@dataclass(frozen=True)
class PropertySpec:
    """A user property, not yet bound to a network: calling it with a network gives the
    checker's :class:`~nice_attendre.Property` (like the factories of the registry).

    ``predicate(view) -> bool`` (for ``on_transition``: ``predicate(before, event, after)``
    with two views); ``explain(view) -> str``, optional, says why it fails.
    """

    name: str
    expectation: Expectation
    predicate: Callable[..., Any]
    description: str = ""
    explain: Callable[[View], str] | None = field(default=None, compare=False)
    fairness: str = "weak"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError("a property needs a name (a non-empty string)")
        if not callable(self.predicate):
            raise ValueError(f"property {self.name!r}: the predicate must be callable, got {self.predicate!r}")
        if self.fairness not in FAIRNESS:
            raise ValueError(f"property {self.name!r}: fairness must be one of {', '.join(FAIRNESS)}, "
                             f"got {self.fairness!r}")

    def __call__(self, net: "Network") -> Property:
        errors: dict[Any, str] = {}
        name = self.name
        predicate = self.predicate

        def failed(key: Any, exc: Exception) -> bool:
            errors[key] = f"the property {name!r} raised {type(exc).__name__}: {exc}"
            return False

        if self.expectation is Expectation.TRANSITION:
            def holds(before: Any, event: Any, after: Any) -> bool:
                try:
                    return bool(predicate(View(net, before), event, View(net, after)))
                except Exception as exc:  # a bug in the property is a finding, not a crash
                    return failed(after, exc)
        else:
            def holds(state: Any) -> bool:  # type: ignore[misc]
                try:
                    return bool(predicate(View(net, state)))
                except Exception as exc:  # a bug in the property is a finding, not a crash
                    return failed(state, exc)

        def explain(state: Any) -> str:
            if state in errors:
                return errors[state]
            if self.explain is None:
                return ""
            try:
                return str(self.explain(View(net, state)))
            except Exception as exc:
                return f"(its explanation raised {type(exc).__name__}: {exc})"

        return Property(name, self.expectation, holds, self.description, explain, self.fairness)


def always(name: str, predicate: Callable[[View], Any], description: str = "",
           explain: Callable[[View], str] | None = None) -> PropertySpec:
    """A claim about every reachable state."""
    return PropertySpec(name, Expectation.ALWAYS, predicate, description, explain)


def at_quiescence(name: str, predicate: Callable[[View], Any], description: str = "",
                  explain: Callable[[View], str] | None = None) -> PropertySpec:
    """A claim about every state where nothing more can happen (the end of each execution)."""
    return PropertySpec(name, Expectation.AT_QUIESCENCE, predicate, description, explain)


def sometimes(name: str, predicate: Callable[[View], Any], description: str = "",
              explain: Callable[[View], str] | None = None) -> PropertySpec:
    """A claim that some reachable state satisfies (an example must exist)."""
    return PropertySpec(name, Expectation.SOMETIMES, predicate, description, explain)


def eventually(name: str, predicate: Callable[[View], Any], description: str = "",
               explain: Callable[[View], str] | None = None, fairness: str = "weak") -> PropertySpec:
    """A claim that every execution makes true at some point: on every path, whether it ends
    (nothing more can happen) or goes on for ever (a cycle a weakly fair scheduler can repeat;
    with ``fairness="none"`` any cycle), some state satisfies it. A violation is a trace where
    it never holds that ends, or a lasso (a path, then a cycle that repeats for ever);
    ``explain`` gets the view of its last state. See docs/termination.md."""
    return PropertySpec(name, Expectation.EVENTUALLY, predicate, description, explain, fairness)


def on_transition(name: str, predicate: Callable[[View, Any, View], Any], description: str = "",
                  explain: Callable[[View], str] | None = None) -> PropertySpec:
    """A claim about every step: ``predicate(before, event, after)`` (a monitor, for claims
    that compare two states, such as "what a host receives in one step comes from port 80").
    ``explain`` gets the view after the failing step."""
    return PropertySpec(name, Expectation.TRANSITION, predicate, description, explain)
