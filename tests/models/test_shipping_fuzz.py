"""App states crossing processes (models/shipping.py), fuzzed.

A partitioned search ships each new component of a state (an app state among them) to the
shard that owns the state. Whatever the app keeps in its state, the value must arrive equal,
of the same type and with the same fingerprint, or the run must end with one clear error
naming the type that cannot travel (exit 2) -- never an internal error (exit 70).
"""
from __future__ import annotations

import enum
import math
import pickle
import sys
from dataclasses import dataclass
from typing import Any, NamedTuple

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nice_attendre.errors import ModelError
from nice_attendre.fingerprint import FingerprintError
from nice_attendre.frontend.api import build
from nice_attendre.frontend.cli import main
from nice_attendre.models.app import App, Hop, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output
from nice_attendre.models.shipping import UnshippableValue

# ---- values an app may keep in its state ---------------------------------------------------


class Count(int):
    """An int with a label, made from both: plain pickling calls ``Count(n)`` and fails."""

    def __new__(cls, n: int, label: str) -> "Count":
        self = super().__new__(cls, n)
        self.label = label
        return self


class PlainInt(int):
    pass


class Pair(tuple):
    """A tuple made from two arguments (plain pickling calls ``Pair((a, b))``)."""

    def __new__(cls, a: Any, b: Any) -> "Pair":
        return super().__new__(cls, (a, b))


class PlainTuple(tuple):
    pass


class Name(str):
    def __new__(cls, text: str, suffix: str) -> "Name":
        return super().__new__(cls, text + suffix)


class Ratio(float):
    def __new__(cls, num: float, den: float) -> "Ratio":
        return super().__new__(cls, num / den)


class Blob(bytes):
    def __new__(cls, data: bytes, pad: bytes) -> "Blob":
        return super().__new__(cls, data + pad)


class Tags(frozenset):
    pass


class Point(NamedTuple):
    x: Any
    y: Any


class Color(enum.Enum):
    RED = 1
    GREEN = "g"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclass(frozen=True)
class Box:
    content: Any
    count: int


@dataclass(frozen=True, slots=True)
class Slim:
    left: Any
    right: Any


class Opaque:
    """Hashable, with an equality no canonical encoding knows: no fingerprint."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Opaque) and other.n == self.n

    def __hash__(self) -> int:
        return hash(self.n)


def _local_class() -> type:
    @dataclass(frozen=True)
    class Local:  # a class pickle cannot name
        n: int

    return Local


Local = _local_class()

leaves = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8), st.binary(max_size=8),
    st.builds(Count, st.integers(), st.text(max_size=3)), st.builds(PlainInt, st.integers()),
    st.builds(Name, st.text(max_size=4), st.text(max_size=2)),
    st.builds(Ratio, st.integers(-9, 9), st.integers(1, 9)),
    st.builds(Blob, st.binary(max_size=4), st.binary(max_size=2)),
    st.sampled_from(list(Color)), st.sampled_from(list(Level)),
    st.builds(Local, st.integers(0, 3)), st.builds(Opaque, st.integers(0, 3)),
)


def _nested(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=3).map(tuple),
        st.frozensets(children, max_size=3),
        st.builds(Pair, children, children), st.lists(children, max_size=3).map(PlainTuple),
        st.frozensets(children, max_size=3).map(Tags),
        st.builds(Point, children, children), st.builds(Box, children, st.integers()),
        st.builds(Slim, children, children),
    )


values = st.recursive(leaves, _nested, max_leaves=8)


def parts(value: Any) -> list[Any]:
    """``value`` and every value inside it."""
    found = [value]
    if isinstance(value, (tuple, frozenset)):
        for item in value:
            found.extend(parts(item))
    elif isinstance(value, (Box, Slim)):
        for item in ((value.content,) if isinstance(value, Box) else (value.left, value.right)):
            found.extend(parts(item))
    return found


def travels(value: Any) -> bool:
    """Whether ``value`` must arrive (no part without a fingerprint, unpicklable or unequal to
    its copy: NaN is not equal to itself)."""
    return not any(isinstance(part, (Opaque, Local)) or (isinstance(part, float) and math.isnan(part))
                   for part in parts(value))


# ---- the codec, between two networks (as in two processes) ---------------------------------


class Holds(App[Any]):
    """An app whose state is whatever the test gives it."""

    def initial_state(self) -> Any:
        return None


def network() -> Any:
    return build(Holds(), topology="linear:1", packets=0, properties=[]).network


def with_app_state(net: Any, value: Any) -> Any:
    """``net``'s initial state with ``value`` as the app's state."""
    state = list(net.initial_states()[0])
    state[net.slot_app] = net._intern[net.slot_app](value)
    return net._make_state(state)


SENDER, RECEIVER = network(), network()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values)
def test_app_states_arrive_equal_with_their_fingerprint_or_are_refused_by_type(value: Any) -> None:
    sender, receiver = network(), network()
    slot = sender.slot_app
    try:
        state = with_app_state(sender, value)
        fingerprint = sender.fingerprint(state)
        payload = pickle.loads(pickle.dumps(sender.state_codec().encode([state], 1)))  # as shard.ship sends it
        got = receiver.state_codec().decode(payload)(0)
    except (UnshippableValue, FingerprintError) as exc:
        assert not travels(value), f"{value!r} should travel: {exc}"
        named = {type(part).__qualname__ for part in parts(value)}
        assert any(name in str(exc) for name in named), str(exc)
        assert "\n" not in str(exc)
        return
    assert travels(value), f"{value!r} travelled"
    received = receiver.interned(slot)[got[slot]]
    assert type(received) is type(value) and received == value
    assert receiver.fingerprint(got) == fingerprint
    assert [type(part) for part in parts(received)] == [type(part) for part in parts(value)] or \
        any(isinstance(part, frozenset) for part in parts(value))  # a set's order may differ


def test_a_subclass_whose_new_takes_other_arguments_keeps_its_attributes() -> None:
    count = Count(3, "three")
    state = with_app_state(SENDER, Pair(count, Slim(Name("a", "b"), Tags({Level.LOW}))))
    payload = pickle.loads(pickle.dumps(SENDER.state_codec().encode([state], 1)))
    got = RECEIVER.state_codec().decode(payload)(0)
    received = RECEIVER.interned(RECEIVER.slot_app)[got[RECEIVER.slot_app]]
    assert received == (3, Slim("ab", frozenset({Level.LOW})))
    assert type(received[0]) is Count and received[0].label == "three"
    assert type(received[1].left) is Name and type(received[1].right) is Tags


def test_a_value_pickle_cannot_name_is_one_clear_error() -> None:
    state = with_app_state(SENDER, (1, Local(2)))
    with pytest.raises(UnshippableValue, match=r"a value of type \S*Local in the app's state \(.*Local\(n=2\)\) "
                                               r"cannot be sent to another process"):
        SENDER.state_codec().encode([state], 2)


def test_a_state_nested_too_deeply_is_one_clear_error() -> None:
    """Fingerprints and pickling recurse into a value: one nested beyond Python's recursion
    limit is refused in one line (it was a RecursionError: exit 70)."""
    deep: Any = ()
    for level in range(sys.getrecursionlimit() * 2):
        deep = (level, deep)
    net = network()  # (its interner keeps the value)
    state = with_app_state(net, deep)
    with pytest.raises(FingerprintError, match="nested too deeply"):
        net.fingerprint(state)


# ---- what a receiver reads is checked ------------------------------------------------------


def _payloads() -> st.SearchStrategy[Any]:
    junk = st.one_of(st.none(), st.integers(), st.binary(max_size=24), st.text(max_size=4))
    entries = st.tuples(st.integers(-2, 12), st.integers(-1, 1 << 65), junk)
    packed = st.one_of(st.binary(max_size=40), st.lists(entries, max_size=3).map(pickle.dumps),
                       junk.map(pickle.dumps))
    return st.one_of(junk, st.tuples(st.binary(max_size=64), packed), st.tuples(junk, junk),
                     st.lists(junk, max_size=3).map(tuple))


@settings(max_examples=300, deadline=None)
@given(_payloads(), st.integers(-1, 3))
def test_a_malformed_payload_is_a_typed_error(payload: Any, index: int) -> None:
    """Whatever a receiver is given, it decodes it or raises one of the library's typed errors
    (which the command line reports in one line), never an IndexError, KeyError or TypeError."""
    codec = network().state_codec()
    try:
        codec.decode(payload)(index)
    except (ModelError, UnshippableValue):
        pass


def test_a_payload_cut_short_or_naming_unknown_components_is_refused() -> None:
    hashes, packed = SENDER.state_codec().encode([SENDER.initial_states()[0]], 3)
    fresh = network().state_codec()
    state = fresh.decode((hashes, packed))
    with pytest.raises(ModelError, match="holds 1 states, not 2"):
        state(1)
    with pytest.raises(ModelError, match="not a multiple"):
        fresh.decode((hashes[:-3], b""))
    with pytest.raises(ModelError, match="names a component never sent"):
        network().state_codec().decode((bytes(len(hashes)), b""))(0)


# ---- the command line: --workers 2 on apps keeping such values ------------------------------

#: the app state the command line's runs below keep (an app's module global, read in the
#: workers, which are forked from this process)
KEPT: list[Any] = [None]


class Keeps(App[Any]):
    """Routes each packet-in and keeps ``(the test's value, packet-ins so far)`` as its state."""

    def initial_state(self) -> Any:
        return (KEPT[0], Count(0, "n"))

    def on_packet_in(self, state: Any, ev: PacketIn, out: Out) -> Any:
        hdr = ev.packet.hdr
        path = out.topology.path(ev.dpid, hdr.eth_dst)
        out.install_path([Hop(d, Match.exact(hdr), (Output(p),)) for d, p in path], packet_in=ev)
        return (Pair(state[0], ev.dpid), Count(state[1] + 1, "n"))


def _verify(*extra: str) -> Any:
    return CliRunner().invoke(main, ["verify", f"{__name__}:Keeps", "--topology", "linear:2", *extra])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values)
def test_workers_give_the_sequential_result_or_exit_2_never_70(value: Any) -> None:
    KEPT[0] = value
    sequential = _verify()
    parallel = _verify("--workers", "2")
    assert parallel.exit_code in {0, 1, 2, 3, 4}, parallel.output
    assert "Traceback" not in parallel.output
    if parallel.exit_code == 2:
        assert not travels(value) or "cannot be sent to another process" in parallel.output
        assert len(parallel.output.strip().splitlines()) == 1, parallel.output
    else:
        lines = [line for line in parallel.output.splitlines() if line.startswith(("  transitions", "  unique"))]
        assert lines and lines == [line for line in sequential.output.splitlines()
                                   if line.startswith(("  transitions", "  unique"))]
        assert parallel.exit_code == sequential.exit_code


def test_module_name() -> None:
    """The command line's runs above load this module by its name."""
    assert sys.modules[__name__].Keeps is Keeps


# ---- channels whose order carries no meaning (--command-order any, --threaded-controller) ----


def _reachable(net: Any, limit: int) -> dict[int, Any]:
    """The first ``limit`` states breadth-first, by fingerprint."""
    from collections import deque

    initial = net.initial_states()[0]
    found = {net.fingerprint(initial): initial}
    queue = deque([initial])
    while queue and len(found) < limit:
        state = queue.popleft()
        for event in net.enabled(state):
            successor = net.apply(state, event)
            fingerprint = net.fingerprint(successor)
            if fingerprint not in found:
                found[fingerprint] = successor
                queue.append(successor)
    return found


@pytest.mark.parametrize("semantics", [{"command_order": "any"}, {"threaded_controller": True},
                                       {"command_order": "any", "threaded_controller": True}],
                         ids=["any-order", "threaded", "both"])
def test_unordered_channels_look_the_same_in_processes_that_met_their_items_in_another_order(
        semantics: dict[str, Any]) -> None:
    """Two processes give an item different ids when they meet it in another order. A
    channel whose order means nothing is kept sorted; sorted by ids, the same channel had two
    representations and two fingerprints, so a state shipped from one process was stored in
    the other under a fingerprint that process never computed itself (three workers counted
    3,651 transitions where one counts 3,570; --keep-going could not rebuild its traces)."""
    options = dict(topology="linear:2", packets=1, **semantics)
    one = build("mac-learning", **options).network
    other = build("mac-learning", **options).network
    reached = _reachable(one, 3_000)
    for item in reversed(one._items.values):  # the other process met every item in reverse order
        other._items.intern(item)
    assert list(one._items.values) != list(other._items.values)
    reached_there = _reachable(other, 3_000)
    assert set(reached) == set(reached_there)  # the same fingerprints
    sent = list(reached.values())
    decode = other.state_codec().decode(pickle.loads(pickle.dumps(one.state_codec().encode(sent, 1))))
    for index, (fingerprint, state) in enumerate(reached.items()):
        arrived = decode(index)
        assert other.fingerprint(arrived) == fingerprint
        assert arrived == reached_there[fingerprint]  # the very representation computed there
        assert [str(event) for event in other.enabled(arrived)] == [str(event) for event in one.enabled(state)]
