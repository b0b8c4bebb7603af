"""Properties checked through the network's monitors.

A monitor runs inside a transition (a switch forwarding, dropping, sending a packet-in; the
controller running the app) and records an alert in the state's ``alerts`` slot when it
sees a violation. The alert only appears where a violation happened, so a property that
reads it holds exactly in the states reached without that violation.
"""
from __future__ import annotations

from typing import Any, Callable

from nice_attendre.models.network import Network
from nice_attendre.property import Expectation, Property


def alert_property(net: Network, kind: str, description: str) -> Property:
    """An ``always`` property that fails in states holding an alert of ``kind``."""
    slot = net.slot_alerts
    values = net.interned(slot)
    empty = values.index(())  # the id of "no alert" (not the initial state's: an app may fail there)
    verdicts: dict[int, bool] = {}

    def holds(state: Any) -> bool:
        value = state[slot]
        if value == empty:
            return True
        verdict = verdicts.get(value)
        if verdict is None:
            verdict = verdicts[value] = not any(alert[0] == kind for alert in values[value])
        return verdict

    def explain(state: Any) -> str:
        return "; ".join(detail for alert_kind, detail in net.alerts(state) if alert_kind == kind)

    # stable: the alerts slot only grows (Tx.alert adds), so a state with an alert of ``kind``
    # has it in every later state
    return Property(kind, Expectation.ALWAYS, holds, description, explain, stable=True)


def _factory(kind: str, description: str) -> Callable[[Network], Property]:
    def make(net: Network) -> Property:
        return alert_property(net, kind, description)

    make.__doc__ = description
    return make


no_forwarding_loops = _factory(
    "no-forwarding-loops", "no packet comes to the same switch port twice")
no_black_holes = _factory(
    "no-black-holes", "no switch drops a packet addressed to a host of the network because an output "
    "could not take it (no link, no such port, the in-port); deliberate drops (no actions, a flood "
    "with nowhere to go) are not black holes")
direct_paths = _factory(
    "direct-paths", "a packet sent after an earlier packet of its flow reached the destination never "
    "goes to the controller (an entry that times out starts its flows over: packets on their way then, "
    "and those sent before the flow reaches its destination again, are not judged)")
strict_direct_paths = _factory(
    "strict-direct-paths", "once two hosts exchanged unicast packets both ways, no packet either sends "
    "to the other afterwards goes to the controller (timeouts as for direct-paths)")
one_packet_in_per_flow = _factory(
    "one-packet-in-per-flow", "a flow causes at most one packet-in in the whole network")
app_exception = _factory(
    "app-exception", "no app handler raises an exception (always checked)")
app_nondeterminism = _factory(
    "app-nondeterminism", "every app handler is a function of its input: it reads no clock, randomness or "
    "object address, and gives the same outcome when called again (always checked; exit code 4)")

#: The alert properties; each reads the monitor of the same name.
ALERT_PROPERTIES = ("no-forwarding-loops", "no-black-holes", "direct-paths", "strict-direct-paths",
                    "one-packet-in-per-flow", "app-exception", "app-nondeterminism")
