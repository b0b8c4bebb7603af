"""Issue 34, section 1, on the command line: a damaged checkpoint never gives a verdict.

A damaged copy of a checkpoint (a bit flipped anywhere, the ``finished`` flag flipped) and a
checkpoint holding a search that is not well formed (as a buggy or another build could write
it) are refused with exit 2 and one line, never resumed to a result and never a crash (exit
70). Resume of a Ryu-API app and of an app whose entries time out gives the counts of the
uninterrupted run. These tests use only the command line and the library's public names,
so they run against the code before the fix too (where they fail).
"""
from __future__ import annotations

import dataclasses
import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nice_attendre.checkpoint import SearchState
from nice_attendre.frontend import resume
from nice_attendre.frontend.api import build, verify
from nice_attendre.frontend.cli import main

ROOT = Path(__file__).resolve().parents[2]
BUGGY = ["verify", "route-flow", "--topology", "linear:3", "--packets", "2", "--bug", "forget-last-hop"]
TIMEOUTS = str(ROOT / "tests" / "data" / "apps" / "timeout_routing.py") + ":TimeoutRouting"
RYU = str(ROOT / "examples" / "ryu" / "learning_switch_13.py") + ":LearningSwitch13"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def refused(result: Result, path: Path) -> str:
    """The one line of a clean refusal (exit 2) that names ``path``."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert repr(str(path)) in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def buggy(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A checkpoint of a buggy app's run cut by a limit (the same content as a periodic one):
    violations found, a stack, ``finished`` false."""
    path = tmp_path_factory.mktemp("buggy") / "buggy.ckpt"
    result = run(*BUGGY, "--keep-going", "--max-transitions", "40", "--checkpoint", str(path))
    assert result.exit_code == 1, result.output
    return path.read_bytes()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_bit_flipped_checkpoint_is_refused(tmp_path: Path, buggy: bytes, data: st.DataObject) -> None:
    # The issue: of 67 bit-flipped copies, 21 gave the same result and 9 a different one, silently.
    bit = data.draw(st.integers(0, len(buggy) * 8 - 1), label="bit")
    flipped = bytearray(buggy)
    flipped[bit >> 3] ^= 1 << (bit & 7)
    path = tmp_path / "flipped.ckpt"
    path.write_bytes(flipped)
    result = run(*BUGGY, "--keep-going", "--resume", str(path))
    assert result.exit_code in {0, 1, 2, 3, 4}, result.output  # never 70
    refused(result, path)


def test_flipping_the_finished_flag_gives_no_verdict(tmp_path: Path) -> None:
    # Cut before the first violation, then "finished" flipped: the resumed run said
    # "OK: no property violated" of an app whose whole run fails.
    path = tmp_path / "cut.ckpt"
    assert run(*BUGGY, "--max-transitions", "3", "--checkpoint", str(path)).exit_code == 3
    data = path.read_bytes()
    at = data.index(b"\x08finished\x94") + len(b"\x08finished\x94")
    assert data[at:at + 1] == pickle.NEWFALSE
    path.write_bytes(data[:at] + pickle.NEWTRUE + data[at + 1:])  # one bit: 0x89 -> 0x88
    result = run(*BUGGY, "--resume", str(path))
    assert "is damaged" in refused(result, path)
    assert run(*BUGGY).exit_code == 1


# ---- a search that is not well formed, or not of this network -----------------------------------------

def _broken(search: SearchState, how: str) -> SearchState:
    """A copy of ``search`` broken as a buggy build might break it."""
    s = dataclasses.replace(search, stack=[list(frame) for frame in search.stack])
    top, parent = s.stack[-1], s.stack[-2]
    if how == "negative transitions":
        s.transitions = -5
    elif how == "transitions a str":
        s.transitions = "12"  # type: ignore[assignment]
    elif how == "revisits above transitions":
        s.revisits = s.transitions + 1
    elif how == "next index past the events":
        top[2] = len(top[1]) + 3
    elif how == "a frame of four":
        del top[4]
    elif how == "a frame not reached by its parent's event":
        parent[1] = (*parent[1], parent[1][parent[2] - 1])
        top[3] = parent[1][0] if parent[2] > 1 else parent[1][1]
    elif how == "events the system does not enable":
        top[1] = (*top[1], top[1][0])
    elif how == "a state of another network":
        top[0] = tuple(top[0])[:-1]
        top[4] = top[0]
    elif how == "a state id out of range":
        top[0] = tuple(top[0][:-1]) + (10 ** 6,)
        top[4] = top[0]
    elif how == "a state not visited":
        s.visited = set(s.visited) - {top[4]}
    elif how == "visited a list":
        s.visited = list(s.visited)
    elif how == "finished at a limit":
        s.finished, s.stop_reason = True, "max-transitions"
    elif how == "finished at a violation without one":
        s.finished, s.stop_reason, s.discoveries, s.violated = True, "violation", [], set()
    elif how == "a discovery that is a str":
        s.discoveries = [*s.discoveries, "delivery"]  # type: ignore[list-item]
    elif how == "a trace from no initial state":
        found = s.discoveries[0]
        s.discoveries = [dataclasses.replace(found, trace=dataclasses.replace(found.trace, initial=top[0]))]
    elif how == "violated without a discovery":
        s.violated = s.violated | {"no-such-property"}
    elif how == "elapsed not a number":
        s.elapsed = float("nan")
    elif how == "stack without an initial":
        s.next_initial = 0
    elif how == "metric ranges of no pairs":
        s.metric_ranges = {"m": (3, 1)}
    else:  # pragma: no cover
        raise AssertionError(how)
    return s


BREAKS = ["negative transitions", "transitions a str", "revisits above transitions", "next index past the events",
          "a frame of four", "a frame not reached by its parent's event", "events the system does not enable",
          "a state of another network", "a state id out of range", "a state not visited", "visited a list",
          "finished at a limit", "finished at a violation without one", "a discovery that is a str",
          "a trace from no initial state", "violated without a discovery", "elapsed not a number",
          "stack without an initial", "metric ranges of no pairs"]


def _buggy_run() -> tuple[Any, dict[str, Any]]:
    net = build("route-flow", topology="linear:3", packets=2, app_options={"bug": "forget-last-hop"})
    return net, resume.run_identity(net, keep_going=True, fingerprint=False, max_depth=None)


@pytest.mark.parametrize("how", BREAKS)
def test_a_search_that_is_not_well_formed_is_refused(tmp_path: Path, buggy: bytes, how: str) -> None:
    good = tmp_path / "good.ckpt"
    good.write_bytes(buggy)
    built, identity = _buggy_run()
    search = resume.load(built, good, identity)
    assert len(search.stack) >= 2 and search.discoveries
    path = tmp_path / "broken.ckpt"
    errors: list[Exception] = []
    resume.saver(built, path, identity, on_error=errors.append)(_broken(search, how))
    assert errors == [] and path.exists()
    result = run(*BUGGY, "--keep-going", "--resume", str(path))
    assert refused(result, path).startswith(f"Error: checkpoint {str(path)!r} holds a search ")


# ---- resume keeps working ------------------------------------------------------------------------------

def _counts(path: Path) -> tuple[Any, ...]:
    data = json.loads(path.read_text())
    return (data["transitions"], data["unique_states"], data["revisits"], data["max_depth"], data["verdict"],
            [v["property"] for v in data["violations"]])


@pytest.mark.parametrize("limit", [2000, 5000])
def test_resume_of_an_app_whose_entries_time_out_gives_the_uninterrupted_counts(tmp_path: Path, limit: int) -> None:
    # A restored network did not know that its tables held entries that expire: it offered
    # no expiry event until it installed one itself (2000 transitions: 722 unique states
    # against 713).
    whole = verify(TIMEOUTS, keep_going=True, max_transitions=limit)
    path = tmp_path / "t.ckpt"
    verify(TIMEOUTS, keep_going=True, max_transitions=limit // 2, checkpoint=path)
    resumed = verify(TIMEOUTS, keep_going=True, max_transitions=limit, resume=path)
    assert resumed.stats.counts() == whole.stats.counts()


def test_resume_of_a_ryu_app_gives_the_uninterrupted_run(tmp_path: Path) -> None:
    pytest.importorskip("os_ken")
    spec = ["verify", RYU, "--topology", "linear:3", "--packets", "2", "--keep-going"]
    assert run(*spec, "--json", str(tmp_path / "whole.json")).exit_code == 1
    path = tmp_path / "ryu.ckpt"
    assert run(*spec, "--max-transitions", "600", "--checkpoint", str(path)).exit_code == 1
    assert b"LearningSwitch13" not in path.read_bytes().split(b"\n", 4)[4]  # its state is frozen data
    result = run(*spec, "--resume", str(path), "--json", str(tmp_path / "resumed.json"))
    assert result.exit_code == 1, result.output
    assert _counts(tmp_path / "resumed.json") == _counts(tmp_path / "whole.json")


def test_resume_of_a_search_storing_fingerprints_gives_the_uninterrupted_counts(tmp_path: Path) -> None:
    # Its table of fingerprints is an array, which pickle reduces to a function
    # (array._array_reconstructor): the loader refused every such checkpoint.
    spec = ["verify", "route-flow", "--topology", "linear:3", "--packets", "2", "--fingerprint"]
    assert run(*spec, "--json", str(tmp_path / "whole.json")).exit_code == 0
    path = tmp_path / "fp.ckpt"
    assert run(*spec, "--max-transitions", "5000", "--checkpoint", str(path)).exit_code == 3
    result = run(*spec, "--resume", str(path), "--json", str(tmp_path / "resumed.json"))
    assert result.exit_code == 0, result.output
    assert _counts(tmp_path / "resumed.json") == _counts(tmp_path / "whole.json")
