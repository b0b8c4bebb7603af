"""Load the user apps kept under ``tests/data/apps`` (files outside any package)."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

APPS = Path(__file__).resolve().parent / "data" / "apps"


def path(file: str, attr: str) -> str:
    """The ``file.py:Class`` spec of an app under tests/data/apps (as a user names it)."""
    return f"{APPS / file}:{attr}"


def load(file: str, attr: str) -> Any:
    """Attribute ``attr`` of ``tests/data/apps/<file>``, imported the plain Python way."""
    spec = importlib.util.spec_from_file_location(f"tests_data_apps_{Path(file).stem}", APPS / file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, attr)
