"""Side-by-side verification of one app under several protocol variants (front end)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Sequence

from nice_attendre.errors import InputError, Interrupted
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
    #: with ``por``: the same verification reduced by partial-order reduction
    reduced: Result | None = None

    @property
    def transitions(self) -> int:
        return self.result.stats.transitions


def compare(app: Any, protocols: Sequence[str], *, load: bool = False, por: bool = False,
            **options: Any) -> list[Row]:
    """Verify ``app`` under each of ``protocols`` (names, maybe with parameters:
    ``"pif:action=drop"``) with the same scenario ``options``
    (the keywords of :func:`nice_attendre.frontend.api.verify`). With ``load``, each protocol is
    explored a second time with control-plane counters in the state (see :data:`LOAD_NOTE`);
    the counts of the first exploration are unaffected. With ``por``, each protocol is also
    verified with partial-order reduction (``Row.reduced``), first: what it does not support
    is refused (:class:`InputError`) before anything is explored.

    Ctrl-C (or SIGTERM/SIGHUP on the command line) during a verification ends the
    comparison: that protocol's row, with its partial result, is the last one returned and
    is marked ``interrupted``. An interruption before anything was explored re-raises it.
    """
    from nice_attendre.frontend.api import not_started, verify
    from nice_attendre.models.protocols import resolve

    if not protocols:
        raise InputError("compare needs at least one protocol")
    for name in protocols:
        resolve(name)  # unknown names and bad parameters fail before any run
    if por:
        from nice_attendre.models.footprints import SUPPORTED_PROTOCOLS

        for name in protocols:
            if resolve(name).name not in SUPPORTED_PROTOCOLS:
                raise InputError(f"--por does not support protocol {name} yet "
                                 f"(supported: {', '.join(SUPPORTED_PROTOCOLS)}; use --protocols)")
    rows: list[Row] = []
    for name in protocols:
        reduced = None
        try:
            if por:
                reduced = verify(app, protocol=name, por=True, **options)
            result = verify(app, protocol=name, **options)
        except Interrupted as stop:
            if stop.result is None and not rows:
                raise
            partial = stop.result if stop.result is not None else not_started("interrupted", stop.signum, 0.0)
            if partial.system is None and rows:
                partial = dataclasses.replace(partial, system=rows[0].result.system)
            rows.append(Row(name, partial, {}, not load, interrupted=True, reduced=reduced))
            break
        measured: dict[str, tuple[int, int]] = {}
        complete = True
        if load:
            try:
                counted = verify(app, protocol=name, count_load=True, **options)
            except Interrupted as stop:
                if stop.result is not None:
                    measured, complete = dict(stop.result.metrics), False
                rows.append(Row(name, result, measured, False, interrupted=True, reduced=reduced))
                break
            measured = dict(counted.metrics)
            complete = counted.complete
        rows.append(Row(name, result, measured, complete, reduced=reduced))
    return rows


def ratio(base: int, other: int) -> float | None:
    """``base / other`` (how many times fewer transitions ``other`` needs), None if undefined."""
    return base / other if other else None
