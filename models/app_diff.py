"""What an app handler changed in the app's state, in words (for traces).

:func:`state_changes` compares the app's state before and after a handler call and says
which keys were added, removed or changed, one line each::

    ports += {(1, 'h1'): 1}
    passed += {(1, 'h1', 'h2')}
    table[3]: 1 -> 2

(a state that is one number, set or mapping itself gives ``0 -> 1``, ``+= {2}`` or
``[3]: 1 -> 2``). It understands the forms app states take: named tuples and dataclasses (by field), mappings,
sets, tuples of (key, value) pairs with distinct keys (the sorted items of a dict, as
:class:`~nice_attendre.apps.mac_learning.MacState` keeps them) and the tagged tuples of a
Ryu app's frozen attributes (:mod:`nice_attendre.models.ryu.state`). Anything else that
changed is shown as ``old -> new``. Pure and deterministic: sets and keys are listed in a
stable order (sorted by their ``repr``).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Set
from typing import Any

#: Most lines one handler call's change is described with; the rest is counted.
MAX_LINES = 12

_RYU_SEQUENCES = ("list", "tuple")
_RYU_SETS = ("set", "frozenset")
_RYU_SCALARS = ("bool", "float", "bytes")


def _ryu(value: Any) -> tuple[str, Any] | None:
    """``(kind, contents)`` for a Ryu tagged tuple (``("dict", pairs)`` ...), else None."""
    if type(value) is not tuple or not value or type(value[0]) is not str:
        return None
    tag = value[0]
    if len(value) == 2 and tag in _RYU_SCALARS:
        return "scalar", value[1]
    if len(value) == 2 and type(value[1]) is tuple:
        if tag == "dict" and all(type(p) is tuple and len(p) == 2 for p in value[1]):
            return "map", dict(value[1])
        if tag in _RYU_SETS:
            return "set", frozenset(value[1])
        if tag in _RYU_SEQUENCES:
            return "scalar", tuple(plain(item) for item in value[1])
    if len(value) == 3 and tag == "defaultdict" and type(value[2]) is tuple:
        return "map", dict(value[2])
    if len(value) == 2 and tag == "datapath":
        return "scalar", f"<datapath s{value[1]}>"
    return None


def _shape(value: Any) -> tuple[str, Any]:
    """How ``value`` is compared: ``("fields", {name: value})``, ``("map", {key: value})``,
    ``("set", frozenset)`` or ``("scalar", value)``."""
    tagged = _ryu(value)
    if tagged is not None:
        return tagged
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return "fields", {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return "fields", dict(zip(value._fields, value))
    if isinstance(value, Mapping):
        return "map", dict(value)
    if isinstance(value, Set):
        return "set", frozenset(value)
    if (type(value) is tuple and value and all(type(p) is tuple and len(p) == 2 for p in value)
            and len({_key(p[0]) for p in value}) == len(value)):
        return "map", {p[0]: p[1] for p in value}
    return "scalar", value


def _key(value: Any) -> Any:
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def plain(value: Any) -> Any:
    """``value`` with Ryu tags removed, for display (a frozen dict shown as a dict)."""
    kind, contents = _shape(value) if _ryu(value) is not None else ("", value)
    if kind == "map":
        return {plain(k): plain(v) for k, v in contents.items()}
    if kind == "set":
        return {plain(item) for item in contents} or set()
    if kind == "scalar":
        return contents
    return value


def _show(value: Any) -> str:
    shown = plain(value)
    if isinstance(shown, set):
        return "{" + ", ".join(sorted(repr(item) for item in shown)) + "}" if shown else "set()"
    return repr(shown)


def _lead(path: str) -> str:
    """``path`` and a space before an operator (nothing for the state itself)."""
    return f"{path} " if path else ""


def _changes(path: str, before: Any, after: Any, lines: list[str]) -> None:
    if before == after:
        return
    kind_b, old = _shape(before)
    kind_a, new = _shape(after)
    if kind_b == "scalar" and before == () and kind_a == "map":  # an empty tuple of pairs
        kind_b, old = "map", {}
    elif kind_a == "scalar" and after == () and kind_b == "map":
        kind_a, new = "map", {}
    if kind_b != kind_a or kind_a == "scalar" or (kind_a == "fields" and type(before) is not type(after)):
        lines.append(f"{path}: {_show(before)} -> {_show(after)}" if path else f"{_show(before)} -> {_show(after)}")
        return
    if kind_a == "set":
        added = sorted((repr(plain(item)) for item in new - old))
        removed = sorted((repr(plain(item)) for item in old - new))
        if added:
            lines.append(f"{_lead(path)}+= {{{', '.join(added)}}}")
        if removed:
            lines.append(f"{_lead(path)}-= {{{', '.join(removed)}}}")
        return
    if kind_a == "map" and not path and all(isinstance(k, str) and k.isidentifier() for k in (*old, *new)):
        kind_a = "fields"  # the root's names (a dict state, a Ryu app's attributes) read as fields
        new = {**{k: None for k in old if k not in new}, **new}
    if kind_a == "fields":
        for name in new:
            _changes(f"{path}.{name}" if path else name, old.get(name), new[name], lines)
        return
    added_keys = sorted((k for k in new if k not in old), key=repr)
    removed_keys = sorted((k for k in old if k not in new), key=repr)
    if added_keys:
        shown = ", ".join(f"{plain(k)!r}: {_show(new[k])}" for k in added_keys)
        lines.append(f"{_lead(path)}+= {{{shown}}}")
    if removed_keys:
        lines.append(f"{_lead(path)}-= {{{', '.join(repr(plain(k)) for k in removed_keys)}}}")
    for key in sorted((k for k in new if k in old), key=repr):
        _changes(f"{path}[{plain(key)!r}]", old[key], new[key], lines)


def state_changes(before: Any, after: Any, limit: int = MAX_LINES) -> list[str]:
    """Lines saying what changed from ``before`` to ``after`` (empty when they are equal);
    at most ``limit`` lines, the last one counting those left out."""
    lines: list[str] = []
    _changes("", before, after, lines)
    if len(lines) > limit:
        more = len(lines) - (limit - 1)
        lines = lines[:limit - 1] + [f"... and {more} more changes"]
    return lines
