"""What the whole test suite shares: tests of an optional extra skip when it is missing, and
the signal dispositions tests that send signals need.

Optional extras (``pip install -e '.[test]'`` alone must give a passing suite; CI installs
every extra, so these tests run there):

* a test module that imports an extra's package at its top (``from os_ken.base import ...``)
  is skipped as a whole, with the reason, instead of failing to be collected;
* the tests listed in :data:`NEEDS_EXTRA` (they run an example app written for the Ryu API,
  or write a plot) are skipped, with the reason, when their extra is missing. The list is
  explicit, so that a test which ought to pass without an extra (the tests that check the
  clear error of a missing extra) is never skipped by a guess; a test that needs an extra
  and is not listed fails in a run without it, and ``tests/test_suite_hygiene.py`` checks
  that every entry still names collected tests.

Signals: a test suite started in the background (``pytest -q &`` from a script) runs with
SIGINT ignored, and every process it starts inherits that. Tests that send SIGINT to their
own process use the :func:`sigint_default` fixture; those that start a child which must
react to SIGINT pass :func:`restore_sigint` (or :func:`child_preexec`) as its ``preexec_fn``.
"""
from __future__ import annotations

import ast
import functools
import importlib.util
import signal
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

#: Extra -> (the top-level packages it installs, the distributions that provide them).
EXTRAS: dict[str, tuple[tuple[str, ...], str]] = {
    "ryu": (("os_ken",), "os-ken"),
    "plot": (("matplotlib",), "matplotlib"),
    "cluster": (("ray",), "ray"),
}

#: Tests that need an extra although their module imports none at its top: (extra, what
#: they are: ``module.py::`` for a whole module, ``module.py::test`` for a test and its
#: parameters, ``module.py::test[start`` for its parameters that begin so; see :func:`names`).
NEEDS_EXTRA: tuple[tuple[str, str], ...] = (
    ("ryu", "tests/models/ryu/test_ryu_apps.py::"),
    ("ryu", "tests/models/ryu/test_ryu_variants.py::"),
    ("ryu", "tests/models/ryu/test_ryu_loading.py::test_ryu_imports_are_served_by_os_ken"),
    ("ryu", "tests/models/ryu/test_ryu_loading.py::test_a_module_spec_and_a_typo_in_the_class_name"),
    ("ryu", "tests/models/ryu/test_ryu_loading.py::test_an_app_option_the_ryu_constructor_rejects_is_one_error"),
    ("ryu", "tests/models/test_incremental.py::test_incremental_networks_change_no_result[learning_switch_"),
    ("ryu", "tests/models/test_memo_pinned.py::test_the_memo_changes_no_result[learning_switch_"),
    ("ryu", "tests/frontend/test_coverage.py::test_ryu_packet_in_handler_coverage"),
    ("ryu", "tests/cli/test_coverage_cli.py::test_ryu_app_coverage_in_the_report"),
    ("plot", "tests/cli/test_variants_cli.py::test_bench_variants_tables"),
    ("plot", "tests/cli/test_variants_cli.py::test_bench_variants_csv"),
    ("plot", "tests/cli/test_variants_cli.py::test_bench_variants_plot"),
)


@functools.cache
def installed(package: str) -> bool:
    """Whether the top-level ``package`` can be imported."""
    return importlib.util.find_spec(package) is not None


def extra_of(package: str) -> str | None:
    """The extra that installs the top-level ``package`` (``ryu`` for ``os_ken``), if any."""
    return next((extra for extra, (packages, _) in EXTRAS.items() if package in packages), None)


def missing_reason(extra: str) -> str | None:
    """Why a test of ``extra`` is skipped, or None when the extra is installed."""
    packages, distribution = EXTRAS[extra]
    if all(installed(package) for package in packages):
        return None
    return f"needs the '{extra}' extra ({distribution}): pip install -e '.[{extra}]'"


def _top_level_imports(path: Path) -> set[str]:
    """The top-level packages a test module imports in its own body (not inside functions)."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return set()  # pytest reports it itself
    roots: set[str] = set()
    statements: list[ast.stmt] = list(tree.body)
    while statements:
        node = statements.pop()
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
        elif isinstance(node, (ast.If, ast.Try)):
            statements.extend(node.body)
    return roots


class _SkippedModule(pytest.Module):
    """A test module that cannot be imported without a missing extra: reported as skipped."""

    skip_reason = ""

    def collect(self) -> Any:
        pytest.skip(self.skip_reason, allow_module_level=True)


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    """Skip a test module whose top-level imports need a missing extra."""
    extras = sorted({extra for name in _top_level_imports(module_path) if (extra := extra_of(name)) is not None})
    reasons = [reason for extra in extras if (reason := missing_reason(extra)) is not None]
    if not reasons:
        return None
    module = _SkippedModule.from_parent(parent, path=module_path)
    module.skip_reason = f"{module_path.name} imports it: {reasons[0]}"
    return module


def node_path(item: pytest.Item) -> str:
    """``item``'s node id with its path relative to the repository (as in :data:`NEEDS_EXTRA`)."""
    root = Path(__file__).resolve().parent.parent
    path, _, rest = item.nodeid.partition("::")
    try:
        path = (Path(item.config.rootpath) / path).resolve().relative_to(root).as_posix()
    except ValueError:
        pass
    return f"{path}::{rest}"


def names(entry: str, node: str) -> bool:
    """Whether the :data:`NEEDS_EXTRA` entry ``entry`` names the test ``node`` (see there)."""
    if entry.endswith("::") or "[" in entry:
        return node.startswith(entry)
    return node == entry or node.startswith(entry + "[")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the tests of :data:`NEEDS_EXTRA` whose extra is missing."""
    for item in items:
        node = node_path(item)
        for extra, entry in NEEDS_EXTRA:
            reason = missing_reason(extra)
            if reason is not None and names(entry, node):
                item.add_marker(pytest.mark.skip(reason=reason))
                break


# ---- signals ---------------------------------------------------------------------------------

@pytest.fixture
def sigint_default() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt in this process during the test (as in a terminal),
    even when the suite runs in the background with SIGINT ignored; restored afterwards."""
    saved = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, saved if saved is not None else signal.SIG_DFL)


def restore_sigint() -> None:
    """A ``preexec_fn`` for a child process that must react to SIGINT as from a terminal:
    a child inherits an ignored SIGINT from a suite run in the background."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def child_preexec(*more: Callable[[], None]) -> Callable[[], None]:
    """A ``preexec_fn`` that restores SIGINT (:func:`restore_sigint`), then runs ``more``."""
    def preexec() -> None:
        restore_sigint()
        for step in more:
            step()

    return preexec
