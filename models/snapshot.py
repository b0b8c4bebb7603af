"""A network's interning tables, for checkpoints.

A network state is a tuple of ids into the network's interners (see
:mod:`nice_attendre.models.intern`), so a saved search means nothing without the tables that
decode its ids. :func:`network_tables` lists them; :func:`restore_tables` puts saved tables
back into a freshly built network of the same configuration.

The interners are found by looking through the attributes of the network and of its protocol
variant (an :class:`Interner`, or a list, tuple or dict of them), in attribute order, so a
variant or a future layout that adds interners needs no change here. Ids are assigned in
the order values are first seen, which is deterministic, so a fresh network's tables are a
prefix of the saved ones; restoring checks that and appends the rest in place (the network
holds references to the tables' value lists).
"""
from __future__ import annotations

from typing import Any

from nice_attendre.checkpoint import CheckpointError
from nice_attendre.models.intern import Interner

#: (where the interner was found, its name, its values in id order)
Table = tuple[str, str, list[Any]]


def _interners(net: Any) -> list[tuple[str, Interner[Any]]]:
    found: list[tuple[str, Interner[Any]]] = []
    seen: set[int] = set()

    def visit(where: str, value: Any) -> None:
        if isinstance(value, Interner):
            if id(value) not in seen:
                seen.add(id(value))
                found.append((where, value))
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                if isinstance(item, Interner):
                    visit(f"{where}[{index}]", item)
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, Interner):
                    visit(f"{where}[{key!r}]", item)

    for owner, obj in (("network", net), ("protocol", getattr(net, "protocol", None))):
        if obj is not None:
            for attribute, value in vars(obj).items():
                visit(f"{owner}.{attribute}", value)
    return found


def network_tables(net: Any) -> list[Table]:
    """The network's interning tables (live lists: pickle them at once)."""
    return [(where, interner.name, interner.values) for where, interner in _interners(net)]


def restore_tables(net: Any, tables: Any) -> None:
    """Extend a freshly built network's tables with the saved ones.

    Raises :class:`~nice_attendre.checkpoint.CheckpointError` when the saved tables do not
    belong to a network of this configuration (other tables, or values that differ from
    what this network computed): the app or the model is not the one checkpointed.
    """
    current = _interners(net)
    if (not isinstance(tables, list) or len(tables) != len(current)
            or any(not isinstance(t, tuple) or len(t) != 3 for t in tables)):
        raise CheckpointError("the checkpoint's tables do not match this network's layout")
    for (where, interner), (saved_where, saved_name, saved) in zip(current, tables):
        if (where, interner.name) != (saved_where, saved_name) or not isinstance(saved, list):
            raise CheckpointError(f"the checkpoint's table {saved_where} does not match this network's {where}")
        known = len(interner.values)
        if len(saved) < known or saved[:known] != interner.values:
            raise CheckpointError(f"the checkpoint's {interner.name} table differs from what this network "
                                  "computes: the app or the model changed since it was written")
    for (_where, interner), (_w, _n, saved) in zip(current, tables):
        known = len(interner.values)
        for index in range(known, len(saved)):
            interner.values.append(saved[index])
            interner.ids[saved[index]] = index
    adopt = getattr(net, "adopt_values", None)  # restored tables may hold entries that expire
    if adopt is not None:
        for _w, _n, saved in tables:
            adopt(saved)
