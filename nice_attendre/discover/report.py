"""How discovery is shown: each packet with the branch it takes (file:line), the flows of
the scenario, the solver's time and the fallbacks, in text and in JSON."""
from __future__ import annotations

from typing import Any

from nice_attendre.frontend.coverage import display, ranges


def common_lines(discovery: Any) -> frozenset[tuple[str, int]]:
    """The lines every discovered packet runs."""
    packets = discovery.packets
    if not packets:
        return frozenset()
    common = set(packets[0].lines)
    for found in packets[1:]:
        common &= found.lines
    return frozenset(common)


def branch(discovery: Any, found: Any) -> str:
    """Where ``found``'s path differs from the others': the lines it runs that not every
    discovered packet runs (``file.py:12-13, 20``), or what it shares with all."""
    own = sorted(found.lines - common_lines(discovery))
    if not own:
        own = sorted(found.lines)
        if not own:
            return "no line of the app's files"
        prefix = "the common path "
    else:
        prefix = ""
    by_file: dict[str, list[int]] = {}
    for path, line in own:
        by_file.setdefault(path, []).append(line)
    text = "; ".join(f"{display(path)}:{ranges(lines)}" for path, lines in by_file.items())
    raised = f", raises {found.raised}" if found.raised else ""
    return f"{prefix}{text}{raised}"


def text_lines(discovery: Any) -> list[str]:
    """The text block."""
    out = [f"  discovery: {len(discovery.packets)} packet{'s' if len(discovery.packets) != 1 else ''} "
           f"({discovery.solver_seconds:.1f} s of solver time, {len(discovery.explorations)} app "
           f"state{'s' if len(discovery.explorations) != 1 else ''})"]
    for number, found in enumerate(discovery.packets, start=1):
        out.append(f"    packet {number}: {found.packet.describe()} [app state {found.state}]")
        out.append(f"      takes {branch(discovery, found)}")
    for exploring in discovery.explorations:
        out.append(f"    app state {exploring.state}: {exploring.paths} paths in {exploring.seconds:.1f} s "
                   f"({_stopped(exploring.stopped)})")
    for fallback in discovery.fallbacks:
        out.append(f"    fallback: {fallback}")
    out.append("    flows of the scenario:")
    defaults = len(discovery.default_flows)
    for index, flow in enumerate(discovery.flows):
        origin = "default traffic" if index < defaults else f"packet {index - defaults + 1}"
        out.append(f"      {flow} ({origin})")
    out.extend(f"    ({note})" for note in discovery.notes)
    return out


def _stopped(why: str) -> str:
    return {"exhausted": "every path explored", "paths": "path limit reached",
            "time": "time budget reached"}.get(why, why)


def as_json(discovery: Any) -> dict[str, Any]:
    """The JSON object."""
    return {"packets": [{**found.packet.as_json(), "state": found.state, "raises": found.raised,
                         "branch": branch(discovery, found),
                         "lines": [f"{display(path)}:{line}" for path, line in sorted(found.lines)]}
                        for found in discovery.packets],
            "branches": sorted({branch(discovery, found) for found in discovery.packets}),
            "solver_seconds": round(discovery.solver_seconds, 3),
            "seconds": round(discovery.seconds, 3),
            "states": [{"state": e.state, "paths": e.paths, "seconds": round(e.seconds, 3), "stopped": e.stopped}
                       for e in discovery.explorations],
            "fallbacks": list(discovery.fallbacks),
            "flows": [str(flow) for flow in discovery.flows],
            "default_flows": len(discovery.default_flows),
            "notes": list(discovery.notes)}
