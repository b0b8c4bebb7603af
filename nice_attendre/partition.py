"""Which shard owns a state in the partitioned search.

By default a state belongs to the shard its fingerprint names (Stern and Dill's
partitioning): the shards get almost equal shares of every level, but every successor is as
likely to belong to any shard, so with two shards half of them leave the shard that made
them (offered, and if new shipped), and each shard meets every kind of transition: its memo
of transitions repeats the other's work (MAC learning linear:2 with 3 packets: handlers run
for 19,495 transitions with two shards where one runs 12,108).

A system that names parts of its states (:class:`~nice_attendre.system.Partitionable`: for
the network, its slots grouped by kind: ``app``, ``host``, ``table``, ``buffer``...) may
have its states owned by the hash of one part instead: states that agree on that part share
a shard. A part that few transitions change keeps most successors where they were made, and
the transitions that read it run in one shard only (owned by ``app``, the same run: 14,040
handler runs, 4% of the successors change shard). The price is balance: a part with few
values may give one shard more of a level than the other, and as the levels are
synchronised the busier shard sets the pace. Owned by a part, two workers spent less CPU in
every measured run; which is faster depends on the app and the scenario (docs/scaling.md:
MAC learning by ``app`` a fifth to a third faster; the route-flow scenarios within the
machine's noise either way), and a cost model fitted to a sample of the first levels had
nothing reliable to learn from, so the choice is the user's (``--partition``). Parts
combine (``host,ctrlq``): more values than either part alone, so the shards' shares are
more even, at the price of more successors changing shard.

The choice never changes a result: the counts, verdicts and traces of the partitioned
search do not depend on which shard owns what (see :mod:`nice_attendre.shard`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from nice_attendre.errors import InputError
from nice_attendre.fingerprint import owner

#: The name of the default partition, by the whole state's fingerprint.
FINGERPRINT = "fingerprint"


@dataclass(frozen=True)
class Partition:
    """How states get owners: by the hash of the state part ``name`` (the positions
    ``part``), or, with ``name`` None, by the whole state's fingerprint."""

    name: str | None = None
    part: tuple[int, ...] = ()

    def describe(self) -> str:
        """How states are owned, for a report."""
        if self.name is None:
            return "states owned by fingerprint"
        return f"states owned by their {self.name!r} part{'s' if ',' in self.name else ''}"


BY_FINGERPRINT = Partition()

#: ``owner(state, fingerprint)`` -> the shard that owns the state.
OwnerFunction = Callable[[Any, int], int]


def owner_function(system: Any, partition: Partition, shards: int) -> OwnerFunction:
    """The owner of a state (0 .. shards-1) under ``partition``:
    :func:`nice_attendre.fingerprint.owner` of its fingerprint or of its part's stable hash."""
    if partition.name is None:
        def by_fingerprint(state: Any, fingerprint: int) -> int:
            return owner(fingerprint, shards)

        return by_fingerprint
    part, part_hash = partition.part, system.part_hash

    def by_part(state: Any, fingerprint: int) -> int:
        return owner(part_hash(state, part), shards)

    return by_part


def partitions(system: Any) -> dict[str, Partition]:
    """The partitions of ``system``'s states by name: ``fingerprint``, then one per part
    the system names (see :class:`~nice_attendre.system.Partitionable`)."""
    known = {FINGERPRINT: BY_FINGERPRINT}
    parts = getattr(system, "state_parts", None)
    if parts is not None and getattr(system, "part_hash", None) is not None:
        known.update((name, Partition(name, tuple(part))) for name, part in parts().items() if part)
    return known


def partition_named(system: Any, name: str) -> Partition:
    """The partition of ``system``'s states called ``name``: ``fingerprint``, a part, or
    several parts joined by commas (``host,ctrlq``: owned by the hash of both, which has more
    values than either, for a better balance, and changes with either); :class:`InputError`
    if it names none."""
    known = partitions(system)
    if name in known:
        return known[name]
    names = name.split(",")
    for part in names:
        if part not in known or (len(names) > 1 and part == FINGERPRINT):
            raise InputError(f"unknown partition {part!r} (known: {', '.join(known)}, or parts joined by "
                             "commas)")
    if len(set(names)) < len(names):
        raise InputError(f"partition {name!r} names a part twice")
    return Partition(name, tuple(slot for part in names for slot in known[part].part))
