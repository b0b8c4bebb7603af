"""Loading user code named on the command line: ``path/to/file.py`` or ``package.module``.

Domain-free helpers shared by the app loader and the topology loader. Every failure is
raised as the caller's error class (a subclass of :class:`InputError`) with one clear line.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

from nice_attendre.errors import InputError


def is_file(path: Path) -> bool:
    """``path.is_file()``, False for names the OS rejects (too long, NUL bytes)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def is_dir(path: Path) -> bool:
    """``path.is_dir()``, False for names the OS rejects."""
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def names_file(target: str) -> bool:
    """Whether ``target`` (the part before ``:``) names a file rather than a module."""
    return target.endswith(".py") or "/" in target or "\\" in target


def import_file(path: Path, what: str, error: type[InputError]) -> ModuleType:
    """Import the Python file ``path`` (once per resolved path; the module name does not
    depend on the hash seed). ``what`` names it in messages ("app file")."""
    if not is_file(path):
        raise error(f"{what} {str(path)!r} not found")
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    stem = re.sub(r"\W", "_", path.stem)  # no dots: a dotted name would mean a package
    name = f"nice_attendre_user_{stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise error(f"cannot load {what} {str(path)!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # the user's file failed while importing (or was interrupted)
        del sys.modules[name]
        if isinstance(exc, (Exception, SystemExit)) and not isinstance(exc, MemoryError):
            raise error(f"importing {what} {str(path)!r} failed: {_failure(exc)}") from exc
        raise
    return module


def _failure(exc: BaseException) -> str:
    """What went wrong in user code: ``RuntimeError: message`` or ``it called sys.exit(0)``."""
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r})"
    return f"{type(exc).__name__}: {exc}"


def import_module(name: str, what: str, error: type[InputError]) -> ModuleType:
    """Import module ``name``; ``what`` names it in messages ("app module")."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise error(f"cannot import {what} {name!r}: {exc}") from exc
    except MemoryError:
        raise
    except (Exception, SystemExit) as exc:  # the module itself raised (or exited) while importing
        raise error(f"importing {what} {name!r} failed: {_failure(exc)}") from exc


def import_target(target: str, what: str, error: type[InputError]) -> ModuleType:
    """The module named by ``target``: a file path or a dotted module name."""
    if names_file(target):
        return import_file(Path(target), f"{what} file", error)
    return import_module(target, f"{what} module", error)
