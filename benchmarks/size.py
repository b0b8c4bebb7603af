"""The cost of one transition against the size of the network, in one run.

Two shapes of network, each at several sizes, route-flow under OpenFlow (or the protocol
``--protocol`` names, with its parameters; 2 packets unless ``--packets``):

* ``line``: ``linear:N``, the packets cross all N switches (the path grows with N);
* ``tail``: ``h1 - s1 - s2 - h2`` with a line of N - 2 idle switches hanging off ``s2``:
  the same traffic and path at every N, only the network grows.

Each cell explores the first ``--transitions`` transitions (or the whole space if smaller)
with the bookkeeping of large networks forced off ("full": states are flat tuples, every
transition copies the whole state, hashes it and rescans every event source) and at its
default ("default": from :data:`nice_attendre.models.network.INCREMENTAL_SLOTS` slots on,
chunked states and incremental enabled events and keys), and prints the
transitions per second and microseconds per transition. The counts of both runs must agree.

    python benchmarks/size.py
    python benchmarks/size.py --sizes 10,100,1000 --shapes tail --json size.json
    python benchmarks/size.py --shapes tail --packets 3 --transitions 40000   # past the warm-up
    python benchmarks/size.py --shapes tail --packets 3 --memory             # and bytes per state
    python benchmarks/size.py --shapes tail --packets 3 --protocol pif:action=rate-limit,expire=event
    python benchmarks/size.py --shapes tail --faults loss=1,control=1

With ``--faults`` (budgets, as ``--fault`` takes them) no property is checked, so that every
cell explores its transitions rather than stopping at the first packet a fault loses.

With ``--memory`` each cell also runs three times more, each in a process of its own: both
modes of the exact search and the default mode with ``--fingerprint``; the figure is the
growth of the process's peak resident memory during the search divided by the unique states
stored (everything the search keeps: visited set, stack, interned components, caches).

This is a benchmark, not a test (the counts' agreement is tested in
tests/models/test_incremental.py).
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import time
from typing import Any

import networkx as nx

SHAPES = ("line", "tail")


def tail_graph(switches: int) -> nx.Graph:
    """``h1 - s1 - s2 - h2`` and ``s2 - s3 - ... - sN`` (idle)."""
    graph = nx.Graph()
    nx.add_path(graph, ["h1", "s1", "s2", "h2"])
    if switches > 2:
        nx.add_path(graph, ["s2"] + [f"s{i}" for i in range(3, switches + 1)])
    return graph


def topology(shape: str, switches: int) -> Any:
    """The topology of ``shape`` with ``switches`` switches (a spec or a graph)."""
    return f"linear:{switches}" if shape == "line" else tail_graph(switches)


def _peak() -> int:
    """This process's peak resident memory in bytes (Linux's VmHWM, else ru_maxrss)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


def _reset_peak() -> int:
    """Reset the peak to the current resident memory where Linux allows it (a process
    started by a larger one inherits that one's peak); return the peak."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as clear:
            clear.write("5")
    except OSError:
        pass
    return _peak()


def measure(shape: str, switches: int, transitions: int, incremental: bool, packets: int = 2,
            fingerprint: bool = False, protocol: str = "openflow", faults: str = "") -> dict[str, Any]:
    """Explore one cell; its counts, slots, speed and the growth of peak memory per state."""
    from nice_attendre.checker import Limits
    from nice_attendre.frontend.api import build, search
    from nice_attendre.models import network
    from nice_attendre.models.faults import parse_budgets

    saved = network.INCREMENTAL_SLOTS
    if not incremental:
        network.INCREMENTAL_SLOTS = sys.maxsize
    try:
        extra: dict[str, Any] = {"faults": parse_budgets(faults.split(",")), "properties": []} if faults else {}
        run = build("route-flow", topology=topology(shape, switches), packets=packets, protocol=protocol, **extra)
    finally:
        network.INCREMENTAL_SLOTS = saved
    system = run.network
    gc.collect()
    before = _reset_peak()
    start = time.perf_counter()
    result = search(run, limits=Limits(max_transitions=transitions), fingerprint=fingerprint)
    seconds = time.perf_counter() - start
    growth = _peak() - before
    stats = result.stats
    return {"shape": shape, "switches": switches, "mode": "default" if incremental else "full",
            "slots": len(system.slot_names), "incremental": system.incremental,
            "transitions": stats.transitions, "unique_states": stats.unique_states, "revisits": stats.revisits,
            "seconds": round(seconds, 3), "per_second": round(stats.transitions / seconds),
            "microseconds": round(seconds / stats.transitions * 1e6, 1),
            "bytes_per_state": round(growth / max(stats.unique_states, 1))}


def bytes_per_state(shape: str, switches: int, transitions: int, packets: int, mode: str,
                    protocol: str = "openflow", faults: str = "") -> int:
    """:func:`measure`'s memory figure for one cell in a process of its own (``mode``: full,
    default or fingerprint), so that no other cell's memory counts."""
    out = subprocess.run([sys.executable, __file__, "--child", shape, str(switches), str(transitions), str(packets),
                          mode, protocol, faults], check=True, capture_output=True, text=True)
    return int(json.loads(out.stdout)["bytes_per_state"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="3,10,30,100,300,1000", help="switch counts, comma-separated")
    parser.add_argument("--shapes", default=",".join(SHAPES), help=f"of {', '.join(SHAPES)}")
    parser.add_argument("--transitions", type=int, default=20_000, help="transitions per cell (at most)")
    parser.add_argument("--packets", type=int, default=2, help="packets h1 sends to h2")
    parser.add_argument("--protocol", default="openflow", help="the protocol, maybe with parameters (NAME:KEY=VALUE,...)")
    parser.add_argument("--faults", default="", help="fault budgets, KIND=N,... (then no property is checked)")
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("--memory", action="store_true", help="also bytes per stored state, each in its own process")
    parser.add_argument("--child", nargs=7, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        shape, switches, transitions, packets, mode, protocol, faults = args.child
        print(json.dumps(measure(shape, int(switches), int(transitions), mode != "full", int(packets),
                                 fingerprint=mode == "fingerprint", protocol=protocol, faults=faults)))
        return 0
    sizes = [int(size) for size in args.sizes.split(",")]
    shapes = args.shapes.split(",")
    unknown = sorted(set(shapes) - set(SHAPES))
    if unknown:
        parser.error(f"unknown shape {unknown[0]!r}")
    print(f"load {os.getloadavg()[0]:.2f}; route-flow, {args.protocol}, faults {args.faults or 'none'}, "
          f"{args.packets} packets, at most {args.transitions:,} "
          "transitions per cell")
    print(f"{'shape':6} {'switches':>8} {'slots':>6} {'transitions':>11} {'states':>7}  "
          f"{'full t/s':>9} {'us/t':>7}  {'default t/s':>11} {'us/t':>7}  {'ratio':>6}"
          + ("  bytes/state: full default fingerprint" if args.memory else ""))
    rows = []
    for shape in shapes:
        for switches in sizes:
            full = measure(shape, switches, args.transitions, incremental=False, packets=args.packets,
                           protocol=args.protocol, faults=args.faults)
            default = measure(shape, switches, args.transitions, incremental=True, packets=args.packets,
                              protocol=args.protocol, faults=args.faults)
            counts = ("transitions", "unique_states", "revisits")
            if any(full[key] != default[key] for key in counts):
                print(f"counts differ on {shape} {switches}: {full} {default}", file=sys.stderr)
                return 1
            rows += [full, default]
            memory = ""
            if args.memory:
                figures = {mode: bytes_per_state(shape, switches, args.transitions, args.packets, mode, args.protocol,
                                                 args.faults)
                           for mode in ("full", "default", "fingerprint")}
                full["bytes_per_state"], default["bytes_per_state"] = figures["full"], figures["default"]
                default["fingerprint_bytes_per_state"] = figures["fingerprint"]
                memory = "".join(f" {figures[mode]:>{width},}" for mode, width in
                                 (("full", 19), ("default", 8), ("fingerprint", 12)))
            print(f"{shape:6} {switches:8} {full['slots']:6} {full['transitions']:11,} {full['unique_states']:7,}  "
                  f"{full['per_second']:9,} {full['microseconds']:7}  {default['per_second']:11,} "
                  f"{default['microseconds']:7}  {default['per_second'] / full['per_second']:5.2f}x{memory}",
                  flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(rows, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
