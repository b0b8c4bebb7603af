"""Large networks' states are chunked (models/chunked.py): they read like tuples of slot ids,
a transition copies only the chunks it writes, and equal states compare equal however they
were built."""
from __future__ import annotations

import pickle

from hypothesis import given, settings
from hypothesis import strategies as st

from nice_attendre.frontend.api import build
from nice_attendre.models.chunked import ChunkedState, chunk_shift, slot_list

ids = st.lists(st.integers(min_value=0, max_value=2**40), min_size=1, max_size=300)


@st.composite
def states_and_writes(draw: st.DrawFn) -> tuple[list[int], int, list[tuple[int, int]]]:
    flat = draw(ids)
    shift = draw(st.integers(min_value=1, max_value=6))
    writes = draw(st.lists(st.tuples(st.integers(min_value=0, max_value=len(flat) - 1),
                                     st.integers(min_value=0, max_value=2**40)), max_size=8))
    return flat, shift, writes


@settings(max_examples=300, deadline=None)
@given(states_and_writes())
def test_a_chunked_state_reads_like_its_tuple(case: tuple[list[int], int, list[tuple[int, int]]]) -> None:
    flat, shift, writes = case
    state = ChunkedState.of(flat, shift)
    expected = list(flat)
    for slot, value in writes:
        expected[slot] = value
    after = state.updated(writes)
    for chunked, plain in ((state, tuple(flat)), (after, tuple(expected))):
        assert len(chunked) == len(plain) and tuple(chunked) == plain and slot_list(chunked) == list(plain)
        assert [chunked[i] for i in range(len(plain))] == list(plain)
        assert [chunked[-i] for i in range(1, len(plain) + 1)] == [plain[-i] for i in range(1, len(plain) + 1)]
        assert chunked[1:-1] == plain[1:-1] and chunked[::2] == plain[::2]
        again = ChunkedState.of(plain, shift)  # built afresh: no chunk shared
        assert chunked == again and not chunked != again and hash(chunked) == hash(again)
        assert chunked != plain and plain != chunked  # never equal to a tuple
        assert pickle.loads(pickle.dumps(chunked)) == chunked
    assert (after == state) == (tuple(expected) == tuple(flat))
    written = {slot >> shift for slot, _value in writes}
    for index, chunk in enumerate(state.chunks):  # the chunks not written are shared
        assert (after.chunks[index] is chunk) == (index not in written)


def test_reading_past_the_end_fails_as_for_a_tuple() -> None:
    state = ChunkedState.of(range(10), 2)
    for index in (10, 12, -11):
        try:
            state[index]
        except IndexError:
            continue
        raise AssertionError(f"index {index} read")


def test_chunks_are_about_the_square_root_of_the_slots() -> None:
    for slots in (512, 1024, 7007, 21007, 100_000):
        size = 1 << chunk_shift(slots)
        assert size * size >= slots // 2 and size <= 2 * slots ** 0.5 + 16
    assert chunk_shift(3) == 4  # at least 16


def test_a_large_network_copies_only_the_chunks_a_transition_writes() -> None:
    net = build("route-flow", topology="linear:300", packets=2, properties=[]).network
    assert net.incremental
    state = net.initial_states()[0]
    assert isinstance(state, ChunkedState) and len(state) == len(net.slot_names)
    key = net.state_key(state)
    steps = 0
    while steps < 60:
        events = net.enabled(state)
        if not events:
            break
        after, key = net.apply_keyed(state, key, events[0])
        changed = [slot for slot in range(len(after)) if after[slot] != state[slot]]
        copied = [i for i, chunk in enumerate(after.chunks) if chunk is not state.chunks[i]]
        assert set(copied) <= {slot >> after.shift for slot in net._last[2]}  # written chunks only
        assert {slot >> after.shift for slot in changed} <= set(copied)
        assert after == net.apply(state, events[0]) and key == net.state_key(after)
        state = after
        steps += 1
    assert steps == 60
