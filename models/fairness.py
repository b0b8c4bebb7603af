"""The processes of the network's events, for weak fairness (see
:mod:`nice_attendre.fair_cycles`).

Events that resolve the same activity in different ways are one process: a weakly fair
scheduler lets the activity happen, not a particular outcome of it. So a switch that always
takes one of its queued commands first, a controller thread that always picks one message, a
switch that always takes one of two tied entries and statistics that always give one answer
are fair executions (a real switch may behave so), while a timer that never fires, a port
whose packet is never processed or a switch that never takes any command are not:

* ``SwitchProcessCommand(dpid, batch, pick)``: switch ``dpid`` takes a command (any of them);
* ``ControllerHandle(dpid, pick)``: the controller handles a message of switch ``dpid``;
* ``ControllerStats(dpid, load)``: the port statistics of switch ``dpid`` arrive (any load);
* ``SwitchChoosesEntry``: the process of its ordinary event (whichever tied entry it takes);
* every other event (a host's, a packet step at one port, an entry expiring, a protocol
  variant's own event) is a process of its own.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Hashable

from nice_attendre.models.events import ControllerHandle, ControllerStats, SwitchProcessCommand
from nice_attendre.models.protocols.ties import SwitchChoosesEntry, ordinary


def process_of(event: Any) -> Hashable:
    """The process ``event`` belongs to (a hashable key; equal keys: one process)."""
    kind = type(event)
    if kind is SwitchChoosesEntry:
        base = ordinary(event.base, event.dpid, event.args)
        return process_of(base) if base is not None else (event.base, event.dpid, *event.args)
    if kind is SwitchProcessCommand:
        return ("command", event.dpid)
    if kind is ControllerHandle:
        return ("controller", event.dpid)
    if kind is ControllerStats:
        return ("stats", event.dpid)
    if dataclasses.is_dataclass(event) and hasattr(event, "dpid"):
        # A variant's own event: the key a SwitchChoosesEntry naming it by class gives.
        fields = [getattr(event, field.name) for field in dataclasses.fields(event) if field.name != "dpid"]
        return (kind.__name__, event.dpid, *fields)
    return event
