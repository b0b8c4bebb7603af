"""Invariants over network states, registered by kebab-case name.

Each entry is a function of the :class:`~nice_attendre.models.network.Network` returning a
:class:`~nice_attendre.Property`; :func:`monitors_for` says which monitors the network must
run for the chosen properties (pass them in ``Options(monitors=...)``).
"""
from __future__ import annotations

from typing import Callable, Iterable

from nice_attendre.errors import UnknownNameError
from nice_attendre.models.network import MONITORS, Network
from nice_attendre.properties.alerts import (app_exception, direct_paths, no_black_holes,
                                             no_forwarding_loops, one_packet_in_per_flow,
                                             strict_direct_paths)
from nice_attendre.properties.buffers import no_forgotten_packets
from nice_attendre.properties.delivery import delivery
from nice_attendre.properties.flows import no_duplicates, no_reordering
from nice_attendre.properties.routes import intended_paths, no_stale_routes
from nice_attendre.property import Property

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
    "intended-paths": intended_paths,
}

#: Checked when no property is named.
DEFAULT_PROPERTIES = ("no-forwarding-loops", "no-black-holes", "no-forgotten-packets", "direct-paths",
                      "delivery")

#: Always checked, whatever is named.
ALWAYS_CHECKED = "app-exception"


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
    """The properties ``names`` for ``net``, plus ``app-exception`` (always checked)."""
    return tuple(REGISTRY[name](net) for name in check_names(names)) + (app_exception(net),)


def describe(name: str) -> str:
    """What property ``name`` checks: the first paragraph of its factory's docstring, in one line."""
    doc = (REGISTRY[name].__doc__ or "").strip()
    return " ".join(doc.split("\n\n")[0].split())
