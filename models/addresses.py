"""Host addresses and IPv4 prefixes.

Hosts are named after their MAC address in the model (a frame from ``h1`` to ``h2`` has
``eth_src="h1"``, ``eth_dst="h2"``), which keeps traces readable. Their IPv4 addresses are
real, so that apps can match prefixes: host ``hN`` has ``10.0.x.y`` with ``N = 256x + y``
(``h1`` is ``10.0.0.1``); a host with another name keeps its name as its "address" (it can
be matched exactly, never by a prefix). Prefix matches are written ``10.0.0.0/24``.
"""
from __future__ import annotations

import ipaddress
import re
from functools import lru_cache

#: The IPv4 broadcast address (the destination of broadcast frames).
IP_BROADCAST = "255.255.255.255"


def default_ip(host: str) -> str:
    """The IPv4 address of host ``host`` (see the module docstring)."""
    found = re.fullmatch(r"h(\d+)", host)
    if found and 1 <= int(found.group(1)) <= 0xFFFE:
        number = int(found.group(1))
        return f"10.0.{number // 256}.{number % 256}"
    return host


def is_address(value: object) -> bool:
    """Whether ``value`` is written as an IPv4 address (``a.b.c.d``)."""
    try:
        ipaddress.IPv4Address(value)  # type: ignore[arg-type]
    except ValueError:
        return False
    return True


def is_prefix(value: object) -> bool:
    """Whether ``value`` is written as an IPv4 prefix (``a.b.c.d/n``)."""
    return isinstance(value, str) and "/" in value


def normalise_prefix(value: str) -> str:
    """``value`` as a canonical IPv4 prefix (host bits cleared): ``10.0.0.7/24`` -> ``10.0.0.0/24``.
    Raises ``ValueError`` for anything that is not one."""
    try:
        return str(ipaddress.IPv4Network(value, strict=False))
    except ValueError as exc:
        raise ValueError(f"bad IPv4 prefix {value!r}: {exc}") from None


@lru_cache(maxsize=4096)
def in_prefix(address: object, prefix: str) -> bool:
    """Whether ``address`` (a header value) lies in ``prefix``; host names never do."""
    if not isinstance(address, str):
        return False
    try:
        return ipaddress.IPv4Address(address) in ipaddress.IPv4Network(prefix)
    except ValueError:
        return False


@lru_cache(maxsize=4096)
def prefix_covers(general: str, specific: object) -> bool:
    """Whether every address ``specific`` (an address or a prefix) stands for is in ``general``."""
    if is_prefix(specific):
        outer, inner = ipaddress.IPv4Network(general), ipaddress.IPv4Network(specific)  # type: ignore[arg-type]
        return inner.subnet_of(outer)
    return in_prefix(specific, general)
