"""The closed set of the network's own events (actor + verb).

A protocol variant adds events of its own, declared by the variant with their handlers
(``event_handlers()``, see :mod:`nice_attendre.models.protocols.openflow`), in its module
and in the same form: a frozen dataclass with a ``rank``. Each event class has a ``rank``;
:meth:`nice_attendre.models.network.Network.enabled` returns events sorted by (rank,
fields), so exploration order is defined.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True, slots=True)
class HostSend:
    """``host`` sends the next packet of its stream (flow) ``stream``."""

    host: str
    stream: int = 0
    rank: ClassVar[int] = 0

    def __str__(self) -> str:
        return f"{self.host} sends" + (f" (flow {self.stream + 1})" if self.stream else "")


@dataclass(frozen=True, slots=True)
class HostReceive:
    """``host`` takes the head packet of its link (and a replier answers it)."""

    host: str
    rank: ClassVar[int] = 1

    def __str__(self) -> str:
        return f"{self.host} receives"


@dataclass(frozen=True, slots=True)
class HostAnswer:
    """``host`` sends the oldest answer it owes (hosts that also send or move answer in an
    event of their own; see :mod:`nice_attendre.models.hosts`)."""

    host: str
    rank: ClassVar[int] = 1

    def __str__(self) -> str:
        return f"{self.host} answers"


@dataclass(frozen=True, slots=True)
class HostMove:
    """Mobile ``host`` moves to port ``port`` of switch ``dpid``."""

    host: str
    dpid: int
    port: int
    rank: ClassVar[int] = 2

    def __str__(self) -> str:
        return f"{self.host} moves to s{self.dpid}:{self.port}"


@dataclass(frozen=True, slots=True)
class SwitchProcessPacket:
    """Switch ``dpid`` processes the head packet of input port ``port``."""

    dpid: int
    port: int
    rank: ClassVar[int] = 3

    def __str__(self) -> str:
        return f"s{self.dpid} processes a packet from port {self.port}"


@dataclass(frozen=True, slots=True)
class SwitchProcessCommand:
    """Switch ``dpid`` processes a command from the controller: the head one by default.

    With a threaded controller the commands of different handler calls race: ``batch`` picks
    which call's commands the switch takes from; with ``any`` command order, ``pick`` is the
    position, in that batch, of the command taken (see :mod:`nice_attendre.models.channels`).
    """

    dpid: int
    batch: int = 0
    pick: int = 0
    rank: ClassVar[int] = 4

    def __str__(self) -> str:
        which = [f"batch {self.batch}"] if self.batch else []
        which += [f"command {self.pick}"] if self.pick else []
        return f"s{self.dpid} processes a command" + (f" ({', '.join(which)})" if which else "")


@dataclass(frozen=True, slots=True)
class ControllerHandle:
    """The controller handles a message from switch ``dpid``: the head one, or with a
    threaded controller message ``pick`` of the (sorted) waiting messages."""

    dpid: int
    pick: int = 0
    rank: ClassVar[int] = 5

    def __str__(self) -> str:
        return f"controller handles a message from s{self.dpid}" + (f" (message {self.pick})" if self.pick else "")


@dataclass(frozen=True, slots=True)
class ControllerStats:
    """InstantStats: the controller receives port statistics of ``dpid`` with load ``load``.

    One event per load class the app distinguishes: the statistics are a nondeterministic
    choice, not numbers.
    """

    dpid: int
    load: str
    rank: ClassVar[int] = 6

    def __str__(self) -> str:
        return f"controller receives port stats of s{self.dpid}: {self.load}"


@dataclass(frozen=True, slots=True)
class SwitchEntryExpires:
    """Entry ``index`` of switch ``dpid``'s table expires (its ``reason`` timeout, ``"idle"``
    or ``"hard"``). Time is not modelled: an entry with a timeout may expire at any moment."""

    dpid: int
    index: int
    reason: str
    rank: ClassVar[int] = 7

    def __str__(self) -> str:
        return f"s{self.dpid}: entry {self.index} expires ({self.reason} timeout)"


Event = (HostSend | HostReceive | HostAnswer | HostMove | SwitchProcessPacket | SwitchProcessCommand
         | ControllerHandle | ControllerStats | SwitchEntryExpires)
