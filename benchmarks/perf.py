"""Performance suite: throughput (transitions/s) and memory per stored state.

Each scenario runs in its own process so that its peak memory is its own; one stops at a
cap of transitions, so that the suite always has a run of well over 10 seconds. Memory is the
growth of the process's peak resident set during the search, divided by the unique states
stored (it includes the interned components, the visited set and the search stack).

    python benchmarks/perf.py                 # every scenario
    python benchmarks/perf.py --only openflow-linear5-2pkt --json out.json
    python benchmarks/perf.py --only ryu-switch10-linear5-4pkt --only native-switch-linear5-4pkt

This is a benchmark, not a test: figures vary with the machine and its load; compare
ratios within one run.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

#: name -> (app, topology, packets, protocol, extra build keywords, transition cap or None).
#: The last two: the Ryu-API learning switch (examples/ryu, through os-ken: the ``ryu`` extra)
#: and its native twin (examples/learning_switch.py), which has the same state space.
SCENARIOS: dict[str, tuple[str, str, int, str, dict, int | None]] = {
    "openflow-linear5-2pkt": ("route-flow", "linear:5", 2, "openflow", {}, None),
    "openflow-linear6-2pkt-5M": ("route-flow", "linear:6", 2, "openflow", {}, 5_000_000),
    "openflow-linear8-1pkt": ("route-flow", "linear:8", 1, "openflow", {}, None),
    "openflow-b-linear6-2pkt": ("route-flow", "linear:6", 2, "openflow-b", {}, None),
    "attendre-linear5-5pkt": ("route-flow", "linear:5", 5, "attendre", {}, None),
    "mac-learning-linear1-4pkt": ("mac-learning", "linear:1", 4, "openflow", {}, None),
    "ryu-switch10-linear5-4pkt": (f"{EXAMPLES / 'ryu' / 'learning_switch_10.py'}:LearningSwitch10", "linear:5", 4,
                                  "openflow", {}, None),
    "native-switch-linear5-4pkt": (f"{EXAMPLES / 'learning_switch.py'}:LearningSwitch", "linear:5", 4, "openflow",
                                   {}, None),
}


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


def run_one(name: str) -> dict:
    """Run scenario ``name`` in this process and measure it."""
    from nice_attendre.api import build
    from nice_attendre.checker import Limits, dfs

    app, topology, packets, protocol, extra, cap = SCENARIOS[name]
    run = build(app, topology=topology, packets=packets, protocol=protocol, **extra)
    before = _peak_rss_bytes()
    started = time.perf_counter()
    result = dfs(run.network, run.properties, limits=Limits(max_transitions=cap))
    wall = time.perf_counter() - started
    after = _peak_rss_bytes()
    stats = result.stats
    return {
        "scenario": name, "app": app, "topology": topology, "packets": packets, "protocol": protocol,
        "properties": [p.name for p in run.properties],
        "transitions": stats.transitions, "unique_states": stats.unique_states,
        "complete": result.complete, "seconds": round(wall, 3),
        "transitions_per_second": round(stats.transitions / wall),
        "peak_rss_growth_bytes": after - before,
        "bytes_per_state": round((after - before) / max(stats.unique_states, 1), 1),
        "interned_values": run.network.stored_values(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=sorted(SCENARIOS), help="run only this scenario")
    parser.add_argument("--json", help="write the measurements to this file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child)))
        return 0
    rows = []
    print(f"{'scenario':<26} {'transitions':>12} {'states':>10} {'seconds':>8} {'trans/s':>10} {'bytes/state':>12}"
          "  complete")
    for name in args.only or list(SCENARIOS):
        out = subprocess.run([sys.executable, __file__, "--child", name], check=True, capture_output=True, text=True)
        row = json.loads(out.stdout)
        rows.append(row)
        print(f"{name:<26} {row['transitions']:>12,} {row['unique_states']:>10,} {row['seconds']:>8.1f} "
              f"{row['transitions_per_second']:>10,} {row['bytes_per_state']:>12,.0f}  {row['complete']}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
