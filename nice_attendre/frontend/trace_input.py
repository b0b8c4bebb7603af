"""A saved trace read back (``nice-attendre replay``): bounded, parsed and checked whole
before anything is built from it (front end).

A trace file comes from someone: it may be anything. :func:`load_document` reads at most
:data:`~nice_attendre.input_files.TRACE_BYTES` of a regular file and parses it as JSON;
:func:`check_document` then checks every field the replay reads against the schema of
:mod:`nice_attendre.frontend.trace_format` (types, nesting, the build options, the shape of
each event and fingerprint), so that a malformed trace is one line naming the field (CLI
exit code 2), never an error deep inside the replay. Fields the replay does not read are
ignored (a newer writer may add some; a change an older reader would misread gets a new
``version``).

What the trace may make the replay *run* (the files and modules it names) is decided in
:mod:`nice_attendre.frontend.replay_sources`, not here.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

from nice_attendre.errors import InputError
from nice_attendre.frontend.trace_format import BUILD_KEYS, FORMAT, VERSION
from nice_attendre.input_files import TRACE_BYTES, read_text

#: The deepest nesting of arrays and objects a trace may have (a version-1 trace has 5:
#: the document, its events, an event, a tuple field, a tuple inside it).
MAX_DEPTH = 16

_FINGERPRINT = re.compile(r"[0-9a-f]{16}")


class TraceFileError(InputError):
    """A saved trace file cannot be used (unreadable, not JSON, wrong format, version or
    field, or it names code or files the user did not name)."""


def load_document(path: Path, limit: int = TRACE_BYTES) -> dict[str, Any]:
    """The saved trace in ``path`` (a regular file of at most ``limit`` bytes), checked by
    :func:`check_document`. Raises :class:`TraceFileError` for anything else."""
    text = read_text(path, "trace", limit, TraceFileError)
    where = f"trace {str(path)!r}"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceFileError(f"{where} is not JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise TraceFileError(f"{where} is nested too deeply (a trace has at most {MAX_DEPTH} levels)") from None
    except ValueError as exc:  # an integer too long to convert
        raise TraceFileError(f"{where} is not a JSON trace nice-attendre can read: {exc}") from None
    return check_document(data, where)


def _depth(data: Any, limit: int) -> bool:
    """Whether ``data`` nests arrays and objects at most ``limit`` deep (iterative: never
    recurses, whatever the depth)."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (list, dict)):
            if depth > limit:
                return False
            stack.extend((item, depth + 1) for item in (value.values() if isinstance(value, dict) else value))
    return True


def _name(value: Any) -> str:
    """The JSON name of ``value``'s type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _scalar(value: Any) -> bool:
    """An event field's value: null, a string, a whole number, a boolean, or an array of them."""
    if value is None or type(value) in (str, int, bool):
        return True
    return isinstance(value, list) and all(_scalar(item) for item in value)


#: build option -> (what it must be, the check). ``None`` is allowed for every option but the app.
_BUILD_CHECKS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "app": ("a string", _text),
    "app_options": ("an object", lambda v: isinstance(v, dict)),
    "topology": ("a string", _text),
    "packets": ("a whole number", _whole),
    "flows": ("a string or an array of strings", lambda v: _text(v) or _texts(v)),
    "scenario": ("a string", _text),
    "sender": ("a string", _text),
    "receiver": ("a string", _text),
    "protocol": ("a string", _text),
    "properties": ("a string or an array of strings", lambda v: _text(v) or _texts(v)),
    "command_order": ("a string", _text),
    "threaded_controller": ("a boolean, \"per-switch\" or \"any\"",
                            lambda v: isinstance(v, bool) or v in ("per-switch", "any")),
    "faults": ("an object of whole numbers",  # a scoped link budget: "N:SCOPE"
               lambda v: isinstance(v, dict) and all(_whole(n) or (k == "link" and _text(n)) for k, n in v.items())),
    "count_load": ("a boolean", lambda v: isinstance(v, bool)),
    "joins_first": ("a boolean", lambda v: isinstance(v, bool)),
}
assert set(_BUILD_CHECKS) == set(BUILD_KEYS)


def check_document(data: Any, where: str = "trace") -> dict[str, Any]:
    """``data`` if it is a version-1 saved trace whose every field the replay reads has its
    schema's type (see :mod:`nice_attendre.frontend.trace_format`), else
    :class:`TraceFileError` naming the first field at fault."""
    if not _depth(data, MAX_DEPTH):
        raise TraceFileError(f"{where} is nested too deeply (a trace has at most {MAX_DEPTH} levels)")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise TraceFileError(f"{where} is not a nice-attendre trace (no \"format\": \"{FORMAT}\"); "
                             "write one with verify --trace-format json --trace-out FILE")
    version = data.get("version")
    if not _whole(version) or version != VERSION:
        raise TraceFileError(f"{where}: trace format version {version!r} is not supported "
                             f"(this nice-attendre reads version {VERSION})")
    for key, kind, what in (("build", dict, "an object"), ("property", str, "a string"),
                            ("events", list, "an array"), ("fingerprints", list, "an array")):
        if not isinstance(data.get(key), kind):
            raise TraceFileError(f"{where}: field {key!r} is missing or not {what}")
    for key in ("app", "protocol", "expectation", "reason"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise TraceFileError(f"{where}: field {key!r} must be a string, not {_name(data[key])}")
    build = data["build"]
    unknown = sorted(set(build) - set(BUILD_KEYS))
    if unknown:
        raise TraceFileError(f"{where}: unknown build option {unknown[0]!r}")
    if not isinstance(build.get("app"), str):
        raise TraceFileError(f"{where}: build.app is missing or not a string")
    for key, value in build.items():
        what, check = _BUILD_CHECKS[key]
        if value is not None and not check(value):
            raise TraceFileError(f"{where}: build.{key} must be {what}, not {_name(value)}")
    if build.get("threaded_controller") is True:  # written before per-switch threads: it meant any
        build["threaded_controller"] = "any"
    for key in (build.get("app_options") or {}):
        if not key.isidentifier():
            raise TraceFileError(f"{where}: build.app_options: {key!r} is not an option name")
    _check_events(data["events"], where)
    fingerprints = data["fingerprints"]
    for index, value in enumerate(fingerprints):
        if not isinstance(value, str) or not _FINGERPRINT.fullmatch(value):
            shown = repr(value) if isinstance(value, str) and len(value) <= 40 else _name(value)
            raise TraceFileError(f"{where}: fingerprint {index} must be 16 hex digits, not {shown}")
    if len(fingerprints) != len(data["events"]) + 1:
        raise TraceFileError(f"{where}: {len(fingerprints)} fingerprints for {len(data['events'])} events "
                             "(expected one more than the events)")
    start = data.get("cycle_start")
    if start is not None and (not _whole(start) or not 0 <= start < len(data["events"])):
        shown = repr(start) if _whole(start) else _name(start)
        raise TraceFileError(f"{where}: cycle_start must be the index of a state before the last one (0 to "
                             f"{len(data['events']) - 1}), not {shown}")
    if data.get("narration") is not None:
        narration = data["narration"]
        if not isinstance(narration, list) or not all(_texts(lines) for lines in narration):
            raise TraceFileError(f"{where}: field 'narration' must be an array of arrays of strings")
    return data


def _check_events(events: list[Any], where: str) -> None:
    """Every event is an object with a string ``event`` and fields of the values events have
    (see :mod:`nice_attendre.models.event_codec`); which class and which fields is checked
    against the rebuilt network when the events are decoded."""
    for index, event in enumerate(events, start=1):
        if not isinstance(event, dict) or not isinstance(event.get("event"), str):
            got = (f"an object whose \"event\" is {_name(event.get('event'))}" if isinstance(event, dict)
                   else _name(event))
            raise TraceFileError(f"{where}: event {index} must be an object with an \"event\" name (a string), "
                                 f"not {got}")
        for key, value in event.items():
            if key != "event" and not _scalar(value):
                raise TraceFileError(f"{where}: event {index} field {key!r} must be null, a string, a whole "
                                     f"number, a boolean or an array of them, not {_name(value)}")
