"""Controller apps shipped with nice-attendre, registered by name.

Buggy variants are constructor parameters (``bug=...``), never copied files.
"""
from __future__ import annotations

import importlib

from nice_attendre.errors import UnknownNameError

#: name -> "module:Class" (imported on first use).
REGISTRY: dict[str, str] = {
    "route-flow": "nice_attendre.apps.route_flow:RouteFlow",
    "mac-learning": "nice_attendre.apps.mac_learning:MacLearning",
    "energy-te": "nice_attendre.apps.energy_te:EnergyTE",
}


def app_names() -> tuple[str, ...]:
    """Names of the registered apps."""
    return tuple(REGISTRY)


def app_class(name: str) -> type:
    """The class of registered app ``name``; :class:`UnknownNameError` if there is none."""
    try:
        target = REGISTRY[name]
    except KeyError:
        raise UnknownNameError("app", name, list(REGISTRY)) from None
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)
