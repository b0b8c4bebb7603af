"""Start-up cost: ``nice-attendre --help`` imports no heavy module; lazy commands still work."""
from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

HEAVY = ("numpy", "matplotlib", "ray", "os_ken", "networkx")


def _imported_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint('HEAVY:', *(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    return out.stdout.strip().splitlines()[-1].split()[1:]


def test_importing_the_cli_imports_no_heavy_module() -> None:
    assert _imported_after("import nice_attendre.frontend.cli") == []


def test_help_imports_no_heavy_module() -> None:
    code = ("from nice_attendre.frontend.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass")
    assert _imported_after(code) == []


def test_lazy_commands_listed_with_their_own_short_help() -> None:
    from nice_attendre.frontend import cli

    for name, (load, text) in cli.LAZY_COMMANDS.items():
        command = load()
        assert command.help is not None and command.help.split("\n\n")[0].strip() == text, name


def test_lazy_commands_run() -> None:
    from nice_attendre.frontend.cli import main

    runner = CliRunner()
    result = runner.invoke(main, ["--help"])
    assert result.exit_code == 0
    for name in ("bench", "compare", "delay", "list", "verify"):
        assert f"  {name} " in result.output
    for args in (["bench", "--help"], ["bench", "variants", "--help"], ["delay", "--help"], ["compare", "--help"]):
        result = runner.invoke(main, args)
        assert result.exit_code == 0, (args, result.output)
