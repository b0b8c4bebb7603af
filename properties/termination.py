"""Executions that never end.

``termination`` (on by default) claims that every execution of the network ends: no reachable
state reaches itself again. A cycle of states is an execution that can go on for ever, such as
a packet that misses a table, goes to the controller, is resubmitted to the same table
(``Output(TABLE)`` in a packet-out) and misses again; at-quiescence properties never see it,
because the execution never reaches quiescence. The search reports it as a lasso: the trace
to the cycle's first state, then the cycle, whose events can repeat for ever; the reason names
them, and the events the cycle never takes although they are enabled on it.

Only cycles a weakly fair scheduler can repeat count (real timers fire, a queued command is
taken, a packet at a port is processed; see :mod:`nice_attendre.fair_cycles`): a cycle that
repeats only while, say, a batch timer never fires is no violation of ``termination``.
``termination-any-scheduler`` counts every cycle.

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
    """Every execution of a weakly fair network ends: no reachable state reaches itself on a
    cycle that real switches and controllers can repeat, where every process enabled all along
    (a timer, a queued command, a packet at a port; see :mod:`nice_attendre.models.fairness`)
    moves (a livelock, such as a packet sent to the controller and resubmitted to a table that
    misses it, for ever, is reported as a lasso trace: the path to a cycle, then the cycle).

    Checked by the depth-first search and by ``--shortest``; the partitioned search
    (``--workers``, ``--engine ray``) cannot see cycles and says that it leaves it out."""
    return Property.termination("termination", "every execution ends (no cycle a weakly fair scheduler repeats)")


def termination_any_scheduler(net: "Network") -> Property:
    """Every execution ends, whatever the scheduler: any cycle of reachable states violates it,
    also one that repeats only while an enabled timer never fires or a queued command is never
    taken (``termination`` without the weak fairness assumption)."""
    return Property.termination("termination-any-scheduler", "every execution ends, even under an unfair "
                                "scheduler (no cycle of states at all)", fairness="none")
