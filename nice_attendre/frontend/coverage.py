"""Coverage of the app's code by a search (``verify --coverage``, library ``coverage=True``).

A :class:`Measurement` runs coverage.py (lines and branches) on the app's own files only: the
files of the app class and its base classes (for a Ryu app, the Ryu class's), and the modules
of the same directories the app imported; never nice-attendre's own code (its apps package
aside). It starts once the app is loaded (:meth:`Measurement.start`, the ``on_app`` hook of
:func:`nice_attendre.frontend.api.build`), so the switch joins of the initial state count,
and stops after the search (:meth:`Measurement.finish`), which returns an
:class:`AppCoverage`: per handler of the app (a native app's ``on_*`` methods it overrides, a
Ryu app's ``@set_ev_cls`` methods), the lines and branches run and those never run, with
file:line; then the other methods of the app's classes (run or not) and the other functions
of its files that ran (helpers the handlers call).

The memo (:mod:`nice_attendre.models.memo`) replays a transition it has seen in place of
calling the handlers again, so a handler is not called on every transition: coverage counts
where handlers ran. A memoised call repeats the outcome of a call with the same input that
did run (handlers are deterministic: the checker verifies it), so it would have run the same
lines: the figures are those of calling every handler every time.

Worker processes (``--workers N``) are forked from this one, with the measurement running:
each writes what it measured to the measurement's directory as it exits
(:func:`multiprocessing.util.register_after_fork`), and :meth:`Measurement.finish` merges
their data into this process's (``CoverageData.update``).
"""
from __future__ import annotations

import contextlib
import importlib.util
import inspect
import json
import multiprocessing.util
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

#: What the report says about where coverage is counted (see the module docstring).
COUNTED = "counted where handlers ran; memoised calls repeat known outcomes"



@dataclass(frozen=True, slots=True)
class Handler:
    """An app function to report: its name (``Class.method``), file, ``def`` line, and for a
    handler the events that call it (``events``; empty: a native app's handler)."""

    name: str
    file: str
    line: int
    handler: bool
    events: tuple[str, ...] = ()
    #: why the model never calls it, when it never does (a Ryu event the model does not generate)
    never_called: str | None = None


@dataclass(frozen=True, slots=True)
class FunctionCoverage:
    """The coverage of one function of the app: statements (``lines``) and branch exits
    (``branches``) in all, how many ran, which lines never ran and which branches (from line,
    to line; a negative ``to`` leaves the function) were never taken, each with coverage.py's
    explanation."""

    name: str
    file: str
    line: int
    handler: bool
    lines: int
    lines_run: int
    branches: int
    branches_taken: int
    missing_lines: tuple[int, ...]
    missing_branches: tuple[tuple[int, int, str], ...]
    never_called: str | None = None

    def summary(self) -> str:
        """``lines 12/15, branches 5/8``."""
        return f"lines {self.lines_run}/{self.lines}, branches {self.branches_taken}/{self.branches}"

    def as_json(self, show: str) -> dict[str, Any]:
        """The JSON form (``show``: the file as reports name it)."""
        return {"name": self.name, "kind": "handler" if self.handler else "function", "file": self.file,
                "display_file": show, "line": self.line, "lines": self.lines, "lines_run": self.lines_run,
                "branches": self.branches, "branches_taken": self.branches_taken,
                "missing_lines": list(self.missing_lines),
                "missing_branches": [{"line": start, "to": end, "why": why}
                                     for start, end, why in self.missing_branches],
                "never_called": self.never_called}


@dataclass(frozen=True)
class AppCoverage:
    """What the search ran of the app's code (see the module docstring). ``files`` are the
    files measured; ``functions`` the handlers (all of them), then the app's other methods (all
    of them) and the other functions of its files that ran, in file and line order; ``workers``: worker processes whose data was merged, of
    ``expected_workers`` (0: the search ran in this process); ``partial``: why the figures
    cover part of the search only (it stopped early), or None."""

    files: tuple[str, ...]
    functions: tuple[FunctionCoverage, ...]
    workers: int = 0
    expected_workers: int = 0
    partial: str | None = None
    notes: tuple[str, ...] = field(default=())

    def totals(self) -> tuple[int, int, int, int]:
        """(lines run, lines, branches taken, branches) over the functions reported."""
        return (sum(f.lines_run for f in self.functions), sum(f.lines for f in self.functions),
                sum(f.branches_taken for f in self.functions), sum(f.branches for f in self.functions))

    def _notes(self) -> list[str]:
        notes = [COUNTED]
        if self.expected_workers:
            notes.append(f"merged from {self.workers} of {self.expected_workers} worker processes"
                         + ("" if self.workers == self.expected_workers else
                            f" ({self.expected_workers - self.workers} ended without reporting: what they ran "
                            "is missing)"))
        if self.partial is not None:
            notes.append(self.partial)
        return [*notes, *self.notes]

    def text_lines(self) -> list[str]:
        """The report's coverage block."""
        lines_run, lines, taken, branches = self.totals()
        out = [f"  coverage of the app's code: lines {lines_run}/{lines}, branches {taken}/{branches}"]
        out.extend(f"    ({note})" for note in self._notes())
        if not self.files:
            out.append("    no file of the app's own was found to measure")
        for function in self.functions:
            where = f"{display(function.file)}:{function.line}"
            kind = "handler" if function.handler else "function"
            out.append(f"    {kind} {function.name} ({where}): {function.summary()}")
            if function.never_called is not None:
                out.append(f"      never called: {function.never_called}")
            elif function.lines and not function.lines_run:
                out.append("      never called by the search")
            if function.missing_lines and function.lines_run:
                out.append(f"      never run: {display(function.file)}:{ranges(function.missing_lines)}")
            for start, end, _why in function.missing_branches if function.lines_run else ():
                target = f"line {end}" if end > 0 else "the function's exit"
                out.append(f"      never taken: {display(function.file)}:{start} (the branch to {target})")
        return out

    def as_json(self) -> dict[str, Any]:
        """The JSON report's ``coverage`` object: the same figures as :meth:`text_lines`."""
        lines_run, lines, taken, branches = self.totals()
        return {"lines": lines, "lines_run": lines_run, "branches": branches, "branches_taken": taken,
                "files": list(self.files), "notes": self._notes(),
                "workers_merged": self.workers, "workers": self.expected_workers,
                "complete": self.partial is None,
                "functions": [f.as_json(display(f.file)) for f in self.functions]}


def display(path: str) -> str:
    """``path`` as reports show it: relative to the working directory when inside it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if relative.startswith("..") else relative


def ranges(numbers: Sequence[int]) -> str:
    """``[3, 4, 5, 9]`` -> ``"3-5, 9"`` (``numbers`` sorted)."""
    parts: list[str] = []
    start = previous = None
    for number in numbers:
        if previous is not None and number == previous + 1:
            previous = number
            continue
        if start is not None:
            parts.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = number
    if start is not None:
        parts.append(str(start) if start == previous else f"{start}-{previous}")
    return ", ".join(parts)


# ---- which code is the app's -------------------------------------------------------------

def _checker_roots() -> tuple[Path, ...]:
    """The folders of nice-attendre's own code: the core and front end, the models, the
    properties and the benchmarks (the shipped apps are apps: they are measured)."""
    return tuple(_package_folder(name) for name in ("nice_attendre", "nice_attendre.models",
                                                    "nice_attendre.properties", "nice_attendre.benchmarks"))


def _package_folder(name: str) -> Path:
    """The folder of package ``name`` (found, not imported)."""
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations, name
    return Path(list(spec.submodule_search_locations)[0]).resolve()


def _is_checker_file(path: Path) -> bool:
    """Whether ``path`` is nice-attendre's own code (not an app of its ``apps`` package)."""
    if _package_folder("nice_attendre.apps") in path.parents:
        return False
    return any(root in path.parents for root in _checker_roots())


def _source_file(obj: Any) -> Path | None:
    try:
        found = inspect.getsourcefile(obj)
    except (TypeError, OSError):
        return None
    return Path(found).resolve() if found else None


def _app_classes(app: Any) -> list[type]:
    """The app's own classes: a Ryu app's class and its bases below os-ken's ``OSKenApp``,
    else the app's class and its bases below :class:`~nice_attendre.models.app.App`."""
    from nice_attendre.models.app import App

    ryu_class = getattr(type(app), "ryu_class", None)
    if ryu_class is not None:
        return [cls for cls in ryu_class.__mro__ if cls.__module__.split(".")[0] not in ("os_ken", "ryu", "builtins")]
    return [cls for cls in type(app).__mro__ if issubclass(cls, App) and cls is not App
            and not cls.__module__.startswith("nice_attendre.models")]


def app_files(app: Any) -> tuple[str, ...]:
    """The files to measure for ``app`` (sorted): its classes' files, and the modules of
    their directories that they import (directly or through one another); never
    nice-attendre's own code."""
    files: set[Path] = set()
    modules: list[Any] = []
    for cls in _app_classes(app):
        found = _source_file(cls)
        if found is not None and found.suffix == ".py" and not _is_checker_file(found):
            files.add(found)
            modules.append(sys.modules.get(cls.__module__))
    directories = {path.parent for path in files}
    while modules:
        module = modules.pop()
        for value in list(vars(module).values()) if module is not None else ():
            imported = value if inspect.ismodule(value) else sys.modules.get(_module_name(value))
            name = getattr(imported, "__file__", None)
            if not isinstance(name, str) or not name.endswith(".py"):
                continue
            path = Path(name).resolve()
            if path.parent in directories and path not in files and not _is_checker_file(path):
                files.add(path)
                modules.append(imported)
    return tuple(sorted(str(path) for path in files))


def _framework_base(app: Any) -> type:
    """The class the app's own classes extend: os-ken's ``OSKenApp`` or
    :class:`~nice_attendre.models.app.App`."""
    from nice_attendre.models.app import App

    ryu_class = getattr(type(app), "ryu_class", None)
    if ryu_class is not None:
        from os_ken.base.app_manager import OSKenApp

        return OSKenApp
    return App


def _methods(app: Any) -> tuple[set[str], set[str]]:
    """The qualified names of (the app's own methods, its overrides of the framework's
    methods that are not handlers: ``scenario``, ``describe``, ``start``..., which run while
    the app is built, not in answer to events). Dunder methods are in neither."""
    base = _framework_base(app)
    own: set[str] = set()
    api: set[str] = set()
    for cls in _app_classes(app):
        for name, value in vars(cls).items():
            if name.startswith("__") and name.endswith("__"):
                continue
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            functions = [value.fget, value.fset, value.fdel] if isinstance(value, property) else [value]
            for function in functions:
                qualname = getattr(inspect.unwrap(function), "__qualname__", None) if inspect.isfunction(
                    inspect.unwrap(function) if function is not None else None) else None
                if qualname is not None:
                    (api if hasattr(base, name) else own).add(qualname)
    return own, api


def _module_name(value: Any) -> str:
    """The name of the module that defined ``value`` ("" when it says none)."""
    try:
        name = getattr(value, "__module__", None)
    except Exception:  # noqa: BLE001 - a user object whose attributes raise
        return ""
    return name if isinstance(name, str) else ""


def _handlers(app: Any) -> list[Handler]:
    """The app's handlers: a Ryu app's ``@set_ev_cls`` methods, a native app's ``on_*`` methods
    that override :class:`~nice_attendre.models.app.App`'s."""
    from nice_attendre.models.app import App

    found: list[Handler] = []
    ryu_class = getattr(type(app), "ryu_class", None)
    if ryu_class is not None:
        delivered = set(app.handled_events())
        for _name, function in inspect.getmembers(ryu_class, inspect.isfunction):
            callers = getattr(function, "callers", None)
            if not callers:
                continue
            events = tuple(sorted(ev_cls.__name__ for ev_cls in callers))
            why = None if delivered & set(events) else f"the model generates no {', '.join(events)}"
            handler = _handler(function, events, why)
            if handler is not None:
                found.append(handler)
        return found
    for name in sorted(vars(App)):
        if not name.startswith("on_"):
            continue
        function = getattr(type(app), name, None)
        if function is None or function is getattr(App, name):
            continue
        handler = _handler(function, (), None)
        if handler is not None:
            found.append(handler)
    return found


def _handler(function: Any, events: tuple[str, ...], never_called: str | None) -> Handler | None:
    function = inspect.unwrap(function)
    code = getattr(function, "__code__", None)
    if code is None:
        return None
    return Handler(function.__qualname__, str(Path(code.co_filename).resolve()), code.co_firstlineno, True,
                   events, never_called)


def _pattern(path: str) -> str:
    """An ``include`` pattern of coverage.py that matches ``path``: its glob characters
    (``*?[]``, which a folder's name may hold) match any one character there."""
    return re.sub(r"[*?\[\]]", "?", path)


# ---- measuring ---------------------------------------------------------------------------

class Measurement:
    """Coverage of an app's code in this process and in the processes forked from it while
    it runs (see the module docstring). ``workers``: how many worker processes the search
    will fork (0: none), to say when one's data is missing.

    Use: ``start(app)`` once the app is loaded, ``finish(...)`` after the search (also after
    a failure: it stops the measurement whatever happened; :meth:`stop` stops it without a
    result)."""

    def __init__(self, workers: int = 0) -> None:
        self.workers = workers
        self._coverage: Any = None
        self._app: Any = None
        self._files: tuple[str, ...] = ()
        self._directory: str | None = None
        self._owner = os.getpid()
        self._running = False

    def start(self, app: Any) -> None:
        """Start measuring ``app``'s files (once)."""
        import coverage

        if self._coverage is not None:
            return
        self._app = app
        self._files = app_files(app)
        self._directory = tempfile.mkdtemp(prefix="nice-attendre-coverage-")
        self._coverage = coverage.Coverage(data_file=None, branch=True, config_file=False,
                                           include=[_pattern(name) for name in self._files] or ["\0"])
        # what the report says itself (a handler never called), not coverage.py's warning
        self._coverage.set_option("run:disable_warnings", ["no-data-collected"])
        multiprocessing.util.register_after_fork(self, Measurement._after_fork)
        self._coverage.start()
        self._running = True

    def _after_fork(self) -> None:
        """In a forked worker: write this process's data when it exits."""
        if self._running:
            multiprocessing.util.Finalize(None, self._write_worker_data, exitpriority=100)

    def _write_worker_data(self) -> None:
        if not self._running or self._directory is None or os.getpid() == self._owner:
            return
        self._running = False
        self._coverage.stop()
        data = self._coverage.get_data()
        arcs = {name: sorted(data.arcs(name) or []) for name in sorted(data.measured_files())}
        target = Path(self._directory) / f"worker-{os.getpid()}.json"
        temporary = target.with_suffix(".part")
        temporary.write_text(json.dumps(arcs), encoding="utf-8")
        os.replace(temporary, target)

    def stop(self) -> None:
        """Stop measuring (idempotent); forked workers stop writing their data."""
        if self._running:
            self._running = False
            self._coverage.stop()

    def finish(self, complete: bool, stop_reason: str | None = None) -> AppCoverage | None:
        """Stop, merge the workers' data and analyse: the app's coverage (None if the
        measurement never started: the app was never loaded). ``complete``/``stop_reason``:
        the search's, to say when the figures cover part of it."""
        self.stop()
        if self._coverage is None:
            return None
        try:
            workers = self._merge_workers()
            partial = None if complete else (f"the search stopped early ({stop_reason or 'incomplete'}): "
                                             "coverage of the part explored")
            return analyse(self._coverage, self._app, self._files, workers=workers,
                           expected_workers=self.workers, partial=partial)
        finally:
            self.cleanup()

    def cleanup(self) -> None:
        """Remove the directory of the workers' data (idempotent)."""
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None

    def _merge_workers(self) -> int:
        """Merge every worker's data into this process's; how many workers wrote some."""
        from coverage import CoverageData

        if self._directory is None:
            return 0
        data = self._coverage.get_data()
        merged = 0
        for path in sorted(Path(self._directory).glob("worker-*.json")):
            arcs = json.loads(path.read_text(encoding="utf-8"))
            theirs = CoverageData(no_disk=True)
            theirs.add_arcs({name: [tuple(arc) for arc in found] for name, found in arcs.items()})
            data.update(theirs)
            merged += 1
        return merged


def check_coverage(engine: str, resume: Any) -> None:
    """Raise :class:`~nice_attendre.errors.InputError` for what ``--coverage`` cannot measure:
    Ray actors (not forked from this process) and a resumed search (the part before the
    checkpoint ran in another process)."""
    from nice_attendre.errors import InputError

    if engine != "processes":
        raise InputError("--coverage measures the app in processes forked from this one: not with --engine ray "
                         "(use --workers N)")
    if resume is not None:
        raise InputError("--coverage counts what one whole search runs: not with --resume (the part before the "
                         "checkpoint ran in another process)")


@contextlib.contextmanager
def measuring(wanted: bool, workers: int = 1) -> Iterator[Measurement | None]:
    """A :class:`Measurement` for a search with ``workers`` processes (None when not
    ``wanted``), stopped and cleaned up when the block ends, whatever ends it."""
    if not wanted:
        yield None
        return
    measurement = Measurement(workers if workers > 1 else 0)
    try:
        yield measurement
    finally:
        measurement.stop()
        measurement.cleanup()


# ---- analysing ---------------------------------------------------------------------------

def analyse(cov: Any, app: Any, files: Sequence[str], *, workers: int = 0, expected_workers: int = 0,
            partial: str | None = None) -> AppCoverage:
    """The :class:`AppCoverage` of ``app`` from the (stopped) coverage ``cov`` of ``files``."""
    from coverage.python import PythonFileReporter
    from coverage.regions import code_regions
    from coverage.results import analysis_from_file_reporter

    data = cov.get_data()
    handlers = _handlers(app)
    by_file: dict[str, list[Handler]] = {}
    for handler in handlers:
        by_file.setdefault(handler.file, []).append(handler)
    measured = set(files)
    own, api = _methods(app)
    functions: list[FunctionCoverage] = []
    for name in sorted(measured | set(by_file)):
        if name not in measured or not Path(name).is_file():
            continue  # a handler in a file not measured (nice-attendre's own)
        reporter = PythonFileReporter(name, coverage=cov)
        analysis = analysis_from_file_reporter(data, 2, reporter, name)
        regions = [region for region in code_regions(reporter.source()) if region.kind == "function"]
        mine = by_file.get(name, [])
        for region in regions:
            handler = _match(region, mine, regions)
            if handler is None and region.name in api:
                continue
            part = _narrow(analysis, region.lines)
            if handler is None and not part.executed and region.name not in own:
                continue  # a function of the file that never ran and is not the app's (another app's?)
            if not part.statements:
                continue
            missing_branches = tuple(
                (start, end, reporter.missing_arc_description(start, end))
                for start, ends in sorted(part.missing_branch_arcs().items()) for end in sorted(ends))
            numbers = part.numbers
            functions.append(FunctionCoverage(
                region.name, name, region.start, handler is not None,
                numbers.n_statements, numbers.n_executed, numbers.n_branches,
                numbers.n_branches - numbers.n_missing_branches, tuple(sorted(part.missing)), missing_branches,
                handler.never_called if handler is not None else None))
    functions.sort(key=lambda f: (not f.handler, f.file, f.line, f.name))
    return AppCoverage(tuple(files), tuple(functions), workers, expected_workers, partial)


def _narrow(analysis: Any, lines: set[int]) -> Any:
    """``analysis`` (a coverage.py ``Analysis`` of a file) restricted to ``lines`` (a function's
    body): its statements, and the arcs with an end in it (as coverage.py's own function
    report narrows it)."""
    from coverage.results import Analysis

    arcs = analysis.arc_possibilities_set if analysis.has_arcs else set()
    run = analysis.arcs_executed_set if analysis.has_arcs else set()
    return Analysis(precision=analysis.precision, filename=analysis.filename, has_arcs=analysis.has_arcs,
                    statements=analysis.statements & lines, excluded=analysis.excluded & lines,
                    executed=analysis.executed & lines,
                    arc_possibilities_set={arc for arc in arcs if arc[0] in lines or arc[1] in lines},
                    arcs_executed_set={arc for arc in run if arc[0] in lines or arc[1] in lines},
                    exit_counts={line: n for line, n in analysis.exit_counts.items() if line in lines},
                    no_branch=analysis.no_branch & lines)


def _match(region: Any, handlers: Iterable[Handler], regions: Sequence[Any]) -> Handler | None:
    """The handler whose function is ``region``: by qualified name; for a class defined inside
    a function (a ``<locals>`` name, which regions do not spell), the function of the same
    name whose ``def`` is the first at or after the handler's code (which starts at its first
    decorator)."""
    for handler in handlers:
        if handler.name == region.name:
            return handler
    short = region.name.rsplit(".", 1)[-1]
    for handler in handlers:
        if "<locals>" in handler.name and handler.name.rsplit(".", 1)[-1] == short and \
                handler.line <= region.start and region.start == min(
                    (other.start for other in regions if other.name.rsplit(".", 1)[-1] == short
                     and other.start >= handler.line), default=None):
            return handler
    return None
