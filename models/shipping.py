"""Moving network states between processes: component hashes, and each component once.

A state is a tuple of ids into this process's intern tables; another process has other ids.
So a state travels as the stable hash of each slot's component (8 bytes a slot), and a
payload to a peer also carries the components this process has not sent to that peer yet
(a queue as the hashes of its items, and the items it needs). The receiver interns what it
did not have, checks that the component hashes the same there, and maps each hash to its own
id. Components are few compared with states (thousands against millions), so after the
first levels a payload is almost only hashes.

Components are values of the model and of the app (its state): the sender pickles the new
ones with :class:`PortablePickler`, which also carries instances of subclasses of ``int``,
``float``, ``str``, ``bytes``, ``tuple`` and ``frozenset`` whose own ``__new__`` takes other
arguments (plain pickling calls that ``__new__`` with the base value and fails), and checks
that each comes back equal, of the same type, before it sends it. A value that cannot travel
is :class:`UnshippableValue` (bad input: the command line's exit code 2) naming its type;
the receiver checks the payload's shape and each component's hash, so that a value rebuilt
differently there is refused in the same way, never stored under another fingerprint.
"""
from __future__ import annotations

import copyreg
import dataclasses
import enum
import io
import pickle
from array import array
from operator import getitem
from typing import Any, Callable, Iterable, Sequence

from nice_attendre.errors import InputError, ModelError
from nice_attendre.models.fingerprints import Fingerprinter
from nice_attendre.models.intern import Interner


class UnshippableValue(InputError):
    """A component of a state (in practice a part of the app's state) that cannot be sent to
    another process as it is: pickling it, rebuilding it there or comparing the copy fails,
    or the copy is not equal to it."""


# ---- pickling values of subclasses of builtins ---------------------------------------------

#: The builtin immutable types whose subclasses :class:`PortablePickler` rebuilds itself,
#: each with a function giving an instance's plain builtin value (never calling a method the
#: subclass may override).
_PLAIN: dict[type, Callable[[Any], Any]] = {
    int: int.__index__,
    float: float.__float__,
    str: str.__str__,
    bytes: lambda value: bytes(memoryview(value)),
    tuple: lambda value: tuple.__getitem__(value, slice(None)),
    frozenset: frozenset.copy,
}

#: The methods by which a class says how it pickles: a subclass that defines one of its own
#: is pickled its own way.
_PICKLING = ("__reduce_ex__", "__reduce__", "__getnewargs_ex__", "__getnewargs__", "__getstate__")

#: Per class: the builtin base :class:`PortablePickler` rebuilds it from, or None.
_bases: dict[type, type | None] = {}


def _builtin_base(kind: type) -> type | None:
    """The builtin base of ``kind`` if its instances are to be rebuilt from their plain
    value and attributes (a subclass of one of :data:`_PLAIN`'s types, not an enum, that
    pickles the way its base does), else None."""
    found = _bases.get(kind, ...)
    if found is ...:
        found = None
        if not issubclass(kind, enum.Enum):
            base = next((b for b in kind.__mro__ if b in _PLAIN), None)
            if base is not None and base is not kind and all(
                    getattr(kind, name, None) is getattr(base, name, None) for name in _PICKLING):
                found = base
        _bases[kind] = found
    return found


def _attributes(value: Any) -> tuple[tuple[str, Any], ...]:
    """The attributes of ``value`` outside its builtin value: its ``__dict__`` and slots."""
    found: dict[str, Any] = {}
    try:
        found.update(object.__getattribute__(value, "__dict__"))
    except AttributeError:
        pass
    for name in copyreg._slotnames(type(value)):  # type: ignore[attr-defined]
        try:
            found[name] = object.__getattribute__(value, name)
        except AttributeError:  # a slot never set
            pass
    return tuple(found.items())


def rebuild_subclass(kind: type, base: type, plain: Any, attributes: tuple[tuple[str, Any], ...]) -> Any:
    """An instance of ``kind`` (a subclass of the builtin ``base``) with the builtin value
    ``plain`` and ``attributes``, made as ``base`` makes its instances: the subclass's own
    ``__new__`` and ``__init__``, which may take other arguments, are not called."""
    value = base.__new__(kind, plain)
    for name, item in attributes:
        object.__setattr__(value, name, item)
    return value


class PortablePickler(pickle.Pickler):
    """A pickler that also carries instances of subclasses of immutable builtins whose
    ``__new__`` takes other arguments than the builtin value (``class Count(int)`` with
    ``__new__(cls, n, label)``): they are rebuilt by :func:`rebuild_subclass`."""

    def reducer_override(self, obj: Any) -> Any:
        base = _builtin_base(type(obj))
        if base is None:
            return NotImplemented
        return rebuild_subclass, (type(obj), base, _PLAIN[base](obj), _attributes(obj))


def dumps(value: Any) -> bytes:
    """``value`` pickled by :class:`PortablePickler` (highest protocol)."""
    buffer = io.BytesIO()
    PortablePickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    return buffer.getvalue()


def _parts(value: Any) -> list[Any]:
    """The values ``value`` is made of, for finding which one cannot travel."""
    if isinstance(value, (tuple, frozenset)):
        return list(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [getattr(value, f.name) for f in dataclasses.fields(value)]
    return []


def _trip(value: Any) -> str | None:
    """Why ``value`` cannot travel to another process (None if it can): pickled, rebuilt,
    it must be of the same type and equal to it."""
    try:
        copy = pickle.loads(dumps(value))
    except RecursionError:
        return "it is nested too deeply to be pickled"
    except Exception as exc:  # noqa: BLE001 - whatever the value's class raises
        return f"{type(exc).__name__}: {exc}"
    try:
        same = type(copy) is type(value) and bool(copy == value)
    except Exception as exc:  # noqa: BLE001 - the class's own __eq__
        return f"comparing the copy with it raised {type(exc).__name__}: {exc}"
    return None if same else "the copy made in another process is not equal to it"


def unshippable(value: Any, why: str | None = None) -> UnshippableValue:
    """The error for ``value``, which cannot travel: names the innermost part of it that
    cannot (or ``value`` itself), its type and what failed."""
    culprit, reason = value, why or _trip(value) or "it cannot be sent"
    seen = 0
    while seen < 100:  # a part of a part...: bounded, a cyclic value cannot loop
        seen += 1
        for part in _parts(culprit):
            trouble = _trip(part)
            if trouble is not None:
                culprit, reason = part, trouble
                break
        else:
            break
    name = type(culprit).__qualname__
    return UnshippableValue(
        f"a value of type {name} in the app's state ({_short(culprit)}) cannot be sent to another process "
        f"(--workers, --engine ray): {reason}; make it picklable and equal to its copy (for example "
        "a frozen dataclass of plain values), or explore in one process")


def _short(value: Any) -> str:
    """``repr(value)`` cut to 60 characters (never raising)."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - the class's own __repr__
        text = f"<{type(value).__qualname__}>"
    return text if len(text) <= 60 else text[:57] + "..."


def pack(components: list[tuple[int, int, Any]]) -> bytes:
    """The new components of a payload, pickled, each checked to come back equal (one pickling
    and one unpickling more per component sent, and components are few; see the module
    docstring). Raises :class:`UnshippableValue` naming the value that cannot travel."""
    try:
        data = dumps(components)
        copies = pickle.loads(data)
    except Exception:  # noqa: BLE001 - find which value, and say why
        copies = None
    if copies is not None and len(copies) == len(components):
        for (kind, _hash, value), copy in zip(components, copies):
            try:
                if type(copy[2]) is type(value) and copy[2] == value:
                    continue
            except Exception:  # noqa: BLE001 - the class's own __eq__
                pass
            raise unshippable(value)
        return data
    for _kind, _hash, value in components:
        if _trip(value) is not None:
            raise unshippable(value)
    raise UnshippableValue("the new components of a state cannot be sent to another process together, "
                           "though each can alone (a value pickled by reference to another?)")


_ITEMS = 0  # Fingerprinter.interners starts with the items' interner


class NetworkCodec:
    """A :class:`~nice_attendre.system.StateCodec` for one network, owned by one process.

    ``encode`` remembers, per peer, which components it has sent (a flag per component id);
    ``decode`` keeps a map from component hash to local id for every interner.
    """

    def __init__(self, fingerprints: Fingerprinter,
                 make: Callable[[Iterable[int]], Any] = tuple) -> None:
        net = fingerprints.net
        self.make = make  # a state from its slot ids (the network's kind of state)
        self.fps = fingerprints
        self.kinds: tuple[Interner[Any], ...] = fingerprints.interners
        kind_of = {id(interner): k for k, interner in enumerate(self.kinds)}
        self.slot_kind = tuple(kind_of[id(interner)] for interner in net._slot_interners)
        self.queue_kind = kind_of[id(net._queues)]
        self.nslots = len(self.slot_kind)
        self.sent: dict[int, list[bytearray]] = {}
        self.by_hash: list[dict[int, int]] = [{} for _ in self.kinds]
        self.synced = [0] * len(self.kinds)

    # ---- sending ----------------------------------------------------------------------

    def encode(self, states: Sequence[tuple[int, ...]], peer: int) -> tuple[bytes, bytes]:
        """``(hashes of every slot of every state, [(kind, hash, component)] new to peer)``,
        the list packed by :func:`pack` (``b""`` for none). Raises :class:`UnshippableValue`
        for a component that cannot travel (which ends the search: the components of this
        call are marked as sent all the same)."""
        self.fps.fill()
        flags = self.sent.setdefault(peer, [bytearray() for _ in self.kinds])
        for kind, interner in enumerate(self.kinds):
            missing = len(interner) - len(flags[kind])
            if missing > 0:
                flags[kind].extend(bytes(missing))
        slot_flags = [flags[kind] for kind in self.slot_kind]
        slot_hashes = self.fps.slot_hashes
        hashes = array("Q")
        new: list[tuple[int, int, Any]] = []
        for state in states:
            hashes.extend(map(getitem, slot_hashes, state))
            if not all(map(getitem, slot_flags, state)):
                for slot, value_id in enumerate(state):
                    slot_flag = slot_flags[slot]
                    if not slot_flag[value_id]:
                        slot_flag[value_id] = 1
                        self._component(self.slot_kind[slot], value_id, flags, new)
        return hashes.tobytes(), pack(new) if new else b""

    def _component(self, kind: int, value_id: int, flags: list[bytearray], new: list[tuple[int, int, Any]]) -> None:
        interner = self.kinds[kind]
        value = interner.values[value_id]
        if kind == self.queue_kind:  # items first, then the queue as item hashes
            items, item_flags = self.kinds[_ITEMS], flags[_ITEMS]
            item_hashes = items.hashes
            batched = bool(value) and isinstance(value[0], tuple)
            for batch in (value if batched else (value,)):
                for item in batch:
                    if not item_flags[item]:
                        item_flags[item] = 1
                        new.append((_ITEMS, item_hashes[item], items.values[item]))
            if batched:
                value = tuple(tuple(item_hashes[i] for i in batch) for batch in value)
            else:
                value = tuple(item_hashes[i] for i in value)
        new.append((kind, interner.hashes[value_id], value))

    # ---- receiving --------------------------------------------------------------------

    def _sync(self) -> None:
        """Map the hash of every local component to its id (components interned since)."""
        self.fps.fill()
        for kind, interner in enumerate(self.kinds):
            table, hashes = self.by_hash[kind], interner.hashes
            for value_id in range(self.synced[kind], len(hashes)):
                found = table.setdefault(hashes[value_id], value_id)
                if found != value_id:
                    raise ModelError(f"two {interner.name} components have the same 64-bit hash "
                                     f"{hashes[value_id]:#018x}: {interner.values[found]!r} and "
                                     f"{interner.values[value_id]!r}")
            self.synced[kind] = len(hashes)

    def decode(self, payload: Any) -> Callable[[int], tuple[int, ...]]:
        """Intern the payload's new components; return its ``i``-th state by index.

        Checks what it reads: a payload of another shape, a component that cannot be
        rebuilt here, or one that hashes otherwise here, raises (:class:`ModelError`, or
        :class:`UnshippableValue` naming the value's type), as does asking for a state the
        payload does not hold or one made of components never sent."""
        if (not isinstance(payload, tuple) or len(payload) != 2 or not isinstance(payload[0], bytes)
                or not isinstance(payload[1], bytes)):
            raise ModelError(f"a state payload from another shard is malformed: {_short(payload)}")
        data, packed = payload
        width = self.nslots
        if len(data) % (8 * width):
            raise ModelError(f"a state payload from another shard has {len(data)} bytes of hashes, not a "
                             f"multiple of {8 * width} (the states' width)")
        new = self._unpack(packed)
        self._sync()
        self.fps.net.adopt_values(value for _kind, _hashed, value in new)  # tables with timed entries
        items = self.by_hash[_ITEMS]
        for kind, hashed, value in new:
            table = self.by_hash[kind]
            if hashed in table:
                continue
            interner = self.kinds[kind]
            if kind == self.queue_kind:
                try:
                    if value and isinstance(value[0], tuple):  # batches (in the sender's order: by
                        value = tuple(tuple(items[h] for h in batch) for batch in value)  # hashes)
                    else:
                        value = tuple(items[h] for h in value)
                except (KeyError, TypeError):
                    raise ModelError("a queue received from another shard holds items it never sent") from None
            try:
                value_id = interner.intern(value)
                local = interner.fill_hashes()[value_id]
            except UnshippableValue:
                raise
            except Exception as exc:  # noqa: BLE001 - the value's own __hash__, __eq__ or encoding
                raise unshippable(value, f"interning it here raised {type(exc).__name__}: {exc}") from None
            if local != hashed:
                raise unshippable(value, f"it hashes to {local:#018x} here but to {hashed:#018x} where it was "
                                         "sent from (its canonical encoding depends on the process)")
            table[hashed] = value_id
        hashes = array("Q")
        hashes.frombytes(data)
        slot_tables = [self.by_hash[kind] for kind in self.slot_kind]
        count = len(hashes) // width
        make = self.make

        def state(index: int) -> tuple[int, ...]:
            if not 0 <= index < count:
                raise ModelError(f"a state payload from another shard holds {count} states, not {index + 1}")
            try:
                return make(map(getitem, slot_tables, hashes[index * width:(index + 1) * width]))
            except KeyError as exc:
                raise ModelError(f"a state received from another shard names a component never sent "
                                 f"(hash {exc.args[0]:#018x})") from None

        return state

    def _unpack(self, packed: bytes) -> list[tuple[int, int, Any]]:
        """The new components of a payload (see :func:`pack`), checked: ``(kind, hash,
        value)`` with a known kind and a 64-bit hash."""
        if not packed:
            return []
        try:
            new = pickle.loads(packed)
        except Exception as exc:  # noqa: BLE001 - whatever rebuilding a value raises
            raise UnshippableValue(f"a value of the app's state sent from another process cannot be rebuilt "
                                   f"here: {type(exc).__name__}: {exc}; the app's file and classes must be "
                                   "the same in every process (--engine ray: on every node)") from None
        kinds = len(self.kinds)
        if not isinstance(new, list) or not all(
                type(entry) is tuple and len(entry) == 3 and type(entry[0]) is int and 0 <= entry[0] < kinds
                and type(entry[1]) is int and 0 <= entry[1] < 1 << 64 for entry in new):
            raise ModelError(f"the components of a state payload from another shard are malformed: {_short(new)}")
        return new
