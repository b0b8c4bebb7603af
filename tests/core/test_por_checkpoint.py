"""Checkpoints of a reduced search (--por): a depth-first search over stubborn sets stopped
anywhere and resumed ends exactly like one never stopped (its stack holds each state's
stubborn set, widened where the stack proviso expanded it fully; the states on the stack
are the proviso's), and a checkpoint is resumed only by a run with the same --por."""
from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from nice_attendre import Limits, verify
from nice_attendre.checker import dfs
from nice_attendre.checkpoint import CheckpointError, SearchState
from nice_attendre.property import Expectation, Property
from children import console
from test_por import RandomSystem, _graph, systems

PROPERTIES = ["no-forwarding-loops", "no-black-holes", "no-forgotten-packets", "delivery"]


def _properties(system: RandomSystem) -> list[Property]:
    """The stable alarm property and a quiescence property (every quiescent state is even)."""
    flag = system.flag
    return [Property("no-alarm", Expectation.ALWAYS, lambda state: state[flag] == 0, stable=True),
            Property.at_quiescence("first-variable-even", lambda state: state[system.var(0)] % 2 == 0)]


def _summary(result: Any) -> tuple:
    return (result.stats.counts(), result.complete, result.stop_reason,
            [(d.property, d.reason, d.trace) for d in result.discoveries])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(systems(), st.booleans(), st.booleans(), st.lists(st.integers(1, 60), min_size=1, max_size=3))
def test_a_reduced_search_resumed_after_limits_gives_the_uninterrupted_result(
        system: RandomSystem, keep_going: bool, fingerprint: bool, cuts: list[int]) -> None:
    reachable, _quiet = _graph(system)
    assume(len(reachable) <= 800)
    props = _properties(system)
    whole = dfs(system, props, keep_going=keep_going, fingerprint=fingerprint, por=True)
    saved: SearchState | None = None
    for cut in sorted(cuts):
        kept: list[bytes] = []
        part = dfs(system, props, limits=Limits(max_transitions=cut), keep_going=keep_going, fingerprint=fingerprint,
                   por=True, checkpoint=lambda state: kept.append(pickle.dumps(state)), resume=saved)
        saved = pickle.loads(kept[-1])
        if part.complete:
            break
    final = dfs(system, props, keep_going=keep_going, fingerprint=fingerprint, por=True, resume=saved)
    assert _summary(final) == _summary(whole)


def test_the_stack_proviso_survives_a_resume() -> None:
    """The loop of test_por_partitioned (the looper's step is the stubborn set everywhere):
    cut after every number of transitions, the resumed search still raises the alarm."""
    looper = (("load", 0, 0), ("jump", 0, 0))
    system = RandomSystem((looper, (("set", 1, 1), ("alarm", 0, 0))), 2, 0)
    props = _properties(system)[:1]
    whole = dfs(system, props, keep_going=True, por=True)
    assert whole.discoveries
    for cut in range(1, whole.stats.transitions):
        kept: list[SearchState] = []
        dfs(system, props, limits=Limits(max_transitions=cut), keep_going=True, por=True, checkpoint=kept.append)
        resumed = dfs(system, props, keep_going=True, por=True, resume=pickle.loads(pickle.dumps(kept[-1])))
        assert _summary(resumed) == _summary(whole), cut


@pytest.mark.parametrize("app, options, cut", [
    ("route-flow", {"topology": "linear:3", "packets": 2}, 700),
    ("route-flow", {"topology": "linear:3", "packets": 2, "fingerprint": True}, 1200),
    ("mac-learning", {"topology": "linear:2", "packets": 2, "app_options": {"bug": "host-unreachable"}}, 900),
])
def test_verify_resumes_a_reduced_search(tmp_path: Path, app: str, options: dict[str, Any], cut: int) -> None:
    options = dict(options, properties=PROPERTIES, keep_going=True, por=True)
    whole = verify(app, **options)
    path = tmp_path / "por.ckpt"
    first = verify(app, max_transitions=cut, checkpoint=path, **options)
    assert first.verdict != "ok" and first.stop_reason == "max-transitions" and path.exists()
    second = verify(app, max_transitions=2 * cut, resume=path, checkpoint=path, **options)
    assert second.stats.transitions == min(2 * cut, whole.stats.transitions)
    resumed = verify(app, resume=path, **options)
    assert resumed.reduction == "partial-order" and resumed.complete
    assert resumed.stats.counts() == whole.stats.counts()
    assert resumed.verdict == whole.verdict
    assert [(d.property, d.trace.events) for d in resumed.discoveries] == \
        [(d.property, d.trace.events) for d in whole.discoveries]


def test_a_resume_with_another_por_is_refused(tmp_path: Path) -> None:
    options = dict(topology="linear:3", packets=2, properties=PROPERTIES)
    reduced, full = tmp_path / "reduced.ckpt", tmp_path / "full.ckpt"
    verify("route-flow", max_transitions=300, checkpoint=reduced, por=True, **options)
    verify("route-flow", max_transitions=300, checkpoint=full, **options)
    with pytest.raises(CheckpointError, match="partial-order reduction: checkpoint True, now False"):
        verify("route-flow", resume=reduced, **options)
    with pytest.raises(CheckpointError, match="partial-order reduction: checkpoint False, now True"):
        verify("route-flow", resume=full, por=True, **options)
    header = json.loads(reduced.read_bytes().split(b"\n")[3])
    assert header["identity"]["partial-order reduction"] is True


def test_command_line(tmp_path: Path) -> None:
    spec = ["verify", "route-flow", "-t", "linear:3", "-n", "2", "--por"]
    path = tmp_path / "c.ckpt"
    cut = console(*spec, "--max-transitions", "800", "--checkpoint", str(path), cwd=tmp_path)
    assert cut.returncode == 3, cut.stderr
    assert "reduction      partial-order" in cut.stdout
    whole = console(*spec, cwd=tmp_path)
    resumed = console(*spec, "--resume", str(path), cwd=tmp_path)
    assert (whole.returncode, resumed.returncode) == (0, 0), resumed.stderr

    def counts(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.strip().startswith(
            ("transitions", "unique states", "revisits", "max depth"))]

    assert len(counts(whole.stdout)) == 4 and counts(resumed.stdout) == counts(whole.stdout)
    refused = console("verify", "route-flow", "-t", "linear:3", "-n", "2", "--resume", str(path), cwd=tmp_path)
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "partial-order reduction: checkpoint True, now False" in lines[0], refused.stderr


@pytest.mark.parametrize("options, message", [
    ({"workers": 2, "checkpoint": "x.ckpt"}, "checkpoints are for the one-process search"),
    ({"engine": "ray", "resume": "x.ckpt"}, "checkpoints are for the one-process search"),
    ({"shortest": True, "checkpoint": "x.ckpt"}, "--shortest cannot be combined with --resume or --checkpoint"),
])
def test_what_stays_refused(tmp_path: Path, options: dict[str, Any], message: str) -> None:
    """Checkpoints of the partitioned and breadth-first searches do not exist, reduced or not."""
    from nice_attendre.errors import InputError

    for key in ("checkpoint", "resume"):
        if key in options:
            options[key] = tmp_path / options[key]
    with pytest.raises(InputError, match=message):
        verify("route-flow", topology="linear:2", packets=1, por=True, **options)
