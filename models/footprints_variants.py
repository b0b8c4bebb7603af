"""The footprints of the protocol variants beyond OpenFlow (partial-order reduction; see
:mod:`nice_attendre.models.footprints` for the network's and :mod:`nice_attendre.por` for
the contract).

Each variant's class takes OpenFlow's footprints (:class:`~nice_attendre.models.footprints.Footprints`)
and changes what the variant's handlers do differently; every state-dependent refinement
whose assumptions the variant breaks is turned off (its method answers None: the guard's
writers, or the static footprint).

Attendre (:mod:`~nice_attendre.models.protocols.attendre`):

* a switch's packet step writes its table: the Attendre Command a packet carries installs or
  updates a buffer action, a miss adds a buffer entry, an encap action is used once (it
  also writes the switch's variant state ``ext:``, the message sets' progress and the
  packets waiting at buffer actions, as OpenFlow's footprint already says);
* a switch's command step re-matches the waiting packets when it finishes a message set
  (they go through the table, anywhere): a command of a message set (``ms``) has the
  command step's whole footprint in the bounded one;
* a dormant controller step's enablers and a dormant packet step's at a port linked to a
  switch are the writers of their guard (OpenFlow's analyses assume the table changes only
  by commands and expiries, and that packets do not wait at the switch); a switch's tie
  choices too (a packet step may add an entry that ties). A switch's expiries keep
  OpenFlow's enablers: only a command adds an entry with a timeout (a packet step's
  entries have none, an updated entry keeps its own), and an entry holding a buffer action
  expires only once its set ends, when the table is written (the guard then).
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Hashable, Sequence

from nice_attendre.models.events import ControllerHandle, SwitchProcessPacket
from nice_attendre.models.footprints import Footprints, Standin
from nice_attendre.por import Footprint

if TYPE_CHECKING:
    from nice_attendre.models.network import Network


class AttendreFootprints(Footprints):
    """Attendre's footprints (see the module docstring)."""

    def _compute(self, event: Hashable) -> Footprint:
        found = super()._compute(event)
        if type(event) is SwitchProcessPacket:
            return replace(found, writes=found.writes | {self.net.slot_table[event.dpid]})
        return found

    def _commands_footprint(self, dpid: int, commands: Sequence[Any]) -> Footprint:
        if any(getattr(msg, "ms", None) is not None for msg in commands):
            return self.footprint((), _command(dpid))
        return super()._commands_footprint(dpid, commands)

    def enablers(self, state: Sequence[int], event: Hashable) -> Any:
        kind = type(event)
        if kind is ControllerHandle or kind is SwitchProcessPacket:
            return None
        if kind is Standin and event.kind == "tie":  # type: ignore[attr-defined]
            return None
        return super().enablers(state, event)


def _command(dpid: int) -> Hashable:
    from nice_attendre.models.events import SwitchProcessCommand

    return SwitchProcessCommand(dpid)


#: Each supported variant's footprints (OpenFlow's and OpenFlow-B's: the base class).
VARIANTS: dict[str, type[Footprints]] = {"attendre": AttendreFootprints}


def variant_class(net: "Network") -> type[Footprints] | None:
    """The footprints class of ``net``'s protocol variant, or None (OpenFlow's)."""
    return VARIANTS.get(net.protocol.name)
