"""Checkpoints: a search saved to a file, to be continued later with the same final result.

:class:`SearchState` is everything :func:`nice_attendre.dfs` needs to continue a depth-first
search where it stopped: the visited set, the stack (each frame's state, enabled events and
next event), the counters, the discoveries so far. A model whose states are ids into tables
(the network interns its components) must save those tables too: the caller passes them as
``tables``, an opaque picklable value.

A checkpoint file (format :data:`VERSION`) is four lines and a pickle::

    nice-attendre checkpoint
    version 2
    sha256 <64 hexadecimal digits>
    {"byte order": "little", "identity": {...}}     (one line of JSON)
    <the tables and the search, pickled>

The SHA-256 digest covers every byte of the file but its own line. :func:`load` checks, in
this order and before it unpickles anything: the header, the version, the digest (a file
changed or truncated since it was written is refused), the run's ``identity`` (what was
checked, under which options: a checkpoint of another app, topology, protocol or option is
refused). Only then is the pickle read, by an unpickler that admits an explicit list of
classes (:class:`Admitted`: the core's own, those the caller names, and the classes
*defined* in the app's module) and nothing else: no function, no module attribute reached
through a dotted name, no builtin but plain data types. Last, the search's shape is checked
(:func:`check_search`, and :func:`check_against` with the system), so that a file written
by another build is refused rather than crashing the search. Every refusal is a
:class:`CheckpointError` of one line that names the file.

The digest detects damage, not forgery: a checkpoint is data the search trusts (a forged one
can claim that a search finished without violations). Resume only checkpoints you wrote.
Files are written atomically (:func:`nice_attendre.output.write_with`).
"""
from __future__ import annotations

import enum
import hashlib
import io
import json
import math
import pickle
import re
import sys
import types
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from nice_attendre.errors import InputError
from nice_attendre.output import OutputError, write_with
from nice_attendre.property import Expectation
from nice_attendre.result import Discovery
from nice_attendre.trace import Step, Trace
from nice_attendre.visited import FingerprintTable, KeyedStates, _Bucket

FORMAT = "nice-attendre checkpoint"
#: Bumped whenever the saved layout changes; an older or newer checkpoint is refused.
VERSION = 2
_MAGIC = (FORMAT + "\n").encode("ascii")
_VERSION_LINE = re.compile(rb"version ([0-9]{1,9})")
_DIGEST_LINE = re.compile(rb"sha256 ([0-9a-f]{64})")


@dataclass
class SearchState:
    """A depth-first search between two transitions (see :func:`nice_attendre.dfs`).

    ``next_initial`` is the index of the first initial state not yet started; ``stack``
    belongs to the one before it. A frame is ``[state, events, next index, event that led
    here, key in visited]``. ``sometimes_left`` names the ``sometimes`` properties not yet
    seen to hold; ``elapsed`` sums the seconds of every run so far. ``finished`` is true
    when the search ended for good (complete, or stopped at its first violation): resuming
    it gives the same result again, with ``stop_reason``.
    """

    next_initial: int
    visited: Any
    stack: list[list[Any]]
    transitions: int
    revisits: int
    max_depth: int
    depth_cut: bool
    discoveries: list[Discovery]
    violated: set[str]
    sometimes_left: list[str]
    metric_ranges: dict[str, tuple[int, int]] = field(default_factory=dict)
    elapsed: float = 0.0
    finished: bool = False
    stop_reason: str | None = None


class CheckpointError(InputError):
    """A checkpoint that cannot be used: unreadable, not a checkpoint, another version,
    damaged, holding what a checkpoint may not hold, or taken of another run (the message
    names the file and what is wrong)."""


class CheckpointContentError(OutputError):
    """A search that cannot be saved: it holds a value of a class a checkpoint may not hold
    (so the checkpoint could never be resumed). Like a full disk, it does not stop the search."""


#: The core's classes a checkpoint holds: the search, its visited sets, its discoveries.
CORE_CLASSES: tuple[type, ...] = (SearchState, FingerprintTable, KeyedStates, _Bucket, array,
                                  Discovery, Expectation, Trace, Step)
#: Builtins a checkpoint may name: plain values whose constructors only build a value.
#: (Tuples, lists, dicts, sets, frozensets, ints, floats, strs, bytes, bools and None have
#: opcodes of their own: a checkpoint never names them.)
DATA_BUILTINS: tuple[type, ...] = (complex, range, slice)


class Admitted:
    """The classes a checkpoint may hold, and so the only globals its unpickler resolves.

    :data:`CORE_CLASSES`, :data:`DATA_BUILTINS`, the given ``classes``, and the classes
    defined in ``module`` (the app's module: code the user named) that ``accept`` accepts.
    A class is found by its module and qualified name, exactly: never imported, never
    reached through a dotted name (``module.attribute.Class``) or a name imported into a
    module; metaclasses (``type``) are never admitted, nor anything that is not a class.
    """

    def __init__(self, classes: Iterable[type] = (), module: str | None = None,
                 accept: Callable[[type], bool] | None = None) -> None:
        self._named: dict[tuple[str, str], type] = {}
        for cls in (*CORE_CLASSES, *DATA_BUILTINS, *classes):
            if not isinstance(cls, type) or issubclass(cls, type):
                raise TypeError(f"a checkpoint may hold classes only, not {cls!r}")
            self._named[(cls.__module__, cls.__qualname__)] = cls
        self.module = module
        self._accept = accept

    def find(self, module: str, name: str) -> type | None:
        """The admitted class ``module.name``, or None."""
        found = self._named.get((module, name))
        if found is not None:
            return found
        if module != self.module or not name.isidentifier():
            return None
        loaded = sys.modules.get(module)  # imported when the run was built: never imported here
        if not isinstance(loaded, types.ModuleType):
            return None
        cls = loaded.__dict__.get(name)  # no getattr: a module's __getattr__ is code
        if (not isinstance(cls, type) or issubclass(cls, type) or cls.__module__ != module
                or cls.__qualname__ != name or (self._accept is not None and not self._accept(cls))):
            return None
        return cls

    def admits(self, cls: type) -> bool:
        """Whether ``cls`` may be in a checkpoint (what :meth:`find` would give for its name)."""
        return self.find(cls.__module__, cls.__qualname__) is cls


class _Refused(Exception):
    """Raised while pickling a value of a class a checkpoint may not hold."""

    def __init__(self, cls: type) -> None:
        super().__init__(cls)
        self.cls = cls


class _Pickler(pickle.Pickler):
    """Pickles admitted classes only (so that every checkpoint written can be read back).
    An ``array`` is pickled as ``array(typecode, bytes)``: its own reduction names a
    function, which the unpickler does not admit."""

    def __init__(self, file: io.BytesIO, admitted: Admitted) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.admitted = admitted

    def reducer_override(self, obj: Any) -> Any:
        kind = type(obj)
        if kind is array:
            return array, (obj.typecode, obj.tobytes())
        cls = obj if isinstance(obj, type) else kind  # a class as a value is pickled by its name
        if not self.admitted.admits(cls):
            raise _Refused(cls)
        return NotImplemented


class _Unpickler(pickle.Unpickler):
    """Resolves admitted classes only (see :class:`Admitted`); anything else is refused.

    A pickle can also *change* a class it names (its BUILD instruction sets attributes of
    whatever object it is given: a class, or an enum's member): :meth:`undo_changes` puts
    back what was changed, so that a refused file leaves the process as it was.
    """

    def __init__(self, data: io.BytesIO, admitted: Admitted, path: Path) -> None:
        super().__init__(data)
        self.admitted = admitted
        self.path = path
        self._before: dict[type, tuple[dict[str, Any], list[tuple[Any, dict[str, Any]]]]] = {}

    def find_class(self, module: str, name: str) -> Any:
        found = self.admitted.find(module, name)
        if found is None:
            raise CheckpointError(f"checkpoint {str(self.path)!r} refers to {_printable(module)}.{_printable(name)}, "
                                  "which a checkpoint may not contain")
        if found not in self._before:
            members = list(found) if issubclass(found, enum.Enum) else []
            self._before[found] = (dict(found.__dict__), [(member, dict(member.__dict__)) for member in members])
        return found

    def undo_changes(self) -> type | None:
        """Restore every class the pickle changed; return the first one, or None."""
        changed: type | None = None
        for cls, (attributes, members) in self._before.items():
            now = dict(cls.__dict__)
            if now.keys() != attributes.keys() or any(now[key] is not value for key, value in attributes.items()):
                changed = changed or cls
                for key in now.keys() - attributes.keys():
                    delattr(cls, key)
                for key, value in attributes.items():
                    if now.get(key) is not value:
                        setattr(cls, key, value)
            for member, saved in members:
                state = member.__dict__
                if state.keys() != saved.keys() or any(state[key] is not value for key, value in saved.items()):
                    changed = changed or cls
                    state.clear()
                    state.update(saved)
        return changed


def _printable(name: str) -> str:
    text = name if name.isprintable() else repr(name)
    return text if len(text) <= 80 else text[:77] + "..."


def _digest(header: bytes, rest: memoryview | bytes) -> str:
    hasher = hashlib.sha256(header)
    hasher.update(rest)
    return hasher.hexdigest()


def seal(identity: Mapping[str, Any], body: bytes) -> bytes:
    """The bytes of a checkpoint file holding ``body`` (a pickle) for ``identity``: the
    header, digest and identity lines before it. (For tests and tools; :func:`save` writes
    the same without copying the body.)"""
    head, digest_line, meta = _header(identity, body)
    return head + digest_line + meta + body


def _header(identity: Mapping[str, Any], body: bytes | memoryview) -> tuple[bytes, bytes, bytes]:
    try:
        meta = json.dumps({"byte order": sys.byteorder, "identity": dict(identity)}, sort_keys=True,
                          ensure_ascii=True, allow_nan=False).encode("ascii") + b"\n"
    except (TypeError, ValueError) as exc:
        raise TypeError(f"a checkpoint's identity must be JSON data: {exc}") from exc
    head = _MAGIC + f"version {VERSION}\n".encode("ascii")
    hasher = hashlib.sha256(head)
    hasher.update(meta)
    hasher.update(body)
    return head, f"sha256 {hasher.hexdigest()}\n".encode("ascii"), meta


def save(path: Path, identity: Mapping[str, Any], tables: Any, search: SearchState, option: str = "--checkpoint",
         admitted: Admitted | None = None) -> None:
    """Write a checkpoint atomically.

    ``identity`` must be JSON data (it is the file's readable header). Raises
    :class:`~nice_attendre.output.OutputError` when the file cannot be written, and its
    subclass :class:`CheckpointContentError` when the search holds a value of a class
    ``admitted`` does not admit (such a checkpoint could not be loaded).
    """
    buffer = io.BytesIO()
    try:
        _Pickler(buffer, admitted or Admitted()).dump({"tables": tables, "search": search})
    except _Refused as refused:
        cls = refused.cls
        raise CheckpointContentError(
            f"cannot write {option} {str(path)!r}: the search holds a {cls.__module__}.{cls.__qualname__}, which a "
            "checkpoint may not hold (only nice-attendre's classes, plain data and classes defined in the app's "
            "own module)") from None
    body = buffer.getbuffer()
    head, digest_line, meta = _header(identity, body)

    def write(temp: Path) -> None:
        with open(temp, "wb") as handle:
            handle.write(head)
            handle.write(digest_line)
            handle.write(meta)
            handle.write(body)

    try:
        write_with(path, write, option)
    finally:
        body.release()


def load(path: Path, identity: Mapping[str, Any], admitted: Admitted | None = None) -> tuple[Any, SearchState]:
    """Read a checkpoint written by :func:`save` for the same ``identity``; return
    ``(tables, search)``. ``admitted`` says which classes it may hold (default: the core's).

    Raises :class:`CheckpointError` (one line naming the file) when the file cannot be read,
    is not a checkpoint, has another format version, does not match its digest (damaged or
    truncated), was taken of a run with another identity, refers to a class it may not hold,
    or holds a search that is not well formed (:func:`check_search`). Nothing in the file
    is unpickled before its digest and identity are checked.
    """
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CheckpointError(f"cannot read checkpoint {name!r}: {exc.strerror or exc}") from exc
    body_at, meta = _verified(name, data)
    if meta.get("byte order") != sys.byteorder:
        raise CheckpointError(f"checkpoint {name!r} was written on a machine of another byte order "
                              f"({_short(meta.get('byte order'))}, this one is {sys.byteorder!r})")
    saved = meta.get("identity")
    if not isinstance(saved, dict):
        raise CheckpointError(f"checkpoint {name!r} is damaged: its header names no run")
    now = json.loads(json.dumps(dict(identity)))  # as the file holds it (tuples become lists)
    differs = [key for key in sorted(set(saved) | set(now)) if saved.get(key) != now.get(key)]
    if differs:
        details = "; ".join(f"{key}: checkpoint {_short(saved.get(key))}, now {_short(now.get(key))}"
                            for key in differs[:3])
        raise CheckpointError(f"checkpoint {name!r} was taken of another run ({details})")
    stream = io.BytesIO(data)
    stream.seek(body_at)
    unpickler = _Unpickler(stream, admitted or Admitted(), Path(path))
    try:
        payload = unpickler.load()
    except CheckpointError:
        raise
    except MemoryError:
        raise
    except Exception as exc:  # a well-sealed file that is no pickle of ours: a buggy or foreign writer
        raise CheckpointError(f"checkpoint {name!r} cannot be read ({type(exc).__name__}: "
                              f"{_short(str(exc))})") from exc
    finally:
        changed = unpickler.undo_changes()
    if changed is not None:
        raise CheckpointError(f"checkpoint {name!r} changes the class {changed.__module__}.{changed.__qualname__}, "
                              "which a checkpoint may not do")
    if stream.tell() != len(data):
        raise CheckpointError(f"checkpoint {name!r} is not well formed: bytes follow its search")
    if type(payload) is not dict or set(payload) != {"tables", "search"}:
        raise CheckpointError(f"checkpoint {name!r} is not well formed: it holds no search")
    search = payload["search"]
    problem = check_search(search)
    if problem is not None:
        raise CheckpointError(f"checkpoint {name!r} holds a search this nice-attendre cannot continue ({problem})")
    return payload["tables"], search


def _verified(name: str, data: bytes) -> tuple[int, dict[str, Any]]:
    """Check the header, version and digest of ``data``; return where the pickle starts and
    the header's JSON object."""
    if not data.startswith(_MAGIC):
        older = "; an older nice-attendre may have written it" if data.startswith(pickle.PROTO) else ""
        raise CheckpointError(f"{name!r} is not a nice-attendre checkpoint (it does not start with "
                              f"{FORMAT!r}{older})")
    version_end = data.find(b"\n", len(_MAGIC), len(_MAGIC) + 20)
    version = _VERSION_LINE.fullmatch(data, len(_MAGIC), version_end) if version_end >= 0 else None
    if version is None:
        raise CheckpointError(f"checkpoint {name!r} is damaged: its header has no format version")
    if int(version.group(1)) != VERSION:
        raise CheckpointError(f"checkpoint {name!r} has format version {int(version.group(1))}; "
                              f"this nice-attendre reads version {VERSION}")
    digest_end = data.find(b"\n", version_end + 1, version_end + 80)
    digest = _DIGEST_LINE.fullmatch(data, version_end + 1, digest_end) if digest_end >= 0 else None
    if digest is None:
        raise CheckpointError(f"checkpoint {name!r} is damaged: its header has no SHA-256 digest")
    view = memoryview(data)
    try:
        actual = _digest(view[:version_end + 1], view[digest_end + 1:])
    finally:
        view.release()
    if actual != digest.group(1).decode("ascii"):
        raise CheckpointError(f"checkpoint {name!r} is damaged: its content does not match its SHA-256 digest "
                              "(changed or truncated since it was written)")
    meta_end = data.find(b"\n", digest_end + 1)
    try:
        meta = json.loads(data[digest_end + 1:meta_end]) if meta_end >= 0 else None
    except ValueError:
        meta = None
    if not isinstance(meta, dict):
        raise CheckpointError(f"checkpoint {name!r} is not well formed: its header line is not a JSON object")
    return meta_end + 1, meta


# ---- the shape of a saved search ---------------------------------------------------------------------

_NUMBER_FIELDS = ("next_initial", "transitions", "revisits", "max_depth")
_KNOWN_FIELDS = frozenset(("next_initial", "visited", "stack", "transitions", "revisits", "max_depth", "depth_cut",
                           "discoveries", "violated", "sometimes_left", "metric_ranges", "elapsed", "finished",
                           "stop_reason"))


def _is_int(value: Any) -> bool:
    return type(value) is int


def _is_str(value: Any) -> bool:
    return type(value) is str


def check_search(search: Any) -> str | None:
    """What makes ``search`` unfit to be continued by :func:`nice_attendre.dfs`, or None.

    Checks the types and the consistency of every field (without the system): counters are
    whole numbers >= 0, the visited set is one the search makes, each stack frame is
    ``[state, events, next index, event, key]`` with an index in range and the event that led
    to it the one its parent applied last, discoveries are :class:`Discovery` values with
    their traces, a finished search has a final stop reason.
    """
    try:
        return _check_search(search)
    except (MemoryError, KeyboardInterrupt):
        raise
    except Exception as exc:  # values that cannot even be compared
        return f"its fields are not well formed ({type(exc).__name__})"


def _check_search(search: Any) -> str | None:
    if type(search) is not SearchState:
        return "no search state"
    fields = getattr(search, "__dict__", {})
    if set(fields) != _KNOWN_FIELDS:
        return "its fields are not those of this version"
    for name in _NUMBER_FIELDS:
        value = fields[name]
        if not _is_int(value) or value < 0:
            return f"{name} is {_short(value)}, not a whole number >= 0"
    if search.revisits > search.transitions:
        return "more revisits than transitions"
    for name in ("depth_cut", "finished"):
        if type(fields[name]) is not bool:
            return f"{name} is {_short(fields[name])}, not a bool"
    if type(search.elapsed) is not float or not math.isfinite(search.elapsed) or search.elapsed < 0:
        return f"elapsed is {_short(search.elapsed)}, not a number of seconds"
    if search.stop_reason is not None and not _is_str(search.stop_reason):
        return f"stop reason {_short(search.stop_reason)}"
    if search.finished and search.stop_reason not in (None, "violation"):
        return f"a finished search with stop reason {_short(search.stop_reason)}"
    if search.finished and search.stop_reason == "violation" and not search.discoveries:
        return "a search stopped at a violation without one"
    problem = (_check_visited(search.visited) or _check_stack(search) or _check_discoveries(search)
               or _check_names(search))
    return problem


def _check_visited(visited: Any) -> str | None:
    kind = type(visited)
    if kind is set:
        return None
    if kind is KeyedStates:
        states, size = getattr(visited, "_states", None), getattr(visited, "_size", None)
        if type(states) is not dict or not _is_int(size) or size < len(states):
            return "its visited states are not well formed"
        return None
    if kind is FingerprintTable:
        keys, mask = getattr(visited, "_keys", None), getattr(visited, "_mask", None)
        used, limit, zero = (getattr(visited, name, None) for name in ("_used", "_limit", "_has_zero"))
        if (type(keys) is not array or keys.typecode != "Q" or not _is_int(mask) or len(keys) != mask + 1
                or len(keys) < 2 or len(keys) & mask or not _is_int(limit) or not 0 < limit < len(keys)
                or type(zero) is not bool or used != len(keys) - keys.count(0) or used > limit):
            return "its table of fingerprints is not well formed"
        return None
    return f"its visited set is a {kind.__name__}"


def _check_stack(search: SearchState) -> str | None:
    stack = search.stack
    if type(stack) is not list:
        return "its stack is not a list"
    if stack and search.next_initial < 1:
        return "a stack without an initial state"
    if len(stack) > search.max_depth + 1:
        return "a stack deeper than its max depth"
    for depth, frame in enumerate(stack):
        if type(frame) is not list or len(frame) != 5:
            return f"stack frame {depth} is not [state, events, next index, event, key]"
        events, index = frame[1], frame[2]
        if type(events) not in (tuple, list) or not _is_int(index) or not 0 <= index <= len(events):
            return f"stack frame {depth} has no valid next event"
        if depth + 1 < len(stack) and index < 1:
            return f"stack frame {depth} has a child but applied no event"
        if depth == 0:
            if frame[3] is not None:
                return "the first stack frame has an event that led to it"
        elif frame[3] != stack[depth - 1][1][stack[depth - 1][2] - 1]:
            return f"stack frame {depth} was not reached by its parent's last event"
    return None


def _check_discoveries(search: SearchState) -> str | None:
    discoveries = search.discoveries
    if type(discoveries) is not list:
        return "its discoveries are not a list"
    for number, found in enumerate(discoveries, 1):
        if (type(found) is not Discovery or not _is_str(found.property) or type(found.expectation) is not Expectation
                or not _is_str(found.reason)):
            return f"discovery {number} is not well formed"
        trace = found.trace
        if trace is None:
            if found.expectation is not Expectation.SOMETIMES:
                return f"discovery {number} has no trace"
            continue
        if (type(trace) is not Trace or type(trace.steps) is not tuple
                or any(type(step) is not Step for step in trace.steps)):
            return f"the trace of discovery {number} is not well formed"
    return None


def _check_names(search: SearchState) -> str | None:
    if type(search.violated) is not set or not all(_is_str(n) for n in search.violated):
        return "its violated properties are not a set of names"
    if not search.violated <= {found.property for found in search.discoveries}:
        return "a violated property without its discovery"
    if type(search.sometimes_left) is not list or not all(_is_str(n) for n in search.sometimes_left):
        return "its sometimes-properties are not a list of names"
    ranges = search.metric_ranges
    if type(ranges) is not dict or not all(
            _is_str(key) and type(value) is tuple and len(value) == 2 and value[0] <= value[1]
            for key, value in ranges.items()):
        return "its metric ranges are not (min, max) pairs by name"
    return None


#: How many stack frames, discoveries, and steps of each of their traces :func:`check_against`
#: asks the system about (spread evenly, the first and the last included): ``enabled`` on an
#: arbitrary state of a large network costs milliseconds, and a stack can be deep.
CHECKED_FRAMES = 64
CHECKED_TRACES = 16
CHECKED_STEPS = 8


def _spread(count: int, most: int) -> list[int]:
    """At most ``most`` indices of ``range(count)``, evenly spread, first and last included."""
    if count <= most:
        return list(range(count))
    return sorted({round(i * (count - 1) / (most - 1)) for i in range(most)})


def check_against(search: SearchState, system: Any, por: bool = False) -> str | None:
    """What makes ``search`` (well formed: see :func:`check_search`) a search of another
    system than ``system``, or None.

    The first stack frame must hold the initial state ``next_initial`` names; every frame's
    state must be stored in the visited set under the frame's key, and (for
    :data:`CHECKED_FRAMES` frames) its events must be those ``system.enabled`` gives now
    (with ``por``, a search over stubborn sets: those of the state's stubborn set, perhaps
    followed by the others, as the stack proviso adds them).
    The trace of each of :data:`CHECKED_TRACES` discoveries must start in an initial state,
    and :data:`CHECKED_STEPS` of its events must be enabled in the state before them. Any
    exception of the system (a state it cannot read) is such a difference. Only ``enabled``,
    ``initial_states`` and the fingerprint or key functions are called, never ``apply``.
    """
    try:
        return _against(search, system, por)
    except (MemoryError, KeyboardInterrupt):
        raise
    except Exception as exc:  # the system cannot read what the checkpoint holds
        return f"the system cannot read its states ({type(exc).__name__}: {_short(str(exc))})"


def _against(search: SearchState, system: Any, por: bool = False) -> str | None:
    from nice_attendre.fingerprint import fingerprint_functions, keyed_functions

    reduced = None
    if por:
        from nice_attendre.por import Reducer

        reduced = Reducer(system)

    initials = list(system.initial_states())
    if search.next_initial > len(initials):
        return "more initial states started than the system has"
    stack = search.stack
    if stack and stack[0][0] != initials[search.next_initial - 1]:
        return "its stack does not start in an initial state of this system"
    visited = search.visited
    kind = type(visited)
    key_of = (fingerprint_functions(system)[0] if kind is FingerprintTable
              else keyed_functions(system)[0] if kind is KeyedStates else (lambda state: state))
    for depth, frame in enumerate(stack):
        key = key_of(frame[0])
        if key != frame[4] or key not in visited:
            return f"stack frame {depth}: its state is not stored under its key"
    for depth in _spread(len(stack), CHECKED_FRAMES):
        state, events = stack[depth][0], tuple(stack[depth][1])
        every = tuple(system.enabled(state))
        if reduced is not None and events != every:
            chosen = tuple(reduced(state))
            rest = tuple(event for event in every if event not in set(chosen))
            if events in (chosen, chosen + rest):
                continue
        if every != events:
            return f"stack frame {depth}: its events are not those this system enables"
    traced = [(number, found.trace) for number, found in enumerate(search.discoveries, 1) if found.trace is not None]
    for at in _spread(len(traced), CHECKED_TRACES):
        number, trace = traced[at]
        if trace.initial not in initials:
            return f"the trace of discovery {number} does not start in an initial state"
        states = [trace.initial, *(step.state for step in trace.steps)]
        for index in _spread(len(trace.steps), CHECKED_STEPS):
            if trace.steps[index].event not in tuple(system.enabled(states[index])):
                return f"the trace of discovery {number} has an event its state does not enable"
        system.enabled(states[-1])  # the last state too must be one the system can read
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
