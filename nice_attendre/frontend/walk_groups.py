"""The network's events in the groups a random walk's bias favours (front end: it names the
model's event classes), and the biases ``--bias`` offers.

* ``control``: the controller's and the switches' control-plane steps (a handler call, a
  switch executing a command, a batch applied): NICE's no-delay heuristic runs them as soon
  as they are enabled;
* ``packets``: hosts sending and receiving, switches processing packets;
* ``other``: the rest (moves, timeouts, faults).
"""
from __future__ import annotations

from typing import Any

from nice_attendre.errors import InputError
from nice_attendre.models.events import (ControllerHandle, ControllerStats, HostAnswer, HostReceive, HostSend,
                                         SwitchProcessCommand, SwitchProcessPacket)
from nice_attendre.models.protocols.batch import BatchTimerFires
from nice_attendre.models.protocols.buffer import FlowBufferTimeout
from nice_attendre.models.protocols.pif import MeterDropsPacket
from nice_attendre.simulate import UNIFORM, Bias, favour

CONTROL, PACKETS, OTHER = "control", "packets", "other"

_GROUPS: dict[type, str] = {
    ControllerHandle: CONTROL, ControllerStats: CONTROL, SwitchProcessCommand: CONTROL, BatchTimerFires: CONTROL,
    HostSend: PACKETS, HostReceive: PACKETS, HostAnswer: PACKETS, SwitchProcessPacket: PACKETS,
    FlowBufferTimeout: PACKETS, MeterDropsPacket: PACKETS,
}


def event_group(event: Any) -> str:
    """``control``, ``packets`` or ``other`` (see the module docstring)."""
    return _GROUPS.get(type(event), OTHER)


#: ``--bias`` name -> the biases each walk draws one of. ``swarm`` (the default) mixes them.
BIASES: dict[str, tuple[Bias, ...]] = {
    "swarm": (UNIFORM, favour(CONTROL), favour(PACKETS)),
    "uniform": (UNIFORM,),
    "control-first": (favour(CONTROL),),
    "packets-first": (favour(PACKETS),),
}
DEFAULT_BIAS = "swarm"


def biases_named(name: str) -> tuple[Bias, ...]:
    """The biases of ``--bias NAME`` (:class:`InputError` for an unknown name)."""
    try:
        return BIASES[name]
    except KeyError:
        raise InputError(f"unknown bias {name!r} (known: {', '.join(BIASES)})") from None

