"""Attendre's type-3 claim on the Fig. 8 grid: under Attendre a flow causes one packet-in.

The default run covers the cells under 100,000 transitions; the slow run (``-m slow``) every
cell of the grid that stays under 1,000,000 transitions.
"""
from __future__ import annotations

import pytest

from nice_attendre import verify

# Attendre's transitions per (switches, packets) on the Fig. 8 grid (bench route-flow).
ATTENDRE = {
    (1, 1): 9, (1, 2): 58, (1, 3): 199, (1, 4): 514, (1, 5): 1120,
    (2, 1): 21, (2, 2): 158, (2, 3): 650, (2, 4): 2006, (2, 5): 5165,
    (3, 1): 53, (3, 2): 430, (3, 3): 2009, (3, 4): 7090, (3, 5): 20777,
    (4, 1): 133, (4, 2): 1134, (4, 3): 5850, (4, 4): 22980, (4, 5): 74737,
    (5, 1): 325, (5, 2): 2894, (5, 3): 16245, (5, 4): 69862, (5, 5): 247996,
    (6, 1): 773, (6, 2): 7182, (6, 3): 43498, (6, 4): 202594, (6, 5): 776147,
    (7, 1): 1797, (7, 2): 17422, (7, 3): 113209, (7, 4): 566754,
    (8, 1): 4101, (8, 2): 41486, (8, 3): 288002,
}
SMALL = sorted(cell for cell, transitions in ATTENDRE.items() if transitions < 100_000)
LARGE = sorted(cell for cell, transitions in ATTENDRE.items() if transitions >= 100_000)


def check(switches: int, packets: int) -> None:
    plain = verify("route-flow", topology=f"linear:{switches}", packets=packets, protocol="attendre",
                   properties=[])
    assert plain.complete and plain.stats.transitions == ATTENDRE[(switches, packets)]
    watched = verify("route-flow", topology=f"linear:{switches}", packets=packets, protocol="attendre",
                     properties=["one-packet-in-per-flow", "no-reordering", "no-forgotten-packets"])
    assert watched.ok and watched.complete


@pytest.mark.parametrize("switches,packets", SMALL)
def test_one_packet_in_per_flow_on_small_cells(switches: int, packets: int) -> None:
    check(switches, packets)


@pytest.mark.slow
@pytest.mark.parametrize("switches,packets", LARGE)
def test_one_packet_in_per_flow_on_large_cells(switches: int, packets: int) -> None:
    check(switches, packets)
