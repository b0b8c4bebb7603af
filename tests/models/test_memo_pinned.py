"""Memoised transitions (models/memo.py) change the speed only: every pinned scenario gives
the same transitions, unique states, revisits, depth, verdicts and traces with and without
the memo, with a tiny memo that is emptied all the time, and with fingerprints.

The pinned tables are read from the tests that pin them (as in test_parallel_pinned.py), so
a new pinned scenario is checked here too. Scenarios of more than 3,000 transitions run with
``-m slow``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nice_attendre import verify
from nice_attendre.models.chunked import ChunkedState
from nice_attendre.models.memo import LazyReadTrackingList, ReadTrackingList, TransitionMemo
from pinned import pinned_table

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
FAST = 3_000


def scenarios() -> list[Any]:
    """(app, topology, packets, protocol, extra keywords, pinned transitions) of every pinned table."""
    cases = []
    for (protocol, switches, packets), counts in pinned_table("apps/test_route_flow.py", "PINNED").items():
        cases.append(("route-flow", f"linear:{switches}", packets, protocol, {}, counts[0]))
    for (protocol, switches, packets), counts in pinned_table("apps/test_mac_learning.py", "PINNED").items():
        cases.append(("mac-learning", f"linear:{switches}", packets, protocol, {}, counts[0]))
    for (protocol, topology, flows), counts in pinned_table("apps/test_energy_te.py", "PINNED").items():
        cases.append(("energy-te", topology, flows, protocol, {}, counts[0]))
    for (protocol, switches, packets), counts in pinned_table("models/test_controller_threads.py", "THREADED").items():
        cases.append(("route-flow", f"linear:{switches}", packets, protocol, {"threaded_controller": True},
                      counts[0]))
    for (switches, packets), transitions in pinned_table("apps/test_route_flow_grid.py", "ATTENDRE").items():
        cases.append(("route-flow", f"linear:{switches}", packets, "attendre", {"properties": []}, transitions))
    for name in ("COUNTS", "PAPER_COUNTS", "SLOW_COUNTS"):
        for (app, topology, packets, protocol), counts in pinned_table("models/test_variant_counts.py", name).items():
            cases.append((app, topology, packets, protocol, {"properties": []}, counts[0]))
    ls10 = f"{ROOT / 'examples' / 'ryu' / 'learning_switch_10.py'}:LearningSwitch10"
    for protocol, counts in pinned_table("models/ryu/test_ryu_variants.py", "PINNED").items():
        cases.append((ls10, "linear:2", 2, protocol,
                      {"properties": ["delivery", "no-forgotten-packets", "no-black-holes"]}, counts[0]))
    # other semantics: any command order, faults, load counters, bugs (violations and traces)
    cases += [
        ("route-flow", "linear:2", 2, "openflow", {"command_order": "any"}, 0),
        ("route-flow", "linear:2", 1, "openflow", {"faults": {"loss": 1, "duplicate": 1, "link": 1}}, 0),
        # (110,031 transitions: its sweeps run with -m slow)
        ("mac-learning", "linear:1", 2, "openflow", {"faults": {"restart": 1, "control": 1, "reorder": 1}}, 110_031),
        ("route-flow", "linear:2", 2, "openflow-b", {"count_load": True}, 0),
        ("route-flow", "linear:2", 1, "openflow", {"app_options": {"bug": "forget-last-hop"}}, 0),
        ("mac-learning", "linear:1", 2, "openflow", {"app_options": {"bug": "host-unreachable"},
                                                     "keep_going": True}, 0),
        ("energy-te", "paths:2,3", 1, "openflow", {"app_options": {"bug": "drop-first-packet"}}, 0),
    ]
    return [pytest.param(*case[:5], id=f"{Path(str(case[0])).name}-{case[1]}-{case[2]}-{case[3]}-"
                                       f"{'-'.join(map(str, case[4].values()))}",
                         marks=[pytest.mark.slow] if case[5] > FAST else [])
            for case in cases]


def outcome(result: Any) -> tuple[Any, ...]:
    """Everything a search reports but its time (a final state as its slot ids: a large
    network's states are chunked, a small one's tuples)."""
    return (result.stats.counts(), result.complete, result.stop_reason, result.verdict, dict(result.metrics),
            [(d.property, d.reason, d.trace.events if d.trace is not None else None,
              tuple(d.trace.final) if d.trace is not None else None) for d in result.discoveries])


@pytest.mark.parametrize("app,topology,packets,protocol,extra", scenarios())
def test_the_memo_changes_no_result(app: str, topology: str, packets: int, protocol: str, extra: dict) -> None:
    options = dict(topology=topology, packets=packets, protocol=protocol, **extra)
    plain = verify(app, memo=False, **options)
    memo = verify(app, **options)
    assert outcome(memo) == outcome(plain)
    table = memo.system.memo
    assert table is not None and table.misses <= memo.stats.transitions
    assert table.misses < memo.stats.transitions or memo.stats.transitions < 100
    assert plain.system.memo is None
    tiny = verify(app, memo=7, **options)  # emptied every 7 stored transitions
    assert outcome(tiny) == outcome(plain)
    if not extra.get("keep_going"):
        printed = [verify(app, memo=memo_on, fingerprint=True, **options) for memo_on in (False, True)]
        assert outcome(printed[0]) == outcome(printed[1])
        assert printed[0].stats.counts()[:2] == plain.stats.counts()[:2]


def test_two_workers_with_the_memo() -> None:
    options = dict(topology="linear:3", packets=2, protocol="openflow-b")
    plain = verify("route-flow", memo=False, **options)
    two = verify("route-flow", workers=2, **options)
    assert two.stats.counts()[:3] == plain.stats.counts()[:3] and two.ok == plain.ok


def _lazy(ids: list[int]) -> LazyReadTrackingList:
    return LazyReadTrackingList(ChunkedState.of(ids, 1))


TRACKING = pytest.mark.parametrize("tracking", [ReadTrackingList, _lazy], ids=["list", "lazy"])


@TRACKING
def test_the_tracking_list_records_reads_before_writes(tracking: Any) -> None:
    tracked = tracking([10, 11, 12, 13])
    assert tracked[1] == 11
    tracked[2] = 99
    assert tracked[2] == 99  # read after its own write: not a read of the state
    tracked[1] = 5
    assert tracked.reads == {1: 11} and list(tracked.written) == [2, 1] and not tracked.opaque
    for use in (lambda t: list(t), lambda t: t[1:], lambda t: t[-1], lambda t: 12 in t, lambda t: t.index(13),
                lambda t: t.copy(), lambda t: t == [1]):
        other = tracking([10, 11, 12, 13])
        use(other)
        assert other.opaque
    other = tracking([10, 11, 12, 13])  # written, then used as a whole: the writes stay
    other[3] = 7
    assert len(other) == 4 and list(other) == [10, 11, 12, 7] and other.opaque
    other[1:3] = [0, 0]
    assert list(other) == [10, 0, 0, 7] and other.current(3) == 7


def test_the_table_is_bounded_and_keyed_on_what_was_read() -> None:
    memo = TransitionMemo(capacity=2)
    event = object()
    memo.store(event, {0: 1}, ((3, 7),))
    memo.store(event, {0: 2, 1: 5}, ((3, 8),))
    assert memo.lookup((1, 0, 0, 0), event) == ((3, 7),)
    assert memo.lookup((2, 5, 0, 0), event) == ((3, 8),)
    assert memo.lookup((2, 6, 0, 0), event) is None
    assert memo.lookup((1, 0, 0, 0), object()) is None  # another event
    memo.store(event, {0: 3}, ((3, 9),))  # over the capacity: emptied first
    assert memo.size == 1 and memo.lookup((1, 0, 0, 0), event) is None
    assert memo.lookup((3, 0, 0, 0), event) == ((3, 9),)


def test_no_memo_on_the_command_line() -> None:
    from click.testing import CliRunner

    from nice_attendre.frontend.cli import main

    plain = CliRunner().invoke(main, ["verify", "route-flow", "-t", "linear:2", "-n", "2", "--no-memo"])
    memo = CliRunner().invoke(main, ["verify", "route-flow", "-t", "linear:2", "-n", "2"])
    assert plain.exit_code == memo.exit_code == 0
    assert "memo           off (--no-memo)" in plain.stdout and "memo" not in memo.stdout
    counts = [line for line in memo.stdout.splitlines() if line.startswith(("  transitions", "  unique"))]
    assert counts and all(line in plain.stdout for line in counts)


def test_a_search_saved_with_the_memo_resumes_without_it(tmp_path: Path) -> None:
    checkpoint = tmp_path / "run.ckpt"
    options = dict(topology="linear:3", packets=2)
    whole = verify("route-flow", memo=False, **options)
    first = verify("route-flow", max_transitions=5000, checkpoint=checkpoint, **options)
    assert not first.complete
    rest = verify("route-flow", memo=False, resume=checkpoint, **options)
    assert rest.complete and rest.stats.counts()[:3] == whole.stats.counts()[:3]


@pytest.mark.parametrize("app,topology,packets,protocol", [
    ("mac-learning", "linear:1", 3, "openflow"), ("route-flow", "linear:2", 2, "attendre"),
    ("energy-te", "paths:2,3", 1, "openflow"), ("route-flow", "linear:2", 2, "pif:action=drop")])
def test_replayed_fingerprints_equal_the_ones_computed_in_full(app: str, topology: str, packets: int,
                                                               protocol: str) -> None:
    """A memoised transition replays its fingerprint delta where every slot it wrote was read
    first (the old values are then in its key), and a blind append what it adds to the queue
    at hand; every fingerprint a peek gives is that of the successor its writes build, which
    is the state the handlers compute."""
    from nice_attendre.checker import dfs
    from nice_attendre.fingerprint import successor
    from nice_attendre.frontend.api import build

    run = build(app, topology=topology, packets=packets, protocol=protocol, properties=[])
    net = run.network
    peek = net.peek_fingerprinted
    checked = []

    def checked_peek(state: Any, fingerprint: int, event: Any) -> Any:
        found, writes = peek(state, fingerprint, event)
        new = successor(state, writes)
        assert found == net.fingerprint(new) and new == net.narrate(state, event)[0]
        checked.append(found)
        return found, writes

    net.peek_fingerprinted = checked_peek
    result = dfs(net, run.properties, fingerprint=True)
    assert result.complete and len(checked) == result.stats.transitions
    assert net.memo.misses < len(checked) / 2  # most were replays


def fused_applier(memo: TransitionMemo, update: Any) -> Any:
    """``(state, fingerprint, event) -> (successor, its fingerprint)`` through ``memo``'s peek
    (a miss gives ``((), -1)``)."""
    from nice_attendre.fingerprint import Computed, successor

    peek = memo.fingerprinted_peeker(lambda state, fp, ev: (-1, Computed(())), update)

    def apply(state: Any, fingerprint: int, event: Any) -> Any:
        found, writes = peek(state, fingerprint, event)
        return successor(state, writes), found

    return apply


def test_a_delta_is_replayed_only_where_it_was_stored() -> None:
    memo = TransitionMemo()
    event = object()
    memo.store(event, {0: 1}, ((0, 2),), delta=5)  # read slot 0, wrote it: a constant delta
    memo.store(event, {0: 3}, ((0, 4), (1, 9)))  # wrote slot 1 unread: no delta
    calls = []

    def update(fingerprint: int, old: Any, new: Any, written: Any) -> int:
        calls.append(list(written))
        return 1000

    apply = fused_applier(memo, update)
    assert apply((1, 0), 10, event) == ((2, 0), 15) and not calls
    assert apply((3, 7), 10, event) == ((4, 9), 1000) and calls == [[0, 1]]
    assert apply((8, 7), 10, event) == ((), -1) and memo.misses == 1


def test_a_transition_that_writes_a_slot_unread_replays_no_delta() -> None:
    """Its old value is not in its key, so its fingerprint change differs between states."""
    from dataclasses import dataclass

    from nice_attendre.frontend.api import build

    @dataclass(frozen=True)
    class Overwrite:
        pass

    net = build("route-flow", topology="linear:1", packets=1, properties=[]).network
    slot = net.slot_index["buffer:1"]
    net._handlers[Overwrite] = lambda tx, event: tx.put(slot, ((7, 1, None),))  # never reads the slot
    event = Overwrite()
    first = net.encode({"buffer:1": ()})
    second = net.encode({"buffer:1": ((3, 1, None),)})
    for state in (first, second):  # the second is a replay of the first's stored transition
        new, found = net.apply_fingerprinted(state, net.fingerprint(state), event)
        assert found == net.fingerprint(new)
    assert net.memo.misses == 1


@TRACKING
def test_a_blind_append_is_not_a_read(tracking: Any) -> None:
    """Appending to a queue the transition has not looked at records the items, not the queue;
    looking at it afterwards makes it a read of the old value, overwriting it a plain write."""
    def extend(queue: int, items: tuple[int, ...]) -> int:
        return queue * 10 + sum(items)

    tracked = tracking([1, 2, 3])
    assert tracked.append_blind(0, (5,), extend) and tracked.append_blind(0, (6,), extend)
    assert tracked.reads == {} and tracked.appends == {0: (5, 6)} and list(tracked.written) == [0]
    assert tracked.current(0) == (1 * 10 + 5) * 10 + 6
    assert tracked[1] == 2 and not tracked.append_blind(1, (7,), extend)  # read first: ordinary append
    looked = tracking([1, 2, 3])
    looked.append_blind(2, (4,), extend)
    assert looked[2] == 34 and looked.reads == {2: 3} and looked.appends == {}
    overwritten = tracking([1, 2, 3])
    overwritten.append_blind(2, (4,), extend)
    overwritten[2] = 9
    assert overwritten.reads == {} and overwritten.appends == {} and list(overwritten.written) == [2]
    written = tracking([1, 2, 3])
    written[0] = 8
    assert not written.append_blind(0, (1,), extend)  # its new value no longer depends on the old


def test_a_stored_append_replays_onto_whatever_the_queue_holds() -> None:
    from nice_attendre.models.intern import Interner

    queues: Interner[tuple[int, ...]] = Interner("queue", ())
    memo = TransitionMemo(extend=lambda queue, items: queues.intern(queues.values[queue] + items))
    event = object()
    empty, five = queues.intern(()), queues.intern((5,))
    memo.store(event, {0: 1}, ((0, 2),), None, ((1, (7,)),))  # read and wrote slot 0, appended 7 to slot 1
    apply = memo.applier(lambda state, ev: ("miss",))
    assert apply((1, empty), event) == (2, queues.intern((7,)))
    assert apply((1, five), event) == (2, queues.intern((5, 7)))  # another queue: the same append
    assert apply((1, five), event) == (2, queues.intern((5, 7)))  # (now remembered)
    assert apply((3, five), event) == ("miss",)  # what it read differs
    assert memo.lookup((1, five), event) == ((0, 2), (1, queues.intern((5, 7))))
    calls = []

    def update(fingerprint: int, old: Any, new: Any, written: Any) -> int:
        calls.append(list(written))
        return 1000

    fused = fused_applier(memo, update)
    # no delta stored for the write: the append's shift (its own update) and then the write's
    assert fused((1, five), 10, event) == ((2, queues.intern((5, 7))), 1000) and calls == [[1], [0]]
    memo.store(event, {0: 4}, ((0, 2),), 5, ((1, (7,)),))  # the write's delta is constant: 5
    calls.clear()
    assert fused((4, five), 10, event) == ((2, queues.intern((5, 7))), 1015) and calls == [[1]]
    assert fused((4, five), 10, event) == ((2, queues.intern((5, 7))), 1015) and calls == [[1]]  # remembered
    with pytest.raises(ValueError):
        TransitionMemo().store(event, {}, (), None, ((1, (7,)),))  # no way to replay it


@pytest.mark.parametrize("app,topology,packets,protocol,extra", [
    ("route-flow", "linear:3", 2, "openflow", {}), ("route-flow", "linear:3", 2, "openflow-b", {}),
    ("route-flow", "linear:3", 2, "attendre", {}), ("mac-learning", "linear:1", 3, "openflow", {}),
    ("route-flow", "linear:2", 2, "openflow", {"threaded_controller": True}),
    ("route-flow", "linear:2", 2, "openflow", {"command_order": "any"}),
    ("energy-te", "paths:2,3", 1, "openflow", {})])
def test_every_replay_is_what_the_handlers_compute(app: str, topology: str, packets: int, protocol: str,
                                                   extra: dict) -> None:
    """In every transition of the search, the memo's state is the one the handlers compute
    without it, and blind appends are stored where the channels are plain queues."""
    from nice_attendre.checker import dfs
    from nice_attendre.frontend.api import build

    run = build(app, topology=topology, packets=packets, protocol=protocol, **extra)
    net = run.network
    memo_apply = net.apply
    applied = []

    def checked(state: Any, event: Any) -> Any:
        new = memo_apply(state, event)
        assert new == net.narrate(state, event)[0]
        applied.append(event)
        return new

    net.apply = checked
    result = dfs(net, run.properties)
    assert result.complete and len(applied) == result.stats.transitions
    appending = sum(len(by_reads) for _event, groups in net.memo._table.values()
                    for _slots, _getter, by_reads, _deltas, appends in groups if appends)
    assert appending > 0
    assert net.memo.misses < len(applied) / 2


def test_a_packet_in_is_stored_once_whatever_the_channels_hold() -> None:
    """The controller's commands enter the switches' channels as blind appends, so its
    handling of a packet-in is keyed on the packet-in and the app's state only (469 stored
    controller transitions on this scenario when the channels' contents were in the key)."""
    from nice_attendre.checker import dfs
    from nice_attendre.frontend.api import build
    from nice_attendre.models.events import ControllerHandle

    run = build("route-flow", topology="linear:3", packets=2, protocol="openflow")
    net = run.network
    assert dfs(net, run.properties).complete
    stored = sum(len(by_reads) for event, groups in net.memo._table.values() if isinstance(event, ControllerHandle)
                 for _slots, _getter, by_reads, _deltas, _appends in groups)
    assert 0 < stored < 50
