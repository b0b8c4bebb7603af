"""Nondeterministic handlers found by construction (models/determinism.py): the detector sees
each read of the clock, randomness and addresses by the app's code, and nothing else; the
platform calls each handler twice and compares; either is the violation app-nondeterminism
at the call that shows it, in every run."""
from __future__ import annotations

import builtins
import copy
import datetime
import enum
import logging
import os
import random
import secrets
import sys
import time
import uuid
from pathlib import Path
from time import time as bound_time
from typing import Any, Callable

import pytest

from nice_attendre import verify
from nice_attendre.models.app import App, Hop, Out
from nice_attendre.models.determinism import Detector, Outcome, difference, hash_varies
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output
from tests_data_apps import path

ROUTERS = "random_router.py"
MODELS = Path(__import__("nice_attendre.models").models.__path__[0])


def reads(function: Callable[[], Any]) -> list[str]:
    """What the detector saw ``function`` read (this test file is app code: not installed)."""
    detector = Detector()
    detector.begin()
    try:
        function()
    finally:
        detector.end()
    return [read.source for read in detector.reads]


class Colour(enum.Enum):
    RED = 1


class Plain:
    """Hashed by its address."""

    def method(self) -> None:
        """A bound method hashes its object."""


# ---- the detector -----------------------------------------------------------------------

@pytest.mark.parametrize("function, source", [
    (lambda: random.random(), "the random module's shared generator (random.random)"),
    (lambda: random.choice([1, 2]), "the random module's shared generator (random.choice)"),
    (lambda: random.Random().random(), "a Random generator not seeded with a value in this call (Random.random)"),
    (lambda: time.time(), "the clock (time.time)"),
    (lambda: bound_time(), "the clock (time.time)"),
    (lambda: time.monotonic_ns(), "the clock (time.monotonic_ns)"),
    (lambda: time.perf_counter(), "the clock (time.perf_counter)"),
    (lambda: datetime.datetime.now(), "the clock (datetime.now)"),
    (lambda: datetime.date.today(), "the clock (date.today)"),
    (lambda: uuid.uuid1(), "the clock (uuid.uuid1)"),
    (lambda: os.urandom(4), "the system's randomness (os.urandom)"),
    (lambda: secrets.token_hex(4), "the system's randomness (secrets.token_hex)"),
    (lambda: uuid.uuid4(), "the system's randomness (uuid.uuid4)"),
    (lambda: random.SystemRandom().random(), "the system's randomness (random.random)"),
    (lambda: id(object()), "id() (an object's address, which differs from run to run)"),
    (lambda: hash(object()), "hash() of an object (hashed by its address, which differs from run to run)"),
    (lambda: hash(Plain()), "hash() of a Plain (hashed by its address, which differs from run to run)"),
    (lambda: hash("h1"), "hash() of a str (it varies with PYTHONHASHSEED)"),
    (lambda: hash((1, ("a", 2))), "hash() of a str (it varies with PYTHONHASHSEED)"),
    (lambda: hash(Match((("eth_dst", "h2"),), 1)), "hash() of a str (it varies with PYTHONHASHSEED)"),
    (lambda: hash(Colour.RED), "hash() of a str (it varies with PYTHONHASHSEED)"),
])
def test_each_source_is_seen(function: Callable[[], Any], source: str) -> None:
    assert reads(function) == [source]


def _seeded_then_read() -> None:
    random.seed(5)
    random.random()
    random.setstate(random.getstate())
    random.choice([1, 2])


def _kept(rng: random.Random) -> Callable[[], Any]:
    return lambda: rng.random()


@pytest.mark.parametrize("function", [
    lambda: random.Random(42).random(),  # seeded in the call: deterministic
    _seeded_then_read,  # the shared generator, seeded with a value first
    lambda: hash(7),
    lambda: hash((1, 2.5, (3, True))),
    lambda: Plain() in {Plain(): 1},  # membership: the hash's value does not matter
    lambda: Match.of(eth_dst="h2") in {Match.of(eth_dst="h2")},  # the dataclass's __hash__ hashes strs
    lambda: copy.deepcopy({"a": [Plain()]}),  # the library keys its memo by id()
    lambda: logging.getLogger("nice-attendre-test").warning("x %s", 1),  # logging stamps the record
    lambda: sorted([3, 1, 2]),
])
def test_deterministic_code_is_not_a_read(function: Callable[[], Any]) -> None:
    logging.getLogger("nice-attendre-test").propagate = False
    assert reads(function) == []


def test_a_generator_made_before_the_call_is_a_read() -> None:
    rng = random.Random(3)  # seeded, but carries its state from call to call
    assert reads(_kept(rng)) == ["a Random generator not seeded with a value in this call (Random.random)"]


def test_the_checkers_own_reads_are_not_the_apps() -> None:
    """Code in the checker's own files (here: code compiled as if it were models/clocked.py)
    reads the clock and randomness during a call without being blamed; the app's code
    calling it is not blamed either, as the read is not the app's."""
    scope: dict[str, Any] = {}
    exec(compile("import time, random\ndef read():\n    return time.time(), random.random(), id(read)\n",
                 str(MODELS / "clocked.py"), "exec"), scope)
    assert reads(scope["read"]) == []


def test_where_names_the_apps_line() -> None:
    detector = Detector()
    detector.begin()
    try:
        line = sys._getframe().f_lineno + 1
        time.time()
    finally:
        detector.end()
    (read,) = detector.reads
    assert read.where == f"test_determinism.py:{line} in test_where_names_the_apps_line"


def test_end_gives_back_the_builtins_and_the_profile_function() -> None:
    seen: list[str] = []

    def profiler(frame: Any, event: str, arg: Any) -> None:
        seen.append(event)

    before = sys.getprofile()
    sys.setprofile(profiler)
    try:
        detector = Detector()
        detector.begin()
        assert builtins.hash is not hash.__class__ and sys.getprofile() is not profiler
        time.time()
        detector.end()
        detector.end()  # idempotent
        assert sys.getprofile() is profiler
    finally:
        sys.setprofile(before)
    assert builtins.hash(1) == 1 and builtins.hash.__module__ == "builtins" and builtins.id.__module__ == "builtins"
    assert [read.source for read in detector.reads] == ["the clock (time.time)"]
    assert "c_call" in seen  # the profiler that was there saw the call too


def test_hash_varies() -> None:
    assert hash_varies((1, 2, frozenset({3}))) is None
    assert hash_varies(b"x") == "hash() of a bytes (it varies with PYTHONHASHSEED)"
    assert hash_varies(print) is not None
    assert hash_varies(Plain().method) is not None  # a bound method hashes its object
    assert hash_varies(Plain().__init__) is not None  # a method-wrapper too


def test_difference_says_how_two_calls_differ() -> None:
    same = Outcome(None, 1, "s", ("a",))
    assert difference(same, Outcome(None, 1, "s", ("a",))) is None
    assert difference(Outcome("raised KeyError: 'h2'", None, None, ()),
                      Outcome("raised KeyError: 'h2'", None, None, ())) is None
    assert difference(Outcome("raised ValueError: <Out object at 0x7f01>", None, None, ()),
                      Outcome("raised ValueError: <Out object at 0x7f99>", None, None, ())) is None
    assert difference(same, Outcome(None, 2, "t", ("a",))) == \
        "returned two states for the same input: 's', then 't' when called again"
    assert difference(same, Outcome(None, 1, "s", ("a", "b"))) == \
        "asked for two things for the same input: request 2 was nothing more, then 'b' when called again"
    assert difference(same, Outcome("raised KeyError: 'h2'", None, None, ())) == \
        "gave two outcomes for the same input: it returned, then raised KeyError: 'h2' when called again"


# ---- through the network: the routers of tests/data/apps/random_router.py ---------------

NONDETERMINISTIC = {
    "RandomRouter": "read the random module's shared generator (random.randrange) at random_router.py:",
    "ClockRouter": "read the clock (time.time) at random_router.py:",
    "BoundClockRouter": "read the clock (time.perf_counter) at random_router.py:",
    "UrandomRouter": "read the system's randomness (os.urandom) at random_router.py:",
    "HashRouter": "read hash() of an object (hashed by its address, which differs from run to run) at",
    "IdRouter": "read id() (an object's address, which differs from run to run) at random_router.py:",
    "StringHashRouter": "read hash() of a str (it varies with PYTHONHASHSEED) at random_router.py:",
    "SecretsRouter": "read the system's randomness (secrets.randbelow) at random_router.py:",
    "UuidRouter": "read the system's randomness (uuid.uuid4) at random_router.py:",
    "DatetimeRouter": "read the clock (datetime.now) at random_router.py:",
    "KeptGeneratorRouter": "read a Random generator not seeded with a value in this call (random.randrange) at",
    "NumberedRouter": "asked for two things for the same input: request 1 was ",
}


@pytest.mark.parametrize("bug", [None, "black-hole"])
@pytest.mark.parametrize("name", sorted(NONDETERMINISTIC))
def test_a_nondeterministic_router_violates_app_nondeterminism_at_its_first_call(name: str, bug: str | None) -> None:
    result = verify(path(ROUTERS, name), topology="paths:2,3", packets=2, app_options={"bug": bug} if bug else {})
    (found,) = result.discoveries
    assert found.property == "app-nondeterminism"
    assert found.reason.startswith(f"{name}.on_packet_in {NONDETERMINISTIC[name]}")
    assert found.reason.endswith("(handling packet-in(s1, port 1, h1#0))")
    assert [str(step.event) for step in found.trace.steps][-1].startswith("controller handles")


@pytest.mark.parametrize("name", ["ChoosingRouter", "SeededRouter", "ReseedingRouter", "StableHashRouter",
                                  "LookupRouter"])
def test_a_deterministic_router_is_not_nondeterministic(name: str) -> None:
    assert verify(path(ROUTERS, name), topology="paths:2,3", packets=2).ok
    buggy = verify(path(ROUTERS, name), topology="paths:2,3", packets=2, app_options={"bug": "black-hole"})
    assert {d.property for d in buggy.discoveries} == {"no-forgotten-packets", "delivery"}


class _InitialClock(App[float]):
    def initial_state(self) -> float:
        return float(int(time.time()) % 1)


class _JoinRandom(App[int]):
    def initial_state(self) -> int:
        return 0

    def on_switch_join(self, state: int, dpid: int, out: Out) -> int:
        return random.randrange(1)


_FLIPS = [0]


class _RaisesEveryOtherCall(App[None]):
    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        _FLIPS[0] += 1
        if _FLIPS[0] % 2:
            raise KeyError("odd")
        out.install_path([Hop(d, Match.exact(ev.packet.hdr), (Output(p),))
                          for d, p in out.topology.path(ev.dpid, ev.packet.hdr.eth_dst)], packet_in=ev)
        return state


class _CountsInState(App[int]):
    def initial_state(self) -> int:
        return 0

    def on_packet_in(self, state: int, ev: PacketIn, out: Out) -> int:
        _FLIPS[0] += 1
        return _FLIPS[0]


def test_initial_state_and_switch_join_are_watched() -> None:
    (found,) = verify(_InitialClock(), topology="linear:1").discoveries
    assert found.property == "app-nondeterminism" and len(found.trace) == 0
    assert found.reason.startswith("_InitialClock.initial_state read the clock (time.time) at test_determinism.py:")
    (found,) = verify(_JoinRandom(), topology="linear:2").discoveries
    assert found.property == "app-nondeterminism" and len(found.trace) == 0
    assert found.reason.startswith("_JoinRandom.on_switch_join read the random module's shared generator "
                                   "(random.randrange) at test_determinism.py:")


def test_calling_again_shows_state_kept_outside_the_arguments() -> None:
    (found,) = verify(_RaisesEveryOtherCall(), topology="linear:2").discoveries
    assert found.property == "app-nondeterminism"
    assert found.reason.startswith("_RaisesEveryOtherCall.on_packet_in gave two outcomes for the same input: it ")
    (found,) = verify(_CountsInState(), topology="linear:2").discoveries
    assert found.reason.startswith("_CountsInState.on_packet_in returned two states for the same input: ")


def test_the_verdict_is_the_same_in_every_run() -> None:
    """Ten searches of the random and the clock router, with and without the planted bug:
    the same discovery, at the same step, with the same counts."""
    for name in ("RandomRouter", "ClockRouter", "UrandomRouter", "HashRouter"):
        for bug in ({}, {"bug": "black-hole"}):
            seen = set()
            for _ in range(10):
                result = verify(path(ROUTERS, name), topology="paths:2,3", packets=2, app_options=bug)
                seen.add((tuple((d.property, d.reason, len(d.trace)) for d in result.discoveries),
                          result.stats.transitions, result.stats.unique_states))
            assert len(seen) == 1, (name, bug, seen)
            ((discoveries, _, _),) = seen
            assert [d[0] for d in discoveries] == ["app-nondeterminism"]


def test_with_keep_going_no_state_after_a_nondeterministic_call_is_explored() -> None:
    """The call's result is never followed (the app's state and the network are left as
    they were, and the violating state is not expanded): the counts do not depend on what
    the handler happened to return."""
    counts = {verify(path(ROUTERS, "RandomRouter"), topology="paths:2,3", packets=2, keep_going=True).stats.transitions
              for _ in range(5)}
    assert len(counts) == 1


def test_a_collection_during_the_call_is_not_the_apps_read() -> None:
    """A collection the app's call triggers (by allocating) runs ``gc.callbacks`` and
    finalizers on top of the app's frame; hypothesis's callback reads the clock to time it,
    which was blamed on the app (route-flow and a user's router were found
    nondeterministic in the test suite this way). No collection runs during a call now."""
    import gc

    scope: dict[str, Any] = {}
    exec(compile("import time\ndef timed(phase, info):\n    time.perf_counter()\n", random.__file__, "exec"),
         scope)  # a callback of the standard library's, as hypothesis installs one of its own

    def allocate() -> None:
        kept = [[] for _ in range(100)]  # allocations that trigger collections
        del kept

    threshold = gc.get_threshold()
    gc.set_threshold(10)
    gc.callbacks.append(scope["timed"])
    try:
        assert reads(allocate) == []
        assert gc.isenabled()
    finally:
        gc.callbacks.remove(scope["timed"])
        gc.set_threshold(*threshold)


def test_each_distinct_input_is_checked_once_with_or_without_the_memo() -> None:
    """Without the memo a handler runs at every transition that calls it; each distinct
    (handler, message, app state) is still watched and called twice only once (the checks
    find what they find with the memo on, at about the memo's cost: --no-memo took 1.8 times
    as long on mac-learning before)."""
    from nice_attendre.frontend.api import build
    from nice_attendre.checker import Limits, dfs

    for memo in (True, False):
        run = build("mac-learning", topology="linear:1", packets=3, memo=memo)
        net = run.network
        watched = [0]
        begin = net.detector.begin

        def counting_begin() -> None:
            watched[0] += 1
            begin()

        net.detector.begin = counting_begin  # type: ignore[method-assign]
        calls, known = net.guard.calls, len(net.detector.checked)  # (the switch joins' calls)
        result = dfs(net, run.properties, limits=Limits())
        assert result.ok
        assert watched[0] == len(net.detector.checked) - known > 0
        if not memo:
            assert net.guard.calls - calls > 3 * watched[0]  # most calls were of inputs checked before
