"""Events as JSON values and back, for saved traces (``--trace-format json``, ``replay``).

An event is a frozen dataclass (the network's own in :mod:`nice_attendre.models.events`, the
faults' in :mod:`nice_attendre.models.faults`, and each protocol variant's own). It is encoded
as an object naming its class and giving its fields::

    {"event": "SwitchProcessCommand", "dpid": 2, "batch": 0, "pick": 1}

Field values are JSON scalars (str, int, bool, None) or tuples of them, which JSON writes as
lists and :func:`decode_event` turns back into tuples (event fields are hashable: they never
hold lists). Decoding looks the class up among the events a given network handles
(:meth:`Network.event_types`), so a trace saved under one protocol variant names events that
variant declares; an unknown class, a field the class does not have or a value of another
type than the field's annotation (a string where the class says ``int``) is a
:class:`TraceFormatError`.
"""
from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Any, Iterable

from nice_attendre.errors import InputError


class TraceFormatError(InputError):
    """A saved trace (or an event in it) is malformed."""


def _encode_value(value: Any, where: str) -> Any:
    if value is None or type(value) in (str, int, bool):
        return value
    if type(value) is tuple:
        return [_encode_value(item, where) for item in value]
    raise TypeError(f"{where}: cannot encode a {type(value).__name__} ({value!r}) in a saved trace")


def _decode_value(value: Any, where: str) -> Any:
    if value is None or type(value) in (str, int, bool):
        return value
    if type(value) is list:
        return tuple(_decode_value(item, where) for item in value)
    raise TraceFormatError(f"{where}: {value!r} is not a value an event field can have")


@functools.lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    """The resolved annotations of event class ``cls`` (none when they cannot be resolved:
    its fields are then not type-checked)."""
    try:
        return typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - a name only a type checker sees; check nothing
        return {}


def _conforms(value: Any, hint: Any) -> bool:
    """Whether decoded ``value`` has the type ``hint`` says (``int``, ``str``, ``bool``,
    ``None``, unions, ``tuple[X, ...]`` and ``tuple[X, Y]``; other hints accept anything)."""
    if hint is Any:
        return True
    if hint in (int, str, bool):
        return type(value) is hint
    if hint is type(None) or hint is None:
        return value is None
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        return any(_conforms(value, option) for option in arguments)
    if origin is tuple:
        if type(value) is not tuple:
            return False
        if len(arguments) == 2 and arguments[1] is Ellipsis:
            return all(_conforms(item, arguments[0]) for item in value)
        if arguments == ((),):
            return value == ()
        return len(arguments) == len(value) and all(map(_conforms, value, arguments))
    return True


def _type_name(hint: Any) -> str:
    return hint.__name__ if isinstance(hint, type) else str(hint).replace("typing.", "")


def encode_event(event: Any) -> dict[str, Any]:
    """``event`` as a JSON-ready dict: ``{"event": class name, field: value, ...}``.

    Raises ``TypeError`` for an object that is not an event dataclass or has a field value
    that is not a JSON scalar or a tuple of them (a bug in the model: events must be plain)."""
    if not dataclasses.is_dataclass(event) or isinstance(event, type):
        raise TypeError(f"not an event: {event!r}")
    name = type(event).__name__
    encoded: dict[str, Any] = {"event": name}
    for field in dataclasses.fields(event):
        encoded[field.name] = _encode_value(getattr(event, field.name), f"{name}.{field.name}")
    return encoded


def decode_event(data: Any, types: Iterable[type], where: str = "event") -> Any:
    """The event ``data`` encodes (see :func:`encode_event`), of one of ``types``.

    Raises :class:`TraceFormatError` (naming ``where``) for anything else: not an object, an
    unknown class, missing or unknown fields, values of the wrong form."""
    if not isinstance(data, dict) or not isinstance(data.get("event"), str):
        raise TraceFormatError(f"{where}: expected an object with an \"event\" name, got {data!r}")
    by_name = {cls.__name__: cls for cls in types}
    name = data["event"]
    cls = by_name.get(name)
    if cls is None:
        raise TraceFormatError(f"{where}: unknown event {name!r} for this network "
                               f"(known: {', '.join(sorted(by_name))})")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    extra = sorted(set(data) - set(fields) - {"event"})
    if extra:
        raise TraceFormatError(f"{where}: {name} has no field {extra[0]!r}")
    values = {key: _decode_value(value, f"{where}.{key}") for key, value in data.items() if key != "event"}
    hints = _hints(cls)
    for key, value in values.items():
        if key in hints and not _conforms(value, hints[key]):
            shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
            raise TraceFormatError(f"{where}: {name}.{key} must be {_type_name(hints[key])}, got {shown}")
    try:
        return cls(**values)
    except TypeError as exc:
        raise TraceFormatError(f"{where}: cannot build {name}: {exc}") from None
