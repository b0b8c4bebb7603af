"""Reading the pinned tables of other test modules (which are files, not a package)."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

TESTS = Path(__file__).resolve().parent


def load_test_module(path: str) -> ModuleType:
    """The test module at ``path`` (relative to tests/), loaded under a name of its own."""
    spec = importlib.util.spec_from_file_location(f"pinned_{Path(path).stem}", TESTS / path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def pinned_table(path: str, name: str) -> Any:
    """The table ``name`` of the test module at ``path`` (relative to tests/)."""
    return getattr(load_test_module(path), name)
