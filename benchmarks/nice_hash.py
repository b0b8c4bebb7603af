"""How much of the gap to the paper's counts comes from what NICE 0.8 left out of its state hash.

NICE 0.8, which produced the paper's numbers, did not hash the switches' pending controller
commands (nor the order of packets inside a port's buffer). This script explores the same
scenarios with three visited-set keys and prints the transitions and the openflow/attendre
ratios each gives:

* ``exact``: the whole state (the checker's only counting mode);
* ``cmd-bit``: a switch's pending commands reduced to one bit, "commands pending";
* ``cmd-bit+ports``: that, and each port's queue taken as a multiset (its order dropped).

The abstract keys merge states that behave differently, so their counts are not a sound
exploration: they only measure how much the hashing explains. Transitions are counted as the
checker counts them (every event applied, including those into a known state).

    python benchmarks/nice_hash.py                      # every scenario (several minutes)
    python benchmarks/nice_hash.py --only route-flow-8x1
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Callable

#: name -> (app, topology, packets). Each runs under openflow and attendre.
SCENARIOS: dict[str, tuple[str, str, int]] = {
    "route-flow-8x1": ("route-flow", "linear:8", 1),
    "route-flow-6x2": ("route-flow", "linear:6", 2),
    "route-flow-1x5": ("route-flow", "linear:1", 5),
    "mac-learning-1x4": ("mac-learning", "linear:1", 4),
    "mac-learning-2x3": ("mac-learning", "linear:2", 3),
}

#: Scenario/mode pairs whose exact openflow search is too long to repeat here; the count is the
#: one `nice-attendre bench route-flow --switches 6 --packets 2 --max-transitions 200000000`
#: gives (docs/results.md).
KNOWN_EXACT = {("route-flow-6x2", "openflow"): 33_874_390}


def keys(net: Any) -> dict[str, Callable[[tuple[int, ...]], Any]]:
    """The visited-set key of each mode for network ``net``."""
    cmd_slots = [net.slot_index[name] for name in net.slot_names if name.startswith("cmdq:")]
    port_slots = [net.slot_index[name] for name in net.slot_names if name.startswith(("port:", "inbox:"))]
    queues = net.interned(port_slots[0])

    def cmd_bit(state: tuple[int, ...]) -> Any:
        key = list(state)
        for slot in cmd_slots:
            key[slot] = state[slot] != 0  # id 0 is the empty queue
        return tuple(key)

    def cmd_bit_ports(state: tuple[int, ...]) -> Any:
        key = list(cmd_bit(state))
        for slot in port_slots:
            key[slot] = tuple(sorted(queues[state[slot]]))
        return tuple(key)

    return {"exact": lambda state: state, "cmd-bit": cmd_bit, "cmd-bit+ports": cmd_bit_ports}


def explore(net: Any, key: Callable[[tuple[int, ...]], Any], cap: int) -> tuple[int, int, bool]:
    """Depth-first search with visited key ``key``: (transitions, stored keys, complete)."""
    initial = net.initial_states()[0]
    visited = {key(initial)}
    stack = [(initial, list(net.enabled(initial)))]
    transitions = 0
    while stack:
        state, events = stack[-1]
        if not events:
            stack.pop()
            continue
        successor = net.apply(state, events.pop(0))
        transitions += 1
        if transitions >= cap:
            return transitions, len(visited), False
        marker = key(successor)
        if marker not in visited:
            visited.add(marker)
            stack.append((successor, list(net.enabled(successor))))
    return transitions, len(visited), True


def main() -> int:
    from nice_attendre.frontend.api import build

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=sorted(SCENARIOS))
    parser.add_argument("--cap", type=int, default=20_000_000, help="transitions per search (default 20M)")
    args = parser.parse_args()
    modes = ("exact", "cmd-bit", "cmd-bit+ports")
    print(f"{'scenario':<18} {'mode':<14} {'openflow':>12} {'attendre':>10} {'openflow/attendre':>18}  seconds")
    for name in args.only or list(SCENARIOS):
        app, topology, packets = SCENARIOS[name]
        for mode in modes:
            counts: dict[str, str] = {}
            values: dict[str, int] = {}
            started = time.perf_counter()
            for protocol in ("openflow", "attendre"):
                if mode == "exact" and (name, protocol) in KNOWN_EXACT:
                    values[protocol] = KNOWN_EXACT[(name, protocol)]
                    counts[protocol] = f"{values[protocol]:,}*"
                    continue
                net = build(app, topology=topology, packets=packets, protocol=protocol, properties=[]).network
                transitions, _stored, complete = explore(net, keys(net)[mode], args.cap)
                values[protocol] = transitions
                counts[protocol] = f"{transitions:,}" + ("" if complete else "+")
            ratio = values["openflow"] / values["attendre"]
            print(f"{name:<18} {mode:<14} {counts['openflow']:>12} {counts['attendre']:>10} {ratio:>17.2f}x  "
                  f"{time.perf_counter() - started:7.1f}", flush=True)
    print("\n* from the exact count measured once (see KNOWN_EXACT); + = stopped at the cap (a lower bound)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
