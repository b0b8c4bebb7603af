"""Turning results into text and JSON. Domain-free: a model contributes a ``narrate``
function that says what an event did, and a header of (label, value) pairs.
"""
from __future__ import annotations

import sys
from typing import Any, Callable, Iterable, Sequence, TextIO

from nice_attendre.checker import Progress
from nice_attendre.result import Discovery, Result
from nice_attendre.trace import Trace

Narrate = Callable[[Any, Any], list[str]]  # (state before, event) -> lines, the first one the summary


class CheckedNarrator:
    """A :data:`Narrate` for the traces of a result, narrated once each and checked.

    ``step_with_notes(state, event) -> (next state, lines)`` is the model's narration. On
    creation every trace of ``result`` is replayed once (see
    :func:`nice_attendre.trace.narrate_trace`: a replay that leaves the recorded path raises
    :class:`~nice_attendre.errors.NondeterminismError`); calls then serve the recorded lines, so
    the text and JSON reports never run an app handler again.

    Ctrl-C (or SIGTERM, SIGHUP: a ``KeyboardInterrupt``) while the traces are replayed stops
    the narration, not the report: what was narrated so far is kept, the other steps are
    shown by their events alone, and ``interrupted`` is the signal's number (SIGINT for a
    plain ``KeyboardInterrupt``; None when the narration was complete). The violations found
    are never lost to a signal that came after the search.
    """

    def __init__(self, result: Result, step_with_notes: Callable[[Any, Any], tuple[Any, list[str]]],
                 initial_with_notes: Callable[[], tuple[Any, list[str]]] | None = None) -> None:
        import signal

        from nice_attendre.trace import narrate_trace

        self._said: dict[tuple[Any, Any], list[str]] = {}
        self._initial: dict[Any, list[str]] = {}
        self.interrupted: int | None = None
        try:
            for discovery in result.discoveries:
                if discovery.trace is not None:
                    narrate_trace(discovery.trace, step_with_notes, self._said)
            if initial_with_notes is not None and any(d.trace is not None for d in result.discoveries):
                state, lines = initial_with_notes()
                self._initial[state] = lines
        except KeyboardInterrupt as exc:
            signum = getattr(exc, "signum", None)
            self.interrupted = signum if signum is not None else signal.SIGINT

    @property
    def note(self) -> str | None:
        """The report's line saying the narration was cut short (None when it was not)."""
        if self.interrupted is None:
            return None
        return (f"(narration interrupted by {signal_name(self.interrupted)}: later steps show their events "
                "only)")

    def __call__(self, state: Any, event: Any) -> list[str]:
        return self._said.get((state, event), [])

    def initial(self, state: Any) -> list[str]:
        """What happened while the initial state ``state`` was built (the model's
        ``initial_with_notes``: e.g. switches joining and the commands the app sent then);
        empty when not known."""
        return self._initial.get(state, [])

STOP_REASONS = {
    "violation": "stopped at the first violation",
    "max-transitions": "stopped by --max-transitions",
    "max-states": "stopped by --max-states",
    "max-depth": "states beyond --max-depth not expanded",
    "max-seconds": "stopped by --max-seconds",
    "max-memory": "stopped by --max-memory",
    "out-of-memory": "out of memory",
    "interrupted": "interrupted by Ctrl-C",
    "worker-lost": "a worker was lost",
    "walks": "ran the walks asked for",
    "unsupported-feature": "stopped at a feature the model does not have",
}


def printable(text: str) -> str:
    """``text`` with control and other unprintable characters escaped (``\\n``, ``\\x1b``):
    text from user code (an exception's message, an app's description) cannot forge report
    lines or send escape sequences to the terminal."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def signal_name(signum: int | None) -> str:
    """``Ctrl-C`` for SIGINT (or no signal), else the signal's name (``SIGTERM``)."""
    import signal

    if signum is None or signum == signal.SIGINT:
        return "Ctrl-C"
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def stop_text(result: Result) -> str:
    """Why the search stopped, in words."""
    reason = result.stop_reason or ""
    if reason == "interrupted":
        return f"interrupted by {signal_name(result.signal)}"
    text = STOP_REASONS.get(reason, reason)
    return f"{text}: {printable(result.stop_detail)}" if result.stop_detail else text


#: The built-in property an app handler that is not a function of its input violates
#: (models/determinism.py): its discovery makes the verdict ``nondeterministic``.
NONDETERMINISM = "app-nondeterminism"


def verdict_of(result: Result) -> str:
    """The verdict a report gives ``result``: ``nondeterministic`` when an app handler was
    found not to be a function of its input (the other verdicts of such an app depend on
    luck; exit code 4, whatever else was found), else :attr:`Result.verdict`."""
    if any(d.property == NONDETERMINISM for d in result.discoveries):
        return "nondeterministic"
    return result.verdict


def exit_verdict(result: Result) -> str:
    """The verdict the exit code follows: :func:`verdict_of`, but ``unsupported`` (exit 2,
    bad input, as a refusal when the app is loaded) for a search that stopped at a feature
    the model does not have without finding a violation (a violation found keeps 1)."""
    verdict = verdict_of(result)
    return "unsupported" if verdict == "incomplete" and result.stop_reason == "unsupported-feature" else verdict


def verdict_line(result: Result) -> str:
    """The last line of a report: ``OK``, ``FAILED: ...``, ``NONDETERMINISTIC: ...``,
    ``INCOMPLETE: ...`` or ``INTERRUPTED: ...``. Only a complete search without violation
    says OK."""
    verdict = verdict_of(result)
    if verdict == "nondeterministic":
        others = [name for name in dict.fromkeys(d.property for d in result.discoveries) if name != NONDETERMINISM]
        return (f"NONDETERMINISTIC: an app handler is not a function of its input ({NONDETERMINISM}), so what the "
                "search finds depends on the run" + (f"; also violated: {', '.join(others)}" if others else ""))
    unsupported = result.stop_reason == "unsupported-feature"
    if verdict == "violated":
        failed = "FAILED: " + ", ".join(dict.fromkeys(d.property for d in result.discoveries))
        return f"{failed}; then {stop_text(result)}" if unsupported else failed
    if unsupported and verdict == "incomplete":
        if result.simulation is not None:
            from nice_attendre.frontend.simulation_report import walks_phrase

            return f"INCOMPLETE: no violation in {walks_phrase(result)}, but the walks {stop_text(result)}"
        return f"INCOMPLETE: no violation in the part explored, but the search {stop_text(result)}"
    if verdict == "ok":
        if result.unchecked:
            return f"OK: no property violated (not checked: {', '.join(name for name, _why in result.unchecked)})"
        return "OK: no property violated"
    word = "INTERRUPTED" if verdict == "interrupted" else "INCOMPLETE"
    if result.simulation is not None:  # random walks: never a proof
        from nice_attendre.frontend.simulation_report import walks_phrase

        return f"{word}: no violation in {walks_phrase(result)} (not a proof; {stop_text(result)})"
    return f"{word}: no violation in the part explored, but the search was not complete ({stop_text(result)})"


#: Width of the label column of the header and the counts; values start after it.
LABEL_WIDTH = 14
#: Width of the value column of the counts (numbers end at the same column).
VALUE_WIDTH = 12


def _row(label: str, value: str, note: str = "", unit: str = "") -> str:
    """One counts line: label, right-aligned value, its unit, an optional note in parentheses."""
    line = f"  {label:<{LABEL_WIDTH}} {value:>{VALUE_WIDTH}}" + (f" {unit}" if unit else "")
    return f"{line}  ({note})" if note else line


def table_lines(header: Sequence[str], rows: Sequence[Sequence[str]], *, left: int = 0,
                rule: bool = True) -> list[str]:
    """A text table: columns two spaces apart, each as wide as its widest cell; the first
    ``left`` columns aligned left, the others right; a rule of dashes under the header."""
    widths = [max([len(title), *(len(row[i]) for row in rows)]) for i, title in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(cell.ljust(width) if i < left else cell.rjust(width)
                         for i, (cell, width) in enumerate(zip(cells, widths)))

    lines = [line(header)]
    if rule:
        lines.append("  ".join("-" * width for width in widths))
    lines.extend(line(row) for row in rows)
    return lines


def stats_lines(result: Result) -> list[str]:
    """The counts as aligned lines: numbers, and the words complete/INCOMPLETE, end in one column
    (a simulation's: its coverage, :func:`nice_attendre.frontend.simulation_report.coverage_lines`)."""
    if result.simulation is not None:
        from nice_attendre.frontend.simulation_report import coverage_lines

        return coverage_lines(result)
    stats = result.stats
    lines = [
        _row("transitions", f"{stats.transitions:,}"),
        _row("unique states", f"{stats.unique_states:,}"),
        _row("revisits", f"{stats.revisits:,}"),
        _row("max depth", f"{stats.max_depth:,}"),
        _row("time", f"{stats.elapsed:.2f}", f"{stats.transitions_per_second:,.0f} transitions/s", unit="s"),
    ]
    if result.complete:
        lines.append(_row("search", "complete"))
    else:
        lines.append(_row("search", "INCOMPLETE", stop_text(result)))
    for name, why in result.unchecked:
        lines.append(_row("not checked", name, why))
    for name, (low, high) in sorted(result.metrics.items()):
        lines.append(_row(name, f"{low:,} .. {high:,}", "min .. max per complete execution"))
    if result.collision_probability is not None:
        lines.append(_row("collision", f"{result.collision_probability:.1e}",
                          "probability that a fingerprint collision hid a state"))
    if result.balance is not None and len(result.balance.busy) > 1:
        balance = result.balance
        lines.append(_row("balance", f"{balance.efficiency:.0%}",
                          f"shards busy {' + '.join(f'{busy:.3g}' for busy in balance.busy)} s of CPU; "
                          f"the busiest in each level's steps, {balance.busiest:.3g} s in all, against "
                          f"{balance.even:.3g} s if even"))
    return lines


def initial_lines(trace: Trace, narrate: Narrate | None) -> list[str]:
    """Step 0 of a trace: what happened while its initial state was built (``narrate``'s
    ``initial``, if it has one; see :meth:`CheckedNarrator.initial`), with a first line
    saying so; empty when nothing is known."""
    said = getattr(narrate, "initial", None)
    lines = said(trace.initial) if callable(said) else []
    return ["initial state:", *lines] if lines else []


def cycle_marks(trace: Trace) -> tuple[str, str] | None:
    """For a lasso (see :attr:`Trace.cycle_start`), the lines printed before its cycle's first
    step and after its last one; None for a trace that ends."""
    start = trace.cycle_start
    if start is None:
        return None
    last = len(trace.steps)
    steps = f"step {last}" if start + 1 == last else f"steps {start + 1}-{last}"
    where = "the initial state" if start == 0 else f"the state after step {start}"
    return (f"-- the cycle: {steps} lead back here and repeat for ever --",
            f"-- back to {where}: the cycle repeats for ever --")


def trace_lines(discovery: Discovery, narrate: Narrate | None) -> list[str]:
    """The numbered events of a discovery's trace, each with what it did; a lasso's cycle
    between two marks (:func:`cycle_marks`)."""
    trace = discovery.trace
    if trace is None:
        return []
    lines = []
    state = trace.initial
    width = len(str(len(trace.steps)))
    marks = cycle_marks(trace)
    start = initial_lines(trace, narrate)
    if start:
        lines.append(f"  {0:>{width}}. {start[0]}")
        lines.extend(f"  {'':>{width}}  {line}" for line in start[1:])
    for number, step in enumerate(trace.steps, start=1):
        if marks is not None and number == trace.cycle_start + 1:  # type: ignore[operator]
            lines.append(f"  {'':>{width}}  {marks[0]}")
        said = narrate(state, step.event) if narrate is not None else []
        said = said or [str(step.event)]
        lines.append(f"  {number:>{width}}. {said[0]}")
        lines.extend(f"  {'':>{width}}  {line}" for line in said[1:])
        state = step.state
    if marks is not None:
        lines.append(f"  {'':>{width}}  {marks[1]}")
    return lines


def discovery_lines(index: int, discovery: Discovery, narrate: Narrate | None) -> list[str]:
    """A violation: its property, why, and the trace that leads there."""
    kind = discovery.expectation.value.replace("_", " ")
    lines = [f"VIOLATION {index}: {discovery.property} ({kind})"]
    if discovery.reason:
        lines.append(f"  {discovery.reason}")
    if discovery.trace is not None:
        shrunk = (f"; shrunk from {discovery.unshrunk_length}" if discovery.unshrunk_length is not None
                  and discovery.unshrunk_length != len(discovery.trace) else
                  "; found so, no shorter one by shrinking" if discovery.unshrunk_length is not None else "")
        kind = "lasso: a path, then a cycle that repeats for ever; " if discovery.trace.is_lasso else ""
        lines.append(f"  trace ({kind}{len(discovery.trace)} events{shrunk}):")
        lines.extend(trace_lines(discovery, narrate))
    return lines


def violation_groups(discoveries: Sequence[Discovery]) -> list[tuple[Discovery, int]]:
    """The discoveries grouped by property, in the order each property was first violated:
    (the group's shortest trace, the first found among equals; its number of violations).
    With ``--keep-going`` one property is often violated many times in near-identical ways."""
    groups: dict[str, list[Discovery]] = {}
    for discovery in discoveries:
        groups.setdefault(discovery.property, []).append(discovery)
    return [(min(found, key=lambda d: len(d.trace) if d.trace is not None else 0), len(found))
            for found in groups.values()]


def group_lines(index: int, discovery: Discovery, count: int, narrate: Narrate | None) -> list[str]:
    """:func:`discovery_lines` for a property violated ``count`` times: the count, then
    the shortest trace found."""
    lines = discovery_lines(index, discovery, narrate)
    if count > 1:
        lines[0] += f": {count:,} violations; first (shortest found) trace below"
    return lines


def text_report(result: Result, header: Iterable[tuple[str, str]], narrate: Narrate | None) -> str:
    """The whole report of one verification, as printed by ``nice-attendre verify``. Every
    line is :func:`printable`: text from user code cannot add lines of its own. A property
    violated several times (``--keep-going``) is reported once, with the count and the
    shortest trace found (see :func:`violation_groups`)."""
    lines = [f"  {label:<{LABEL_WIDTH}} {value}" for label, value in header]
    lines.append("")
    lines.extend(stats_lines(result))
    lines.append("")
    if result.packets_discovered is not None:
        lines.extend([*result.packets_discovered.text_lines(), ""])
    if result.coverage is not None:
        lines.extend([*result.coverage.text_lines(), ""])
    for index, (discovery, count) in enumerate(violation_groups(result.discoveries), start=1):
        lines.extend(group_lines(index, discovery, count, narrate))
        lines.append("")
    note = getattr(narrate, "note", None)
    if isinstance(note, str):
        lines.extend([note, ""])
    lines.append(verdict_line(result))
    return "\n".join(printable(line) for line in lines)


def trace_json(discovery: Discovery, narrate: Narrate | None) -> list[dict[str, Any]]:
    """A discovery's trace as a list of {step, event, effects}."""
    trace = discovery.trace
    if trace is None:
        return []
    steps = []
    state = trace.initial
    for number, step in enumerate(trace.steps, start=1):
        said = narrate(state, step.event) if narrate is not None else []
        steps.append({"step": number, "event": str(step.event), "effects": said})
        state = step.state
    return steps


#: Violations whose traces the JSON report narrates (each step's effects), at most, besides the
#: shortest of each property (the one the text report shows): narrating means running every step
#: again, and a --keep-going run may find tens of thousands of violations (33,083 on a triangle
#: with 3 packets took more than 45 s and 4.8 GB to narrate, after a search of 20 s).
NARRATED_VIOLATIONS = 100


def json_report(result: Result, header: dict[str, Any], narrate: Narrate | None) -> dict[str, Any]:
    """The report as a JSON-ready dict: the header fields, the counts, completeness, violations.

    ``violations`` lists every violation found, with its trace (all of them with
    ``--keep-going``), ``initial``, the lines of step 0 (what the app did when the
    switches joined; empty when it did nothing), and ``cycle_start``: for a lasso (an
    execution that never ends), the step after which its cycle starts (the last step leads
    back to the state after it; 0: the initial state), else null. ``not_checked`` lists the
    properties the search was given but could not check, each with why (see
    :attr:`Result.unchecked`). ``violations_by_property`` groups them: per property, in the order
    first violated, ``count`` violations and ``shortest``, the index in ``violations`` of the
    shortest trace found (the one the text report shows). ``narration`` is present when the
    narration of the traces was interrupted (see :class:`CheckedNarrator`): the steps not
    narrated have no effects. ``coverage`` is present with ``--coverage`` (see
    :meth:`nice_attendre.frontend.coverage.AppCoverage.as_json`). The traces of the first
    :data:`NARRATED_VIOLATIONS` violations and of the shortest of each property are narrated
    (``"narrated": true``); the others list their events with no effects (``false``).
    """
    stats = result.stats
    cut = getattr(narrate, "interrupted", None)
    groups = violation_groups(result.discoveries)
    shortest = [next(i for i, d in enumerate(result.discoveries) if d is shown) for shown, _count in groups]
    told = set(range(min(NARRATED_VIOLATIONS, len(result.discoveries)))) | set(shortest)
    return {
        **header,
        "transitions": stats.transitions,
        "unique_states": stats.unique_states,
        "revisits": stats.revisits,
        "max_depth": stats.max_depth,
        "elapsed_seconds": round(stats.elapsed, 6),
        "transitions_per_second": round(stats.transitions_per_second, 1),
        "complete": result.complete,
        "stop_reason": result.stop_reason,
        "stop_detail": result.stop_detail,
        "verdict": verdict_of(result),
        "signal": signal_name(result.signal) if result.stop_reason == "interrupted" else None,
        "ok": result.ok,
        "metrics": {name: {"min": low, "max": high} for name, (low, high) in sorted(result.metrics.items())},
        "collision_probability": result.collision_probability,
        "partition": result.partition,
        "balance": None if result.balance is None else {
            "shard_seconds": [round(busy, 6) for busy in result.balance.busy],
            "busiest_seconds": round(result.balance.busiest, 6),
            "efficiency": round(result.balance.efficiency, 4)},
        "violations": [
            {"property": d.property, "expectation": d.expectation.value, "reason": d.reason,
             "initial": initial_lines(d.trace, narrate)[1:] if d.trace is not None else [],
             "trace": trace_json(d, narrate if index in told else None), "narrated": index in told,
             "unshrunk_length": d.unshrunk_length,
             "cycle_start": d.trace.cycle_start if d.trace is not None else None}
            for index, d in enumerate(result.discoveries)
        ],
        "not_checked": [{"property": name, "why": why} for name, why in result.unchecked],
        "violations_by_property": [
            {"property": shown.property, "count": count, "shortest": at}
            for (shown, count), at in zip(groups, shortest)
        ],
        **({"narration": f"interrupted by {signal_name(cut)}"} if isinstance(cut, int) else {}),
        **({"discovery": result.packets_discovered.as_json()} if result.packets_discovered is not None else {}),
        **({"coverage": result.coverage.as_json()} if result.coverage is not None else {}),
        **({"simulation": result.simulation.as_json()} if result.simulation is not None else {}),
    }


class ProgressLine:
    """Live progress on a terminal: one line rewritten in place (use as the progress callback)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.shown = False

    def __call__(self, progress: Progress) -> None:
        self.stream.write(f"\r  {progress.transitions:>12,} transitions  {progress.unique_states:>11,} states"
                          f"  depth {progress.depth:>4}  {progress.rate:>10,.0f} transitions/s ")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        """Erase the progress line (before printing the report)."""
        if self.shown:
            self.stream.write("\r" + " " * 100 + "\r")
            self.stream.flush()
            self.shown = False
