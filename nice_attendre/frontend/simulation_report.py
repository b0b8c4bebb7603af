"""What a simulation's report says in place of a search's counts: its coverage (TLC's
simulation report: walks, transitions, distinct states, the deepest walk, events per kind,
walks per bias, the properties exercised)."""
from __future__ import annotations

from typing import Any

from nice_attendre.frontend.report import _row, stop_text
from nice_attendre.result import Result

#: How a walk ended, in words (see :data:`nice_attendre.simulate.ENDS`).
ENDED = {"quiescent": "at quiescence", "cycle": "at a repeated state", "depth": "at the depth bound",
         "violation": "at a violation", "stopped": "cut short"}


def walks_phrase(result: Result) -> str:
    """``1,000 walks`` (``+ 1 cut short``)."""
    coverage: Any = result.simulation
    partial = f" (+ {coverage.partial_walks:,} cut short)" if coverage.partial_walks else ""
    return f"{coverage.walks:,} walk{'' if coverage.walks == 1 else 's'}{partial}"


def coverage_lines(result: Result) -> list[str]:
    """The counts block of a simulation's report."""
    coverage: Any = result.simulation
    stats = result.stats
    ends = ", ".join(f"{ENDED.get(end, end)} {count:,}" for end, count in coverage.ends.items())
    states_note = ("distinct, by fingerprint; the bounded set filled up: a lower bound" if coverage.saturated
                   else "distinct, by fingerprint")
    lines = [
        _row("walks", f"{coverage.walks:,}", ends),
        _row("transitions", f"{stats.transitions:,}"),
        _row("states", f"{coverage.distinct_states:,}", states_note),
        _row("deepest walk", f"{coverage.deepest:,}", "events"),
        _row("time", f"{stats.elapsed:.2f}", f"{stats.transitions_per_second:,.0f} transitions/s", unit="s"),
        _row("search", "INCOMPLETE", f"random walks, not a proof; {stop_text(result)}"),
    ]
    if coverage.partial_walks:
        lines.insert(1, _row("cut short", f"{coverage.partial_walks:,}", "walks a limit or signal ended"))
    for label, counts in (("events", coverage.kinds), ("walks by bias", coverage.biases)):
        if len(counts) > (1 if label != "events" else 0):
            lines.extend(_row(label if i == 0 else "", f"{count:,}", unit=name)
                         for i, (name, count) in enumerate(counts.items()))
    lines.append(f"  {'properties':<14} checked: {', '.join(coverage.checked) or 'none'}")
    if coverage.not_checked:
        lines.append(f"  {'':<14} not checked by walks: {', '.join(coverage.not_checked)}")
    if coverage.sometimes_seen or coverage.sometimes_unseen:
        lines.append(f"  {'':<14} sometimes: seen {', '.join(coverage.sometimes_seen) or 'none'}; "
                     f"not seen {', '.join(coverage.sometimes_unseen) or 'none'}")
    if coverage.violating_walks:
        lines.append(f"  {'violations':<14} " + ", ".join(
            f"{name} in {count:,} walk{'' if count == 1 else 's'} (first: walk {coverage.violating_walk[name]:,})"
            for name, count in coverage.violating_walks.items()))
    for name, (low, high) in sorted(result.metrics.items()):
        lines.append(_row(name, f"{low:,} .. {high:,}", "min .. max per complete execution"))
    return lines
