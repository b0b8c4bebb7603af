"""nice_attendre.frontend.testing: assert_holds / assert_violates for pytest users; a failure's
message is the readable report with the narrated trace."""
from __future__ import annotations

import pytest

from nice_attendre import assert_holds, assert_violates, verify
from nice_attendre.checker import dfs
from nice_attendre.property import Property
from nice_attendre.frontend.testing import report_text


@pytest.fixture(scope="module")
def buggy():  # type: ignore[no-untyped-def]
    return verify("route-flow", topology="linear:2", app_options={"bug": "forget-last-hop"})


def test_assert_holds_passes_on_ok() -> None:
    assert_holds(verify("route-flow", topology="linear:2"))


def test_assert_holds_message_is_the_report(buggy) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(AssertionError) as failed:
        assert_holds(buggy)
    message = str(failed.value)
    assert "VIOLATION 1: no-forgotten-packets (at quiescence)" in message
    assert "\n  1. h1 sends data h1#0 [h1->h2] to s1:1\n" in message
    assert "\n  6. controller: RouteFlow.on_packet_in handles packet-in(s2, port 1, h1#0)" in message
    assert "  app            route-flow (bug: forget-last-hop)" in message
    assert message.rstrip().endswith("FAILED: no-forgotten-packets, delivery")
    assert "Result(" not in message and "Stats(" not in message


def test_assert_violates(buggy) -> None:  # type: ignore[no-untyped-def]
    assert_violates(buggy, "no-forgotten-packets")
    with pytest.raises(AssertionError) as failed:
        assert_violates(buggy, "no-forwarding-loops")
    message = str(failed.value)
    assert message.startswith("expected no-forwarding-loops to be violated; violated: no-forgotten-packets, delivery")
    assert "\n  1. h1 sends data h1#0 [h1->h2] to s1:1\n" in message
    with pytest.raises(AssertionError, match="violated: none"):
        assert_violates(verify("route-flow", topology="linear:2"), "no-forgotten-packets")


def test_incomplete_search_does_not_hold() -> None:
    with pytest.raises(AssertionError, match="INCOMPLETE"):
        assert_holds(verify("route-flow", topology="linear:2", max_transitions=3))


def test_plain_system_results_and_misuse() -> None:
    class Count:
        def initial_states(self):  # type: ignore[no-untyped-def]
            return (0,)

        def enabled(self, s):  # type: ignore[no-untyped-def]
            return (1,) if s < 2 else ()

        def apply(self, s, e):  # type: ignore[no-untyped-def]
            return s + e

    result = dfs(Count(), [Property.always("small", lambda s: s < 2)])
    assert "VIOLATION 1: small (always)" in report_text(result)
    with pytest.raises(AssertionError, match="small"):
        assert_holds(result)
    with pytest.raises(TypeError):
        assert_holds(True)  # type: ignore[arg-type]
