"""Find an app: a registered name, a ``path/to/file.py:ClassName`` or ``package.module:ClassName``.

Front-end code (used by :mod:`nice_attendre.frontend.api` and the CLI), not part of the core.
"""
from __future__ import annotations

import difflib
import importlib.util
import inspect
import re
from pathlib import Path
from typing import Any, Mapping

from nice_attendre.errors import AppLoadError, InputError
from nice_attendre.importing import import_target, names_file
from nice_attendre.models.ryu import MISSING, adapt, install_ryu_imports, is_ryu_app_class
from nice_attendre.models.ryu.imports import MissingModule, beside, os_ken_installed


def parse_options(pairs: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """``["bug=forget-last-hop", "threshold=3"]`` -> ``{"bug": "forget-last-hop", "threshold": 3}``.

    Values that look like integers become ints, decimals (``0.5``) floats;
    ``true``/``false``/``none`` (any case) become ``True``/``False``/``None``; everything
    else stays a string. Raises :class:`InputError` for a pair without ``=`` or whose key
    is not a Python identifier.
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
                if _DECIMAL.fullmatch(raw.strip()):
                    value = float(raw)
        options[key.strip()] = value
    return options


_DECIMAL = re.compile(r"[+-]?(\d+\.\d*|\.\d+)([eE][+-]?\d+)?")


def resolve_app_class(spec: str) -> type:
    """The app class named by ``spec`` (a registered name, ``file.py:Class`` or ``module:Class``)."""
    from nice_attendre.apps import REGISTRY, app_class
    from nice_attendre.models.app import App

    if spec in REGISTRY:
        return app_class(spec)
    if ":" not in spec:
        if names_file(spec):
            raise AppLoadError(f"app {spec!r} names a file but no class: write {spec}:ClassName")
        return app_class(spec)
    target, _, attr = spec.rpartition(":")
    module = _import_app_module(target)
    found = getattr(module, attr, None)
    if found is None:
        classes = [n for n, v in vars(module).items() if _is_app_class(v)]
        close = difflib.get_close_matches(attr, classes, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else (f" (app classes there: {', '.join(classes)})" if classes else "")
        raise AppLoadError(f"{target!r} has no class {attr!r}{hint}")
    if is_ryu_app_class(found):
        return adapt(found)
    if not (inspect.isclass(found) and issubclass(found, App)):
        raise AppLoadError(f"{spec!r} is not a subclass of nice_attendre.models.app.App")
    return found


def _is_app_class(value: Any) -> bool:
    from nice_attendre.models.app import App

    return inspect.isclass(value) and ((issubclass(value, App) and value is not App) or is_ryu_app_class(value))


def _import_app_module(target: str) -> Any:
    """Import the app's module, serving ``ryu.*`` imports from os-ken and Ryu's sample apps
    os-ken lacks from the app's folder; a missing os-ken, or a module os-ken does not ship,
    is one clear error saying so."""
    install_ryu_imports()
    try:
        with beside(_folder_of(target)):
            return import_target(target, "app", AppLoadError)
    except AppLoadError as exc:
        cause = exc.__cause__
        while cause is not None and not isinstance(cause, ModuleNotFoundError):
            cause = cause.__cause__ if isinstance(cause, AppLoadError) else None
        if isinstance(cause, MissingModule):
            raise AppLoadError(f"cannot load app {target!r}: {cause}") from exc
        if isinstance(cause, ModuleNotFoundError) and (cause.name or "").split(".")[0] in ("os_ken", "ryu") \
                and not os_ken_installed():
            raise AppLoadError(f"cannot load app {target!r}: {MISSING}") from exc
        raise


def _folder_of(target: str) -> Path | None:
    """The folder of the app's file (for a module name, of the file it would be imported
    from), where Ryu's sample apps it imports may be; None if not known."""
    if names_file(target):
        return Path(target).resolve().parent
    try:
        spec = importlib.util.find_spec(target)
    except (ImportError, ValueError):
        return None
    origin = getattr(spec, "origin", None) if spec is not None else None
    return Path(origin).resolve().parent if isinstance(origin, str) and origin.endswith(".py") else None


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
    if is_ryu_app_class(cls):
        cls = adapt(cls)
    if not (inspect.isclass(cls) and issubclass(cls, App)):
        raise AppLoadError(f"{app!r} is not an app (a subclass of nice_attendre.models.app.App)")
    try:
        return cls(**options)
    except MemoryError:
        raise
    except SystemExit as exc:
        raise AppLoadError(f"cannot create {cls.__name__}: its constructor called sys.exit({exc.code!r})") from exc
    except Exception as exc:  # the constructor rejected the options (or is broken)
        why = str(exc) if isinstance(exc, (TypeError, ValueError)) else f"{type(exc).__name__}: {exc}"
        accepted = _accepted_options(cls) if isinstance(exc, TypeError) else None
        if accepted is not None:
            why += f" ({cls.__name__} accepts: {', '.join(accepted) or 'no options'})"
        raise AppLoadError(f"cannot create {cls.__name__} with options {options}: {why}") from exc


def _accepted_options(cls: type) -> list[str] | None:
    """The keyword arguments ``cls(...)`` accepts (``None`` when it takes ``**kwargs`` or is opaque)."""
    try:
        parameters = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return None
    names = []
    for parameter in parameters:
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            return None
        if parameter.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            names.append(parameter.name)
    return names
