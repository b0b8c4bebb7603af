"""Assertions for pytest users: a failed check shows the report the command line prints.

::

    from nice_attendre import assert_holds, verify

    def test_my_app():
        assert_holds(verify("my_app.py:MyApp", topology="linear:3", packets=2))

A failure's message is the readable report (the counts, each violated property with its
narrated trace and the verdict line), not a :class:`~nice_attendre.result.Result` full of
integer tuples. Both raise ``AssertionError`` (pytest shows its message as is).
"""
from __future__ import annotations

from typing import Any

from nice_attendre.result import Result

__all__ = ["assert_holds", "assert_violates", "report_text"]


def report_text(result: Result) -> str:
    """The text report of ``result``, as ``nice-attendre verify`` prints it: with the header
    and narrated traces when ``result.system`` is the explored network (as :func:`verify`
    returns it), plain events otherwise."""
    from nice_attendre.frontend.report import CheckedNarrator, text_report

    net = result.system
    header: list[tuple[str, str]] = []
    narrate: Any = None
    if net is not None and hasattr(net, "narrate"):
        narrate = CheckedNarrator(result, net.narrate, getattr(net, "narrate_initial", None))
        if hasattr(net, "app") and hasattr(net, "options"):
            from nice_attendre.frontend.headers import network_header

            header = network_header(net)
    return text_report(result, header, narrate)


def _check(result: Any) -> None:
    if not isinstance(result, Result):
        raise TypeError(f"expected the Result of verify() or dfs(), got {type(result).__name__}")


def assert_holds(result: Result) -> None:
    """Assert that the search was complete and violated no property (``result.ok``).

    The message of the ``AssertionError`` is the report: the violated properties with their
    traces, or why the search was incomplete."""
    _check(result)
    if not result.ok:
        raise AssertionError("the app does not verify:\n" + report_text(result))


def assert_violates(result: Result, property_name: str) -> None:
    """Assert that property ``property_name`` was violated in ``result``.

    The message of the ``AssertionError`` says what happened instead, with the report."""
    _check(result)
    if result.discovery(property_name) is None:
        found = ", ".join(dict.fromkeys(d.property for d in result.discoveries)) or "none"
        raise AssertionError(f"expected {property_name} to be violated; violated: {found}\n" + report_text(result))
