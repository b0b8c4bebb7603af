"""Checkpoints: a search saved to a file, to be continued later with the same final result.

:class:`SearchState` is everything :func:`nice_attendre.dfs` needs to continue a depth-first
search where it stopped: the visited set, the stack (each frame's state, enabled events and
next event), the counters, the discoveries so far. A model whose states are ids into tables
(the network interns its components) must save those tables too: the caller passes them as
``tables``, an opaque picklable value.

A checkpoint file is a pickle of a dict with a format name and version, the run's
``identity`` (what was checked, under which options: a resumed run refuses a checkpoint of
another app, topology, protocol or option), the tables and the search. It is written
atomically. Loading unpickles only classes of nice-attendre, the app's module and a few
builtins, but a checkpoint is still code-adjacent data: resume only checkpoints you wrote.
"""
from __future__ import annotations

import io
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from nice_attendre.errors import InputError
from nice_attendre.output import write_atomic
from nice_attendre.result import Discovery

FORMAT = "nice-attendre checkpoint"
#: Bumped whenever the saved layout changes; an older or newer checkpoint is refused.
VERSION = 1


@dataclass
class SearchState:
    """A depth-first search between two transitions (see :func:`nice_attendre.dfs`).

    ``next_initial`` is the index of the first initial state not yet started; ``stack``
    belongs to the one before it. A frame is ``[state, events, next index, event that led
    here]``. ``sometimes_left`` names the ``sometimes`` properties not yet seen to hold;
    ``elapsed`` sums the seconds of every run so far. ``finished`` is true when the search
    ended for good (complete, or stopped at its first violation): resuming it gives the same
    result again, with ``stop_reason``.
    """

    next_initial: int
    visited: Any
    stack: list[list[Any]]
    transitions: int
    revisits: int
    max_depth: int
    depth_cut: bool
    discoveries: list[Discovery]
    violated: set[str]
    sometimes_left: list[str]
    metric_ranges: dict[str, tuple[int, int]] = field(default_factory=dict)
    elapsed: float = 0.0
    finished: bool = False
    stop_reason: str | None = None


class CheckpointError(InputError):
    """A checkpoint that cannot be used: unreadable, not a checkpoint, another version, or
    taken of another run (the message names what differs)."""


#: Builtins a checkpoint may contain (containers and the values the model uses).
_BUILTINS = frozenset({"set", "frozenset", "tuple", "list", "dict", "int", "float", "str", "bytes",
                       "bool", "complex", "range", "slice", "object"})


class _Unpickler(pickle.Unpickler):
    """Loads only classes: of the allowed modules (nice-attendre's, the app's) and plain
    builtin containers. No function, module or other callable: a checkpoint holds data."""

    def __init__(self, data: io.BytesIO, modules: Iterable[str]) -> None:
        super().__init__(data)
        self.modules = tuple(modules)

    def find_class(self, module: str, name: str) -> Any:
        allowed = (module == "builtins" and name in _BUILTINS) or any(
            module == prefix or module.startswith(prefix + ".") for prefix in self.modules)
        found = super().find_class(module, name) if allowed else None
        if not isinstance(found, type):
            raise CheckpointError(f"checkpoint refers to {module}.{name}, which a checkpoint may not contain")
        return found


def save(path: Path, identity: Mapping[str, Any], tables: Any, search: SearchState, option: str = "--checkpoint") -> None:
    """Write a checkpoint atomically."""
    payload = {"format": FORMAT, "version": VERSION, "identity": dict(identity), "tables": tables,
               "search": search}
    write_atomic(path, pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL), option)


def load(path: Path, identity: Mapping[str, Any], modules: Iterable[str] = ("nice_attendre",)) -> tuple[Any, SearchState]:
    """Read a checkpoint written by :func:`save` for the same ``identity``; return
    ``(tables, search)``. ``modules`` are the module prefixes whose classes it may contain.

    Raises :class:`CheckpointError` when the file cannot be read, is not a checkpoint of
    this format and version, or was taken of a run with another identity.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CheckpointError(f"cannot read checkpoint {str(path)!r}: {exc.strerror or exc}") from exc
    try:
        payload = _Unpickler(io.BytesIO(data), ("nice_attendre", *modules)).load()
    except CheckpointError:
        raise
    except Exception as exc:  # pickle raises many kinds on a damaged or foreign file
        raise CheckpointError(f"{str(path)!r} is not a nice-attendre checkpoint "
                              f"({type(exc).__name__}: {exc})") from exc
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{str(path)!r} is not a nice-attendre checkpoint")
    if payload.get("version") != VERSION:
        raise CheckpointError(f"checkpoint {str(path)!r} has format version {payload.get('version')!r}; "
                              f"this nice-attendre reads version {VERSION}")
    saved = payload.get("identity", {})
    differs = [key for key in sorted(set(saved) | set(identity)) if saved.get(key) != identity.get(key)]
    if differs:
        details = "; ".join(f"{key}: checkpoint {_short(saved.get(key))}, now {_short(identity.get(key))}"
                            for key in differs[:3])
        raise CheckpointError(f"checkpoint {str(path)!r} was taken of another run ({details})")
    search = payload.get("search")
    if not isinstance(search, SearchState):
        raise CheckpointError(f"{str(path)!r} is not a nice-attendre checkpoint")
    return payload.get("tables"), search


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
