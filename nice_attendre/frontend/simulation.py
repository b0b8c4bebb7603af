"""``--simulate`` and ``--shrink`` in the front end: checking the options, running the walks
of a built network on this process, worker processes or Ray actors, and shrinking the
traces of an exhaustive search."""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Callable

from nice_attendre.errors import InputError
from nice_attendre.partition import FINGERPRINT
from nice_attendre.result import Result


def check_simulation(simulate: bool, *, seed: int | None = None, walks: int | None = None,
                     walk_depth: int | None = None, bias: str | None = None, shortest: bool = False,
                     checkpoint: Any = None, resume: Any = None, fingerprint: bool = False,
                     partition: str = FINGERPRINT, max_states: int | None = None,
                     max_depth: int | None = None) -> None:
    """Fail early (:class:`InputError`, one line naming the options) on options that do not go
    with ``simulate``, or that need it."""
    if not simulate:
        given = [name for name, value in (("--seed", seed), ("--walks", walks), ("--walk-depth", walk_depth),
                                          ("--bias", bias)) if value is not None]
        if given:
            raise InputError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for random walks: "
                             "add --simulate (library: simulate=True)")
        return
    from nice_attendre.frontend.walk_groups import biases_named

    if bias is not None:
        biases_named(bias)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2 ** 63):
        raise InputError(f"seed must be a whole number from 0 to 2**63 - 1, got {seed!r}")
    if walks is not None and (isinstance(walks, bool) or not isinstance(walks, int) or walks < 1):
        raise InputError(f"walks must be a whole number >= 1, got {walks!r}")
    if walk_depth is not None and (isinstance(walk_depth, bool) or not isinstance(walk_depth, int) or walk_depth < 1):
        raise InputError(f"walk_depth must be a whole number >= 1, got {walk_depth!r}")
    refused = [(shortest, "--shortest (walks are not a breadth-first search; their traces are shrunk)"),
               (checkpoint is not None or resume is not None, "--checkpoint/--resume (a seed repeats a simulation)"),
               (fingerprint, "--fingerprint (walks always count states by fingerprint)"),
               (partition != FINGERPRINT, "--partition (walks share no states)"),
               (max_states is not None, "--max-states (walks store no states: use --walks, --max-transitions or "
                                        "--max-seconds)"),
               (max_depth is not None, "--max-depth (use --walk-depth)")]
    for bad, what in refused:
        if bad:
            raise InputError(f"--simulate does not go with {what}")


def random_seed() -> int:
    """A seed for a run not given one (printed in its report, so it can be repeated)."""
    return int.from_bytes(os.urandom(4), "big")


def simulate_run(run: Any, rebuild: Callable[[], Any] | None, *, limits: Any, keep_going: bool, watchdog: Any,
                 progress: Any, workers: int, engine: str, address: str | None, seed: int | None,
                 walks: int | None, walk_depth: int | None, bias: str | None, shrink: bool) -> Result:
    """The random walks of ``run``'s network (:func:`nice_attendre.simulate.simulate`) in this
    process, in ``workers`` worker processes, or on Ray actors that build the model with
    ``rebuild``; the :class:`Result` with ``system`` and ``sources`` set."""
    from nice_attendre.frontend.walk_groups import DEFAULT_BIAS, biases_named, event_group
    from nice_attendre.simulate import WalkOptions, simulate

    options = WalkOptions(seed=random_seed() if seed is None else seed, biases=biases_named(bias or DEFAULT_BIAS),
                          walk_depth=walk_depth, group_of=event_group)
    call_seconds = None if watchdog is None else watchdog.call_seconds
    make: Any = None
    if engine == "ray":
        from nice_attendre.walk_workers import WalkActors

        if rebuild is None:
            raise InputError("walks on Ray need a way to rebuild the model where the actors run")

        def make(stop_at: list[float]) -> Any:
            return WalkActors(rebuild, workers, options, address=address, call_seconds=call_seconds)
    elif workers > 1:
        from nice_attendre.walk_workers import WalkProcesses

        built = (run.network, run.properties, run.metrics)

        def make(stop_at: list[float]) -> Any:
            return WalkProcesses(built, workers, options, call_seconds=call_seconds)
    result = simulate(run.network, run.properties, options=options, limits=limits, walks=walks,
                      keep_going=keep_going, metrics=run.metrics, progress=progress, watchdog=watchdog,
                      cluster=make, engine=engine, shrink=shrink)
    return dataclasses.replace(result, system=run.network, sources=run.sources)


def shrink_result(result: Result, run: Any) -> Result:
    """``result`` with the traces of its violations shrunk (:mod:`nice_attendre.shrink`): what
    ``--shrink`` does to an exhaustive search's traces."""
    from nice_attendre.shrink import shrink_discoveries

    if not any(d.trace is not None and len(d.trace) for d in result.discoveries):
        return result
    discoveries, _signal = shrink_discoveries(run.network, run.properties, result.discoveries)
    return dataclasses.replace(result, discoveries=tuple(discoveries))
