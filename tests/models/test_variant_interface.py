"""The open protocol interface: a variant declares its parameters and its own events, and the
network builds its handler table from them, without a change to network.py or another
variant. Shown with a toy variant defined here, then with the paper's three (no parameters,
no events of their own but the statistics)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Sequence

import pytest

from nice_attendre import verify
from nice_attendre.apps.route_flow import RouteFlow
from nice_attendre.errors import InputError, ModelError
from nice_attendre.models.events import ControllerStats, HostSend, SwitchProcessPacket
from nice_attendre.models.network import Network
from nice_attendre.models.protocols import protocol_names, resolve
from nice_attendre.models.protocols.openflow import OpenFlow, SwitchEvents
from nice_attendre.models.protocols.params import Param
from nice_attendre.models.scenario import Scenario
from nice_attendre.models.topology import load_topology
from nice_attendre.trace import Trace


@dataclass(frozen=True, slots=True)
class SwitchForgets:
    """Switch ``dpid`` loses its flow table (a toy event)."""

    dpid: int
    rank: ClassVar[int] = 9

    def __str__(self) -> str:
        return f"s{self.dpid} forgets its flow table"


class Forgetful(OpenFlow):
    """A toy variant: up to ``times`` times per switch, a switch may lose its flow table."""

    name = "forgetful"
    params = (Param("times", "int", 1, "how often a switch may forget", low=0, high=3),)

    def event_handlers(self) -> dict[type, Callable[[Any, Any], None]]:
        return {**super().event_handlers(), SwitchForgets: self.forget}

    def initial_switch_state(self, dpid: int) -> int:
        return 0  # how often it forgot

    def switch_events(self) -> tuple[SwitchEvents, ...]:
        return (SwitchEvents(("table", "ext"), self._forgets),)

    def _forgets(self, state: Sequence[int], dpid: int) -> tuple[SwitchForgets, ...]:
        net = self.net
        if net.value(state, f"table:{dpid}") and net.value(state, f"ext:{dpid}") < self.settings["times"]:
            return (SwitchForgets(dpid),)
        return ()

    def forget(self, tx: Any, ev: SwitchForgets) -> None:
        tx.put(self.net.slot_table[ev.dpid], ())
        tx.put(self.net.slot_ext[ev.dpid], tx.get(self.net.slot_ext[ev.dpid]) + 1)
        tx.note(lambda: f"s{ev.dpid} forgets its flow table")


def toy(times: int | None = None) -> Network:
    options = None if times is None else {"times": times}
    return Network(Scenario.ping(load_topology("linear:2"), 1), RouteFlow(), Forgetful, protocol_options=options)


def test_a_variant_adds_its_own_event_and_parameter() -> None:
    net = toy()
    assert net.protocol.settings == {"times": 1} and net.protocol.label() == "forgetful:times=1"
    assert net._handlers[SwitchForgets] == net.protocol.forget
    state = Trace.from_events(net, [HostSend("h1"), SwitchProcessPacket(1, 1), *_answer()]).final
    assert SwitchForgets(1) in net.enabled(state)
    forgot = net.apply(state, SwitchForgets(1))
    assert net.value(forgot, "table:1") == () and SwitchForgets(1) not in net.enabled(forgot)
    assert net.narrate(state, SwitchForgets(1))[1] == ["s1 forgets its flow table"]


def _answer() -> list[Any]:
    from nice_attendre.models.events import ControllerHandle, SwitchProcessCommand

    return [ControllerHandle(1), SwitchProcessCommand(1)]


def test_the_toy_variant_runs_through_the_library_and_changes_the_counts() -> None:
    plain = verify("route-flow", topology="linear:2", packets=1, protocol="openflow", properties=[])
    forgetful = verify("route-flow", topology="linear:2", packets=1, protocol=Forgetful, properties=[])
    never = verify("route-flow", topology="linear:2", packets=1, protocol=Forgetful, protocol_options={"times": 0},
                   properties=[])
    assert never.stats.counts() == plain.stats.counts()
    assert forgetful.stats.transitions > plain.stats.transitions


class ForgetfulByScan(Forgetful):
    """The toy's events found by ``extra_events``, which reads the whole state in every state."""

    name = "forgetful-by-scan"

    def switch_events(self) -> tuple[SwitchEvents, ...]:
        return ()

    def extra_events(self, state: tuple[int, ...]) -> tuple[Any, ...]:
        mine = tuple(event for d in self.topology.switches for event in self._forgets(state, d))
        return super().extra_events(state) + mine


@pytest.mark.parametrize("large", [False, True], ids=["small", "large"])
def test_switch_events_and_extra_events_give_the_same_search(large: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large network finds the toy's per-switch events incrementally; the counts are those of
    the same events found by a scan of every state (small networks scan both ways)."""
    from nice_attendre.models import network

    if large:
        monkeypatch.setattr(network, "INCREMENTAL_SLOTS", 0)
    declared = verify("route-flow", topology="linear:2", packets=1, protocol=Forgetful, properties=[])
    scanned = verify("route-flow", topology="linear:2", packets=1, protocol=ForgetfulByScan, properties=[])
    assert declared.system.incremental is large
    assert declared.stats.counts() == scanned.stats.counts()
    assert declared.stats.transitions > verify("route-flow", topology="linear:2", packets=1,
                                               properties=[]).stats.transitions


def test_switch_events_read_only_a_switchs_own_slots() -> None:
    class Nosy(Forgetful):
        name = "nosy"

        def switch_events(self) -> tuple[SwitchEvents, ...]:
            return (SwitchEvents(("table", "app"), self._forgets),)

    with pytest.raises(ModelError, match="protocol nosy: its switch events read 'app', not a slot kind of a switch "
                                         r"\(known: ext, table, buffer, ports\)"):
        Network(Scenario.ping(load_topology("linear:1"), 1), RouteFlow(), Nosy)


def test_the_toy_variants_parameters_are_checked() -> None:
    with pytest.raises(InputError, match="bad value 5 for times; allowed: a whole number from 0 to 3"):
        toy(5)
    assert resolve(Forgetful, "times=2").label() == "forgetful:times=2"


def test_a_variant_cannot_take_over_an_event_of_the_network() -> None:
    from nice_attendre.models.events import HostSend as Taken

    class Greedy(OpenFlow):
        name = "greedy"

        def event_handlers(self) -> dict[type, Callable[[Any, Any], None]]:
            return {**super().event_handlers(), Taken: lambda tx, ev: None}

    with pytest.raises(ModelError, match="protocol greedy declares HostSend, an event of the network itself"):
        Network(Scenario.ping(load_topology("linear:1"), 1), RouteFlow(), Greedy)


@pytest.mark.parametrize("name", ["openflow", "openflow-b", "attendre"])
def test_the_papers_variants_have_no_parameters_and_only_the_statistics_and_tie_events(name: str) -> None:
    from nice_attendre.models.protocols.ties import SwitchChoosesEntry

    net = Network(Scenario.ping(load_topology("linear:1"), 1), RouteFlow(), name)
    assert net.protocol.settings == {} and net.protocol.settings_json() == {}
    assert net.protocol.label() == name
    assert set(net.protocol.event_handlers()) == {ControllerStats, SwitchChoosesEntry}


def test_every_registered_variant_declares_its_events_as_frozen_ranked_dataclasses() -> None:
    import dataclasses

    for name in protocol_names():
        net = Network(Scenario.ping(load_topology("linear:1"), 1), RouteFlow(), name)
        for event_class in net.protocol.event_handlers():
            assert dataclasses.is_dataclass(event_class) and event_class.__dataclass_params__.frozen  # type: ignore[attr-defined]
            assert isinstance(event_class.rank, int)


def test_the_network_describes_its_protocol_with_parameters() -> None:
    net = Network(Scenario.ping(load_topology("linear:2"), 1), RouteFlow(), "batch:threshold=3")
    assert net.describe() == "route-flow under batch:threshold=3,timer=event on linear:2 (2 switches, hosts h1, h2)"
