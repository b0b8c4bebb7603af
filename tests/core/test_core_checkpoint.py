"""Checkpoints of `dfs`: a search stopped anywhere and resumed ends exactly like one never stopped.

On random graphs (the oracle-checked systems of test_core_dfs_graphs), a search is cut by a
transition limit, a state limit, Ctrl-C inside ``apply`` or several of them in a row; every
cut saves a :class:`SearchState` (pickled and unpickled, as a file would), and resuming it
must give the counts, discoveries (with their traces), completeness, stop reason and metrics
of the uninterrupted search.
"""
from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nice_attendre import Limits, Metric, Property, Result, dfs
from nice_attendre.checkpoint import CheckpointError, SearchState, load, save

from test_core_dfs_graphs import RICH, Graph, graphs  # noqa: E402 - the graphs and their strategy

SETTINGS = settings(max_examples=120, deadline=None)


def properties(graph: Graph) -> list[Property]:
    """An always, an at-quiescence and a sometimes property, chosen by state numbers."""
    return [Property.always("not-5", lambda s: s != 5),
            Property.at_quiescence("even-end", lambda s: s % 2 == 0),
            Property.sometimes("reaches-3", lambda s: s == 3)]


METRICS = [Metric("state", lambda s: s)]


def summary(result: Result) -> tuple:
    """Everything a result says except the time."""
    return (result.stats.counts(), result.complete, result.stop_reason, result.metrics,
            [(d.property, d.expectation, d.reason, d.trace) for d in result.discoveries])


class Saver:
    """A checkpoint callback that keeps the last state, pickled as a file would hold it."""

    def __init__(self) -> None:
        self.saved: bytes | None = None
        self.calls = 0

    def __call__(self, state: SearchState) -> None:
        self.saved = pickle.dumps(state)
        self.calls += 1

    def state(self) -> SearchState:
        assert self.saved is not None
        return pickle.loads(self.saved)


class InterruptAt:
    """A graph whose ``apply`` raises KeyboardInterrupt at its ``k``-th call (counting from 1)."""

    def __init__(self, graph: Graph, k: int) -> None:
        self.graph = graph
        self.k = k
        self.calls = 0

    def initial_states(self) -> tuple[int, ...]:
        return self.graph.initial_states()

    def enabled(self, state: int) -> tuple:
        return self.graph.enabled(state)

    def apply(self, state: int, event: tuple) -> int:
        self.calls += 1
        if self.calls == self.k:
            raise KeyboardInterrupt
        return self.graph.apply(state, event)


@SETTINGS
@given(graphs(), st.booleans(), st.lists(st.integers(0, 40), min_size=1, max_size=3), st.sampled_from(
    ["max_transitions", "max_states"]))
def test_resume_after_limits_gives_the_uninterrupted_result(graph: Graph, keep_going: bool, cuts: list[int],
                                                             limit: str) -> None:
    whole = dfs(graph, properties(graph), keep_going=keep_going, metrics=METRICS)
    saved: SearchState | None = None
    for cut in sorted(cuts):
        saver = Saver()
        bounds = Limits(max_transitions=cut) if limit == "max_transitions" else Limits(max_states=max(cut, 1))
        part = dfs(graph, properties(graph), limits=bounds, keep_going=keep_going, metrics=METRICS,
                   checkpoint=saver, resume=saved)
        assert saver.calls == 1  # once, at the end (no clock read in so short a search)
        saved = saver.state()
        if part.complete:
            break
    final = dfs(graph, properties(graph), keep_going=keep_going, metrics=METRICS, resume=saved)
    assert summary(final) == summary(whole)


@SETTINGS
@given(graphs(), st.data())
def test_resume_after_ctrl_c_in_apply_gives_the_uninterrupted_result(graph: Graph, data: st.DataObject) -> None:
    whole = dfs(graph, properties(graph), keep_going=True)
    if whole.stats.transitions == 0:
        return
    k = data.draw(st.integers(1, whole.stats.transitions))
    saver = Saver()
    part = dfs(InterruptAt(graph, k), properties(graph), keep_going=True, checkpoint=saver)
    assert (part.stop_reason, part.verdict, part.stats.transitions) == ("interrupted", "interrupted" if not
                                                                         part.discoveries else "violated", k - 1)
    final = dfs(graph, properties(graph), keep_going=True, resume=saver.state())
    assert summary(final) == summary(whole)


def test_resume_of_a_complete_search_changes_nothing() -> None:
    saver = Saver()
    whole = dfs(RICH, properties(RICH), keep_going=True, checkpoint=saver)
    assert whole.complete
    again = dfs(RICH, properties(RICH), keep_going=True, resume=saver.state())
    assert summary(again) == summary(whole)


def test_periodic_checkpoints_resume_to_the_same_counts() -> None:
    from test_core_limits_time import Grid

    saves: list[bytes] = []
    whole = dfs(Grid(60), checkpoint=lambda state: saves.append(pickle.dumps(state)), checkpoint_interval=0)
    # Every clock read (each 1024 transitions) and the end: 10 + 1.
    assert len(saves) == 11
    for saved in (saves[0], saves[4], saves[9]):
        resumed = dfs(Grid(60), resume=pickle.loads(saved))
        assert resumed.stats.counts() == whole.stats.counts() and resumed.complete


def test_no_checkpoint_after_a_forced_interrupt_outside_apply() -> None:
    # Ctrl-C raised by a predicate (not between transitions, not inside apply): the state
    # may be half updated, so nothing is saved at the end.
    def holds(state: int) -> bool:
        if state == 3:
            raise KeyboardInterrupt
        return True

    saver = Saver()
    result = dfs(RICH, [Property.always("p", holds)], checkpoint=saver)
    assert result.stop_reason == "interrupted"
    assert saver.calls == 0


def test_a_saved_search_of_another_system_is_refused() -> None:
    from nice_attendre import ModelError

    saver = Saver()
    dfs(RICH, limits=Limits(max_transitions=3), checkpoint=saver)
    other = Graph(2, ((0, "a", 1),), (1,))
    with pytest.raises(ModelError, match="does not start in an initial state of this system"):
        dfs(other, resume=saver.state())


# ---- the file format --------------------------------------------------------------------------------

def state_of(result_saver: Saver) -> SearchState:
    return result_saver.state()


def test_save_and_load_a_file(tmp_path: Path) -> None:
    saver = Saver()
    dfs(RICH, limits=Limits(max_transitions=4), checkpoint=saver)
    path = tmp_path / "c.ckpt"
    save(path, {"run": "rich"}, ["tables"], saver.state())
    tables, state = load(path, {"run": "rich"})
    assert tables == ["tables"]
    assert state.transitions == 4
    assert [p.name for p in tmp_path.iterdir()] == ["c.ckpt"]  # no temporary file left


def test_load_refuses_another_identity_version_or_file(tmp_path: Path) -> None:
    saver = Saver()
    dfs(RICH, limits=Limits(max_transitions=4), checkpoint=saver)
    path = tmp_path / "c.ckpt"
    save(path, {"run": "rich", "depth": None}, None, saver.state())
    with pytest.raises(CheckpointError, match=r"was taken of another run \(run: checkpoint 'rich', now 'poor'\)"):
        load(path, {"run": "poor", "depth": None})
    path.write_bytes(path.read_bytes().replace(b"version 2\n", b"version 99\n", 1))
    with pytest.raises(CheckpointError, match="has format version 99; this nice-attendre reads version 2"):
        load(path, {"run": "rich", "depth": None})
    path.write_bytes(b"\x80\x05garbage")
    with pytest.raises(CheckpointError, match="is not a nice-attendre checkpoint"):
        load(path, {})
    with pytest.raises(CheckpointError, match="cannot read checkpoint"):
        load(tmp_path / "missing.ckpt", {})
