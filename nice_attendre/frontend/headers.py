"""The header of a verification report: what was verified, as (label, value) pairs (front end:
it reads the network model)."""
from __future__ import annotations

from typing import Any, Iterable


def network_header(net: Any, property_names: Iterable[str] | None = None) -> list[tuple[str, str]]:
    """The header lines of a report on network ``net``: app, protocol, channels, start-up,
    faults (when budgeted), topology, traffic and, when given, the properties checked."""
    from nice_attendre.models.faults import describe_budgets

    header = [("app", net.app.describe()), ("protocol", net.protocol.label()),
              ("channels", net.options.describe_channels()),
              ("start-up", net.options.describe_startup()),
              *([("faults", describe_budgets(net.options.faults, net.options.link_scope))]
                if any(net.options.faults) else []),
              ("topology", net.topology.describe()), ("traffic", net.scenario.describe())]
    if property_names is not None:
        header.append(("properties", ", ".join(property_names)))
    return header
