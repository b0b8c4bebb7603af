"""Parameters of protocol variants: a declared schema, and the ``NAME:KEY=VALUE,...`` syntax.

A variant declares its parameters as a tuple of :class:`Param` (``params`` class
attribute). A parameter has a name, a kind, a default, what values are allowed and one
line of help. Values come from the command line as text (``-P pif:clone=in_port,eth_src,
action=drop``) or from the library as text or Python values
(``verify(..., protocol="pif", protocol_options={"action": "drop"})``); both are checked
here, and a bad one is one :class:`~nice_attendre.errors.InputError` naming the variant,
the key and what is allowed.

Kinds:

* ``int``: a whole number in [``low``, ``high``];
* ``choice``: one of ``choices``;
* ``list``: a non-empty set of ``choices`` (text: comma-separated), kept in the order of
  ``choices`` so that equal settings are equal values;
* ``match``: header-field values a packet must have (text: ``FIELD:VALUE`` items,
  comma-separated, or ``any``), as a sorted tuple of (field, value) pairs; ``in_port``,
  ``tp_src`` and ``tp_dst`` take whole numbers.

A parameter with ``auto=True`` also accepts ``auto`` (its default): the variant resolves it
from the app it runs (see the variant's docstring).

Syntax of a protocol given with parameters: ``NAME:KEY=VALUE,KEY=VALUE``. A comma-separated
item without ``=`` continues the previous key's list (``clone=in_port,eth_src`` is one key).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from nice_attendre.errors import InputError, UnknownNameError
from nice_attendre.models.packet import HEADER_FIELDS

#: Fields a ``match`` parameter can name: the in-port and the header fields.
MATCH_FIELDS = ("in_port", *HEADER_FIELDS)
#: Fields whose values are whole numbers.
NUMERIC_FIELDS = ("in_port", "tp_src", "tp_dst")

KINDS = ("int", "choice", "list", "match")


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a protocol variant (see the module docstring for the kinds)."""

    name: str
    kind: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    low: int | None = None
    high: int | None = None
    auto: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"parameter {self.name}: unknown kind {self.kind!r}")

    def allowed(self) -> str:
        """What values are allowed, in words (for errors and listings)."""
        if self.kind == "int":
            return f"a whole number from {self.low} to {self.high}"
        if self.kind == "choice":
            text = "one of " + ", ".join(self.choices)
        elif self.kind == "list":
            text = "one or more of " + ", ".join(self.choices)
        else:
            text = "any, or FIELD:VALUE items with FIELD one of " + ", ".join(MATCH_FIELDS)
        return text + (", or auto" if self.auto else "")

    def parse(self, value: Any, variant: str) -> Any:
        """The canonical value of ``value`` (text, or a Python value from the library);
        :class:`InputError` naming ``variant``, the key and what is allowed if it is bad."""
        if self.auto and value == "auto":
            return "auto"
        try:
            return self._parse(value)
        except (ValueError, TypeError) as exc:
            detail = f" ({exc})" if str(exc) else ""
            raise InputError(f"protocol {variant}: bad value {value!r} for {self.name}{detail}; "
                             f"allowed: {self.allowed()}") from None

    def _parse(self, value: Any) -> Any:
        if self.kind == "int":
            if isinstance(value, bool):
                raise ValueError("")
            number = _whole(value) if isinstance(value, str) else value
            if not isinstance(number, int) or not self.low <= number <= self.high:  # type: ignore[operator]
                raise ValueError("")
            return number
        if self.kind == "choice":
            text = value.strip() if isinstance(value, str) else value
            if text not in self.choices:
                raise ValueError("")
            return text
        if self.kind == "list":
            items = _items(value)
            unknown = [item for item in items if item not in self.choices]
            if unknown:
                raise ValueError(f"{unknown[0]!r} is not one of them")
            if not items:
                raise ValueError("give at least one")
            return tuple(choice for choice in self.choices if choice in items)
        return _parse_match(value)

    def format(self, value: Any) -> str:
        """``value`` as text in the ``KEY=VALUE`` syntax (parses back to ``value``)."""
        if self.kind == "list" and value != "auto":
            return ",".join(value)
        if self.kind == "match" and value != "auto":
            return ",".join(f"{field}:{item}" for field, item in value) if value else "any"
        return str(value)

    def to_json(self, value: Any) -> Any:
        """``value`` as JSON data: numbers and words as they are, lists as lists, a match as
        an object."""
        if self.kind == "list" and value != "auto":
            return list(value)
        if self.kind == "match" and value != "auto":
            return dict(value)
        return value

    def describe(self) -> str:
        """One line for listings: name, default, help, allowed values."""
        return f"{self.name} (default {self.format(self.default)}): {self.help}; allowed: {self.allowed()}"


def _whole(text: str) -> int | None:
    """``text`` as a whole number (signs allowed), or None if it is not one."""
    text = text.strip()
    return int(text) if text.lstrip("+-").isdecimal() else None


def _items(value: Any) -> list[str]:
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    if isinstance(value, (list, tuple, set, frozenset)):
        if not all(isinstance(item, str) for item in value):
            raise ValueError("items must be names")
        return [item.strip() for item in value]
    raise ValueError("expected comma-separated names")


def _parse_match(value: Any) -> tuple[tuple[str, Any], ...]:
    if isinstance(value, str):
        text = value.strip()
        if text in ("", "any"):
            return ()
        pairs: list[tuple[str, Any]] = []
        for item in text.split(","):
            field, colon, raw = item.strip().partition(":")
            if not colon or not raw.strip():
                raise ValueError(f"{item.strip()!r} is not FIELD:VALUE")
            pairs.append((field.strip(), raw.strip()))
    elif isinstance(value, Mapping):
        pairs = list(value.items())
    elif isinstance(value, (list, tuple)):
        pairs = [tuple(pair) for pair in value]  # type: ignore[misc]
    else:
        raise ValueError("expected FIELD:VALUE items")
    result: dict[str, Any] = {}
    for field, raw in pairs:
        if field not in MATCH_FIELDS:
            raise ValueError(f"{field!r} is not a field")
        if field in result:
            raise ValueError(f"{field} given twice")
        if field in NUMERIC_FIELDS:
            number = _whole(raw) if isinstance(raw, str) else raw
            if isinstance(number, bool) or not isinstance(number, int) or number < 0:
                raise ValueError(f"{field} takes a whole number")
            result[field] = number
        else:
            if not isinstance(raw, str):
                raise ValueError(f"{field} takes a name")
            result[field] = raw
    return tuple(sorted(result.items()))


def split_spec(text: str) -> tuple[str, dict[str, str]]:
    """``"pif:clone=in_port,eth_src,action=drop"`` -> ``("pif", {"clone": "in_port,eth_src",
    "action": "drop"})``; :class:`InputError` for malformed text."""
    name, _colon, rest = text.partition(":")
    name = name.strip()
    options: dict[str, list[str]] = {}
    key: str | None = None
    for token in rest.split(","):
        token = token.strip()
        if not token:
            continue
        if "=" in token:
            key, _eq, value = token.partition("=")
            key = key.strip()
            if not key:
                raise InputError(f"protocol {text!r}: {token!r} has no key before '='")
            if key in options:
                raise InputError(f"protocol {name}: {key} given twice")
            options[key] = [value.strip()]
        elif key is None:
            raise InputError(f"protocol {text!r}: expected KEY=VALUE after '{name}:', got {token!r}")
        else:
            options[key].append(token)
    return name, {key: ",".join(values) for key, values in options.items()}


def split_protocol_list(text: str, names: Iterable[str]) -> list[str]:
    """Split a comma-separated list of protocols, each maybe with parameters
    (``"openflow,pif:clone=in_port,eth_src,action=drop,attendre"``): an item starts a new
    protocol when it is a protocol name or ``NAME:...`` with NAME a protocol name, or when
    the protocol before it has no parameters; any other item continues the parameters of
    the protocol before it."""
    known = set(names)
    specs: list[str] = []
    for token in (item.strip() for item in text.split(",")):
        if not token:
            continue
        head = token.partition(":")[0].strip()
        if not specs or head in known or ":" not in specs[-1]:
            specs.append(token)
        else:
            specs[-1] += "," + token
    return specs


def resolve_params(variant: str, schema: tuple[Param, ...], given: Mapping[str, Any]) -> dict[str, Any]:
    """Every parameter of ``schema``: the ``given`` ones checked and made canonical, the others
    at their defaults. Unknown keys are an :class:`UnknownNameError`."""
    if given and not schema:
        raise InputError(f"protocol {variant} takes no parameters (got {', '.join(sorted(given))})")
    by_name = {param.name: param for param in schema}
    for key in given:
        if key not in by_name:
            raise UnknownNameError(f"{variant} parameter", key, list(by_name))
    return {param.name: param.parse(given[param.name], variant) if param.name in given else param.default
            for param in schema}
