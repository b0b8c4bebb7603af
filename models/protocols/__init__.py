"""Switch/controller protocol variants, one module each, selected by name."""
from __future__ import annotations

from nice_attendre.errors import UnknownNameError


def _registry() -> dict[str, type]:
    from nice_attendre.models.protocols.attendre import Attendre
    from nice_attendre.models.protocols.openflow import OpenFlow
    from nice_attendre.models.protocols.openflow_b import OpenFlowB

    return {cls.name: cls for cls in (OpenFlow, OpenFlowB, Attendre)}


def protocol_names() -> tuple[str, ...]:
    """Names of the protocol variants, in the order the paper introduces them."""
    return tuple(_registry())


def protocol_class(name: str) -> type:
    """The class of protocol variant ``name``; :class:`UnknownNameError` if there is none."""
    registry = _registry()
    try:
        return registry[name]
    except KeyError:
        raise UnknownNameError("protocol", name, list(registry)) from None


def protocol_description(name: str) -> str:
    """The first line of the variant's docstring."""
    doc = protocol_class(name).__doc__ or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""
