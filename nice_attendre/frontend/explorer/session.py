"""One exploring session: the network of a run, walked along paths of event indices.

A *path* is a sequence of event indices: from the initial state, index ``i`` takes the
``i``-th event of ``enabled(state)`` (the network's own order, which depends only on the
state), so a path names one state for good and fits in a URL (``0.3.1``). Everything the
page shows is read through the same calls the command line uses: ``enabled`` and
``narrate`` (apply with the narration of traces), :class:`~nice_attendre.models.view.View`
for the state, the properties' ``holds``/``why``, and the report's trace and Mermaid writers.

Not thread-safe (the network interns values and memoises transitions): the server calls a
session from one thread only (see :mod:`nice_attendre.frontend.explorer.server`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from nice_attendre.property import Expectation
from nice_attendre.trace import Step, Trace

#: The longest path the explorer walks (events); a longer one is a bad request.
MAX_PATH = 5000
#: The most digits one event index may have.
MAX_INDEX_DIGITS = 6
#: Transitions remembered with their narration before the cache starts afresh.
CACHE_ENTRIES = 200_000


class PathError(Exception):
    """A path that names no state: ``status`` is the HTTP status (400 malformed or too long,
    404 an index beyond the events enabled there), ``message`` one line for the user."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def parse_path(text: str) -> tuple[int, ...]:
    """The indices of ``text``, written ``0.3.1`` (``""``: the initial state).

    Raises :class:`PathError` (400) for anything but dot-separated decimal numbers of at most
    :data:`MAX_INDEX_DIGITS` digits, or for more than :data:`MAX_PATH` of them."""
    if text == "":
        return ()
    if text.count(".") >= MAX_PATH:
        raise PathError(400, f"path too long: at most {MAX_PATH} events")
    parts = text.split(".")
    indices = []
    for number, part in enumerate(parts, start=1):
        if not (part.isascii() and part.isdigit()) or len(part) > MAX_INDEX_DIGITS:
            shown = part if len(part) <= 20 else part[:20] + "..."
            raise PathError(400, f"malformed path: step {number} is {shown!r}, not an event index "
                                 "(write the path as indices separated by dots, e.g. 0.3.1)")
        indices.append(int(part))
    return tuple(indices)


def format_path(path: Sequence[int]) -> str:
    """``path`` as :func:`parse_path` reads it."""
    return ".".join(str(index) for index in path)


@dataclass
class Walk:
    """The states along a path: ``states[0]`` is the initial state, ``states[k]`` the one after
    ``events[k - 1]``, which ``lines[k - 1]`` narrate."""

    path: tuple[int, ...]
    states: list[Any]
    events: list[Any] = field(default_factory=list)
    lines: list[list[str]] = field(default_factory=list)

    @property
    def state(self) -> Any:
        return self.states[-1]


class _Shown:
    """What the report's trace writers read of a discovery: a trace, a property, a reason."""

    def __init__(self, trace: Trace, prop: str, reason: str) -> None:
        self.trace = trace
        self.property = prop
        self.reason = reason


class Session:
    """Walks ``run``'s network (a :class:`~nice_attendre.frontend.api.Run`) along paths.

    ``trace`` is the path of a saved trace opened with ``explore --trace`` and the property it
    violates (shown by the page), or None."""

    def __init__(self, run: Any, trace: tuple[tuple[int, ...], str] | None = None) -> None:
        self.run = run
        self.net = run.network
        self.initial, self.initial_lines = self.net.narrate_initial()
        self.trace = trace
        self._said: dict[tuple[Any, Any], tuple[Any, list[str]]] = {}

    # ---- walking ------------------------------------------------------------------------

    def step(self, state: Any, event: Any) -> tuple[Any, list[str]]:
        """The state after ``event`` in ``state`` and its narration (as traces print it)."""
        key = (state, event)
        found = self._said.get(key)
        if found is None:
            after, lines = self.net.narrate(state, event)
            found = (after, list(lines) or [str(event)])
            if len(self._said) >= CACHE_ENTRIES:
                self._said.clear()
            self._said[key] = found
        return found

    def walk(self, path: Sequence[int]) -> Walk:
        """The states along ``path``; :class:`PathError` (404) when an index is beyond the
        events enabled where it is taken, (400) when the path is too long."""
        if len(path) > MAX_PATH:
            raise PathError(400, f"path too long: at most {MAX_PATH} events")
        walk = Walk(tuple(path), [self.initial])
        state = self.initial
        for number, index in enumerate(path, start=1):
            enabled = self.net.enabled(state)
            if not 0 <= index < len(enabled):
                where = "the initial state" if number == 1 else f"the state after step {number - 1}"
                have = (f"{len(enabled)} enabled (0 to {len(enabled) - 1})" if enabled
                        else "none enabled: the network is quiescent")
                raise PathError(404, f"step {number}: no event {index} in {where} ({have})")
            event = enabled[index]
            state, lines = self.step(state, event)
            walk.states.append(state)
            walk.events.append(event)
            walk.lines.append(lines)
        return walk

    def enabled(self, state: Any) -> list[dict[str, Any]]:
        """The events enabled in ``state``, in order, each with its narration."""
        from nice_attendre.models.event_codec import encode_event

        found = []
        for index, event in enumerate(self.net.enabled(state)):
            _after, lines = self.step(state, event)
            try:
                code: Any = encode_event(event)
            except TypeError:
                code = None
            found.append({"index": index, "event": str(event), "summary": lines[0], "lines": lines, "code": code})
        return found

    # ---- what holds -----------------------------------------------------------------------

    def properties(self, walk: Walk) -> list[dict[str, Any]]:
        """Each property of the run in ``walk``'s last state: ``status`` is ``holds``,
        ``violated`` (with ``explanation`` and ``step``, the first step of the path where it
        was violated: 0 the initial state), ``pending`` (a property checked at quiescence, in a
        state where events are still enabled: ``holds_now`` says how it would end here),
        ``not-here`` / ``here`` (a ``sometimes`` property) or ``execution`` (a property of
        whole executions: termination, eventually; checked by ``verify``)."""
        quiescent = not self.net.enabled(walk.state)
        shown = []
        for prop in self.run.properties:
            entry: dict[str, Any] = {"name": prop.name, "expectation": prop.expectation.value,
                                     "description": prop.description}
            kind = prop.expectation
            if kind is Expectation.ALWAYS:
                first = next((k for k, state in enumerate(walk.states) if not prop.holds(state)), None)
                if first is None:
                    entry["status"] = "holds"
                else:
                    entry.update(status="violated", step=first, explanation=prop.why(walk.states[first]))
            elif kind is Expectation.TRANSITION:
                first = next((k for k in range(1, len(walk.states))
                              if not prop.holds(walk.states[k - 1], walk.events[k - 1], walk.states[k])), None)
                if first is None:
                    entry["status"] = "holds"
                else:
                    entry.update(status="violated", step=first, explanation=prop.why(walk.states[first]))
            elif kind is Expectation.AT_QUIESCENCE:
                holds = bool(prop.holds(walk.state))
                if quiescent:
                    entry["status"] = "holds" if holds else "violated"
                    if not holds:
                        entry.update(step=len(walk.events), explanation=prop.why(walk.state))
                else:
                    entry.update(status="pending", holds_now=holds)
            elif kind is Expectation.SOMETIMES:
                entry["status"] = "here" if prop.holds(walk.state) else "not-here"
            else:  # termination, eventually: properties of whole executions
                entry["status"] = "execution"
                if kind is Expectation.EVENTUALLY:
                    entry["holds_now"] = bool(prop.holds(walk.state))
            shown.append(entry)
        return shown

    # ---- the path as a trace ----------------------------------------------------------------

    def _narrator(self) -> Any:
        said = self._said
        initial = {self.initial: self.initial_lines}

        class Narrator:
            def __call__(self, state: Any, event: Any) -> list[str]:
                return said[(state, event)][1] if (state, event) in said else []

            def initial(self, state: Any) -> list[str]:
                return initial.get(state, [])

        return Narrator()

    def trace_text(self, walk: Walk, violated: dict[str, Any] | None) -> tuple[list[str], list[str]]:
        """The path as the text report's trace lines and as a Mermaid sequence diagram (its
        last note names ``violated``, a property entry of :meth:`properties`, if any)."""
        from nice_attendre.frontend.report import printable, trace_lines
        from nice_attendre.frontend.trace_format import mermaid_lines

        trace = Trace(self.initial, tuple(Step(event, state) for event, state in zip(walk.events, walk.states[1:])))
        for state, event in zip(walk.states, walk.events):  # a cache cleared in between: narrate again
            self.step(state, event)
        narrate = self._narrator()
        shown = _Shown(trace, violated["name"] if violated else "", violated.get("explanation", "") if violated else "")
        text = [printable(line) for line in trace_lines(shown, narrate)]  # type: ignore[arg-type]
        mermaid = mermaid_lines(shown, self.net, narrate)  # type: ignore[arg-type]
        if violated is None:
            mermaid = mermaid[:-1]  # the note naming the violation
        return text, mermaid
