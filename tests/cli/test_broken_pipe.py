"""A reader that goes away (`nice-attendre ... | head`) is neither an internal error nor OK."""
from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from nice_attendre.frontend import cli_common
from nice_attendre.frontend.cli import main


def _broken_echo(*args: object, **kwargs: object) -> None:
    raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_pipe_while_listing_exits_141_without_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(click, "echo", _broken_echo)
    result = CliRunner().invoke(main, ["list"])
    assert result.exit_code == 141
    assert "internal error" not in result.output


@pytest.mark.parametrize(("verdict", "code"), [("violated", 1), ("ok", 141)])
def test_a_closed_pipe_while_reporting_keeps_a_violations_code(verdict: str, code: int) -> None:
    def write() -> None:
        raise BrokenPipeError(32, "Broken pipe")

    with pytest.raises(SystemExit) as stopped:
        cli_common.finish(verdict, None, lambda: "FAILED: x", write)
    assert stopped.value.code == code

