"""The generic way to move states between processes: pickle them whole.

Used by the partitioned search for systems without their own codec (see
:class:`nice_attendre.system.Shippable`); a model whose states are ids into per-process
tables must provide one.
"""
from __future__ import annotations

import pickle
from typing import Any, Callable, Sequence


class PickleCodec:
    """A :class:`~nice_attendre.system.StateCodec` that pickles whole states (no memory of
    what a peer has: every payload carries its states in full)."""

    def encode(self, states: Sequence[Any], peer: int) -> bytes:
        """The states, pickled."""
        return pickle.dumps(list(states), protocol=pickle.HIGHEST_PROTOCOL)

    def decode(self, payload: bytes) -> Callable[[int], Any]:
        """The states of ``payload``, by index."""
        return pickle.loads(payload).__getitem__
