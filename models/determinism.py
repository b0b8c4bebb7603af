"""Nondeterministic app handlers, detected by construction rather than by luck.

A handler must be a function of its arguments (the app's state, the message and the
:class:`~nice_attendre.models.app.Out` it writes to): the checker calls it once per distinct
input (the memo replays it afterwards) and a trace replays it again, so a handler that reads
the clock or a random generator explores one of its possible results, a different one in
every run, and its verdict depends on luck. Two checks see it on the call that does it:

* **Reads** (:class:`Detector`): while a handler runs, a ``sys.setprofile`` hook and checking
  versions of the ``hash`` and ``id`` builtins watch for reads of what differs between calls
  or runs:

  - the clock: ``time.time``, ``time.monotonic``, ``time.perf_counter``, ``time.process_time``,
    ``time.thread_time``, ``time.clock_gettime`` (and their ``_ns`` forms), and ``now``,
    ``utcnow`` and ``today`` of ``datetime``'s classes (``uuid.uuid1`` reads the clock too);
  - the system's randomness: ``os.urandom`` and ``os.getrandom`` (what ``secrets``,
    ``uuid.uuid4`` and ``random.SystemRandom`` read);
  - a ``random.Random`` generator (the module's shared one behind ``random.random``,
    ``random.choice``..., or one of the app's) that was not seeded with a value during the
    same call: ``rng = random.Random(42)`` made inside the handler, or ``random.seed(42)``
    first, is deterministic; a generator made before the call carries state from earlier
    calls, and ``Random()`` without a seed is seeded from the system's randomness;
  - ``id()`` of an object (its address), called by the app's code;
  - ``hash()`` of a value whose hash is its address (``object()``, a class without
    ``__eq__``, a function, ``None`` before Python 3.12) or varies with ``PYTHONHASHSEED``
    (``str``, ``bytes``, an ``Enum``), directly or inside a tuple, frozenset or the fields its
    own ``__hash__`` hashes, called by the app's code.

  The hook sees the function object called, whatever name the app's module bound it to
  (``from time import time`` is caught). A read counts when the code that asked for it is
  the app's: the first frame, walking out of the standard library and installed packages
  (``random.choice`` reads its generator inside ``random.py``), that belongs to neither the
  checker nor os-ken. So the checker's own reads during a call (the watchdog's clock, os-ken
  building messages) are never counted, and neither is what ``logging`` reads to stamp a
  record, nor ``id``/``hash`` called inside the library (``copy.deepcopy`` keys its memo by
  ``id``), nor inside an object's ``__hash__``/``__eq__`` when Python calls them to look the
  object up in a set or dict (membership does not depend on the hash's value). No garbage
  collection runs during a watched call: the callbacks and finalizers a collection runs
  (of any earlier code; hypothesis times its collections with the clock) would stack their
  frames on the app's.

* **Two calls** (:func:`difference`, used by the platform): each handler call is made twice
  on the same input (the second unwatched), and what the two returned and sent (or raised)
  is compared. This sees what no list of sources names: state kept in a global or in the
  app object between calls, a file read, a source missing from the list above.

Both run on the first call of each distinct input (the platform keeps the inputs checked in
:attr:`Detector.checked`; a later call of one is made once, unwatched), as the memo calls a
handler once per distinct input: the checks find the same with the memo on or off, and cost
little (docs/model.md gives figures). What neither sees: iterating over a set or dict of
objects hashed by address or of strings (an order that varies between runs, without any
call to ``hash``) when the two calls of one run agree, ``time.localtime()`` and kin without
an argument, reads made inside C extensions, and a handler whose calls of one input agree
pairwise but change later (the report's replay of a trace may then show it).
"""
from __future__ import annotations

import builtins
import datetime
import gc
import os
import random
import re
import sys
import sysconfig
import threading
import time
import types
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

#: The builtins the detector checks while a call runs (the originals, kept here).
_hash = builtins.hash
_id = builtins.id
_get_ident = threading.get_ident

#: Types whose hash mixes in an address (besides those using ``object.__hash__``).
_ADDRESS_HASHED = (types.BuiltinFunctionType, types.MethodWrapperType, types.WrapperDescriptorType)

#: Frame kinds (see :meth:`Detector.kind`).
APP, LIBRARY, PLATFORM, SINK = range(4)

#: Clock functions read by calling them (the originals, whatever patches them later).
_CLOCKS = ("time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "process_time",
           "process_time_ns", "thread_time", "thread_time_ns", "clock_gettime", "clock_gettime_ns")
#: C methods of a generator that consume its state.
_GENERATOR_READS = frozenset({"random", "getrandbits"})
#: Class methods of ``datetime``'s classes that read the clock.
_CLOCK_METHODS = frozenset({"now", "utcnow", "today"})
#: Methods Python calls implicitly to look an object up (``in``, dict keys): ``id`` and
#: ``hash`` called there do not make a result depend on an address.
_LOOKUP_DUNDERS = frozenset({"__hash__", "__eq__", "__ne__"})

#: An address in a message (``<Out object at 0x7f...>``): it differs between two calls.
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")

_SEED = random.Random.seed.__code__
_SETSTATE = random.Random.setstate.__code__


def _watched_functions() -> dict[Any, tuple[str, str]]:
    """The builtin functions that read a nondeterministic source -> (what they read, their
    name)."""
    watched: dict[Any, tuple[str, str]] = {}
    for name in _CLOCKS:
        function = getattr(time, name, None)
        if function is not None:
            watched[function] = ("the clock", f"time.{name}")
    for name in ("urandom", "getrandom"):
        function = getattr(os, name, None)
        if function is not None:
            watched[function] = ("the system's randomness", f"os.{name}")
    return watched


_WATCHED = _watched_functions()


@dataclass(frozen=True, slots=True)
class Read:
    """A read of a nondeterministic source by the app's code: ``source`` says what was read
    (``the clock (time.time)``), ``where`` the app's line that asked for it
    (``router.py:23 in on_packet_in``)."""

    source: str
    where: str

    def __str__(self) -> str:
        return f"{self.source} at {self.where}"


class NondeterministicCall(Exception):
    """Raised by a platform that checks its own calls (an adapted Ryu app runs each handler
    twice): two calls with the same input did not agree. ``what`` says how (see
    :func:`difference`)."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


#: The detector watching the current call into the app, if any (one call at a time).
_ACTIVE: "Detector | None" = None


def active() -> "Detector | None":
    """The :class:`Detector` watching the call running now (``None`` outside calls into
    the app): what a platform that remembers a call's outcome (the Ryu adapter) uses to
    record and replay the call's reads."""
    return _ACTIVE


def _checked_id(value: Any) -> int:
    """``id``, noting a call by the app's code while a detector watches."""
    detector = _ACTIVE
    if detector is not None and detector.owner == _get_ident():
        detector.direct(sys._getframe(1), "id() (an object's address, which differs from run to run)")
    return _id(value)


def _checked_hash(value: Any) -> int:
    """``hash``, noting a hash by the app's code that differs between runs while a
    detector watches (see :meth:`Detector.hashing`)."""
    detector = _ACTIVE
    if detector is None or detector.owner != _get_ident():
        return _hash(value)
    return detector.hashing(value, sys._getframe(1))


def hash_varies(value: Any, budget: int = 10_000) -> str | None:
    """Why ``hash(value)`` may differ between runs (``None`` if nothing shows it): a part
    hashed by its address, or a str/bytes (hashed with ``PYTHONHASHSEED``'s key). Looks
    through tuples, frozensets and bound methods, at most ``budget`` values; a value with a
    ``__hash__`` of its own is judged by what that ``__hash__`` hashes (the caller checks
    the nested calls)."""
    stack = [value]
    while stack and budget > 0:
        item = stack.pop()
        budget -= 1
        kind = type(item)
        if kind is str or kind is bytes:
            return f"hash() of a {kind.__name__} (it varies with PYTHONHASHSEED)"
        if isinstance(item, (tuple, frozenset)) and kind.__hash__ in (tuple.__hash__, frozenset.__hash__):
            stack.extend(item)  # named tuples too
            continue
        if kind is types.MethodType:
            stack.extend((item.__self__, item.__func__))
        elif kind.__hash__ is object.__hash__ or kind in _ADDRESS_HASHED:
            return f"hash() of {_a(kind)} (hashed by its address, which differs from run to run)"
    return None


def _a(kind: type) -> str:
    name = kind.__name__
    return f"an {name}" if name[:1].lower() in "aeiou" else f"a {name}"


def _package_dirs() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(the app directories shipped with the checker, the checker's and os-ken's own
    directories, the standard library's and installed packages' directories, logging's):
    each ending with a separator."""
    from importlib.util import find_spec

    def dirs(paths: Iterable[str]) -> tuple[str, ...]:
        return tuple(sorted({os.path.join(os.path.realpath(path), "") for path in paths if path}))

    def package(name: str) -> list[str]:
        """The directories of package ``name`` (found, not imported: apps and properties
        depend on the models, not the other way round)."""
        module = sys.modules.get(name)
        if module is not None:
            return list(getattr(module, "__path__", ()))
        try:
            spec = find_spec(name)
        except (ImportError, ValueError):
            return []
        return list(spec.submodule_search_locations or ()) if spec is not None else []

    apps = dirs(package("nice_attendre.apps"))
    platform = [path for name in ("nice_attendre", "nice_attendre.models", "nice_attendre.properties",
                                  "nice_attendre.benchmarks", "os_ken") for path in package(name)]
    paths = sysconfig.get_paths()
    library = [paths.get(key, "") for key in ("stdlib", "platstdlib", "purelib", "platlib")]
    try:
        import site

        library.extend(site.getsitepackages())
    except (AttributeError, ImportError):  # pragma: no cover - a virtualenv's old site module
        pass
    return apps, dirs(platform), dirs(library), dirs(package("logging"))


class CheckedInputs(set):  # type: ignore[type-arg]
    """A set of the inputs of calls found deterministic, bounded: past :attr:`LIMIT` it is
    emptied (those inputs are then checked again when they recur)."""

    LIMIT = 1_000_000

    def add(self, key: Any) -> None:
        if len(self) >= self.LIMIT:
            self.clear()
        super().add(key)


class Detector:
    """Watches one call into the app at a time for reads of nondeterministic sources (see
    the module docstring).

    ``begin()`` before the call, ``end()`` after it (also when it raised; ``end`` is
    idempotent and ``begin`` ends a call left unfinished); ``reads`` then holds the reads
    the call made, the first ones (at most :attr:`KEEP`). ``app_files``: source files of
    the app's own classes, counted as the app's code wherever they are installed.
    """

    #: Reads kept per call (the first is what a report names).
    KEEP = 3

    def __init__(self, app_files: Iterable[str] = ()) -> None:
        self.reads: list[Read] = []
        #: Inputs of calls checked already (the platform's keys: see
        #: :meth:`~nice_attendre.models.protocols.openflow.OpenFlow.run_app`).
        self.checked: CheckedInputs = CheckedInputs()
        #: The thread the watched call runs in.
        self.owner = 0
        self._files = frozenset(os.path.realpath(path) for path in app_files if path)
        self._kinds: dict[str, int] = {}
        self._dirs: tuple[tuple[str, ...], ...] | None = None
        self._seeded: dict[int, Any] = {}  # id -> generator seeded with a value in this call
        self._hashing: Any = None  # the app's frame of an explicit hash() in progress
        self._watching = False
        self._previous: Any = None
        self._profiling = False
        self._collecting = False
        self._hook = self._make_hook()

    @staticmethod
    def _watched_code() -> dict[Any, Any]:
        """Python functions whose call is a read or a seeding: code object -> ``None`` for
        ``Random.seed``/``setstate``, else (what it reads, its name). ``uuid.uuid1`` reads the
        clock in C where the platform has it, so its call is the read; watched when the app
        has imported ``uuid`` (it is then in ``sys.modules``)."""
        codes: dict[Any, Any] = {_SEED: None, _SETSTATE: None}
        uuid = sys.modules.get("uuid")
        if uuid is not None and hasattr(uuid, "uuid1"):
            codes[uuid.uuid1.__code__] = ("the clock", "uuid.uuid1")
        return codes

    @classmethod
    def for_app(cls, app: Any) -> "Detector":
        """A detector for ``app``: its classes' source files are the app's (an adapted Ryu
        app's too), except the checker's own base classes."""
        classes = list(type(app).__mro__) + list(getattr(getattr(app, "ryu_class", None), "__mro__", ()))
        files = []
        for klass in classes:
            module = sys.modules.get(klass.__module__)
            path = getattr(module, "__file__", None)
            if path and not klass.__module__.startswith(("nice_attendre.models.", "os_ken.", "typing", "builtins")):
                files.append(path)
        return cls(files)

    # ---- where code belongs ------------------------------------------------------------

    def kind(self, filename: str) -> int:
        """The kind of code in source file ``filename``: :data:`APP` (the app's: its own
        files, the apps shipped with the checker, anything else not installed),
        :data:`PLATFORM` (the checker's, os-ken's), :data:`SINK` (logging) or
        :data:`LIBRARY` (the standard library, installed packages, generated code)."""
        found = self._kinds.get(filename)
        if found is None:
            found = self._kinds[filename] = self._classify(filename)
        return found

    def _classify(self, filename: str) -> int:
        if filename.startswith("<"):
            return LIBRARY  # frozen modules, code made by exec (dataclasses' methods)
        path = os.path.realpath(filename)
        if path in self._files:
            return APP
        if self._dirs is None:
            self._dirs = _package_dirs()
        apps, platform, library, sink = self._dirs
        if path.startswith(apps):
            return APP
        if path.startswith(platform):
            return PLATFORM
        if path.startswith(sink):
            return SINK
        if path.startswith(library):
            return LIBRARY
        return APP

    # ---- one call ----------------------------------------------------------------------

    def begin(self) -> None:
        """Start watching a call into the app (in this thread)."""
        global _ACTIVE
        if self._watching:
            self.end()
        self.reads.clear()
        self._seeded.clear()
        self._hashing = None
        self.owner = _get_ident()
        previous = sys.getprofile()
        self._previous = previous
        self._profiling = previous is None or callable(previous)  # not over a C profiler (cProfile)
        if self._profiling:
            sys.setprofile(self._hook if previous is None else self._chained(previous))
        builtins.hash = _checked_hash
        builtins.id = _checked_id
        # No collection during the call: a finalizer it would run (of any object, of any
        # earlier code) reading the clock would look like the app's read, its frames
        # stacked on the app's.
        self._collecting = gc.isenabled()
        gc.disable()
        _ACTIVE = self
        self._watching = True

    def end(self) -> None:
        """Stop watching (idempotent); ``reads`` keeps what the call read."""
        global _ACTIVE
        if not self._watching:
            return
        self._watching = False
        _ACTIVE = None
        builtins.hash = _hash
        builtins.id = _id
        if self._collecting:
            gc.enable()
        if self._profiling:
            sys.setprofile(self._previous)
        self._previous = None
        self._seeded.clear()
        self._hashing = None

    @contextmanager
    def unwatched(self) -> Iterator[None]:
        """Stop watching for the enclosed code (a platform's second call, made to compare:
        the first was watched), then watch again; ``reads`` is kept."""
        if not self._watching:
            yield
            return
        reads = list(self.reads)
        self.end()
        try:
            yield
        finally:
            self.begin()
            self.reads.extend(reads)

    def replay(self, reads: Iterable[Read]) -> None:
        """Add reads a remembered call made (a platform replaying a call's outcome)."""
        for read in reads:
            self._record(read)

    # ---- what is seen ------------------------------------------------------------------

    def _record(self, read: Read) -> None:
        if len(self.reads) < self.KEEP and read not in self.reads:
            self.reads.append(read)

    def _where(self, frame: Any) -> str:
        code = frame.f_code
        return f"{os.path.basename(code.co_filename)}:{frame.f_lineno} in {code.co_name}"

    def found(self, frame: Any, source: str, function: str) -> None:
        """``source`` was read by calling ``function`` (``time.time``) from code running in
        ``frame``: count it if the code that asked for it (``frame`` or, out of library
        frames, its caller) is the app's, naming the library function the app called when
        it was one (``random.choice``)."""
        outer = None
        while frame is not None:
            kind = self.kind(frame.f_code.co_filename)
            if kind != LIBRARY:
                break
            outer = frame
            frame = frame.f_back
        if frame is None or kind != APP:
            return  # the checker's or os-ken's own code, or logging stamping a record
        if outer is not None:
            function = f"{outer.f_globals.get('__name__', '?')}.{outer.f_code.co_name}"
        self._record(Read(f"{source} ({function})", self._where(frame)))

    def direct(self, frame: Any, source: str) -> None:
        """``source`` was read by a call made from ``frame``: count it if ``frame`` is the
        app's code and not a method Python calls to look an object up."""
        code = frame.f_code
        if code.co_name not in _LOOKUP_DUNDERS and self.kind(code.co_filename) == APP:
            self._record(Read(source, self._where(frame)))

    def hashing(self, value: Any, frame: Any) -> int:
        """``hash(value)`` called from ``frame`` while watching: an explicit hash by the
        app's code whose value varies between runs is a read; so is a varying value hashed
        by the ``__hash__`` methods it calls in turn."""
        if self._hashing is not None:  # inside an explicit hash: the parts it hashes
            reason = hash_varies(value)
            if reason is not None:
                self._record(Read(reason, self._where(self._hashing)))
            return _hash(value)
        code = frame.f_code
        if code.co_name == "__hash__" or self.kind(code.co_filename) != APP:
            return _hash(value)
        reason = hash_varies(value)
        if reason is not None:
            self._record(Read(reason, self._where(frame)))
        self._hashing = frame
        try:
            return _hash(value)
        finally:
            self._hashing = None

    def _seeding(self, frame: Any, code: Any) -> None:
        """``Random.seed`` or ``Random.setstate`` runs in ``frame``: its generator is
        deterministic from now on in this call if given a value (``seed(None)``, as
        ``Random()`` does, seeds it from the system's randomness)."""
        local = frame.f_locals
        generator = local.get("self")
        if code is _SETSTATE or local.get("a") is not None:
            self._seeded[_id(generator)] = generator
        else:
            self._seeded.pop(_id(generator), None)

    def _generator(self, generator: Any, method: str) -> tuple[str, str] | None:
        """What calling ``method`` of ``generator`` reads, and the function's name
        (``None``: the generator was seeded in this call)."""
        if _id(generator) in self._seeded:
            return None
        if generator is getattr(random, "_inst", None):
            return "the random module's shared generator", f"random.{method}"
        kind = type(generator).__name__
        return f"a {kind} generator not seeded with a value in this call", f"{kind}.{method}"

    def _make_hook(self) -> Callable[[Any, str, Any], None]:
        watched = _WATCHED
        found = self.found
        seeding = self._seeding
        generator_read = self._generator
        codes = self._watched_code()
        base = random.Random.__mro__[1]  # _random.Random, the C generator

        def hook(frame: Any, event: str, arg: Any) -> None:
            if event == "c_call":
                known = watched.get(arg)
                if known is None:
                    name = getattr(arg, "__name__", "")
                    if name in _GENERATOR_READS:
                        generator = getattr(arg, "__self__", None)
                        if not isinstance(generator, base):
                            return
                        known = generator_read(generator, name)
                        if known is None:
                            return
                    elif name in _CLOCK_METHODS:
                        owner = getattr(arg, "__self__", None)
                        if not (isinstance(owner, type) and issubclass(owner, datetime.date)):
                            return
                        known = "the clock", f"{owner.__name__}.{name}"
                    else:
                        return
                found(frame, *known)
            elif event == "call":
                code = frame.f_code
                if code in codes:
                    known = codes[code]
                    if known is None:
                        seeding(frame, code)
                    else:
                        found(frame.f_back, *known)

        return hook

    def _chained(self, previous: Callable[[Any, str, Any], Any]) -> Callable[[Any, str, Any], Any]:
        """The hook, then a profile function that was already installed."""
        hook = self._hook

        def chained(frame: Any, event: str, arg: Any) -> Any:
            hook(frame, event, arg)
            return previous(frame, event, arg)

        return chained


def _text(value: Any) -> str:
    """``repr(value)``, or what its ``__repr__`` did instead (user code)."""
    try:
        return repr(value)
    except Exception as exc:  # noqa: BLE001 - user code: described, never a crash
        return f"<{type(value).__name__} whose __repr__ raised {type(exc).__name__}>"


def contrast(first: Any, second: Any, context: int = 30, limit: int = 160) -> tuple[str, str]:
    """The reprs of two values that differ, cut to where they differ (with ``context``
    characters before, ``...`` for what is left out; each at most ``limit`` characters)."""
    a, b = _text(first), _text(second)
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0  # characters they share at their ends, not overlapping the start
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    begin = max(0, start - context)

    def cut(text: str) -> str:
        stop = min(len(text) - end + context, len(text), begin + limit)
        return ("..." if begin else "") + text[begin:stop] + ("..." if stop < len(text) else "")

    return cut(a), cut(b)


def reads_text(reads: Iterable[Read]) -> str:
    """The reads of a call in words, for a report: ``read the clock (time.time) at
    router.py:23 in on_packet_in``."""
    return "read " + "; then ".join(str(read) for read in reads)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one call into the app did: ``failure``, what went wrong in words (``raised
    KeyError: 'h2'``, as reports say it) or ``None``; ``key``, what identifies the state it
    returned (the network's id of it: the state's own ``==`` is user code, run once when it
    was stored); ``state``, that state (for the report); ``requests``, what it asked for."""

    failure: str | None
    key: Any
    state: Any
    requests: tuple[Any, ...]


def difference(first: Outcome, second: Outcome) -> str | None:
    """How two calls with the same input differ, in words after the handler's name
    (``None`` if they agree)."""
    if first.failure is not None or second.failure is not None:
        if first.failure is not None and second.failure is not None \
                and _ADDRESS.sub("0x", first.failure) == _ADDRESS.sub("0x", second.failure):
            return None  # the same failure (an object's address in its message may differ)
        said_a = first.failure if first.failure is not None else "returned"
        said_b = second.failure if second.failure is not None else "returned"
        return f"gave two outcomes for the same input: it {said_a}, then {said_b} when called again"
    if first.key != second.key:
        shown_a, shown_b = contrast(first.state, second.state)
        return f"returned two states for the same input: {shown_a}, then {shown_b} when called again"
    requests_a, requests_b = first.requests, second.requests
    try:
        same = requests_a == requests_b
    except Exception as exc:  # noqa: BLE001 - a value of the app's in a request (a barrier's xid)
        return f"asked for things that cannot be compared ({type(exc).__name__} comparing them)"
    if not same:
        index = next((i for i, (a, b) in enumerate(zip(requests_a, requests_b)) if a != b),
                     min(len(requests_a), len(requests_b)))
        if index < len(requests_a) and index < len(requests_b):
            shown_a, shown_b = contrast(requests_a[index], requests_b[index])
        else:
            shown_a = contrast(requests_a[index], None)[0] if index < len(requests_a) else "nothing more"
            shown_b = contrast(requests_b[index], None)[0] if index < len(requests_b) else "nothing more"
        return (f"asked for two things for the same input: request {index + 1} was {shown_a}, then {shown_b} "
                "when called again")
    return None


__all__ = ["CheckedInputs", "Detector", "NondeterministicCall", "Outcome", "Read", "active", "difference",
           "hash_varies", "reads_text"]
