"""Side-by-side verification of one app under several protocol variants (front end)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from nice_attendre.errors import InputError
from nice_attendre.result import Result

LOAD_NOTE = ("control-plane load: messages per complete execution (min..max over every quiescent "
             "state), counted in a separate exploration with counters in the state; packet-ins and "
             "barrier replies are counted when a switch sends them, flow-mods (a flow-mod/packet-out "
             "is one flow-mod), packet-outs and barrier requests when the controller sends them")


@dataclass(frozen=True)
class Row:
    """One protocol's verification; ``load`` maps a counter to (min, max) when measured;
    ``interrupted``: Ctrl-C stopped this protocol's verification or its load exploration."""

    protocol: str
    result: Result
    load: dict[str, tuple[int, int]] = field(default_factory=dict)
    load_complete: bool = True
    interrupted: bool = False

    @property
    def transitions(self) -> int:
        return self.result.stats.transitions


def compare(app: Any, protocols: Sequence[str], *, load: bool = False, **options: Any) -> list[Row]:
    """Verify ``app`` under each of ``protocols`` with the same scenario ``options``
    (the keywords of :func:`nice_attendre.api.verify`). With ``load``, each protocol is
    explored a second time with control-plane counters in the state (see :data:`LOAD_NOTE`);
    the counts of the first exploration are unaffected. A run interrupted by Ctrl-C ends the
    comparison: its row is the last one returned.
    """
    from nice_attendre.api import verify
    from nice_attendre.models.protocols import protocol_class

    if not protocols:
        raise InputError("compare needs at least one protocol")
    for name in protocols:
        protocol_class(name)
    rows = []
    for name in protocols:
        result = verify(app, protocol=name, **options)
        if result.stop_reason == "interrupted":
            rows.append(Row(name, result, {}, not load, interrupted=True))
            break
        measured: dict[str, tuple[int, int]] = {}
        complete = True
        if load:
            counted = verify(app, protocol=name, count_load=True, **options)
            measured = dict(counted.metrics)
            complete = counted.complete
            if counted.stop_reason == "interrupted":
                rows.append(Row(name, result, measured, complete, interrupted=True))
                break
        rows.append(Row(name, result, measured, complete))
    return rows


def ratio(base: int, other: int) -> float | None:
    """``base / other`` (how many times fewer transitions ``other`` needs), None if undefined."""
    return base / other if other else None
