"""A Ryu app's attributes as model state: frozen after each handler call, restored before the next.

:func:`freeze` turns a value into a canonical hashable one: containers become tagged tuples
(``("list", items)``, ``("dict", sorted pairs)``, ``("set", sorted items)``, ...), ints, strs
and None stay as they are, and bools, floats and bytes are tagged so that ``1``, ``1.0`` and
``True`` stay distinct. Dicts and sets are sorted (their equality ignores order, and so
does the state): :func:`thaw` rebuilds them in sorted order. A datapath object is stored as
its dpid and restored as the checker's datapath of that switch. Anything else is refused
with an :class:`UnsupportedFeature` naming where it was found (``self.table[1]``).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Iterable

from nice_attendre.errors import UnsupportedFeature

#: Factories a frozen ``collections.defaultdict`` may have.
DEFAULT_FACTORIES: dict[str, type] = {t.__name__: t for t in (list, dict, set, int, float, str, tuple,
                                                               frozenset, bool)}
_RANK = {type(None): 0, bool: 1, int: 2, float: 3, str: 4, bytes: 5}
_TAGGED_SCALARS = (bool, float, bytes)

Frozen = Any


def order(value: Frozen) -> tuple[Any, ...]:
    """A total-order sort key for frozen values (mixed types sort by type first)."""
    kind = type(value)
    if kind is tuple:
        return (6, tuple(order(item) for item in value))
    return (_RANK[kind], value)


def _sorted(items: list[Frozen]) -> tuple[Frozen, ...]:
    """``items`` in :func:`order`. Frozen values of the same shape compare directly, in the
    same order (their scalars are ints, strs and tagged tuples); only mixed shapes raise
    TypeError and need the slower key."""
    try:
        return tuple(sorted(items))
    except TypeError:
        return tuple(sorted(items, key=order))


def freeze(value: Any, where: str, datapath_type: type | None = None) -> Frozen:
    """The canonical hashable form of ``value``; ``where`` names it in errors (``self.x``)."""
    kind = type(value)
    if kind is int or kind is str or value is None:
        return value
    if kind in _TAGGED_SCALARS:
        return (kind.__name__, value)
    if kind is list or kind is tuple:
        return (kind.__name__, tuple(freeze(item, f"{where}[{index}]", datapath_type)
                                     for index, item in enumerate(value)))
    if kind is set or kind is frozenset:
        return (kind.__name__, _sorted([freeze(item, f"{where} item", datapath_type) for item in value]))
    if kind is dict or kind is defaultdict:
        items = _sorted([(freeze(key, f"{where} key {key!r}", datapath_type),
                          freeze(item, f"{where}[{key!r}]", datapath_type)) for key, item in value.items()])
        if kind is dict:
            return ("dict", items)
        factory = value.default_factory
        if factory is None or DEFAULT_FACTORIES.get(getattr(factory, "__name__", "")) is not factory:
            raise UnsupportedFeature(f"Ryu app state: {where} is a defaultdict whose factory is {factory!r}; "
                                     f"the checker keeps only defaultdicts of {', '.join(DEFAULT_FACTORIES)}")
        return ("defaultdict", factory.__name__, items)
    if datapath_type is not None and isinstance(value, datapath_type):
        return ("datapath", value.id)
    raise UnsupportedFeature(f"Ryu app state: {where} holds a {kind.__module__}.{kind.__qualname__}; the checker "
                             "keeps an app's attributes as its state and can only keep dicts, lists, sets, tuples, "
                             "ints, floats, strs, bytes, bools, None and datapaths")


def thaw(frozen: Frozen, datapath: Callable[[int], Any]) -> Any:
    """A fresh mutable value equal to the one :func:`freeze` was given (``datapath(dpid)``
    gives the datapath object of a switch)."""
    if type(frozen) is not tuple:
        return frozen
    tag = frozen[0]
    if tag in ("bool", "float", "bytes"):
        return frozen[1]
    if tag == "list":
        return [thaw(item, datapath) for item in frozen[1]]
    if tag == "tuple":
        return tuple(thaw(item, datapath) for item in frozen[1])
    if tag == "set":
        return {thaw(item, datapath) for item in frozen[1]}
    if tag == "frozenset":
        return frozenset(thaw(item, datapath) for item in frozen[1])
    if tag == "dict":
        return {thaw(key, datapath): thaw(item, datapath) for key, item in frozen[1]}
    if tag == "defaultdict":
        return defaultdict(DEFAULT_FACTORIES[frozen[1]],
                           ((thaw(key, datapath), thaw(item, datapath)) for key, item in frozen[2]))
    if tag == "datapath":
        return datapath(frozen[1])
    raise ValueError(f"not a frozen value: {frozen!r}")  # pragma: no cover - freeze makes no other tags


def freeze_attributes(instance: Any, skip: Iterable[str], datapath_type: type | None = None) -> Frozen:
    """The app's own attributes (all but ``skip``) as a sorted tuple of (name, frozen value)."""
    skipped = set(skip)
    return tuple((name, freeze(value, f"self.{name}", datapath_type))
                 for name, value in sorted(vars(instance).items()) if name not in skipped)


def restore_attributes(instance: Any, frozen: Frozen, skip: Iterable[str], datapath: Callable[[int], Any]) -> None:
    """Make the app's own attributes those of ``frozen`` (removing ones it does not have)."""
    skipped = set(skip)
    names = {name for name, _ in frozen}
    for name in [n for n in vars(instance) if n not in skipped and n not in names]:
        delattr(instance, name)
    for name, value in frozen:
        setattr(instance, name, thaw(value, datapath))
