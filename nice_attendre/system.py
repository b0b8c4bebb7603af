"""The contract between a model and the checkers.

A model is a value with three pure, deterministic functions. The checkers (`dfs`, the
partitioned search of `nice_attendre.parallel`, and later `bfs` or random walks) consume any
model that satisfies :class:`System`. Optional methods (:class:`Fingerprinted`,
:class:`Shippable`, :class:`Partitionable`) make fingerprints cheaper and let a partitioned
search move states between processes compactly and keep related states together; a system
without them still works in every mode.
"""
from __future__ import annotations

from typing import Any, Callable, Hashable, Mapping, Protocol, Sequence, TypeVar

S = TypeVar("S", bound=Hashable)
E = TypeVar("E", bound=Hashable)


class System(Protocol[S, E]):
    """A finite transition system explored by the checkers.

    Contracts:

    * states and events are immutable and hashable, and equal states behave equally;
    * ``enabled(state)`` returns the events possible in ``state`` in a defined order that
      depends only on ``state`` (never on hash or set iteration order); an empty sequence
      means the state is quiescent (the end of a path);
    * ``apply(state, event)`` returns the successor state and never mutates ``state``;
      it is only called with an event that ``enabled(state)`` returned.
    """

    def initial_states(self) -> Sequence[S]:
        """The states exploration starts from, in a defined order."""
        ...

    def enabled(self, state: S) -> Sequence[E]:
        """The events possible in ``state``, in a defined order."""
        ...

    def apply(self, state: S, event: E) -> S:
        """The state after ``event`` happens in ``state``."""
        ...


class Fingerprinted(Protocol[S, E]):
    """Optional: a system's own stable fingerprints (used by ``--fingerprint`` and by the
    partitioned search).

    * ``fingerprint(state)`` is a 64-bit unsigned integer that depends only on the state's
      value: equal states have equal fingerprints in every process, run, Python version and
      hash seed (so never ``hash()``); distinct states collide with probability about 2**-64;
    * ``apply_fingerprinted(state, fingerprint, event)`` returns ``(apply(state, event), its
      fingerprint)`` given ``state``'s fingerprint: the place to update it incrementally;
    * optionally ``peek_fingerprinted(state, fingerprint, event)`` returns ``(the next state's
      fingerprint, handle)`` without building the state: the handle is a
      :class:`nice_attendre.fingerprint.Computed` state or the ``(slot, value)`` pairs written
      into a copy of a tuple ``state``, built when the search keeps it by the system's
      ``build_successor(state, handle)`` if it has one, else by
      :func:`nice_attendre.fingerprint.successor`.

    Without them the checkers hash each state's canonical encoding
    (:func:`nice_attendre.fingerprint.stable_hash`), which works for states built of
    ``None``, numbers, strings, tuples, frozensets, enums and dataclasses.
    """

    def fingerprint(self, state: S) -> int:
        """The stable 64-bit fingerprint of ``state``."""
        ...

    def apply_fingerprinted(self, state: S, fingerprint: int, event: E) -> tuple[S, int]:
        """``apply(state, event)`` and its fingerprint, from ``state``'s ``fingerprint``."""
        ...


class LargeStates(Protocol[S, E]):
    """Optional: a system whose states are too large to hash in full at every transition.

    When ``large_states`` is true, the exact depth-first search stores each state under its
    ``state_key`` (:class:`nice_attendre.visited.KeyedStates`) instead of in a set:

    * ``state_key(state)`` is a 64-bit hash that depends only on the state's value within
      this process (equal states, equal keys; it need not be stable across processes);
    * ``apply_keyed(state, key, event)`` returns ``(apply(state, event), its key)`` given
      ``state``'s key: the place to update it from what the event changed.

    States with equal keys are still compared in full, so the search stays exact.
    """

    large_states: bool

    def state_key(self, state: S) -> int:
        """A process-local 64-bit hash of ``state``."""
        ...

    def apply_keyed(self, state: S, key: int, event: E) -> tuple[S, int]:
        """``apply(state, event)`` and its key, from ``state``'s ``key``."""
        ...


class Partitionable(Protocol[S]):
    """Optional: named parts of a state, by which a partitioned search may give states owners.

    A partitioned search gives every state an owner. By the whole state's fingerprint, about
    half of the successors of a state go to another shard (with two), each shard meets every
    kind of transition, and a shard's memo of transitions repeats the others'. By a part of
    the state that most transitions leave alone (a controller's state, say), most successors
    stay where they were made (the user names the part: ``--partition``; see
    :mod:`nice_attendre.partition`):

    * ``state_parts()`` maps a name to a part: a tuple of positions in the state, the same
      in every process (for the network: its slots, grouped by kind);
    * ``part_hash(state, part)`` is a 64-bit hash of the values at those positions, the same
      in every process, run and hash seed (as :meth:`Fingerprinted.fingerprint`).
    """

    def state_parts(self) -> Mapping[str, tuple[int, ...]]:
        """Named parts of this system's states."""
        ...

    def part_hash(self, state: S, part: tuple[int, ...]) -> int:
        """A stable 64-bit hash of ``state``'s values at the positions ``part``."""
        ...


class StateCodec(Protocol[S]):
    """Moves states of one system between processes (one codec per process and system).

    ``encode(states, peer)`` returns a picklable payload for process ``peer`` and remembers
    what it sent there, so later payloads to ``peer`` can leave out what it already has;
    ``decode(payload)`` takes a payload from any peer (each peer's payloads in the order
    they were sent) and returns a function giving its ``i``-th state, a state of this
    process's system equal to the one encoded.
    """

    def encode(self, states: Sequence[S], peer: int) -> Any:
        """A payload carrying ``states`` to ``peer``."""
        ...

    def decode(self, payload: Any) -> Callable[[int], S]:
        """The states of ``payload``, by index."""
        ...


class Shippable(Protocol[S]):
    """Optional: ``state_codec()`` returns a new :class:`StateCodec` for this system. Without
    it, a partitioned search pickles whole states (:class:`nice_attendre.codec.PickleCodec`)."""

    def state_codec(self) -> StateCodec[S]:
        """A codec for this system's states, owned by the calling process."""
        ...
