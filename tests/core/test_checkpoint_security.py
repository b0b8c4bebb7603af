"""Issue 34, section 1: a checkpoint runs no code from the file, and a damaged one is refused.

Crafted checkpoints are sealed with a correct digest (a digest detects damage, not forgery),
so that they reach the unpickler: each tries to run something (a marker file is the side
effect) and each must be refused with one line naming the file, the marker never created.
Damaged checkpoints (every single bit flipped, truncations) must be refused before anything
in them is used. A checkpoint of a buggy or other build (a search that is not well formed,
or not one of this network) is refused rather than crashing the search.
"""
from __future__ import annotations

import dataclasses
import json
import pickle
import struct
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable

import pytest

from nice_attendre import checkpoint as files
from nice_attendre.checkpoint import CORE_CLASSES, Admitted, CheckpointError, SearchState, seal
from nice_attendre.frontend import resume
from nice_attendre.frontend.api import build, verify

BUGGY = dict(topology="linear:3", packets=2, app_options={"bug": "forget-last-hop"})


# ---- crafting pickles -------------------------------------------------------------------------------

def text(value: str) -> bytes:
    raw = value.encode()
    return pickle.BINUNICODE + struct.pack("<I", len(raw)) + raw


def name(module: str, attribute: str) -> bytes:
    """The class ``module.attribute`` as protocol 4 names it (a dotted name is resolved
    attribute by attribute by a plain unpickler)."""
    return text(module) + text(attribute) + pickle.STACK_GLOBAL


def call(callable_: bytes, *args: bytes) -> bytes:
    """``callable_(*args)`` (the REDUCE instruction)."""
    return callable_ + pickle.MARK + b"".join(args) + pickle.TUPLE + pickle.REDUCE


def program(body: bytes) -> bytes:
    return pickle.PROTO + bytes([5]) + body + pickle.STOP


def header_of(data: bytes) -> dict[str, Any]:
    """The JSON line of a checkpoint file."""
    return json.loads(data.split(b"\n", 4)[3])


def resealed(data: bytes, body: bytes) -> bytes:
    """A checkpoint with ``data``'s identity, ``body`` as its pickle and a correct digest."""
    return seal(header_of(data)["identity"], body)


@pytest.fixture(scope="module")
def buggy(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A checkpoint of a buggy app's run cut by a limit: violations found, a stack, not finished."""
    path = tmp_path_factory.mktemp("buggy") / "buggy.ckpt"
    result = verify("route-flow", keep_going=True, max_transitions=40, checkpoint=path, **BUGGY)
    assert result.discoveries and not result.complete
    return path.read_bytes()


def buggy_run() -> tuple[Any, dict[str, Any]]:
    run = build("route-flow", **BUGGY)
    return run, resume.run_identity(run, keep_going=True, fingerprint=False, max_depth=None)


# ---- 1. no code from the file -----------------------------------------------------------------------

@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "marker"


def crafted(marker: Path) -> dict[str, tuple[bytes, str]]:
    """Pickles that create ``marker`` when a plain unpickler reads them, by the name each is
    refused with."""
    where = text(str(marker))
    touch = pickle.MARK + text("touch") + where + pickle.LIST
    return {
        "Popen via benchmarks.perf": (call(name("nice_attendre.benchmarks.perf", "subprocess.Popen"), touch),
                                      "nice_attendre.benchmarks.perf.subprocess.Popen"),
        "FileIO via checkpoint": (call(name("nice_attendre.checkpoint", "io.FileIO"), where, text("w")),
                                  "nice_attendre.checkpoint.io.FileIO"),
        "os.system": (call(name("posix", "system"), text(f"touch {marker}")), "posix.system"),
        "os.system, protocol 0 GLOBAL": (pickle.GLOBAL + b"os\nsystem\n" + pickle.MARK + text(f"touch {marker}")
                                         + pickle.TUPLE + pickle.REDUCE, "os.system"),
        "eval": (call(name("builtins", "eval"), text(f"open({str(marker)!r}, 'w')")), "builtins.eval"),
        "getattr": (call(name("builtins", "getattr"), name("nice_attendre.checkpoint", "Admitted"), text("find")),
                    "builtins.getattr"),
        "type": (call(name("builtins", "type"), text("X"), pickle.EMPTY_TUPLE, pickle.EMPTY_DICT), "builtins.type"),
        "a dotted name into an admitted class": (name("nice_attendre.checkpoint", "SearchState.__init__"),
                                                 "nice_attendre.checkpoint.SearchState.__init__"),
        "a function of the core": (call(name("nice_attendre.checkpoint", "save"), where), "nice_attendre.checkpoint.save"),
        "a class of the core that is not listed": (name("nice_attendre.output", "OutputError"),
                                                   "nice_attendre.output.OutputError"),
        "importlib through a listed module": (name("nice_attendre.models.packet", "NamedTuple"),
                                              "nice_attendre.models.packet.NamedTuple"),
    }


@pytest.mark.parametrize("case", sorted(crafted(Path("x"))))
def test_a_crafted_checkpoint_runs_nothing_and_is_refused(tmp_path: Path, buggy: bytes, marker: Path,
                                                          case: str) -> None:
    body, refers_to = crafted(marker)[case]
    path = tmp_path / "evil.ckpt"
    path.write_bytes(resealed(buggy, program(body)))
    run, identity = buggy_run()
    with pytest.raises(CheckpointError) as refused:
        resume.load(run, path, identity)
    assert str(refused.value) == (f"checkpoint {str(path)!r} refers to {refers_to}, "
                                  "which a checkpoint may not contain")
    assert not marker.exists()


def test_a_checkpoint_of_another_run_is_refused_before_it_is_unpickled(tmp_path: Path, buggy: bytes,
                                                                       marker: Path) -> None:
    identity = {**header_of(buggy)["identity"], "app description": "route-flow"}
    path = tmp_path / "evil.ckpt"
    path.write_bytes(seal(identity, program(crafted(marker)["os.system"][0])))
    run, now = buggy_run()
    with pytest.raises(CheckpointError, match=r"was taken of another run \(app description: checkpoint "
                                              r"'route-flow', now 'route-flow \(bug: forget-last-hop\)'\)"):
        resume.load(run, path, now)
    assert not marker.exists()


APP = '''
    """A user app for the tests: its state is a class of its own module; it imports others."""
    from dataclasses import dataclass
    from fractions import Fraction
    from subprocess import Popen

    from nice_attendre.models.app import App, Out
    from nice_attendre.models.messages import PacketIn


    @dataclass(frozen=True)
    class Seen:
        """How many packet-ins the controller saw ({kind} state)."""

        count: int


    class Counting(App[Seen]):
        """Counts packet-ins; with ``fraction`` its state holds a class of another module."""

        def __init__(self, fraction: bool = False) -> None:
            self.fraction = fraction

        def initial_state(self) -> Seen:
            return Seen(Fraction(0) if self.fraction else 0)

        def on_packet_in(self, state: Seen, ev: PacketIn, out: Out) -> Seen:
            return Seen(state.count + 1)
'''


@pytest.fixture
def user_app(tmp_path: Path) -> str:
    path = tmp_path / "counting_app.py"
    path.write_text(textwrap.dedent(APP))
    return f"{path}:Counting"


def test_an_apps_own_classes_are_admitted_and_resume(tmp_path: Path, user_app: str) -> None:
    whole = verify(user_app, packets=2, keep_going=True)  # (it installs nothing: delivery is violated)
    path = tmp_path / "user.ckpt"
    cut = verify(user_app, packets=2, keep_going=True, max_transitions=whole.stats.transitions // 2, checkpoint=path)
    assert not cut.complete
    assert b"counting_app" in path.read_bytes() and b"Seen" in path.read_bytes()  # the app's class is in it
    resumed = verify(user_app, packets=2, keep_going=True, resume=path)
    assert resumed.complete and resumed.stats.counts() == whole.stats.counts()
    assert [d.trace for d in resumed.discoveries] == [d.trace for d in whole.discoveries]


@pytest.mark.parametrize("imported,refers_to", [("Popen", "Popen"), ("Fraction", "Fraction"),
                                                ("App", "App"), ("Counting", "Counting")])
def test_only_classes_defined_in_the_apps_module_are_admitted(tmp_path: Path, user_app: str, marker: Path,
                                                              imported: str, refers_to: str) -> None:
    path = tmp_path / "user.ckpt"
    verify(user_app, max_transitions=3, checkpoint=path)
    run = build(user_app)
    module = type(run.network.app).__module__
    evil = {"Popen": call(name(module, "Popen"), pickle.MARK + text("touch") + text(str(marker)) + pickle.LIST),
            "Fraction": call(name(module, "Fraction"), text("1/3")),
            "App": call(name(module, "App")),
            "Counting": call(name(module, "Counting"))}[imported]
    path.write_bytes(resealed(path.read_bytes(), program(evil)))
    identity = resume.run_identity(run, keep_going=False, fingerprint=False, max_depth=None)
    with pytest.raises(CheckpointError, match=f"refers to {module}.{refers_to}, which a checkpoint may not contain"):
        resume.load(run, path, identity)
    assert not marker.exists()


def test_a_search_holding_a_class_of_another_module_is_not_saved(tmp_path: Path, user_app: str) -> None:
    # The checkpoint could never be loaded: its write fails like a full disk's, and the run goes on.
    path = tmp_path / "user.ckpt"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = verify(user_app, app_options={"fraction": True}, checkpoint=path)
    assert result.verdict == "violated" and not path.exists()
    assert [str(w.message) for w in caught] == [
        f"cannot write --checkpoint {str(path)!r}: the search holds a fractions.Fraction, which a checkpoint may "
        "not hold (only nice-attendre's classes, plain data and classes defined in the app's own module)"]


def test_a_checkpoint_that_changes_a_class_is_refused_and_the_class_restored(tmp_path: Path, buggy: bytes) -> None:
    # BUILD on a class (not an instance) sets its attributes; BUILD on an enum's member too.
    from nice_attendre.property import Expectation
    from nice_attendre.visited import FingerprintTable

    add = FingerprintTable.add
    on_class = (name("nice_attendre.visited", "FingerprintTable") + pickle.NONE + pickle.EMPTY_DICT + text("add")
                + pickle.NONE + pickle.SETITEM + pickle.TUPLE2 + pickle.BUILD)
    on_member = (call(name("nice_attendre.property", "Expectation"), text("always")) + pickle.EMPTY_DICT
                 + text("_value_") + text("sometimes") + pickle.SETITEM + pickle.BUILD)
    run, identity = buggy_run()
    path = tmp_path / "evil.ckpt"
    for body, changed in ((on_class, "nice_attendre.visited.FingerprintTable"),
                          (on_member, "nice_attendre.property.Expectation")):
        path.write_bytes(resealed(buggy, program(body)))
        with pytest.raises(CheckpointError, match=f"checkpoint .* changes the class {changed}, which a checkpoint "
                                                  "may not do"):
            resume.load(run, path, identity)
    assert FingerprintTable.add is add and "add" in FingerprintTable.__dict__
    assert Expectation.ALWAYS.value == "always" and Expectation("always") is Expectation.ALWAYS


# ---- the list of admitted classes -------------------------------------------------------------------

def test_the_admitted_classes_are_classes_defined_where_they_are_named() -> None:
    for cls in (*CORE_CLASSES, *files.DATA_BUILTINS, *resume.NETWORK_CLASSES):
        assert isinstance(cls, type) and not issubclass(cls, type), cls
        module = sys.modules[cls.__module__]
        assert module.__dict__[cls.__qualname__] is cls, cls
    with pytest.raises(TypeError):
        Admitted([len])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        Admitted([type])


#: Value classes of the model that are never in a state, a stack or a trace (configuration,
#: declarations, views for properties).
NEVER_SAVED = {"SwitchEvents", "ProtocolSpec", "Param", "Flow", "HostSpec", "Scenario", "Peer", "Topology", "Options",
               "Hop", "FlowModRequest", "PacketOutRequest", "InstallPathRequest", "PortStatsRequestRequest",
               "BarrierRequestRequest", "Received", "Sent", "InFlight", "HostView", "SwitchView", "View", "Link",
               "HeldMessages",
               "PathDelays", "DelayParams", "Summary", "Mechanism", "BarrierGapClaim", "WorstBeatsBestClaim",
               "WorstBeatsShareClaim", "Claims", "DelayStudy", "Tx", "TrackingTx", "MemoTx", "RulesParam",
               "Read", "Outcome",  # (determinism.py: what one call read, what it did; an alert holds their text)
               "Standin",  # (footprints.py: a dormant family of events for partial-order reduction, never enabled)
               "PendingStandin"}  # (footprints_variants.py: the same, for pif's pending entries' expiries)


def test_every_value_class_of_the_model_is_admitted_or_declared_never_saved() -> None:
    # A new event or state component must be added to NETWORK_CLASSES (or here): otherwise
    # checkpoints holding it could not be written.
    import importlib
    import pkgutil

    import nice_attendre.models as models

    admitted = {cls.__qualname__ for cls in resume.NETWORK_CLASSES}
    undecided = []
    for info in pkgutil.walk_packages(models.__path__, "nice_attendre.models."):
        if ".ryu" in info.name:
            continue
        module = importlib.import_module(info.name)
        for cls in vars(module).values():
            if not isinstance(cls, type) or cls.__module__ != info.name:
                continue
            is_value = (dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen) or (
                issubclass(cls, tuple) and hasattr(cls, "_fields"))
            if is_value and cls.__qualname__ not in admitted | NEVER_SAVED:
                undecided.append(f"{info.name}.{cls.__qualname__}")
    assert undecided == []


# ---- 2. integrity -----------------------------------------------------------------------------------

def test_the_file_names_its_format_version_digest_and_run(tmp_path: Path, buggy: bytes) -> None:
    import hashlib

    lines = buggy.split(b"\n", 4)
    assert lines[:2] == [b"nice-attendre checkpoint", b"version 2"]
    digest = hashlib.sha256(b"\n".join(lines[:2]) + b"\n" + b"\n".join(lines[3:])).hexdigest()
    assert lines[2] == f"sha256 {digest}".encode()
    run, identity = buggy_run()
    assert header_of(buggy) == {"byte order": sys.byteorder, "identity": json.loads(json.dumps(identity))}


def flips_are_refused(tmp_path: Path, buggy: bytes, bits: Iterable[int]) -> None:
    """Flip each of ``bits`` alone and load the result: each must be refused."""
    run, identity = buggy_run()
    path = tmp_path / "flipped.ckpt"
    path.write_bytes(buggy)
    resume.load(run, path, identity)  # the original is fine
    accepted, messages = [], set()
    for bit in bits:
        data = bytearray(buggy)
        data[bit >> 3] ^= 1 << (bit & 7)
        path.write_bytes(data)
        try:
            resume.load(run, path, identity)
        except CheckpointError as exc:
            messages.add(str(exc).replace(str(path), "FILE"))
        else:
            accepted.append(bit)
    assert accepted == []
    assert all("\n" not in message and "'FILE'" in message for message in messages), messages
    assert "checkpoint 'FILE' is damaged: its content does not match its SHA-256 digest (changed or truncated " \
           "since it was written)" in messages


def test_a_single_bit_flip_in_any_byte_is_refused(tmp_path: Path, buggy: bytes) -> None:
    # The issue: of 67 bit-flipped copies of one checkpoint, 9 resumed to a different result
    # without a word. Now a flip is refused before anything is unpickled: here one bit of
    # every byte (bit 0 of byte 0, bit 1 of byte 1...: every byte and every bit position).
    flips_are_refused(tmp_path, buggy, (8 * byte + byte % 8 for byte in range(len(buggy))))


@pytest.mark.slow
def test_every_single_bit_flip_is_refused(tmp_path: Path, buggy: bytes) -> None:
    flips_are_refused(tmp_path, buggy, range(len(buggy) * 8))  # about 48,000 flips: 35 s to 2 min


def test_flipping_the_finished_flag_is_refused(tmp_path: Path, buggy: bytes) -> None:
    at = buggy.index(b"\x08finished\x94") + len(b"\x08finished\x94")
    assert buggy[at:at + 1] == pickle.NEWFALSE
    path = tmp_path / "finished.ckpt"
    path.write_bytes(buggy[:at] + pickle.NEWTRUE + buggy[at + 1:])
    run, identity = buggy_run()
    with pytest.raises(CheckpointError, match="is damaged: its content does not match its SHA-256 digest"):
        resume.load(run, path, identity)


@pytest.mark.parametrize("keep", [0, 10, 24, 40, 110, -1000, -1])
def test_a_truncated_checkpoint_is_refused(tmp_path: Path, buggy: bytes, keep: int) -> None:
    path = tmp_path / "short.ckpt"
    path.write_bytes(buggy[:keep])
    run, identity = buggy_run()
    with pytest.raises(CheckpointError) as refused:
        resume.load(run, path, identity)
    message = str(refused.value)
    assert repr(str(path)) in message and "\n" not in message
    assert ("is not a nice-attendre checkpoint" in message or "is damaged" in message), message


@pytest.mark.parametrize("change,message", [
    (lambda d: d.replace(b"version 2\n", b"version 1\n", 1), "has format version 1; this nice-attendre reads version 2"),
    (lambda d: d.replace(b"version 2\n", b"version two\n", 1), "is damaged: its header has no format version"),
    (lambda d: d.replace(b"sha256 ", b"sha512 ", 1), "is damaged: its header has no SHA-256 digest"),
    (lambda d: d[:80] + d[80:130].upper() + d[130:], "is damaged"),  # hex digits in capitals: not the digest
    (lambda d: d + b"\x00", "is damaged: its content does not match its SHA-256 digest"),
])
def test_a_changed_header_is_refused(tmp_path: Path, buggy: bytes, change: Callable[[bytes], bytes],
                                     message: str) -> None:
    path = tmp_path / "changed.ckpt"
    changed = change(buggy)
    assert changed != buggy
    path.write_bytes(changed)
    run, identity = buggy_run()
    with pytest.raises(CheckpointError, match=message):
        resume.load(run, path, identity)


def test_a_checkpoint_of_an_older_format_or_another_machine_is_refused(tmp_path: Path, buggy: bytes) -> None:
    run, identity = buggy_run()
    path = tmp_path / "old.ckpt"
    path.write_bytes(pickle.dumps({"format": "nice-attendre checkpoint", "version": 1}))
    with pytest.raises(CheckpointError, match=r"is not a nice-attendre checkpoint \(it does not start with "
                                              r"'nice-attendre checkpoint'; an older nice-attendre may have written it\)"):
        resume.load(run, path, identity)
    lines = buggy.split(b"\n", 4)
    other = "big" if sys.byteorder == "little" else "little"
    meta = json.dumps({**header_of(buggy), "byte order": other}, sort_keys=True).encode()
    path.write_bytes(seal(identity, lines[4]).replace(lines[3], meta))  # digest no longer right
    with pytest.raises(CheckpointError, match="is damaged"):
        resume.load(run, path, identity)
    head = b"nice-attendre checkpoint\nversion 2\n"
    import hashlib
    rest = meta + b"\n" + lines[4]
    path.write_bytes(head + f"sha256 {hashlib.sha256(head + rest).hexdigest()}\n".encode() + rest)
    with pytest.raises(CheckpointError, match=f"was written on a machine of another byte order \\('{other}'"):
        resume.load(run, path, identity)


def test_saving_is_atomic_and_keeps_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "c.ckpt"
    path.write_bytes(b"an older file")
    search = SearchState(0, set(), [], 0, 0, 0, False, [], set(), [])
    files.save(path, {"run": "x"}, None, search)
    assert [p.name for p in tmp_path.iterdir()] == ["c.ckpt"]
    tables, loaded = files.load(path, {"run": "x"})
    assert tables is None and loaded == search
