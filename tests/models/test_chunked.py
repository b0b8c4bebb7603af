"""Large networks' states are chunked (models/chunked.py): they read like tuples of slot ids,
a transition copies only the chunks it writes, and equal states compare equal however they
were built."""
from __future__ import annotations

import pickle

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nice_attendre import verify
from nice_attendre.frontend.api import build
from nice_attendre.models import network
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
        assert set(copied) <= {slot >> after.shift for slot, _value in net._last[2]}  # written chunks only
        assert {slot >> after.shift for slot in changed} <= set(copied)
        assert after == net.apply(state, events[0]) and key == net.state_key(after)
        state = after
        steps += 1
    assert steps == 60


def _tail(switches: int) -> "nx.Graph":
    """``h1 - s1 - s2 - h2`` with idle switches ``s3 ... sN`` hanging off ``s2``."""
    graph = nx.Graph()
    nx.add_path(graph, ["h1", "s1", "s2", "h2"])
    nx.add_path(graph, ["s2"] + [f"s{i}" for i in range(3, switches + 1)])
    return graph


def test_workers_ship_chunked_states() -> None:
    """Worker processes decode the states they are sent into the network's own kind."""
    sequential = verify("route-flow", topology=_tail(300), packets=2)
    assert sequential.system.incremental and sequential.complete and sequential.ok
    parallel = verify("route-flow", topology=_tail(300), packets=2, workers=2)
    assert parallel.complete and parallel.stats.counts()[:3] == sequential.stats.counts()[:3] == (1026, 506, 521)


def test_a_bug_in_a_large_network_comes_with_a_replayable_trace() -> None:
    for options in ({}, {"fingerprint": True}, {"workers": 2}):
        result = verify("route-flow", topology=_tail(300), packets=1, app_options={"bug": "forget-last-hop"},
                        **options)
        assert not result.ok and result.system.incremental
        trace = result.discoveries[0].trace
        assert trace is not None and isinstance(trace.final, ChunkedState)
        state = result.system.initial_states()[0]
        for event in trace.events:
            assert event in result.system.enabled(state)
            state = result.system.apply(state, event)
        assert state == trace.final


@pytest.mark.parametrize("protocol", ["attendre", "buffer:granularity=flow,timeout=event", "openflow"])
def test_shortcuts_from_the_initial_chunks_equal_a_full_scan(protocol: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large network's held packets and event sources, found from the chunks a state does
    not share with the initial state, are those a scan of every switch and slot finds, in
    every state of a search where switches hold packets."""
    monkeypatch.setattr(network, "INCREMENTAL_SLOTS", 0)
    net = build("route-flow", topology="linear:2", packets=2, protocol=protocol, properties=[]).network
    assert net.incremental and net._holding is not None
    full_sources = network.Network._all_sources.__get__(net)
    initial = net.initial_states()[0]
    seen, stack, holding = {initial}, [initial], 0
    while stack:
        state = stack.pop()
        fast = net.buffered_packets(state)
        saved, net._holding = net._holding, None
        try:
            assert fast == net.buffered_packets(state)
        finally:
            net._holding = saved
        holding += bool(fast)
        assert full_sources(state) == full_sources(tuple(state))  # a tuple: one pass over every slot
        for event in net.enabled(state):
            after = net.apply(state, event)
            if after not in seen:
                seen.add(after)
                stack.append(after)
    assert len(seen) > 50 and holding > (0 if protocol == "openflow" else 10)


def test_states_built_afresh_share_the_initial_chunks() -> None:
    net = build("route-flow", topology=_tail(300), packets=1, properties=[]).network
    initial = net.initial_states()[0]
    state = net.apply(initial, net.enabled(initial)[0])
    codec = net.state_codec()
    decoded = codec.decode(codec.encode([state], 1))(0)
    assert decoded == state
    shared = sum(mine is theirs for mine, theirs in zip(decoded.chunks, initial.chunks))
    assert shared == sum(mine is theirs for mine, theirs in zip(state.chunks, initial.chunks))
    assert 0 < len(state.chunks) - shared <= 2  # the chunks of the slots the first send wrote
    narrated, _notes = net.narrate(initial, net.enabled(initial)[0])
    assert narrated == state and list(narrated.slots_not_shared(initial)) == list(state.slots_not_shared(initial))
