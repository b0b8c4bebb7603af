"""Weak fairness on the network (``termination`` assumes it; ``termination-any-scheduler``
does not): a cycle that repeats only while a timer never fires is no violation, one that a
switch may repeat by taking its commands in an unlucky order is; and a cycle whose fairness
cannot be decided in the budget is reported, never dropped."""
from __future__ import annotations

from pathlib import Path

import pytest

from nice_attendre import Property, Step, Trace, dfs
from nice_attendre import fair_cycles
from nice_attendre.frontend.api import verify
from nice_attendre.lasso import settled
from nice_attendre.models.events import ControllerHandle, ControllerStats, SwitchProcessCommand, SwitchProcessPacket
from nice_attendre.models.fairness import process_of
from nice_attendre.models.protocols.ties import SwitchChoosesEntry

APPS = Path(__file__).parent.parent / "data" / "apps"
MIRROR = f"{APPS / 'equal_priority.py'}:MirrorBelow"


def test_a_batch_timer_that_never_fires_is_no_livelock() -> None:
    """MirrorBelow resubmits a packet to the table until the last entry is installed; under
    batch that entry waits for the batch timer. Only a scheduler that never fires the timer
    repeats the resubmission for ever."""
    fair = verify(MIRROR, packets=2, protocol="batch")
    assert fair.ok, fair.discoveries
    unfair = verify(MIRROR, packets=2, protocol="batch", properties=["termination-any-scheduler"])
    found = unfair.discovery("termination-any-scheduler")
    assert found is not None and found.trace.is_lasso
    assert "s1's batch timer fires" in found.reason and "no weak fairness" in found.reason
    assert fair.stats.counts() == verify(MIRROR, packets=2, protocol="batch", properties=[]).stats.counts()


def test_a_switch_that_takes_the_packet_out_first_for_ever_is_a_livelock() -> None:
    """Without a barrier a switch may take the resubmitting packet-out before the flow-mod the
    packet needs, every time (a type-3 race): the switch's command process moves on the
    cycle, so a weakly fair scheduler repeats it and ``termination`` fails."""
    result = verify(MIRROR, packets=1, protocol="openflow", command_order="any", properties=["termination"])
    found = result.discovery("termination")
    assert found is not None
    assert "another outcome of a process that moves on it" in found.reason
    assert "no weak fairness" not in found.reason
    assert verify(MIRROR, packets=1, protocol="openflow", properties=["termination"]).ok  # FIFO: no race


def test_the_processes_of_the_network_events() -> None:
    assert process_of(SwitchProcessCommand(1, 0, 2)) == process_of(SwitchProcessCommand(1, 1, 0))
    assert process_of(SwitchProcessCommand(1)) != process_of(SwitchProcessCommand(2))
    assert process_of(ControllerHandle(1, 3)) == process_of(ControllerHandle(1))
    assert process_of(ControllerStats(1, "low")) == process_of(ControllerStats(1, "high"))
    assert process_of(SwitchProcessPacket(1, 1)) != process_of(SwitchProcessPacket(1, 2))
    chooses = SwitchChoosesEntry(1, "SwitchProcessPacket", (2,), (1,))
    assert process_of(chooses) == process_of(SwitchProcessPacket(1, 2))


class Spiral:
    """States 0..n: ``a`` steps i -> i + 1 (n -> 0), ``b`` leaves the cycle from any state."""

    def __init__(self, n: int) -> None:
        self.n = n

    def initial_states(self) -> tuple[int, ...]:
        return (0,)

    def enabled(self, state: int) -> tuple[str, ...]:
        return ("a", "b") if state >= 0 else ()

    def apply(self, state: int, event: str) -> int:
        return (state + 1) % (self.n + 1) if event == "a" else -1


def test_an_undecided_cycle_is_reported_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    system = Spiral(50)
    assert dfs(system, [Property.termination()]).ok  # b, enabled all along, ends every cycle
    monkeypatch.setattr(fair_cycles, "BUDGET", 10)
    found = dfs(system, [Property.termination()]).discovery("termination")
    assert found is not None
    assert found.reason.endswith("Whether a weakly fair execution from here never ends was not decided (more than "
                                 "10 states are reachable from the cycle's entry): reported, as it may be one.")


def test_settled_keeps_a_fair_lasso_and_sets_an_unfair_component_aside() -> None:
    system = Spiral(2)
    lasso = Trace(0, (Step("a", 1), Step("a", 2), Step("a", 0)), cycle_start=0)
    outcome = settled(lasso, system.enabled, system.apply, lambda *step: True, lambda event: event, weak=True)
    assert isinstance(outcome, fair_cycles.Unfair) and outcome.states == frozenset({0, 1, 2})
    assert outcome.starved == ("b",)
    kept, note = settled(lasso, system.enabled, system.apply, lambda *step: True, lambda event: event, weak=False)
    assert kept == lasso and note == ""
