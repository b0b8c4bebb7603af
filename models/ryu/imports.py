"""Imports of ``ryu.*`` served by os-ken (``os_ken.*``), Ryu's maintained fork with the same API.

:func:`install` puts a finder in front of ``sys.meta_path`` (once per process): importing
``ryu`` or ``ryu.x.y`` gives the module ``os_ken``/``os_ken.x.y`` itself, so an unmodified
Ryu app's ``from ryu.base import app_manager`` works; ``app_manager.RyuApp`` is os-ken's
``OSKenApp``. (A real ``ryu`` package installed next to it is shadowed while the finder is in
place.) Without os-ken installed, such an import fails with a ``ModuleNotFoundError`` whose
message says what to install (:data:`MISSING`).

This module imports nothing of os-ken itself, so that the checker works without it.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Sequence

#: What to do when os-ken is missing.
MISSING = "the Ryu API (os-ken) is not installed: pip install 'nice-attendre[ryu]'"


class _AliasLoader(importlib.abc.Loader):
    """Loads ``ryu.x`` as the already imported module ``os_ken.x``."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        try:
            module = importlib.import_module(self.target)
        except ModuleNotFoundError as exc:
            if exc.name is not None and exc.name.split(".")[0] == "os_ken":
                raise ModuleNotFoundError(f"{spec.name}: {MISSING}", name="os_ken") from None
            raise
        app_manager = importlib.import_module("os_ken.base.app_manager")
        if not hasattr(app_manager, "RyuApp"):  # Ryu's name for the base class (`from ryu.base import
            app_manager.RyuApp = app_manager.OSKenApp  # app_manager` may not reach this loader for it)
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the os-ken module is already executed."""


class RyuAliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``ryu`` and ``ryu.*`` as the os-ken modules of the same path."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "ryu" and not fullname.startswith("ryu."):
            return None
        alias = "os_ken" + fullname[3:]
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(alias), is_package=True)


def install() -> None:
    """Serve ``ryu.*`` imports from os-ken from now on in this process (idempotent)."""
    if not any(isinstance(finder, RyuAliasFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, RyuAliasFinder())
