"""Stable 64-bit fingerprints: the same value has the same fingerprint in every process.

Python's ``hash()`` cannot serve: it is salted per process for strings and bytes, on
Python 3.11 ``hash(None)`` differs between processes, ``repr()`` of a frozenset follows
hash order and pickle bytes are not canonical. Here a value is first turned into a
*canonical encoding* (bytes that depend only on the value: frozensets sorted, classes named,
no addresses, no salts) and the encoding is hashed with BLAKE2b cut to 8 bytes (the standard
library's keyed-hash family: well-defined, the same on every platform and Python version).

The encoding is consistent with ``==`` wherever Python makes values of different types
equal, so that equal values, which interning or a visited set merge, never get different
fingerprints: ``True`` and ``1`` (and ``1.0``, and an ``IntEnum`` member of value 1) encode
as the integer 1, and a NamedTuple as the plain tuple of its fields.

Encoded types: ``None``, ``bool``, ``int``, ``float``, ``str``, ``bytes``, tuples
(NamedTuples included), frozensets, enum members and dataclass instances (by their class's
qualified name and the fields that take part in ``==``; not its module, whose name for a
user's file depends on where the file lies). Anything else raises
:class:`FingerprintError`: a type whose equality is not known here cannot be given a
fingerprint that agrees with it.

State fingerprints combine per-component hashes Zobrist style (see :func:`slot_multiplier`);
a model without components gets :func:`stable_hash` of its whole state.
"""
from __future__ import annotations

import dataclasses
import enum
import hashlib
import struct
from typing import Any, Callable

from nice_attendre.errors import NiceAttendreError

MASK64 = (1 << 64) - 1

#: Personalisation of BLAKE2b: fingerprints of this encoding never equal those of another
#: use of BLAKE2b. Bump the version if the encoding ever changes.
_PERSON = b"nice-attendre-v1"

_pack_len = struct.Struct(">I").pack
_pack_double = struct.Struct(">d").pack


class FingerprintError(NiceAttendreError, TypeError):
    """A value that has no canonical encoding (its type is not one of the encoded types)."""


def _encode_int(value: int, out: list[bytes]) -> None:
    data = value.to_bytes(value.bit_length() // 8 + 1, "big", signed=True)
    out.append(b"I")
    out.append(_pack_len(len(data)))
    out.append(data)


def _encode_str(tag: bytes, data: bytes, out: list[bytes]) -> None:
    out.append(tag)
    out.append(_pack_len(len(data)))
    out.append(data)


#: Per class: its encoding's head and ``(field name, the name's encoding)`` for the fields
#: that take part in ``==``, or None for a class that is not such a dataclass: computed once
#: per class rather than for every instance encoded (a class stays here, and alive, for the
#: life of the process: a few hundred bytes each).
_dataclass_layouts: dict[type, tuple[bytes, tuple[tuple[str, bytes], ...]] | None] = {}


def _dataclass_layout(kind: type) -> tuple[bytes, tuple[tuple[str, bytes], ...]] | None:
    """The encoding layout of instances of ``kind`` (see :data:`_dataclass_layouts`),
    remembered."""
    layout = None
    if dataclasses.is_dataclass(kind) and kind.__dataclass_params__.eq:  # type: ignore[attr-defined]
        fields = [f for f in dataclasses.fields(kind) if f.compare]
        head: list[bytes] = []
        _encode_str(b"D", kind.__qualname__.encode(), head)
        head.append(_pack_len(len(fields)))
        named = []
        for f in fields:
            encoded: list[bytes] = []
            _encode_str(b"S", f.name.encode(), encoded)
            named.append((f.name, b"".join(encoded)))
        layout = (b"".join(head), tuple(named))
    _dataclass_layouts[kind] = layout
    return layout


def _encode(value: Any, out: list[bytes]) -> None:
    """Append the canonical encoding of ``value`` to ``out``."""
    kind = type(value)
    if value is None:
        out.append(b"N")
    elif kind is int or kind is bool:
        _encode_int(int(value), out)
    elif kind is str:
        _encode_str(b"S", value.encode("utf-8", "surrogatepass"), out)
    elif isinstance(value, tuple):  # tuples and NamedTuples (equal when their items are)
        out.append(b"(")
        out.append(_pack_len(len(value)))
        for item in value:
            _encode(item, out)
    elif isinstance(value, enum.Enum):
        if isinstance(value, int):  # IntEnum, IntFlag: equal to their integer value
            _encode_int(int(value), out)
        elif isinstance(value, str):  # StrEnum: equal to its string
            _encode_str(b"S", str.__str__(value).encode("utf-8", "surrogatepass"), out)
        else:
            _encode_str(b"E", kind.__qualname__.encode(), out)
            _encode_str(b"S", value.name.encode(), out)
    elif isinstance(value, int):  # other int subclasses compare as ints
        _encode_int(int(value), out)
    elif (layout := _dataclass_layouts[kind] if kind in _dataclass_layouts else _dataclass_layout(kind)) is not None:
        head, fields = layout
        out.append(head)
        for name, encoded_name in fields:
            out.append(encoded_name)
            _encode(getattr(value, name), out)
    elif isinstance(value, frozenset):
        items = sorted(encode(item) for item in value)
        out.append(b"{")
        out.append(_pack_len(len(items)))
        out.extend(items)
    elif isinstance(value, float):
        if value.is_integer():
            _encode_int(int(value), out)
        else:
            out.append(b"F")
            out.append(_pack_double(value))
    elif isinstance(value, str):
        _encode_str(b"S", str.__str__(value).encode("utf-8", "surrogatepass"), out)
    elif isinstance(value, bytes):
        _encode_str(b"B", bytes(value), out)
    else:
        raise FingerprintError(
            f"cannot fingerprint a value of type {kind.__qualname__} ({_shown(value):.80}): state values "
            "must be None, bool, int, float, str, bytes, tuples, frozensets, enums or dataclasses")


def _shown(value: Any) -> str:
    """``repr(value)`` for a message, or what the value's ``__repr__`` (user code) did
    instead of returning: it must not end the run (``sys.exit``) while an error is told."""
    try:
        return repr(value)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - user code: described, never obeyed
        return f"<its __repr__ raised {type(exc).__name__}>"


def encode(value: Any) -> bytes:
    """The canonical encoding of ``value``: equal values give equal bytes in every process.

    Raises :class:`FingerprintError` for a value (or a part of it) of another type, and for
    one nested too deeply to encode (the encoding recurses).
    """
    out: list[bytes] = []
    try:
        _encode(value, out)
    except RecursionError:
        raise FingerprintError(f"cannot fingerprint a value of type {type(value).__qualname__}: it is nested "
                               "too deeply (values inside values, beyond Python's recursion limit)") from None
    return b"".join(out)


def hash_bytes(data: bytes) -> int:
    """BLAKE2b of ``data`` as an unsigned 64-bit integer."""
    return int.from_bytes(hashlib.blake2b(data, digest_size=8, person=_PERSON).digest(), "little")


def stable_hash(value: Any) -> int:
    """The stable 64-bit hash of ``value`` (BLAKE2b of its canonical encoding)."""
    return hash_bytes(encode(value))


def hash_sequence(tag: bytes, hashes: Any) -> int:
    """A stable hash of a sequence of 64-bit hashes (order matters), under a one-byte ``tag``
    that keeps sequences of different kinds apart."""
    return hash_bytes(tag + struct.pack(f"<{len(hashes)}Q", *hashes))


def mix64(value: int) -> int:
    """SplitMix64's finaliser: a bijection of 64-bit integers that spreads every input bit."""
    value &= MASK64
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & MASK64
    return value ^ (value >> 31)


def slot_multiplier(slot: int) -> int:
    """The odd 64-bit constant that weighs slot ``slot`` in a state fingerprint.

    A state of slots with component hashes ``h_0 .. h_{n-1}`` has the fingerprint
    ``sum(slot_multiplier(i) * h_i) mod 2**64``. Multiplying by an odd constant is a
    bijection per slot, so a state differing in one slot always gets another fingerprint;
    with component hashes spread uniformly, states differing in several slots collide with
    probability about 2**-64. The sum is updated from the slots a transition changes:
    ``fp + k_i * (new - old) mod 2**64`` for each changed slot ``i``.
    """
    return mix64(0x9E3779B97F4A7C15 * (slot + 1)) | 1


def owner(fingerprint: int, shards: int) -> int:
    """The shard (0 .. shards-1) that owns a state with this fingerprint (Stern and Dill's
    partitioning). Uses the high half of the fingerprint; visited tables index by the low
    bits, so a shard's table is not left with half its buckets unused."""
    return (fingerprint >> 32) % shards


FingerprintFunction = Callable[[Any], int]


StepFunction = Callable[[Any, int, Any], "tuple[Any, int]"]


def fingerprint_functions(system: Any) -> tuple[FingerprintFunction, StepFunction]:
    """``(fingerprint(state), step(state, fingerprint, event) -> (next state, its fingerprint))``
    for ``system``: its own optional ``fingerprint`` and ``apply_fingerprinted`` methods (see
    :class:`nice_attendre.system.Fingerprinted`), or else :func:`stable_hash` of the whole
    state after ``apply``."""
    of: FingerprintFunction = getattr(system, "fingerprint", None) or stable_hash
    step = getattr(system, "apply_fingerprinted", None)
    if step is None:
        apply = system.apply

        def step(state: Any, fingerprint: int, event: Any) -> tuple[Any, int]:
            successor = apply(state, event)
            return successor, of(successor)

    return of, step


class Computed:
    """A successor already built (see :func:`peek_functions`): the handle of a transition
    that had to run, where a replayed one has its writes."""

    __slots__ = ("state",)

    def __init__(self, state: Any) -> None:
        self.state = state


def successor(state: Any, writes: Any) -> Any:
    """The successor of ``state`` a peek described (see :func:`peek_functions`): ``writes`` is
    a :class:`Computed` successor or the ``(slot, value)`` pairs to write into a copy of
    ``state`` (a tuple of slots)."""
    if writes.__class__ is Computed:
        return writes.state
    after = list(state)
    for slot, value in writes:
        after[slot] = value
    return tuple(after)


PeekFunction = Callable[[Any, int, Any], "tuple[int, Any]"]


def peek_functions(system: Any) -> tuple[FingerprintFunction, PeekFunction, Callable[[Any, Any], Any]]:
    """``(fingerprint(state), peek(state, fingerprint, event) -> (next state's fingerprint,
    handle), build(state, handle) -> next state)`` for ``system``: a search that drops most
    successors at their fingerprint (revisits) builds only the others.

    A system offers ``peek_fingerprinted`` (see :class:`nice_attendre.system.Fingerprinted`)
    whose handles its ``build_successor`` or else :func:`successor` builds; for any other,
    the handle is the successor made by :func:`fingerprint_functions`' step, as a
    :class:`Computed`. Every ``build`` accepts a :class:`Computed` handle (a caller that
    needed the successor early may pass it on that way)."""
    of, step = fingerprint_functions(system)
    peek = getattr(system, "peek_fingerprinted", None)
    if peek is not None:
        return of, peek, getattr(system, "build_successor", successor)

    def stepped(state: Any, fingerprint: int, event: Any) -> tuple[int, Any]:
        new, new_fingerprint = step(state, fingerprint, event)
        return new_fingerprint, Computed(new)

    return of, stepped, successor


def keyed_functions(system: Any) -> tuple[Callable[[Any], tuple[int, Any]],
                                          Callable[[Any, tuple[int, Any], Any], tuple[Any, tuple[int, Any]]]]:
    """``(key(state), step(state, key, event) -> (next state, its key))`` for an exact search
    that stores states under a hash (:class:`nice_attendre.visited.KeyedStates`): keys are
    ``(hash, state)`` pairs, the hash the system's :class:`~nice_attendre.system.LargeStates`
    ``state_key``, updated by its ``apply_keyed``."""
    state_key = system.state_key
    apply_keyed = system.apply_keyed

    def key_of(state: Any) -> tuple[int, Any]:
        return state_key(state), state

    def keyed_step(state: Any, key: tuple[int, Any], event: Any) -> tuple[Any, tuple[int, Any]]:
        successor, hashed = apply_keyed(state, key[0], event)
        return successor, (hashed, successor)

    return key_of, keyed_step
