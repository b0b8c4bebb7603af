"""Imports of ``ryu.*`` served by os-ken (``os_ken.*``), Ryu's maintained fork with the same API.

:func:`install` puts two finders in front of ``sys.meta_path`` (once per process):

* importing ``ryu`` or ``ryu.x.y`` gives the module ``os_ken``/``os_ken.x.y`` itself, so an
  unmodified Ryu app's ``from ryu.base import app_manager`` works; ``app_manager.RyuApp`` is
  os-ken's ``OSKenApp``. (A real ``ryu`` package installed next to it is shadowed while the
  finder is in place.)
* Ryu's sample apps that subclass another sample (``from ryu.app import simple_switch_13``)
  need a module os-ken does not ship: ``ryu.app.X`` or ``os_ken.app.X`` that os-ken lacks is
  the file ``X.py`` beside the app being loaded (:func:`beside` names its folder while the
  app's file is imported), loaded as a user file. Without that file the import fails with
  exactly "os-ken does not ship Ryu's sample app X: put X.py next to your app".

A module os-ken lacks is named as such (:class:`MissingModule`, one line): ``ryu.app.wsgi``
(Ryu's web server, for REST APIs) as the feature it is; any other ``ryu.x`` as "os-ken does
not ship ryu.x". Only when os-ken itself is missing does an import fail with the message
saying what to install (:data:`MISSING`).

This module imports nothing of os-ken itself, so that the checker works without it.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Iterator, Sequence

#: What to do when os-ken is missing.
MISSING = "the Ryu API (os-ken) is not installed: pip install 'nice-attendre[ryu]'"

#: Modules of Ryu's ``ryu/app`` that are libraries, not sample apps, and the feature each is.
_LIBRARIES = {"wsgi": "Ryu apps: WSGI (ryu.app.wsgi: a web server for REST APIs) is not supported by the checker's "
                      "model, and os-ken does not ship ryu.app.wsgi"}

#: The folders of the app files being imported, innermost last (see :func:`beside`).
_FOLDERS: list[Path] = []


class MissingModule(ModuleNotFoundError):
    """A module an app imports that os-ken does not have (its message is one line saying
    which, and what to do). Its ``name`` is the module as the app named it."""


def os_ken_installed() -> bool:
    """Whether os-ken can be imported."""
    if "os_ken" in sys.modules:
        return True
    try:
        return importlib.util.find_spec("os_ken") is not None
    except (ImportError, ValueError):
        return False


class _AliasLoader(importlib.abc.Loader):
    """Loads ``ryu.x`` as the already imported module ``os_ken.x``."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        try:
            module = importlib.import_module(self.target)
        except MissingModule:
            raise
        except ModuleNotFoundError as exc:
            if not os_ken_installed():
                raise ModuleNotFoundError(f"{spec.name}: {MISSING}", name="os_ken") from None
            if exc.name is not None and (exc.name == self.target or self.target.startswith(exc.name + ".")):
                raise MissingModule(f"os-ken does not ship {spec.name} (the checker serves ryu.* from os-ken, "
                                    f"which has no {exc.name})", name=spec.name) from None
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


class _SampleLoader(importlib.abc.Loader):
    """Loads ``os_ken.app.X`` (a Ryu sample os-ken lacks) from ``X.py`` beside the app."""

    def __init__(self, name: str) -> None:
        self.name = name

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        name = self.name
        if name in _LIBRARIES:
            raise MissingModule(_LIBRARIES[name], name=f"ryu.app.{name}")
        found = _FOLDERS[-1] / f"{name}.py" if _FOLDERS else None
        if found is None or not found.is_file():
            raise MissingModule(f"os-ken does not ship Ryu's sample app {name}: put {name}.py next to your app",
                                name=f"ryu.app.{name}")
        from nice_attendre.errors import AppLoadError
        from nice_attendre.importing import import_file

        return import_file(found, "sample app file", AppLoadError)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: :func:`~nice_attendre.importing.import_file` executed the file."""


class SampleAppFinder(importlib.abc.MetaPathFinder):
    """Finds ``os_ken.app.X`` that os-ken does not ship (see the module docstring)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        prefix = "os_ken.app."
        if not fullname.startswith(prefix) or "." in fullname[len(prefix):]:
            return None
        parent = sys.modules.get("os_ken.app")
        if parent is None or importlib.machinery.PathFinder.find_spec(fullname, parent.__path__) is not None:
            return None  # os-ken ships it
        return importlib.machinery.ModuleSpec(fullname, _SampleLoader(fullname[len(prefix):]))


@contextmanager
def beside(folder: Path | None) -> Iterator[None]:
    """While the app file in ``folder`` is imported: a sample app os-ken lacks is looked for in
    ``folder``. Afterwards the names ``ryu.app.X``/``os_ken.app.X`` it was imported under are
    forgotten (the module itself stays, by its file's name), so that an app in another folder
    finds its own ``X.py``."""
    before = {name for name in sys.modules if name.startswith(("os_ken.app.", "ryu.app."))}
    if folder is not None:
        _FOLDERS.append(folder)
    try:
        yield
    finally:
        if folder is not None:
            _FOLDERS.pop()
        for name in [n for n in sys.modules if n.startswith(("os_ken.app.", "ryu.app.")) and n not in before
                     and n.count(".") == 2 and not _shipped(n)]:
            module = sys.modules.pop(name)
            parent = sys.modules.get("os_ken.app")
            child = name.rsplit(".", 1)[1]
            if parent is not None and getattr(parent, child, None) is module:
                delattr(parent, child)


def _shipped(name: str) -> bool:
    """Whether os-ken has the module ``ryu.app.X``/``os_ken.app.X`` named ``name``."""
    parent = sys.modules.get("os_ken.app")
    return parent is not None and importlib.machinery.PathFinder.find_spec(
        "os_ken.app." + name.rsplit(".", 1)[1], parent.__path__) is not None


def install() -> None:
    """Serve ``ryu.*`` imports from os-ken from now on in this process (idempotent)."""
    if not any(isinstance(finder, SampleAppFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, SampleAppFinder())
    if not any(isinstance(finder, RyuAliasFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, RyuAliasFinder())
