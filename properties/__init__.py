"""Invariants over network states, registered by kebab-case name.

Each entry is a function of the :class:`~nice_attendre.models.network.Network` returning a
:class:`~nice_attendre.Property`; :func:`monitors_for` says which monitors the network must
run for the chosen properties (pass them in ``Options(monitors=...)``).

Users name properties by registered name, by ``path/to/file.py:NAME`` or
``package.module:NAME`` (a :class:`~nice_attendre.properties.custom.PropertySpec`, a
:class:`~nice_attendre.Property`, or a list of them), or pass the objects themselves; an
app may ship properties in its ``properties`` mapping and name them in
``default_properties``. :func:`resolve` turns any mix of these into :class:`Wanted` entries.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

from nice_attendre.errors import InputError, UnknownNameError
from nice_attendre.models.app import app_failure, is_app_failure
from nice_attendre.models.network import MONITORS, Network
from nice_attendre.properties.alerts import (app_exception, app_nondeterminism, direct_paths, no_black_holes,
                                             no_forwarding_loops, one_packet_in_per_flow,
                                             strict_direct_paths)
from nice_attendre.properties.buffers import no_forgotten_packets
from nice_attendre.properties.custom import PropertySpec
from nice_attendre.properties.delivery import delivery
from nice_attendre.properties.flows import no_duplicates, no_reordering
from nice_attendre.properties.routes import intended_paths, no_stale_routes, strict_no_stale_routes
from nice_attendre.properties.termination import termination, termination_any_scheduler
from nice_attendre.property import Property
from nice_attendre.watchdog import CallGuard

PropertyFactory = Callable[[Network], Property]

REGISTRY: dict[str, PropertyFactory] = {
    "no-forwarding-loops": no_forwarding_loops,
    "no-black-holes": no_black_holes,
    "no-forgotten-packets": no_forgotten_packets,
    "direct-paths": direct_paths,
    "strict-direct-paths": strict_direct_paths,
    "one-packet-in-per-flow": one_packet_in_per_flow,
    "no-reordering": no_reordering,
    "no-duplicates": no_duplicates,
    "delivery": delivery,
    "no-stale-routes": no_stale_routes,
    "strict-no-stale-routes": strict_no_stale_routes,
    "intended-paths": intended_paths,
    "termination": termination,
    "termination-any-scheduler": termination_any_scheduler,
}

#: Checked when no property is named (and the app names none). None of them keeps history in
#: the state, so a run with the defaults explores exactly the state space of a run that
#: checks nothing (the paper's counts); see :data:`HISTORY_PROPERTIES`.
DEFAULT_PROPERTIES = ("no-forwarding-loops", "no-black-holes", "no-forgotten-packets", "delivery", "termination")

#: Properties whose monitors keep history in the state while they are checked (and only
#: then), so that states differing only in that history are distinct: a larger state space.
#: Measured (transitions; ``python`` and the library's ``verify``): route-flow linear:5 with 5
#: packets under Attendre, 247,996 with nothing checked, 850,330 with direct-paths (3.43x),
#: 289,564 with strict-direct-paths (1.17x), 247,996 with one-packet-in-per-flow; route-flow
#: linear:5 with 2 packets under OpenFlow, 2,366,988, 2,390,328 (1.01x) and 2,372,226;
#: MAC learning linear:1 with 4 packets, 257,028 and 347,283 with strict-direct-paths (1.35x).
HISTORY_PROPERTIES = ("direct-paths", "strict-direct-paths", "one-packet-in-per-flow")

#: Always checked, whatever is named.
ALWAYS_CHECKED = "app-exception"
#: Also always checked: an app handler that is not a function of its input (exit code 4).
NONDETERMINISM = "app-nondeterminism"


def _always(net: Network) -> tuple[Property, ...]:
    """The properties checked whatever is named: ``app-exception``, ``app-nondeterminism``."""
    return app_exception(net), app_nondeterminism(net)


def property_names() -> tuple[str, ...]:
    """Every registered property name."""
    return tuple(REGISTRY)


def check_names(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` without duplicates, in order; :class:`UnknownNameError` for an unknown one."""
    result: list[str] = []
    for name in names:
        if name not in REGISTRY:
            raise UnknownNameError("property", name, list(REGISTRY))
        if name not in result:
            result.append(name)
    return tuple(result)


def monitors_for(names: Iterable[str]) -> frozenset[str]:
    """The monitors the network must run for properties ``names``."""
    return frozenset(name for name in names if name in MONITORS)


def build(net: Network, names: Iterable[str]) -> tuple[Property, ...]:
    """The properties ``names`` for ``net``, plus ``app-exception`` and
    ``app-nondeterminism`` (always checked)."""
    return tuple(REGISTRY[name](net) for name in check_names(names)) + _always(net)


def describe(name: str) -> str:
    """What property ``name`` checks: the first paragraph of its factory's docstring, in one line."""
    doc = (REGISTRY[name].__doc__ or "").strip()
    return " ".join(doc.split("\n\n")[0].split())


@dataclass(frozen=True)
class Wanted:
    """A property asked for: its name (``None`` until a bare factory is bound) and the
    factory that binds it to a network; ``registered`` for the registry's own."""

    name: str | None
    factory: Callable[[Network], Property]
    registered: bool = False


def _guarded(prop: Property, guard: CallGuard) -> Property:
    """``prop``, a user's, as user code: its predicate never crashes the checker (an
    exception makes the state violate the property, and the reason names it: anything the
    app's handlers may raise, see :func:`~nice_attendre.models.app.is_app_failure`), and its
    calls are marked by ``guard`` (the network's), so a watchdog bounds them as it bounds app
    handlers: a call longer than the handler time limit violates the property, and a time
    or memory limit or Ctrl-C stops the search inside it (a predicate stuck in a loop used
    to hang the search for good)."""
    errors: dict[Any, str] = {}
    holds, run = prop.holds, guard.run

    def failed(key: Any, exc: BaseException) -> bool:
        errors[key] = f"the property {prop.name!r} {app_failure(exc)}"
        return False

    if prop.expectation.value == "transition":
        def guarded(before: Any, event: Any, after: Any) -> bool:
            try:
                return run(_holds3, holds, before, event, after)
            except BaseException as exc:  # noqa: BLE001 - user code: a finding, never a crash
                if not is_app_failure(exc):
                    raise
                return failed(after, exc)
    else:
        def guarded(state: Any) -> bool:  # type: ignore[misc]
            try:
                return run(_holds1, holds, state)
            except BaseException as exc:  # noqa: BLE001 - user code: a finding, never a crash
                if not is_app_failure(exc):
                    raise
                return failed(state, exc)

    def explain(state: Any) -> str:
        if state in errors:
            return errors[state]
        try:
            return run(_text, prop.why, state)
        except BaseException as exc:  # noqa: BLE001 - user code: described, never a crash
            if not is_app_failure(exc):
                raise
            return f"(its explanation {app_failure(exc)})"

    return Property(prop.name, prop.expectation, guarded, prop.description, explain)


def _holds1(holds: Callable[[Any], Any], state: Any) -> bool:
    """``bool(holds(state))``: the truth of a user's result is user code too (its ``__bool__``)."""
    return bool(holds(state))


def _holds3(holds: Callable[[Any, Any, Any], Any], before: Any, event: Any, after: Any) -> bool:
    """``bool(holds(before, event, after))``, as :func:`_holds1`."""
    return bool(holds(before, event, after))


def _text(why: Callable[[Any], Any], state: Any) -> str:
    """``str(why(state))``: a user's explanation, made a string as user code."""
    return str(why(state))


def _load(spec: str) -> list[Any]:
    """The property objects named by ``file.py:NAME`` or ``module:NAME``."""
    from nice_attendre.importing import import_target

    target, _, attr = spec.rpartition(":")
    module = import_target(target, "property", InputError)
    if not hasattr(module, attr):
        found = [n for n, v in vars(module).items() if isinstance(v, (PropertySpec, Property))]
        import difflib

        close = difflib.get_close_matches(attr, found, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else (f" (properties there: {', '.join(found)})"
                                                               if found else "")
        raise InputError(f"{target!r} has no property {attr!r}{hint}")
    value = getattr(module, attr)
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if not isinstance(item, (PropertySpec, Property)):
            raise InputError(f"{spec!r} is not a property (a PropertySpec from nice_attendre.properties.custom "
                             f"or a nice_attendre.Property), got {type(item).__name__}")
    return items


def resolve(wanted: Any, app: Any = None) -> tuple[Wanted, ...]:
    """Every property in ``wanted`` (one item or an iterable of names, specs, Property
    objects and factories), in order, without repeats. Names resolve in the app's own
    ``properties`` mapping first, then the registry, then as ``file.py:NAME`` /
    ``module:NAME``. Raises :class:`InputError` (or :class:`UnknownNameError`) for anything else.
    """
    if isinstance(wanted, (str, PropertySpec, Property)) or (callable(wanted) and not isinstance(wanted, type)):
        wanted = [wanted]
    try:
        items = list(wanted)
    except TypeError:
        raise InputError(f"properties must be names or property objects, got {type(wanted).__name__}") from None
    own = dict(getattr(app, "properties", None) or {})
    result: list[Wanted] = []

    def add(entry: Wanted) -> None:
        for known in result:
            if entry.name is not None and known.name == entry.name:
                if known.factory is entry.factory or known.registered and entry.registered:
                    return
                raise InputError(f"two different properties are named {entry.name!r}")
        result.append(entry)

    for item in items:
        if isinstance(item, str):
            if item in own:
                item = own[item]
            elif item in REGISTRY:
                add(Wanted(item, REGISTRY[item], registered=True))
                continue
            elif ":" in item:
                for loaded in _load(item):
                    add(_entry(loaded))
                continue
            else:
                raise UnknownNameError("property", item, [*own, *REGISTRY])
        add(_entry(item))
    return tuple(result)


def _entry(item: Any) -> Wanted:
    if isinstance(item, PropertySpec):
        return Wanted(item.name, item)
    if isinstance(item, Property):
        return Wanted(item.name, lambda _net, p=item: p)
    if callable(item) and not isinstance(item, type):
        return Wanted(None, item)
    raise InputError(f"not a property: {item!r} (give a registered name, file.py:NAME, a PropertySpec or a Property)")


def monitors_of(wanted: Iterable[Wanted]) -> frozenset[str]:
    """The monitors the network must run for ``wanted`` (registered properties only)."""
    return monitors_for(w.name for w in wanted if w.registered and w.name is not None)


def bind(net: Network, wanted: Iterable[Wanted]) -> tuple[Property, ...]:
    """The properties ``wanted`` for ``net``, plus ``app-exception`` and
    ``app-nondeterminism`` (always checked). Users' properties are guarded: a predicate
    that raises is a violation naming the exception."""
    bound: list[Property] = []
    for entry in wanted:
        try:
            prop = entry.factory(net)
        except InputError:
            raise
        except Exception as exc:
            name = entry.name or getattr(entry.factory, "__name__", repr(entry.factory))
            raise InputError(f"property {name!r} cannot be built: {type(exc).__name__}: {exc}") from exc
        if not isinstance(prop, Property):
            raise InputError(f"property factory {entry.factory!r} returned {type(prop).__name__}, not a Property")
        if any(p.name == prop.name for p in bound):
            raise InputError(f"two different properties are named {prop.name!r}")
        bound.append(prop if entry.registered else _guarded(prop, net.guard))
    return tuple(bound) + _always(net)
