"""Performance suite: throughput (transitions/s) and memory per stored state.

Each scenario runs in its own process so that its peak memory is its own; one stops at a
cap of transitions, so that the suite always has a run of well over 10 seconds. Memory is the
growth of the process's peak resident set during the search, divided by the unique states
stored (it includes the interned components, the visited set and the search stack).

    python benchmarks/perf.py                 # every scenario
    python benchmarks/perf.py --only openflow-linear5-2pkt --json out.json
    python benchmarks/perf.py --only ryu-switch10-linear5-4pkt --only native-switch-linear5-4pkt

Before/after in one run: ``--python LABEL=PATH`` adds an interpreter (e.g. another checkout's
venv: its own nice_attendre is measured) and ``--no-memo`` this checkout without memoised
transitions; each scenario then runs under every configuration back to back, and the
transitions/s are also given relative to the first configuration:

    python benchmarks/perf.py --only openflow-linear5-2pkt --only mac-learning-linear1-4pkt \
        --python main=/work/main/.venv/bin/python --no-memo

On a noisy machine (the same search may take 30% longer from one minute to the next),
``--repeat N`` runs the configurations of each scenario N times, alternating (A B A B ...,
so a slow spell hits both), and adds per configuration the median and best transitions/s
and the median relative to the first configuration's median:

    python benchmarks/perf.py --only mac-learning-linear1-4pkt --no-memo --repeat 5

``--fingerprint`` runs every configuration storing fingerprints instead of states;
``--max-transitions N`` stops every search after N transitions.

Instructions instead of seconds: ``--instructions`` runs every search under Valgrind's
cachegrind (``apt install valgrind``; about fifty times slower) and reports the instructions
it executed per transition, the model's building and Python's start-up taken out (each
configuration also runs once without searching, and that count is subtracted). The count
does not depend on the machine's load, so a before/after comparison needs one run of each,
even on a busy machine (with the hash seed fixed to 0; what remains varies by a few tenths
of a percent with memory addresses). Instructions are not time (a cache miss costs more
than an instruction), so the two measures complement each other:

    python benchmarks/perf.py --instructions --only mac-learning-linear1-4pkt \
        --python before=/path/to/other/checkout/.venv/bin/python

This is a benchmark, not a test: figures vary with the machine and its load; compare
ratios within one run.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
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


def run_one(name: str, memo: bool = True, fingerprint: bool = False, max_transitions: int | None = None,
            build_only: bool = False) -> dict:
    """Run scenario ``name`` in this process and measure it (``memo=False``: without
    memoised transitions, which a checkout without them ignores; ``fingerprint``: storing
    fingerprints, as ``--fingerprint``; ``max_transitions``: stop there, if the scenario
    does not stop earlier; ``build_only``: build the model and stop before the search)."""
    try:
        from nice_attendre.frontend.api import build
    except ImportError:  # a checkout from before the front end had its own room
        from nice_attendre.api import build  # type: ignore[no-redef]
    from nice_attendre.checker import Limits, dfs

    app, topology, packets, protocol, extra, cap = SCENARIOS[name]
    run = build(app, topology=topology, packets=packets, protocol=protocol, **extra, **({} if memo else {"memo": False}))
    if build_only:
        return {"scenario": name, "built": True}
    if max_transitions is not None:
        cap = max_transitions if cap is None else min(cap, max_transitions)
    before = _peak_rss_bytes()
    started = time.perf_counter()
    result = dfs(run.network, run.properties, limits=Limits(max_transitions=cap), fingerprint=fingerprint)
    wall = time.perf_counter() - started
    after = _peak_rss_bytes()
    stats = result.stats
    return {
        "scenario": name, "app": app, "topology": topology, "packets": packets, "protocol": protocol,
        "fingerprint": fingerprint,
        "properties": [p.name for p in run.properties],
        "transitions": stats.transitions, "unique_states": stats.unique_states,
        "complete": result.complete, "seconds": round(wall, 3),
        "transitions_per_second": round(stats.transitions / wall),
        "peak_rss_growth_bytes": after - before,
        "bytes_per_state": round((after - before) / max(stats.unique_states, 1), 1),
        "interned_values": run.network.stored_values(),
    }


def instructions(command: list[str]) -> tuple[int, str]:
    """Run ``command`` under cachegrind (no cache simulation) with the hash seed fixed;
    the instructions it executed, and its standard output."""
    with tempfile.TemporaryDirectory() as scratch:
        counts = os.path.join(scratch, "cachegrind.out")
        out = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={counts}",
                              *command], capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
        if out.returncode != 0:
            last = "\n".join(out.stderr.strip().splitlines()[-5:])
            raise RuntimeError(f"{' '.join(command)} under cachegrind ended with exit code {out.returncode}:\n{last}")
        with open(counts) as handle:
            found = re.search(r"^summary:\s+(\d+)", handle.read(), re.MULTILINE)
    if found is None:
        raise RuntimeError(f"cachegrind wrote no summary for {command}")
    return int(found.group(1)), out.stdout


def measure_instructions(python: str, name: str, flags: list[str]) -> dict:
    """Scenario ``name``'s search under ``python`` with ``flags``: its counts and the
    instructions of the search alone (a run that only builds the model is subtracted)."""
    child = [python, __file__, "--child", name, *flags]
    total, stdout = instructions(child)
    building, _ = instructions([*child, "--child-build-only"])
    row = json.loads(stdout)
    search = total - building
    row["instructions"] = search
    row["instructions_per_transition"] = round(search / max(row["transitions"], 1))
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=sorted(SCENARIOS), help="run only this scenario")
    parser.add_argument("--json", help="write the measurements to this file")
    parser.add_argument("--python", action="append", default=[], metavar="LABEL=PATH",
                        help="also run every scenario with this interpreter (its own nice_attendre)")
    parser.add_argument("--no-memo", action="store_true", help="also run every scenario without memoised transitions")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="run each scenario's configurations N times, alternating, and summarise")
    parser.add_argument("--fingerprint", action="store_true",
                        help="store fingerprints (--fingerprint) in every configuration")
    parser.add_argument("--max-transitions", type=int, metavar="N", help="stop every search after N transitions")
    parser.add_argument("--instructions", action="store_true",
                        help="count the instructions per transition under Valgrind instead of timing the searches")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-no-memo", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child-build-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    if args.max_transitions is not None and args.max_transitions < 1:
        parser.error(f"--max-transitions must be at least 1, got {args.max_transitions}")
    if args.child:
        print(json.dumps(run_one(args.child, memo=not args.child_no_memo, fingerprint=args.fingerprint,
                                 max_transitions=args.max_transitions, build_only=args.child_build_only)))
        return 0
    if args.instructions and shutil.which("valgrind") is None:
        parser.error("--instructions needs Valgrind's cachegrind on the PATH (for example: apt install valgrind)")
    if args.instructions and args.repeat > 1:
        parser.error("--repeat is for timings: an instruction count is the same in every run")
    common = ["--fingerprint"] if args.fingerprint else []
    if args.max_transitions is not None:
        common += ["--max-transitions", str(args.max_transitions)]
    configs = [("this", sys.executable, common)]
    for item in args.python:
        label, _, path = item.partition("=")
        configs.append((label, path, common))
    if args.no_memo:
        configs.append(("no-memo", sys.executable, ["--child-no-memo", *common]))
    if args.instructions:
        return _instruction_table(args, configs)
    rows = []
    print(f"{'scenario':<26} {'config':<8} {'transitions':>12} {'states':>10} {'seconds':>8} {'trans/s':>10} "
          f"{'vs first':>8} {'bytes/state':>12}  complete")
    for name in args.only or list(SCENARIOS):
        first = None
        speeds: dict[str, list[int]] = {label: [] for label, _python, _flags in configs}
        for repeat in range(args.repeat):
            for label, python, flags in configs:
                out = subprocess.run([python, __file__, "--child", name, *flags], check=True, capture_output=True,
                                     text=True)
                row = json.loads(out.stdout)
                row["config"], row["repeat"] = label, repeat
                rows.append(row)
                speeds[label].append(row["transitions_per_second"])
                first = first or row["transitions_per_second"]
                print(f"{name:<26} {label:<8} {row['transitions']:>12,} {row['unique_states']:>10,} "
                      f"{row['seconds']:>8.1f} {row['transitions_per_second']:>10,} "
                      f"{row['transitions_per_second'] / first:>7.2f}x {row['bytes_per_state']:>12,.0f}  "
                      f"{row['complete']}", flush=True)
        if args.repeat > 1:
            base = statistics.median(speeds[configs[0][0]])
            for label, found in speeds.items():
                middle = statistics.median(found)
                print(f"{name:<26} {label:<8} median {middle:>10,.0f} t/s, best {max(found):>10,} t/s over "
                      f"{len(found)} runs: {middle / base:.2f}x the first's median")
    _write_json(args.json, rows)
    return 0


def _instruction_table(args: argparse.Namespace, configs: list[tuple[str, str, list[str]]]) -> int:
    """``--instructions``: every scenario under every configuration, once, counted."""
    rows = []
    print(f"{'scenario':<26} {'config':<8} {'transitions':>12} {'states':>10} {'instructions':>16} "
          f"{'instr/trans':>11} {'vs first':>8}  complete")
    for name in args.only or list(SCENARIOS):
        first = None
        for label, python, flags in configs:
            row = measure_instructions(python, name, flags)
            row["config"] = label
            rows.append(row)
            per = row["instructions_per_transition"]
            first = first or per
            print(f"{name:<26} {label:<8} {row['transitions']:>12,} {row['unique_states']:>10,} "
                  f"{row['instructions']:>16,} {per:>11,} {per / first:>7.2f}x  {row['complete']}", flush=True)
    _write_json(args.json, rows)
    return 0


def _write_json(path: str | None, rows: list[dict]) -> None:
    """Write the measurements to ``path`` (``--json``), if given."""
    if path:
        with open(path, "w") as handle:
            json.dump(rows, handle, indent=2)


if __name__ == "__main__":
    sys.exit(main())
