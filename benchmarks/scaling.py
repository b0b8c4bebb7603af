"""Sequential search against ``--workers N`` and ``--engine ray`` on one scenario, in one run.

Each configuration runs in its own process, one after another, on the same scenario; the
script checks that every run gives the same transitions, unique states and revisits, and
prints the wall-clock time of each (from the start of the search call, process and actor
start-up included), its speed-up over the sequential search and, for several shards, their
balance (:class:`nice_attendre.result.Balance`: an even split of the shards' CPU time against
the sum of each level's busiest shard). The machine's load is
printed with each run: on a machine shared with other work, speed-ups are only as good as
the cores that were free. The ``pair`` run measures that: two sequential searches at once,
its "speed-up" being their throughput against one search alone (2.00x on two free cores),
the ceiling for any two-worker run at that moment.

    python benchmarks/scaling.py                       # sequential, processes 1 and 2, ray 1 and 2
    python benchmarks/scaling.py --runs seq,proc2 --json out.json
    python benchmarks/scaling.py --runs seq,proc2,proc2p --partition app   # states owned by a part
    python benchmarks/scaling.py --scenario attendre-linear7-5pkt --runs seq,seqf,proc2 --repeat 3

``proc2p`` is ``proc2`` with the states owned by the part ``--partition`` names
(:mod:`nice_attendre.partition`) instead of by fingerprint. ``seqf`` is the sequential search
storing fingerprints (``--fingerprint``), as the shards do: the partitioned engine's speed-up
against it is the part of the speed-up that is not the cheaper storage.

On a machine shared with other work the same run may take a third longer from one minute to
the next. ``--repeat N`` makes N rounds of the runs, one after another (seq, proc2, seq, proc2,
...: a slow spell hits every configuration), gives each run its speed-up against the ``seq``
of its own round, and ends with each configuration's median wall time and its median, lowest
and highest speed-up over the rounds.

This is a benchmark, not a test.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

#: name -> (app, topology, packets, protocol)
SCENARIOS: dict[str, tuple[str, str, int, str]] = {
    "mac-learning-linear2-4pkt": ("mac-learning", "linear:2", 4, "openflow"),  # 6.7M transitions
    "openflow-linear5-2pkt": ("route-flow", "linear:5", 2, "openflow"),  # 2.4M transitions
    "openflow-b-linear4-3pkt": ("route-flow", "linear:4", 3, "openflow-b"),  # 1.0M transitions
    "attendre-linear7-5pkt": ("route-flow", "linear:7", 5, "attendre"),  # 8.4M transitions
    "openflow-b-linear7-2pkt": ("route-flow", "linear:7", 2, "openflow-b"),  # 21M transitions
}
DEFAULT = "mac-learning-linear2-4pkt"

#: run name -> (workers, engine); workers 1 on "processes" is the sequential depth-first search
RUNS: dict[str, tuple[int, str]] = {
    "seq": (1, "processes"), "seqf": (1, "processes"), "pair": (2, "independent"), "proc1": (1, "partitioned"),
    "proc2": (2, "processes"), "proc2p": (2, "processes"), "ray1": (1, "ray"), "ray2": (2, "ray"),
}



def run_copies(command: list[str], copies: int, name: str) -> list[dict[str, Any]] | None:
    """Run ``command`` ``copies`` times at once, each printing one JSON object: the objects,
    or None (the failure printed, under the run's ``name``) if a copy failed."""
    children = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(copies)]
    outputs = [child.communicate() + (child.returncode,) for child in children]
    for _stdout, stderr, code in outputs:
        if code != 0:
            print(f"{name:<6} FAILED (exit code {code}):\n{stderr.strip()}", file=sys.stderr)
            return None
    return [json.loads(stdout) for stdout, _stderr, _code in outputs]

def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run_one(scenario: str, name: str, partition: str = "fingerprint") -> dict:
    """Run ``scenario`` with configuration ``name`` in this process and time it (``proc2p``:
    the states owned by ``partition``)."""
    from functools import partial

    from nice_attendre.frontend.api import build, model, search
    from nice_attendre.checker import Limits

    app, topology, packets, protocol = SCENARIOS[scenario]
    options = dict(topology=topology, packets=packets, protocol=protocol)
    workers, engine = RUNS[name]
    run = build(app, **options)
    cpu = _cpu_seconds()
    started = time.perf_counter()
    if engine == "partitioned":  # one shard in one worker process: the partitioned engine's own cost
        from nice_attendre.parallel import ProcessCluster, search as partitioned

        built = (run.network, run.properties, run.metrics)
        result = partitioned(ProcessCluster(lambda: built, 1), run.network, run.properties)
    else:
        result = search(run, partial(model, app, **options), limits=Limits(), workers=workers, engine=engine,
                        fingerprint=name == "seqf",
                        partition=partition if name == "proc2p" else "fingerprint")
    wall = time.perf_counter() - started
    stats = result.stats
    return {"scenario": scenario, "run": name, "workers": workers, "engine": engine,
            "transitions": stats.transitions, "unique_states": stats.unique_states, "revisits": stats.revisits,
            "max_depth": stats.max_depth, "complete": result.complete, "ok": result.ok,
            "partition": result.partition, "fingerprints": result.collision_probability is not None,
            "balance": None if result.balance is None else round(result.balance.efficiency, 3),
            "wall_seconds": round(wall, 2), "search_seconds": round(stats.elapsed, 2),
            "cpu_seconds": round(_cpu_seconds() - cpu, 2)}


def _measure(scenario: str, name: str, partition: str) -> dict | None:
    """Run configuration ``name`` in fresh processes (two at once for ``pair``); its row,
    without the speed-up (``copies``: how many searches ran at once), or None if one failed."""
    load_before = os.getloadavg()[0]
    copies = 2 if name == "pair" else 1
    parts = run_copies([sys.executable, __file__, "--child", scenario, "seq" if name == "pair" else name,
                        partition], copies, name)
    if parts is None:
        return None
    row = dict(parts[0], run=name, workers=RUNS[name][0], engine=RUNS[name][1], copies=copies,
               wall_seconds=max(p["wall_seconds"] for p in parts),
               cpu_seconds=round(sum(p["cpu_seconds"] for p in parts), 2))
    row["load_before"], row["load_after"] = load_before, os.getloadavg()[0]
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), default=DEFAULT)
    parser.add_argument("--runs", default="seq,seqf,pair,proc1,proc2,proc2p,ray1,ray2",
                        help=f"comma-separated, from {', '.join(RUNS)}")
    parser.add_argument("--json", help="write the measurements to this file")
    parser.add_argument("--partition", default="app", help="the part that owns the states in the proc2p run")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of the runs, one after another")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(run_one(*args.child)))
        return 0
    names = [n.strip() for n in args.runs.split(",") if n.strip()]
    unknown = [n for n in names if n not in RUNS]
    if unknown:
        parser.error(f"unknown run {unknown[0]!r} (known: {', '.join(RUNS)})")
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    print(f"scenario {args.scenario}: {' '.join(map(str, SCENARIOS[args.scenario]))}; "
          f"{os.cpu_count()} CPUs")
    print(f"{'run':<6} {'engine':<12} {'workers':>7} {'transitions':>12} {'states':>10} {'revisits':>10} "
          f"{'depth':>5} {'wall s':>7} {'cpu s':>7} {'speed-up':>8} {'balance':>7}  load before/after")
    rows = []
    for round_index in range(args.repeat):
        base = None
        for name in names:
            row = _measure(args.scenario, name, args.partition)
            if row is None:
                return 1
            row["round"] = round_index + 1
            if name == "seq":
                base = row["wall_seconds"]
            row["speedup"] = round(row.pop("copies") * base / row["wall_seconds"], 2) if base else None
            rows.append(row)
            speedup = f"{row['speedup']:.2f}x" if row["speedup"] else "-"
            balance = f"{row['balance']:.0%}" if row.get("balance") is not None and row["workers"] > 1 else "-"
            print(f"{name:<6} {row['engine']:<12} {row['workers']:>7} {row['transitions']:>12,} "
                  f"{row['unique_states']:>10,} {row['revisits']:>10,} {row['max_depth']:>5} "
                  f"{row['wall_seconds']:>7.1f} {row['cpu_seconds']:>7.1f} {speedup:>8} {balance:>7}  "
                  f"{row['load_before']:.2f}/{row['load_after']:.2f}", flush=True)
    if args.repeat > 1:
        print(f"over {args.repeat} rounds (speed-up against the seq of the same round):")
        for name in names:
            mine = [r for r in rows if r["run"] == name]
            walls = [r["wall_seconds"] for r in mine]
            speedups = [r["speedup"] for r in mine if r["speedup"] is not None]
            line = f"{name:<6} median wall {statistics.median(walls):7.1f} s"
            if speedups:
                line += (f"   speed-up median {statistics.median(speedups):.2f}x "
                         f"(lowest {min(speedups):.2f}x, highest {max(speedups):.2f}x)")
            print(line)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=2)
    counts = {(r["transitions"], r["unique_states"], r["revisits"]) for r in rows}
    if len(counts) > 1 or not all(r["complete"] for r in rows):
        print("the runs do not agree on the counts, or one was incomplete", file=sys.stderr)
        return 1
    print("every run: the same transitions, unique states and revisits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
