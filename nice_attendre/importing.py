"""Loading user code named on the command line: ``path/to/file.py`` or ``package.module``.

Domain-free helpers shared by the app, property and topology loaders. Every failure is
raised as the caller's error class (a subclass of :class:`InputError`) with one clear line.

A file is loaded afresh whenever its content changed: the module's name carries the SHA-256
of the bytes executed, so the same content is the same module (in this process and in every
other: worker processes and Ray actors import it by that name), and an edited file is a new
module, never the stale one a test that rewrites an app would otherwise keep checking. Each
file a run loads is noted as a :class:`Source` (what it is, its path, its digest) while a
:func:`recording` is active, so that a report can say which version of the file it checked.
"""
from __future__ import annotations

import contextlib
import contextvars
import hashlib
import importlib
import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Iterator

from nice_attendre.errors import InputError


@dataclass(frozen=True, slots=True)
class Source:
    """A user file a run loaded: ``kind`` (``app file``, ``app module``, ``property file``,
    ``topology file``, ``scenario file``...),
    ``path`` (resolved) and ``sha256``, the hex digest of the bytes that were loaded."""

    kind: str
    path: str
    sha256: str

    def describe(self) -> str:
        """One line for a report header: the kind, the path and the digest's first 16 digits."""
        return f"{self.kind} {self.path} (sha256 {self.sha256[:16]})"

    def as_json(self) -> dict[str, str]:
        """The source for a JSON report."""
        return {"kind": self.kind, "path": self.path, "sha256": self.sha256}


_RECORDING: contextvars.ContextVar[list[Source] | None] = contextvars.ContextVar("nice_attendre_sources",
                                                                                   default=None)


@contextlib.contextmanager
def recording() -> Iterator[list[Source]]:
    """Collect, in the list it yields, every user file loaded inside the ``with`` block (each
    (kind, path, digest) once, in the order first loaded)."""
    found: list[Source] = []
    token = _RECORDING.set(found)
    try:
        yield found
    finally:
        _RECORDING.reset(token)


def note_source(kind: str, path: Path, data: bytes) -> Source:
    """Record that ``data``, the content of ``path``, was loaded as ``kind`` (see :func:`recording`)."""
    source = Source(kind, str(path.resolve()), hashlib.sha256(data).hexdigest())
    found = _RECORDING.get()
    if found is not None and source not in found:
        found.append(source)
    return source


def note_file(kind: str, path: str | Path) -> None:
    """Record the current content of the data file ``path`` (a topology or scenario file its
    loader reads afresh on every call); nothing when it cannot be read (its loader says why)."""
    path = Path(path)
    if _RECORDING.get() is None or not is_file(path):
        return
    try:
        data = path.read_bytes()
    except OSError:
        return
    note_source(kind, path, data)


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


#: Per resolved file path: the name of the module last loaded from it (an older version is
#: dropped from ``sys.modules`` when the file changes, so edits do not pile up modules).
_LOADED: dict[str, str] = {}
#: Per module imported by name: its file and that file's digest when first seen (None: no file).
_MODULES: dict[str, tuple[str, str] | None] = {}


def module_name(path: Path, data: bytes) -> str:
    """The module name of the file ``path`` with content ``data``: the same in every process
    and under every hash seed; another content or another file is another name."""
    where = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    what = hashlib.sha256(data).hexdigest()[:12]
    stem = re.sub(r"\W", "_", path.stem)  # no dots: a dotted name would mean a package
    return f"nice_attendre_user_{stem}_{where}_{what}"


def import_file(path: Path, what: str, error: type[InputError]) -> ModuleType:
    """Import the Python file ``path`` as it is now: its bytes are read and hashed, the module
    of the same content is reused, and a changed file is executed afresh (see the module
    docstring). ``what`` names it in messages ("app file") and is the kind of :class:`Source`
    noted."""
    if not is_file(path):
        raise error(f"{what} {str(path)!r} not found")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise error(f"cannot read {what} {str(path)!r}: {exc.strerror or exc}") from exc
    note_source(what, path, data)
    name = module_name(path, data)
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        raise error(f"cannot load {what} {str(path)!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:  # the bytes hashed above, not the file read again: what runs is what was noted
        exec(compile(data, str(path), "exec", dont_inherit=True), module.__dict__)  # noqa: S102 - the user's own file
    except BaseException as exc:  # the user's file failed while importing (or was interrupted)
        del sys.modules[name]
        if isinstance(exc, (Exception, SystemExit)) and not isinstance(exc, MemoryError):
            raise error(f"importing {what} {str(path)!r} failed: {_failure(exc)}") from exc
        raise
    key = str(path.resolve())
    older = _LOADED.get(key)
    if older is not None and older != name:
        sys.modules.pop(older, None)
    _LOADED[key] = name
    return module


def _failure(exc: BaseException) -> str:
    """What went wrong in user code: ``RuntimeError: message`` or ``it called sys.exit(0)``."""
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r})"
    return f"{type(exc).__name__}: {exc}"


def import_module(name: str, what: str, error: type[InputError]) -> ModuleType:
    """Import module ``name``; ``what`` names it in messages ("app module"). Python imports a
    module once per process: the :class:`Source` noted is its file as it was when first seen
    here."""
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        raise error(f"cannot import {what} {name!r}: {exc}") from exc
    except MemoryError:
        raise
    except (Exception, SystemExit) as exc:  # the module itself raised (or exited) while importing
        raise error(f"importing {what} {name!r} failed: {_failure(exc)}") from exc
    _note_module(module, what)
    return module


def _note_module(module: ModuleType, kind: str) -> None:
    """Note an imported module's file (its digest taken the first time it is seen)."""
    if module.__name__ not in _MODULES:
        seen: tuple[str, str] | None = None
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and is_file(Path(file)):
            try:
                seen = (file, hashlib.sha256(Path(file).read_bytes()).hexdigest())
            except OSError:
                seen = None
        _MODULES[module.__name__] = seen
    seen = _MODULES[module.__name__]
    found = _RECORDING.get()
    if seen is not None and found is not None:
        source = Source(kind, str(Path(seen[0]).resolve()), seen[1])
        if source not in found:
            found.append(source)


def import_target(target: str, what: str, error: type[InputError]) -> ModuleType:
    """The module named by ``target``: a file path or a dotted module name."""
    if names_file(target):
        return import_file(Path(target), f"{what} file", error)
    return import_module(target, f"{what} module", error)
