"""Switch/controller protocol variants, one module each, selected by name.

A protocol is given as a name (``"attendre"``), a name with parameters
(``"pif:clone=in_port,eth_src,eth_dst,action=drop"``, see
:mod:`~nice_attendre.models.protocols.params`), a variant class, or a :class:`ProtocolSpec`;
:func:`resolve` turns any of them (plus parameters given separately, as the library's
``protocol_options``) into a :class:`ProtocolSpec` with every parameter checked.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from nice_attendre.errors import InputError, UnknownNameError
from nice_attendre.models.protocols.params import Param, resolve_params, split_protocol_list, split_spec


def _registry() -> dict[str, type]:
    from nice_attendre.models.protocols.attendre import Attendre
    from nice_attendre.models.protocols.batch import Batch
    from nice_attendre.models.protocols.buffer import Buffer
    from nice_attendre.models.protocols.openflow import OpenFlow
    from nice_attendre.models.protocols.openflow_b import OpenFlowB
    from nice_attendre.models.protocols.pif import PacketInFiltering

    return {cls.name: cls for cls in (OpenFlow, OpenFlowB, Attendre, PacketInFiltering, Buffer, Batch)}


def protocol_names() -> tuple[str, ...]:
    """Names of the protocol variants: the paper's three in its order, then the other papers'."""
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


def protocol_params(name: str) -> tuple[Param, ...]:
    """The parameters variant ``name`` declares (empty for the paper's three)."""
    return tuple(protocol_class(name).params)


@dataclass(frozen=True)
class ProtocolSpec:
    """A protocol variant and its parameters, every one checked (defaults filled in).

    ``params`` is sorted by the variant's declaration order; a value ``"auto"`` is resolved
    by the variant from the app when the network is built.
    """

    cls: type
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def name(self) -> str:
        return self.cls.name  # type: ignore[attr-defined, no-any-return]

    def label(self) -> str:
        """The protocol in the ``NAME:KEY=VALUE,...`` syntax (only the name when it has no
        parameters); parses back to this spec."""
        return format_spec(self.cls, dict(self.params))


def format_spec(cls: type, params: Mapping[str, Any]) -> str:
    """``NAME:KEY=VALUE,...`` for variant ``cls`` with ``params`` (every declared one)."""
    schema = tuple(cls.params)  # type: ignore[attr-defined]
    if not schema:
        return cls.name  # type: ignore[attr-defined, no-any-return]
    return cls.name + ":" + ",".join(f"{p.name}={p.format(params[p.name])}" for p in schema)  # type: ignore[attr-defined]


def resolve(protocol: Any, options: Mapping[str, Any] | str | None = None) -> ProtocolSpec:
    """The :class:`ProtocolSpec` for ``protocol`` (a name, ``NAME:KEY=VALUE,...``, a variant
    class or a spec) with parameters ``options`` (a mapping or ``KEY=VALUE,...`` text) added.

    Raises :class:`InputError` for an unknown name or parameter, a bad value (naming what is
    allowed) or a parameter given twice."""
    given: dict[str, Any] = {}
    if isinstance(protocol, ProtocolSpec):
        cls = protocol.cls
        given.update(protocol.params)
    elif isinstance(protocol, str):
        name, from_text = split_spec(protocol)
        cls = protocol_class(name)
        given.update(from_text)
    elif isinstance(protocol, type) and hasattr(protocol, "name"):
        cls = protocol
    else:
        raise InputError(f"protocol must be a name or a protocol class, got {protocol!r}")
    if isinstance(options, str):
        options = split_spec(f"{cls.name}:{options}")[1]
    for key, value in (options or {}).items():
        if key in given and not isinstance(protocol, ProtocolSpec):
            raise InputError(f"protocol {cls.name}: {key} given twice")
        given[key] = value
    values = resolve_params(cls.name, tuple(getattr(cls, "params", ())), given)
    return ProtocolSpec(cls, tuple(values.items()))


def split_protocols(text: str) -> list[str]:
    """The protocols of a comma-separated list whose items may have parameters
    (``"openflow,pif:clone=in_port,eth_src,action=drop,attendre"`` -> three protocols)."""
    specs = split_protocol_list(text, protocol_names())
    if not specs:
        raise InputError(f"give at least one protocol, got {text!r}")
    return specs
