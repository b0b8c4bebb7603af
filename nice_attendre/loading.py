"""Find an app: a registered name, a ``path/to/file.py:ClassName`` or ``package.module:ClassName``.

Front-end code (used by :mod:`nice_attendre.api` and the CLI), not part of the core.
"""
from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any, Mapping

from nice_attendre.errors import AppLoadError, InputError


def parse_options(pairs: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """``["bug=forget-last-hop", "threshold=3"]`` -> ``{"bug": "forget-last-hop", "threshold": 3}``.

    Values that look like integers become ints; ``true``/``false``/``none`` become
    ``True``/``False``/``None``; everything else stays a string.
    """
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip().isidentifier():
            raise InputError(f"bad app option {pair!r}: expected KEY=VALUE")
        value: Any = raw
        lowered = raw.lower()
        if lowered in ("true", "false"):
            value = lowered == "true"
        elif lowered == "none":
            value = None
        else:
            try:
                value = int(raw)
            except ValueError:
                pass
        options[key.strip()] = value
    return options


def _import_file(path: Path) -> Any:
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    name = f"nice_attendre_user_{path.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise AppLoadError(f"cannot load {str(path)!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise AppLoadError(f"importing {str(path)!r} failed: {type(exc).__name__}: {exc}") from exc
    return module


def resolve_app_class(spec: str) -> type:
    """The app class named by ``spec`` (a registered name, ``file.py:Class`` or ``module:Class``)."""
    from nice_attendre.apps import REGISTRY, app_class
    from nice_attendre.models.app import App

    if spec in REGISTRY or ":" not in spec:
        return app_class(spec)
    target, _, attr = spec.rpartition(":")
    if target.endswith(".py") or "/" in target or "\\" in target:
        path = Path(target)
        if not path.is_file():
            raise AppLoadError(f"app file {target!r} not found")
        module = _import_file(path)
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise AppLoadError(f"cannot import app module {target!r}: {exc}") from exc
    found = getattr(module, attr, None)
    if found is None:
        classes = [n for n, v in vars(module).items() if inspect.isclass(v) and issubclass(v, App) and v is not App]
        close = difflib.get_close_matches(attr, classes, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else (f" (app classes there: {', '.join(classes)})" if classes else "")
        raise AppLoadError(f"{target!r} has no class {attr!r}{hint}")
    if not (inspect.isclass(found) and issubclass(found, App)):
        raise AppLoadError(f"{spec!r} is not a subclass of nice_attendre.models.app.App")
    return found


def load_app(app: Any, options: Mapping[str, Any] | None = None) -> Any:
    """An app instance from a name/spec, an App subclass or an instance.

    ``options`` are keyword arguments for the app's constructor (not allowed with an
    instance). Raises :class:`AppLoadError` or :class:`UnknownNameError`.
    """
    from nice_attendre.models.app import App

    options = dict(options or {})
    if isinstance(app, App):
        if options:
            raise InputError("app options need an app name or class, not an instance")
        return app
    cls = resolve_app_class(app) if isinstance(app, str) else app
    if not (inspect.isclass(cls) and issubclass(cls, App)):
        raise AppLoadError(f"{app!r} is not an app (a subclass of nice_attendre.models.app.App)")
    try:
        return cls(**options)
    except (TypeError, ValueError) as exc:
        raise AppLoadError(f"cannot create {cls.__name__} with options {options}: {exc}") from exc
