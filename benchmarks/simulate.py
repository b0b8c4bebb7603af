"""Random walks (``--simulate``) in one process against ``--workers N`` and ``--engine ray``.

Each configuration runs a fixed, seeded number of walks (with ``keep_going``, so a
violation does not end the run) in its own process, one after another; the script checks
that every run counts the same walks, transitions and distinct states (a seeded simulation
gives the same result on any number of workers or engine), and prints each run's walk
throughput (transitions per second of walking, worker start-up excluded) and its speed-up
over the one-process run, with the CPU time its processes used (on a loaded machine the
wall-clock speed-up is capped by the cores left free; seq's CPU time against proc2's says
what the workers' machinery costs). The machine's load is printed with each run; ``pair`` runs two
one-process simulations at once, its "speed-up" being their combined throughput against one
alone: the ceiling for two workers at that moment (2.00x on two free cores).

    python benchmarks/simulate.py                           # seq, proc1, proc2, pair
    python benchmarks/simulate.py --runs seq,proc2,ray2 --walks 5000 --json out.json
    python benchmarks/simulate.py --scenario route-flow-linear3-3pkt --repeat 3

``proc1`` is one worker process (the cost of the machinery: chunks, pipes, a forked copy).
This is a benchmark, not a test.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any

#: name -> (app, build options, properties)
SCENARIOS: dict[str, tuple[str, dict[str, Any], list[str] | None]] = {
    "mac-learning-any-3pkt": ("mac-learning", {"topology": "linear:2", "packets": 3, "command_order": "any"},
                              ["no-stale-routes"]),
    "route-flow-linear3-3pkt": ("route-flow", {"topology": "linear:3", "packets": 3}, None),
}
DEFAULT = "mac-learning-any-3pkt"

#: run name -> (workers, engine): "inprocess" walks in the command's process, "processes"
#: in worker processes (also for one), "ray" on Ray actors
RUNS: dict[str, tuple[int, str]] = {
    "seq": (1, "inprocess"), "proc1": (1, "processes"), "proc2": (2, "processes"), "pair": (1, "inprocess"),
    "ray1": (1, "ray"), "ray2": (2, "ray"),
}


def run_one(scenario: str, name: str, walks: int, seed: int) -> dict[str, Any]:
    """Run ``walks`` walks of ``scenario`` with configuration ``name`` in this process."""
    from functools import partial

    from nice_attendre.checker import Limits
    from nice_attendre.frontend.api import build, model
    from nice_attendre.frontend.walk_groups import BIASES, event_group
    from nice_attendre.simulate import WalkOptions, simulate
    from nice_attendre.walk_workers import WalkActors, WalkProcesses

    app, options, properties = SCENARIOS[scenario]
    run = build(app, properties=properties, **options)
    workers, engine = RUNS[name]
    walk_options = WalkOptions(seed=seed, biases=BIASES["swarm"], group_of=event_group)
    make: Any = None
    if engine == "processes":
        built = (run.network, run.properties, run.metrics)
        make = lambda stop_at: WalkProcesses(built, workers, walk_options)  # noqa: E731
    elif engine == "ray":
        rebuild = partial(model, app, properties=properties, **options)
        make = lambda stop_at: WalkActors(rebuild, workers, walk_options)  # noqa: E731
    import resource

    def cpu() -> float:
        return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                     resource.getrusage(resource.RUSAGE_CHILDREN)))

    cpu_before = cpu()
    started = time.perf_counter()
    result = simulate(run.network, run.properties, options=walk_options, limits=Limits(), walks=walks,
                      keep_going=True, metrics=run.metrics, cluster=make, engine=engine, shrink=False)
    wall = time.perf_counter() - started
    cpu_seconds = cpu() - cpu_before  # this process and its worker processes (not Ray's actors)
    coverage = result.simulation
    assert coverage is not None
    return {"scenario": scenario, "run": name, "workers": workers, "engine": engine, "walks": coverage.walks,
            "transitions": coverage.transitions, "distinct_states": coverage.distinct_states,
            "violating_walks": sum(coverage.violating_walks.values()), "wall_seconds": round(wall, 2),
            "walk_seconds": round(result.stats.elapsed, 2),
            "rate": round(result.stats.transitions_per_second, 1),
            "cpu_seconds": None if engine == "ray" else round(cpu_seconds, 2)}


def _measure(scenario: str, name: str, walks: int, seed: int) -> dict[str, Any] | None:
    """Run configuration ``name`` in fresh processes (two at once for ``pair``); its row, or
    None if one failed. ``rate`` is the throughput of all its processes together."""
    load_before = os.getloadavg()[0]
    copies = 2 if name == "pair" else 1
    from nice_attendre.benchmarks.scaling import run_copies

    parts = run_copies([sys.executable, __file__, "--child", scenario, name, str(walks), str(seed)], copies, name)
    if parts is None:
        return None
    row = dict(parts[0], copies=copies, rate=round(sum(p["rate"] for p in parts), 1),
               wall_seconds=max(p["wall_seconds"] for p in parts))
    if all(p["cpu_seconds"] is not None for p in parts):
        row["cpu_seconds"] = round(sum(p["cpu_seconds"] for p in parts), 2)
    row["load_before"], row["load_after"] = load_before, os.getloadavg()[0]
    return row


def cpu_text(row: dict[str, Any]) -> str:
    """A row's CPU seconds (its processes' user and system time, workers included; '-' for Ray,
    whose actors are not this process's children)."""
    return "-" if row.get("cpu_seconds") is None else f"{row['cpu_seconds']:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), default=DEFAULT)
    parser.add_argument("--runs", default="seq,proc1,proc2,pair", help=f"comma-separated, from {', '.join(RUNS)}")
    parser.add_argument("--walks", type=int, default=20_000, help="walks of each run (default 20,000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="write the measurements to this file")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of the runs, one after another")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        scenario, name, walks, seed = args.child
        print(json.dumps(run_one(scenario, name, int(walks), int(seed))))
        return 0
    names = [n.strip() for n in args.runs.split(",") if n.strip()]
    unknown = [n for n in names if n not in RUNS]
    if unknown:
        parser.error(f"unknown run {unknown[0]!r} (known: {', '.join(RUNS)})")
    if args.repeat < 1 or args.walks < 1:
        parser.error("--repeat and --walks must be at least 1")
    print(f"scenario {args.scenario}: {SCENARIOS[args.scenario]}; {args.walks:,} walks, seed {args.seed}; "
          f"{os.cpu_count()} CPUs")
    print(f"{'run':<6} {'engine':<10} {'workers':>7} {'walks':>7} {'transitions':>12} {'states':>9} "
          f"{'walk s':>7} {'wall s':>7} {'cpu s':>7} {'trans/s':>9} {'speed-up':>8}  load before/after")
    rows: list[dict[str, Any]] = []
    for round_index in range(args.repeat):
        base = None
        for name in names:
            row = _measure(args.scenario, name, args.walks, args.seed)
            if row is None:
                return 1
            row["round"] = round_index + 1
            if name == "seq":
                base = row["rate"]
            row["speedup"] = round(row["rate"] / base, 2) if base else None
            rows.append(row)
            speedup = f"{row['speedup']:.2f}x" if row["speedup"] else "-"
            print(f"{name:<6} {row['engine']:<10} {row['workers'] * row['copies']:>7} {row['walks']:>7,} "
                  f"{row['transitions']:>12,} {row['distinct_states']:>9,} {row['walk_seconds']:>7.2f} "
                  f"{row['wall_seconds']:>7.2f} {cpu_text(row):>7} {row['rate']:>9,.0f} {speedup:>8}  "
                  f"{row['load_before']:.2f}/{row['load_after']:.2f}", flush=True)
    if args.repeat > 1:
        print(f"over {args.repeat} rounds (speed-up against the seq of the same round):")
        for name in names:
            speedups = [r["speedup"] for r in rows if r["run"] == name and r["speedup"] is not None]
            if speedups:
                print(f"{name:<6} speed-up median {statistics.median(speedups):.2f}x "
                      f"(lowest {min(speedups):.2f}x, highest {max(speedups):.2f}x)")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=2)
    counts = {(r["walks"], r["transitions"], r["distinct_states"], r["violating_walks"]) for r in rows}
    if len(counts) > 1:
        print("the runs do not agree on the walks, transitions, states or violations", file=sys.stderr)
        return 1
    print("every run: the same walks, transitions, distinct states and violating walks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
