"""Batched flow-mods (Cui et al.: ``papers/004``): a sequential storage table applied as one update.

A switch does not apply a flow-mod when it processes it: it appends it to its sequential
storage table (SST, section 3.1; the ``ext:D`` slot, in arrival order). The stored flow-mods
are applied together, in order, as one step (integrated into the full rule table and the
lookup tree rebuilt once, 3.2-3.3) when either batch condition holds (Algorithm 1):

* quantity condition: the SST holds ``threshold`` flow-mods: the flow-mod that reaches it
  triggers the batch in the same step;
* time condition: the time since the last batch reached the time threshold while the SST is
  not empty. The model has no clock: a nondeterministic event :class:`BatchTimerFires`,
  enabled whenever the SST is not empty (``timer=event``), or never (``timer=never``: only
  the quantity condition applies).

``threshold=1`` is plain OpenFlow. The paper batches Flow-Mod messages only and says nothing
of the other messages; we decide (documented in ``docs/results.md``):

* a **flow-mod/packet-out** (a flow-mod with a buffer id) is stored like any flow-mod; its
  buffered packet is released when the batch is applied, after every entry of the batch is
  in place (packets are forwarded by the new table version, step 5), in the order the
  flow-mods were stored;
* a **packet-out** is processed at once, against the table in force (it is not an update
  of the table);
* a **barrier request** first applies the stored batch: OpenFlow promises that every command
  before a barrier has taken effect when the reply leaves.

Add, modify and delete are batched alike (the paper's Add, Mod, Del), each applied with
OpenFlow's semantics in storage order.

The paper's switch stores a flow-mod "only when the tableId is less than the set maximum
number of flow tables, the matching fields and actions in the message are not empty ...
Otherwise, the message is dropped" (3.1; Algorithm 1: ``tableId < TableMax and entry !=
NULL``). So an add or a modify whose action list is empty (OpenFlow's drop entry) or whose
match has no field (matches every packet: no field, no in-port) is dropped when the switch
processes it: never stored, never applied, its buffered packet (a flow-mod/packet-out) left
in the buffer. A delete carries no actions in OpenFlow, and the paper applies its Del to the
full rule table, so the rule does not apply to deletes. (Table ids beyond the switch's are
refused before, by the app's ``Out``.)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping, Sequence

from nice_attendre.models.messages import BarrierRequest, FlowMod
from nice_attendre.models.protocols.openflow import OpenFlow, SwitchEvents, releases
from nice_attendre.models.protocols.params import Param

if TYPE_CHECKING:
    from nice_attendre.models.network import Network, Tx

#: A switch's sequential storage table: the flow-mods it stored, in arrival order.
StorageTable = tuple[FlowMod, ...]


@dataclass(frozen=True, slots=True)
class BatchTimerFires:
    """The time condition of switch ``dpid``'s batch holds: its stored flow-mods are applied."""

    dpid: int
    rank: ClassVar[int] = 7

    def __str__(self) -> str:
        return f"s{self.dpid}'s batch timer fires"


class Batch(OpenFlow):
    """Batched flow-mods (Cui et al.): flow-mods are stored and applied as one batch."""

    name = "batch"
    params = (
        Param("threshold", "int", 2, "stored flow-mods that trigger a batch (quantity condition)", low=1, high=64),
        Param("timer", "choice", "event", "the time condition: a nondeterministic event while flow-mods are "
              "stored, or never", choices=("event", "never")),
    )

    def __init__(self, net: "Network", settings: Mapping[str, Any] | None = None) -> None:
        super().__init__(net, settings)
        self.threshold: int = self.settings["threshold"]
        self._timers: dict[int, tuple[BatchTimerFires, ...]] = {}
        self._empty: int | None = None

    def event_handlers(self) -> dict[type, Callable[["Tx", Any], None]]:
        return {**super().event_handlers(), BatchTimerFires: self.timer_fires}

    def initial_switch_state(self, dpid: int) -> StorageTable:
        return ()

    # ---- commands ----------------------------------------------------------------------

    def flow_mod(self, tx: "Tx", dpid: int, msg: FlowMod) -> None:
        """Store the flow-mod; apply the batch if the quantity condition now holds. An add or
        modify with no action or an empty match is dropped (see the module docstring)."""
        if msg.command in ("add", "modify") and (not msg.actions or (not msg.match.fields
                                                                     and msg.match.in_port is None)):
            empty = "action list" if not msg.actions else "match"
            tx.note(lambda: f"s{dpid} drops {msg}: its {empty} is empty (the batching switch stores only "
                    "flow-mods with match fields and actions)")
            return
        slot = self.net.slot_ext[dpid]
        stored: StorageTable = tx.get(slot) + (msg,)
        if len(stored) >= self.threshold:
            tx.put(slot, ())
            if len(stored) > 1:
                tx.note(lambda: f"s{dpid} stores {msg}; {len(stored)} flow-mods reach the threshold")
            self.apply_batch(tx, dpid, stored)
            return
        tx.put(slot, stored)
        tx.note(lambda: f"s{dpid} stores {msg} ({len(stored)} of {self.threshold} for a batch)")

    def apply_batch(self, tx: "Tx", dpid: int, batch: StorageTable) -> None:
        """Apply ``batch`` as one update: every entry change in order, then release the buffered
        packets of its flow-mod/packet-outs, in order."""
        if len(batch) > 1:
            tx.note(lambda: f"s{dpid} applies a batch of {len(batch)} flow-mods")
        released = []
        for msg in batch:
            self.install(tx, dpid, msg)
            if releases(msg):
                released.append(msg)
        for msg in released:
            self.release_buffered(tx, dpid, msg.buffer_id, self.release_actions(msg))

    def barrier(self, tx: "Tx", dpid: int, msg: BarrierRequest) -> None:
        """Apply the stored batch, then answer (every earlier command has taken effect)."""
        slot = self.net.slot_ext[dpid]
        stored: StorageTable = tx.get(slot)
        if stored:
            tx.put(slot, ())
            tx.note(lambda: f"s{dpid}: a barrier request applies the stored flow-mods first")
            self.apply_batch(tx, dpid, stored)
        super().barrier(tx, dpid, msg)

    # ---- the timer ---------------------------------------------------------------------

    def switch_events(self) -> tuple[SwitchEvents, ...]:
        """(``timer=event``) a timer event for each switch with stored flow-mods (by dpid):
        decided by the switch's storage table."""
        if self.settings["timer"] != "event":
            return ()
        return (SwitchEvents(("ext",), self._timer_events),)

    def _timer_events(self, state: Sequence[int], dpid: int) -> tuple[BatchTimerFires, ...]:
        return self._timer(dpid) if state[self.net.slot_ext[dpid]] != self._empty_id() else ()

    def _empty_id(self) -> int:
        """The id of the empty storage table (interned when the network's initial state was made)."""
        if self._empty is None:
            slot = next(iter(self.net.slot_ext.values()))
            self._empty = self.net._slot_interners[slot].ids[()]
        return self._empty

    def _timer(self, dpid: int) -> tuple[BatchTimerFires, ...]:
        cached = self._timers.get(dpid)
        if cached is None:
            cached = self._timers[dpid] = (BatchTimerFires(dpid),)
        return cached

    def timer_fires(self, tx: "Tx", ev: BatchTimerFires) -> None:
        """The time condition holds at ``ev.dpid``: apply its stored flow-mods."""
        slot = self.net.slot_ext[ev.dpid]
        stored: StorageTable = tx.get(slot)
        tx.put(slot, ())
        tx.note(lambda: f"s{ev.dpid}: the batch timer fires")
        self.apply_batch(tx, ev.dpid, stored)
