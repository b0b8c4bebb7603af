"""The compact fingerprint table behaves as a set (and a map), grows, and stays compact."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, strategies as st

from nice_attendre.visited import FingerprintTable, collision_probability

U64 = st.integers(min_value=0, max_value=2 ** 64 - 1)


@given(st.lists(st.one_of(U64, st.integers(min_value=0, max_value=40)), max_size=300))
def test_behaves_like_a_set(fingerprints: list[int]) -> None:
    table = FingerprintTable(buckets=2)
    model: set[int] = set()
    for fp in fingerprints:
        assert table.add(fp) == (fp not in model)
        model.add(fp)
        assert fp in table
    assert len(table) == len(model)
    assert sorted(table) == sorted(model)
    assert all((fp in table) == (fp in model) for fp in range(50))


def test_collisions_in_the_low_bits_probe_on() -> None:
    table = FingerprintTable(buckets=8)
    same_bucket = [k << 32 | 5 for k in range(1, 7)]
    assert all(table.add(fp) for fp in same_bucket)
    assert all(fp in table for fp in same_bucket) and (7 << 32 | 5) not in table
    assert not table.add(same_bucket[3])


def test_grows_by_doubling_and_keeps_at_most_21_bytes_per_fingerprint_after_growth() -> None:
    table = FingerprintTable()
    rng = random.Random(7)
    for _ in range(100_000):
        table.add(rng.getrandbits(64))
    assert len(table) == 100_000
    assert table.nbytes & (table.nbytes - 1) == 0  # a power of two of 8-byte buckets
    assert 8 * 4 / 3 <= table.nbytes / len(table) <= 8 * 8 / 3


def test_zero_is_a_fingerprint_too() -> None:
    table = FingerprintTable()
    assert 0 not in table
    assert table.add(0) and not table.add(0)
    assert 0 in table and len(table) == 1 and list(table) == [0]


def test_the_number_of_buckets_must_be_a_power_of_two() -> None:
    with pytest.raises(ValueError):
        FingerprintTable(buckets=3)


def test_collision_probability_is_tlcs_optimistic_estimate() -> None:
    assert collision_probability(0, 0) == 0.0
    assert collision_probability(10, 10) == 0.0
    assert collision_probability(1_000_000, 3_000_000) == pytest.approx(1e6 * 2e6 / 2 ** 64)
