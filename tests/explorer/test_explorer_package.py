"""The explorer's page is package data: every file of its static folder is in the wheel."""
from __future__ import annotations

import fnmatch
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_static_file_is_package_data() -> None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    package = "nice_attendre.frontend.explorer"
    assert package in config["packages"]
    folder = ROOT / config["package-dir"][package]
    patterns = config["package-data"][package]
    files = [path.relative_to(folder).as_posix() for path in (folder / "static").iterdir()]
    assert {"static/app.js", "static/index.html", "static/style.css"} <= set(files)
    assert all(any(fnmatch.fnmatch(name, pattern) for pattern in patterns) for name in files)
