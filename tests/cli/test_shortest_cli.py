"""`verify --shortest` (and ``verify(shortest=True)``): breadth-first, shortest traces."""
from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from nice_attendre import verify
from nice_attendre.frontend.cli import main

MAC_BUG = dict(app="mac-learning", topology="linear:2", packets=2, app_options={"bug": "delayed-direct-path"})


def trace_length(output: str) -> int:
    found = re.search(r"trace \((\d+) events\)", output)
    assert found, output
    return int(found.group(1))


def test_shortest_trace_is_strictly_shorter_and_replays() -> None:
    deep = verify(**MAC_BUG)
    wide = verify(**MAC_BUG, shortest=True)
    [d_found], [w_found] = deep.discoveries, wide.discoveries
    assert d_found.property == w_found.property == "strict-direct-paths"
    assert len(w_found.trace) < len(d_found.trace)
    assert wide.system is not None
    w_found.trace.replay(wide.system)


def test_shortest_is_not_longer_than_any_dfs_trace() -> None:
    every = verify(**MAC_BUG, keep_going=True)
    wide = verify(**MAC_BUG, shortest=True)
    shortest = len(wide.discoveries[0].trace)
    lengths = [len(d.trace) for d in every.discoveries if d.property == "strict-direct-paths"]
    assert lengths and shortest <= min(lengths)


def test_cli_shortest_prints_shorter_trace() -> None:
    args = ["verify", "mac-learning", "-t", "linear:2", "-n", "2", "--bug", "delayed-direct-path"]
    deep = CliRunner().invoke(main, args)
    wide = CliRunner().invoke(main, [*args, "--shortest"])
    assert deep.exit_code == wide.exit_code == 1
    assert trace_length(wide.output) < trace_length(deep.output)
    assert "breadth-first (--shortest" in wide.output


@pytest.mark.parametrize("extra", [["--workers", "2"], ["--engine", "ray"], ["--resume", "x.ckpt"],
                                   ["--checkpoint", "x.ckpt"]])
def test_shortest_refuses_other_searches(extra: list[str], tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(main, ["verify", "route-flow", "-t", "linear:2", "--shortest", *extra])
    assert result.exit_code == 2, result.output
    assert "--shortest" in result.output or "--shortest" in (result.stderr if result.stderr_bytes else "")


def test_library_shortest_refuses_workers() -> None:
    from nice_attendre.errors import InputError

    with pytest.raises(InputError, match="--shortest"):
        verify("route-flow", topology="linear:2", shortest=True, workers=2)
