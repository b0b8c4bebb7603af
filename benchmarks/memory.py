"""Bytes per stored state: the exact visited set against ``--fingerprint``.

Each mode runs in its own process on the same scenario (at least a million unique states);
the figure is the growth of the process's peak resident memory during the search divided by
the unique states stored, so it covers everything the search keeps: the visited set or
fingerprint table, the interned components, the model's caches and the DFS stack.

    python benchmarks/memory.py                              # both modes, the default scenario
    python benchmarks/memory.py --scenario mac-learning-linear2-4pkt --json out.json

This is a benchmark, not a test: the figures vary a little with the machine and allocator.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

#: name -> (app, topology, packets, protocol); all complete searches of over a million states
SCENARIOS: dict[str, tuple[str, str, int, str]] = {
    "openflow-b-linear7-2pkt": ("route-flow", "linear:7", 2, "openflow-b"),  # 3.1M states, 21M transitions
    "mac-learning-linear2-4pkt": ("mac-learning", "linear:2", 4, "openflow"),  # 0.9M states, 2.9M transitions
}
DEFAULT = "openflow-b-linear7-2pkt"


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


def run_one(scenario: str, fingerprint: bool) -> dict:
    """Run ``scenario`` in this process in one mode and measure it."""
    from nice_attendre.frontend.api import build
    from nice_attendre.checker import dfs

    app, topology, packets, protocol = SCENARIOS[scenario]
    run = build(app, topology=topology, packets=packets, protocol=protocol)
    before = _peak_rss_bytes()
    started = time.perf_counter()
    result = dfs(run.network, run.properties, fingerprint=fingerprint)
    wall = time.perf_counter() - started
    growth = _peak_rss_bytes() - before
    stats = result.stats
    return {
        "scenario": scenario, "mode": "fingerprint" if fingerprint else "exact",
        "transitions": stats.transitions, "unique_states": stats.unique_states, "complete": result.complete,
        "seconds": round(wall, 2), "peak_rss_growth_bytes": growth,
        "bytes_per_state": round(growth / max(stats.unique_states, 1), 1),
        "interned_values": run.network.stored_values(),
        "collision_probability": result.collision_probability,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), default=DEFAULT)
    parser.add_argument("--mode", choices=["exact", "fingerprint"], action="append",
                        help="run only this mode (repeatable; default both)")
    parser.add_argument("--json", help="write the measurements to this file")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child[0], args.child[1] == "fingerprint")))
        return 0
    rows = []
    print(f"scenario {args.scenario}: {' '.join(map(str, SCENARIOS[args.scenario]))}")
    print(f"{'mode':<12} {'transitions':>12} {'states':>11} {'seconds':>8} {'bytes/state':>12} {'collision':>10}"
          "  complete")
    for mode in args.mode or ["exact", "fingerprint"]:
        out = subprocess.run([sys.executable, __file__, "--child", args.scenario, mode], check=True,
                             capture_output=True, text=True)
        row = json.loads(out.stdout)
        row["load_average_after"] = os.getloadavg()[0]
        rows.append(row)
        collision = row["collision_probability"]
        print(f"{mode:<12} {row['transitions']:>12,} {row['unique_states']:>11,} {row['seconds']:>8.1f} "
              f"{row['bytes_per_state']:>12,.1f} {'-' if collision is None else f'{collision:.1e}':>10}"
              f"  {row['complete']}")
    if len({(r["transitions"], r["unique_states"]) for r in rows}) > 1:
        print("counts differ between the modes: a fingerprint collision?", file=sys.stderr)
        return 1
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
