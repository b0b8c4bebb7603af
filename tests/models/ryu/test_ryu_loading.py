"""Loading Ryu apps: file and module specs, ``ryu.*`` imports served by os-ken, the one clear
error without os-ken, and CI installing the extra."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nice_attendre import AppLoadError
from nice_attendre.frontend.loading import load_app, resolve_app_class
from nice_attendre.models.app import App
from nice_attendre.models.ryu import MISSING

ROOT = Path(__file__).resolve().parents[3]
APPS = ROOT / "examples" / "ryu"

#: Runs the CLI in a fresh interpreter where importing os_ken fails, as without the extra.
WITHOUT_OS_KEN = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "os_ken" or name.startswith("os_ken."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Block())
from nice_attendre.frontend.cli import main
main(sys.argv[1:], prog_name="nice-attendre")
"""


def without_os_ken(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", WITHOUT_OS_KEN, *args], capture_output=True, text=True)


@pytest.mark.parametrize("name", ["learning_switch_10.py:LearningSwitch10", "learning_switch_13.py:LearningSwitch13"])
def test_without_os_ken_a_ryu_app_gets_one_clear_error(name: str) -> None:
    path, _, _cls = f"{APPS / name}".rpartition(":")
    done = without_os_ken("verify", str(APPS / name))
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr == f"Error: cannot load app {path!r}: {MISSING}\n"
    assert MISSING == "the Ryu API (os-ken) is not installed: pip install 'nice-attendre[ryu]'"


def test_without_os_ken_the_checker_still_works() -> None:
    done = without_os_ken("verify", "route-flow", "--topology", "linear:2")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "OK: no property violated"


def test_ryu_imports_are_served_by_os_ken() -> None:
    cls = resolve_app_class(f"{APPS / 'learning_switch_10.py'}:LearningSwitch10")
    assert issubclass(cls, App) and cls.__name__ == "LearningSwitch10"
    import os_ken.base.app_manager
    import ryu.base.app_manager  # type: ignore[import-not-found]  # served by the alias

    assert ryu.base.app_manager is os_ken.base.app_manager
    assert ryu.base.app_manager.RyuApp is os_ken.base.app_manager.OSKenApp


def test_a_module_spec_and_a_typo_in_the_class_name() -> None:
    sys.path.insert(0, str(APPS))
    try:
        app = load_app("learning_switch_13:LearningSwitch13", {"tables": 2})
        assert app.ryu.tables == 2 and app.describe() == "LearningSwitch13 (Ryu app, OpenFlow 1.3)"
        with pytest.raises(AppLoadError, match="did you mean 'LearningSwitch13'"):
            resolve_app_class("learning_switch_13:LearningSwich13")
    finally:
        sys.path.remove(str(APPS))


def test_an_app_option_the_ryu_constructor_rejects_is_one_error() -> None:
    expected = (r"cannot create LearningSwitch13 with options \{'colour': 'red'\}: "
                r"LearningSwitch13 takes no option 'colour' \(its constructors name: tables\)")
    with pytest.raises(AppLoadError, match=expected):
        load_app(f"{APPS / 'learning_switch_13.py'}:LearningSwitch13", {"colour": "red"})


def test_ci_installs_the_ryu_extra_with_the_readme_command() -> None:
    readme = (ROOT / "README.md").read_text().splitlines()
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    command = "pip install -e '.[test,ryu,cluster,plot,discover]' && pytest -q"
    assert readme[7].endswith(command) and ci[-1] == command
