"""A total order over the plain values a state holds, whatever their types.

Python refuses to compare a tuple with a string or ``None`` with an int, so sorting values
that mix types (identifiers chosen by apps, buffer ids next to matches) needs a key. The key
orders values first by a kind name, then by value; tuples element by element. It depends
only on the values, never on hashing or identity, so sorted collections are canonical.
"""
from __future__ import annotations

import dataclasses
import enum
from functools import lru_cache
from typing import Any


def order_key(value: Any) -> tuple[Any, ...]:
    """A key that totally orders ``value`` among every value built from None, bools, ints,
    floats, strings, bytes, enums, tuples (named or not), frozensets and frozen dataclasses."""
    if value is None:
        return ("0none",)
    if isinstance(value, bool):
        return ("1bool", value)
    if isinstance(value, (int, float)):
        return ("2number", value)
    if isinstance(value, str):
        return ("3str", value)
    if isinstance(value, bytes):
        return ("4bytes", value)
    if isinstance(value, enum.Enum):
        return ("5enum", type(value).__qualname__, order_key(value.value))
    if isinstance(value, tuple):
        return ("6tuple", type(value).__qualname__, tuple(order_key(item) for item in value))
    if isinstance(value, frozenset):
        return ("7set", tuple(sorted(order_key(item) for item in value)))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return ("8record", type(value).__qualname__,
                tuple(order_key(getattr(value, f.name)) for f in dataclasses.fields(value)))
    return ("9other", type(value).__qualname__, repr(value))


@lru_cache(maxsize=1 << 16)
def _cached_key(value: Any) -> tuple[Any, ...]:
    return order_key(value)


def sorted_values(values: Any) -> tuple[Any, ...]:
    """``values`` sorted by :func:`order_key`, as a tuple (keys cached per value: the values
    sorted in a search recur)."""
    return tuple(sorted(values, key=_cached_key))
