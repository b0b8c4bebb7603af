"""Executions that never end.

``termination`` (on by default) claims that every execution of the network ends: no reachable
state reaches itself again. A cycle of states is an execution that can go on for ever, such as
a packet that misses a table, goes to the controller, is resubmitted to the same table
(``Output(TABLE)`` in a packet-out) and misses again; at-quiescence properties never see it,
because the execution never reaches quiescence. The search reports it as a lasso: the trace
to the cycle's first state, then the cycle, whose events can repeat for ever; the reason names
them, and the events the cycle never takes although they are enabled on it (the execution
then exists only under a scheduler that lets them wait for ever: see
:mod:`nice_attendre.lasso`).

In this model a cycle is always the network's own doing: a host moves along its list of
places once each, and every fault spends a finite budget, so neither a move nor a fault can
be part of a cycle; the port-statistics answers the app distinguishes (a nondeterministic
choice) can, when the app polls for ever.

Users' own liveness claims are ``eventually`` properties
(:func:`nice_attendre.properties.custom.eventually`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from nice_attendre.property import Property

if TYPE_CHECKING:
    from nice_attendre.models.network import Network


def termination(net: "Network") -> Property:
    """Every execution ends: no reachable state reaches itself (a livelock, such as a packet sent
    to the controller and resubmitted to a table that misses it, for ever, is reported as a lasso
    trace: the path to a cycle, then the cycle).

    Checked by the depth-first search and by ``--shortest``; the partitioned search
    (``--workers``, ``--engine ray``) cannot see cycles and says that it leaves it out."""
    return Property.termination("termination", "every execution ends (no cycle of states)")
