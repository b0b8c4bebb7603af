"""Apps that are not functions of their arguments are told so, never shown a contradictory trace."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from nice_attendre.frontend.cli import main
from nice_attendre.frontend.exit_codes import ExitCode

EXIT_NONDETERMINISTIC = ExitCode.NONDETERMINISTIC
from tests_data_apps import load, path


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


def test_a_nondeterministic_app_is_reported_with_its_own_exit_code() -> None:
    """Flaky alternates by a global count of its calls: calling the handler again with the
    same input shows it at its first call, with the trace to it (before, the report's replay
    of a trace happened to differ: one line, no trace)."""
    load("nondeterministic.py", "Flaky")  # the same module the CLI imports: reset its log
    result = cli("verify", path("nondeterministic.py", "Flaky"), "-t", "linear:3", "-n", "2")
    assert result.exit_code == EXIT_NONDETERMINISTIC == 4, result.output
    lines = result.stdout.splitlines()
    assert "VIOLATION 1: app-nondeterminism (always)" in lines
    assert any(line.startswith("  Flaky.on_packet_in asked for two things for the same input: request 1 was ")
               for line in lines)
    assert lines[-1].startswith("NONDETERMINISTIC: an app handler is not a function of its input")
    assert result.stderr == ""


def test_traces_are_narrated_once_for_text_and_json(tmp_path: Path) -> None:
    """After the search, each reported step runs its handler once (the replay that checks it and
    narrates it), however many formats print it."""
    from nice_attendre import verify
    from nice_attendre.importing import import_target

    spec = path("nondeterministic.py", "Counted")
    module = import_target(spec.rpartition(":")[0], "app", Exception)  # the module the CLI uses
    module.CALLS.clear()
    verify(spec, topology="linear:2", app_options={"bug": True})
    searched = len(module.CALLS)  # handler calls of the search alone

    module.CALLS.clear()
    out = tmp_path / "report.json"
    result = cli("verify", spec, "-t", "linear:2", "-o", "bug=true", "--json", str(out))
    assert result.exit_code == 1, result.output
    with_json = len(module.CALLS)
    module.CALLS.clear()
    assert cli("verify", spec, "-t", "linear:2", "-o", "bug=true").exit_code == 1
    text_only = len(module.CALLS)

    traces = [v["trace"] for v in json.loads(out.read_text())["violations"]]
    handled = sum(1 for trace in traces[:1] for step in trace
                  if step["effects"][0].startswith("controller: Counted.on_packet_in"))
    assert handled > 0
    # (the search calls each handler twice per distinct input to check it; the narration's
    # calls are of inputs checked already: once each)
    assert with_json == text_only == searched + handled
