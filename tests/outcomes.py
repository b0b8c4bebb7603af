"""What executions deliver, for tests of paper IV.D (Attendre adds no behaviour to OpenFlow)."""
from __future__ import annotations

from typing import Any

from nice_attendre.frontend.api import build
from nice_attendre.checker import dfs
from nice_attendre.property import Property


def outcomes(app: Any, protocol: str, **options: Any) -> set[tuple[Any, ...]]:
    """Every quiescent outcome of ``app`` under ``protocol``: what each host received, in
    order, as (origin, seq) pairs. The search must be complete."""
    net = build(app, protocol=protocol, properties=[], **options).network
    seen: set[tuple[Any, ...]] = set()

    def record(state: Any) -> bool:
        seen.add(tuple((h, tuple((o, s) for _hdr, o, s in net.received(state, h))) for h in net.topology.hosts))
        return True

    assert dfs(net, [Property.at_quiescence("outcome", record)]).complete
    return seen
