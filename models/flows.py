"""Traffic as flows: who sends how many packets to whom, with which header fields and answers.

A :class:`Flow` is one stream of packets from one host: to another host, to an IPv4 address
no host has (a virtual IP, which an app such as a load balancer rewrites), or broadcast (an
ARP-like request that the ``target`` host answers). Each host sends its flows at once: the
packets of one flow leave in order, the flows of a host interleave in every way. Hosts do
not wait for answers before sending (an open-loop traffic model).

Answers (``reply``):

* ``none``: the destination answers nothing;
* ``echo``: it answers each packet with a reply (header reversed);
* ``tcp``: a handshake: the first packet is a SYN, answered by a SYN-ACK, which the sender
  answers with an ACK; later packets are data, each answered by a reply.

Flows are given as objects, as strings (``h1->h2:packets=2,proto=tcp,sport=1000,dport=80,reply=tcp``,
``h1->broadcast:target=h2``) or in a TOML file (:func:`load_file`)::

    [[flow]]
    from = "h1"
    to = "h2"
    packets = 2
    proto = "tcp"      # tcp, udp or omitted
    sport = 1000
    dport = 80
    reply = "tcp"      # none, echo (the default) or tcp

    [[move]]           # host mobility: h2 may move once to a new free port of s1
    host = "h2"
    to = "s1"
"""
from __future__ import annotations

import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Iterable, Mapping

from nice_attendre.errors import InputError
from nice_attendre.input_files import SETTINGS_BYTES, read_text
from nice_attendre.models.addresses import IP_BROADCAST, default_ip, is_address
from nice_attendre.models.packet import BROADCAST, Header
from nice_attendre.models.topology import Topology

#: The answer policies a flow may ask of its destination.
REPLIES = ("none", "echo", "tcp")
#: IP protocol numbers of the transport names a flow may give.
PROTOCOLS = {"tcp": 6, "udp": 17}
#: Packets one flow may send (a state space grows exponentially with them; this is a guard
#: against typos, far above what a search can finish).
MAX_PACKETS = 1000
#: The destination name of broadcast flows.
BROADCAST_NAME = "broadcast"


@dataclass(frozen=True)
class Flow:
    """One stream of packets from host ``src`` to host ``dst`` (or ``"broadcast"``)."""

    src: str
    dst: str
    packets: int = 1
    proto: str | None = None
    sport: int = 0
    dport: int = 0
    ip_src: str | None = None
    ip_dst: str | None = None
    reply: str = "echo"
    target: str | None = None

    def check(self, topology: Topology) -> None:
        """Raise :class:`InputError` unless this flow makes sense on ``topology``."""
        self._check_types()
        hosts = topology.hosts
        if self.src not in hosts:
            raise InputError(f"flow {self}: unknown sender {self.src!r} (hosts: {', '.join(hosts)})")
        if self.dst != BROADCAST_NAME and self.dst not in hosts:
            if not is_address(self.dst):
                raise InputError(f"flow {self}: unknown destination {self.dst!r} (hosts: {', '.join(hosts)}, "
                                 f"{BROADCAST_NAME}, or an IPv4 address such as a virtual IP)")
            owner = [h for h in hosts if default_ip(h) == self.dst]
            if owner:
                raise InputError(f"flow {self}: {self.dst} is {owner[0]}'s address: write {owner[0]}")
        if self.dst == self.src:
            raise InputError(f"flow {self}: a host cannot send to itself")
        if isinstance(self.packets, bool) or not isinstance(self.packets, int) or not 1 <= self.packets <= MAX_PACKETS:
            raise InputError(f"flow {self}: packets must be a whole number from 1 to {MAX_PACKETS}, "
                             f"got {self.packets!r}")
        for name in ("sport", "dport"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 65535:
                raise InputError(f"flow {self}: {name} must be a port number from 0 to 65535, got {value!r}")
        if self.proto is not None and self.proto not in PROTOCOLS:
            raise InputError(f"flow {self}: proto must be one of {', '.join(PROTOCOLS)}, got {self.proto!r}")
        if self.reply not in REPLIES:
            raise InputError(f"flow {self}: reply must be one of {', '.join(REPLIES)}, got {self.reply!r}")
        if self.reply == "tcp" and self.proto not in (None, "tcp"):
            raise InputError(f"flow {self}: a TCP handshake needs proto=tcp")
        if self.dst == BROADCAST_NAME:
            if self.reply == "tcp":
                raise InputError(f"flow {self}: a broadcast cannot open a TCP connection")
            if self.target is not None and self.target not in hosts:
                raise InputError(f"flow {self}: unknown target {self.target!r}")
            if self.target == self.src:
                raise InputError(f"flow {self}: a host cannot ask for itself")
        elif self.target is not None:
            raise InputError(f"flow {self}: target is for broadcast flows only")

    def _check_types(self) -> None:
        """Raise :class:`InputError` for a field of another type than it must have (a TOML
        table or array where a name is expected: it would reach a packet header)."""
        for name in ("src", "dst", "reply"):
            if not isinstance(getattr(self, name), str):
                raise InputError(f"flow {self}: {_FIELD_NAMES.get(name, name)} must be a string, "
                                 f"got {_kind(getattr(self, name))}")
        for name in ("proto", "target", "ip_src", "ip_dst"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise InputError(f"flow {self}: {name} must be a string, got {_kind(value)}")
        for name in ("ip_src", "ip_dst"):
            value = getattr(self, name)
            if value is not None and not is_address(value):
                raise InputError(f"flow {self}: {name} must be an IPv4 address such as 10.0.0.9, got {value!r}")

    def header(self) -> Header:
        """The header of this flow's packets (host names stand for MAC addresses; IP
        addresses are the given ones, or the hosts' own: see
        :func:`~nice_attendre.models.addresses.default_ip`)."""
        proto = PROTOCOLS.get(self.proto or ("tcp" if self.reply == "tcp" else ""), 0)
        ip_src = self.ip_src or default_ip(self.src)
        if self.dst == BROADCAST_NAME:
            ip_dst = self.ip_dst or (default_ip(self.target) if self.target is not None else IP_BROADCAST)
            return Header(self.src, BROADCAST, ip_src, ip_dst, self.sport, self.dport, proto)
        # A destination given by address (a virtual IP) has no host: its "MAC" is its address.
        return Header(self.src, self.dst, ip_src, self.ip_dst or default_ip(self.dst), self.sport, self.dport, proto)

    def script(self) -> tuple[tuple[Header, str], ...]:
        """The packets the sender sends, as (header, kind): the kind tells the receiver how
        to answer (see :data:`nice_attendre.models.hosts.REPLY_KIND`)."""
        hdr = self.header()
        if self.dst == BROADCAST_NAME:
            kind = "arp" if self.target is not None else "broadcast"
            return ((hdr, kind),) * self.packets
        if self.reply == "tcp":
            return ((hdr, "syn"),) + ((hdr, "data"),) * (self.packets - 1)
        return ((hdr, "data" if self.reply == "echo" else "oneway"),) * self.packets

    def describe(self) -> str:
        """One phrase: ``h1 sends 2 tcp packets to h2 (1000->80; handshake)``."""
        proto = f"{self.proto} " if self.proto else ""
        noun = f"{proto}packet{'s' if self.packets != 1 else ''}"
        extra = []
        if self.sport or self.dport:
            extra.append(f"{self.sport}->{self.dport}")
        if self.dst == BROADCAST_NAME:
            extra.append(f"{self.target} answers" if self.target else "nobody answers")
            return f"{self.src} broadcasts {self.packets} {noun} ({'; '.join(extra)})"
        extra.append({"none": "no answers", "echo": "each answered", "tcp": "handshake"}[self.reply])
        return f"{self.src} sends {self.packets} {noun} to {self.dst} ({'; '.join(extra)})"

    def __str__(self) -> str:
        options = [f"{f.name}={getattr(self, f.name)}" for f in fields(self)[2:]
                   if getattr(self, f.name) != f.default]
        return f"{self.src}->{self.dst}" + (":" + ",".join(options) if options else "")


#: What a field is called in messages, where it is not its own name.
_FIELD_NAMES = {"src": "the sender ('from')", "dst": "the destination ('to')"}


def _kind(value: Any) -> str:
    """What ``value`` is, in TOML's words, for messages."""
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return f"{type(value).__name__} {value!r}"


_INT_KEYS = ("packets", "sport", "dport")
_KEYS = tuple(f.name for f in fields(Flow)[2:])


def _flow(src: str, dst: str, options: Mapping[str, Any], where: str) -> Flow:
    unknown = sorted(set(options) - set(_KEYS))
    if unknown:
        raise InputError(f"{where}: unknown flow option {unknown[0]!r} (known: {', '.join(_KEYS)})")
    values: dict[str, Any] = {}
    for key, value in options.items():
        if key in _INT_KEYS and isinstance(value, str):
            if not re.fullmatch(r"\d{1,9}", value.strip()):
                raise InputError(f"{where}: {key} must be a whole number, got {value!r}")
            value = int(value)
        values[key] = value
    return Flow(src, dst, **values)


def parse_flow(spec: str) -> Flow:
    """A flow from ``SRC->DST[:key=value,...]`` (the command line's ``--flow``)."""
    head, _, rest = spec.partition(":")
    src, arrow, dst = head.partition("->")
    if not arrow or not src.strip() or not dst.strip():
        raise InputError(f"bad flow {spec!r}: expected SRC->DST[:key=value,...], e.g. h1->h2:packets=2")
    options: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in rest.split(","))) if rest else ():
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InputError(f"bad flow {spec!r}: expected key=value, got {pair!r}")
        options[key.strip()] = value.strip()
    return _flow(src.strip(), dst.strip(), options, f"flow {spec!r}")


def load_file(path: str | Path) -> tuple[tuple[Flow, ...], tuple[tuple[str, str], ...]]:
    """The flows and moves of a TOML scenario file (see the module docstring)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    path = Path(path)
    # A regular file only (not /dev/zero, a FIFO), of at most SETTINGS_BYTES.
    text = read_text(path, "scenario file", SETTINGS_BYTES)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"scenario file {str(path)!r} is not valid TOML: {exc}") from None
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise InputError(f"scenario file {str(path)!r} nests arrays or tables too deeply") from None
    except ValueError as exc:  # a number tomllib cannot convert (too many digits)
        raise InputError(f"scenario file {str(path)!r} is not valid TOML: {exc}") from None
    unknown = sorted(set(data) - {"flow", "move"})
    if unknown:
        raise InputError(f"scenario file {str(path)!r}: unknown section {unknown[0]!r} (known: flow, move)")
    flows = []
    for index, entry in enumerate(_tables(data.get("flow", []), path, "flow"), start=1):
        where = f"scenario file {str(path)!r}, flow {index}"
        missing = [key for key in ("from", "to") if key not in entry]
        if missing:
            raise InputError(f"{where}: needs {' and '.join(repr(k) for k in missing)}")
        for key in ("from", "to"):
            if not isinstance(entry[key], str):
                raise InputError(f"{where}: {key!r} must be a host name (a string), got {_kind(entry[key])}")
        options = {k: v for k, v in entry.items() if k not in ("from", "to")}
        flows.append(_flow(entry["from"], entry["to"], options, where))
    moves = []
    for index, entry in enumerate(_tables(data.get("move", []), path, "move"), start=1):
        if set(entry) != {"host", "to"}:
            raise InputError(f"scenario file {str(path)!r}, move {index}: needs exactly 'host' and 'to'")
        for key in ("host", "to"):
            if not isinstance(entry[key], str):
                raise InputError(f"scenario file {str(path)!r}, move {index}: {key!r} must be a name (a string), "
                                 f"got {_kind(entry[key])}")
        moves.append((entry["host"], entry["to"]))
    if not flows:
        raise InputError(f"scenario file {str(path)!r} has no [[flow]]")
    return tuple(flows), tuple(moves)


def _tables(value: Any, path: Path, name: str) -> list[Mapping[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise InputError(f"scenario file {str(path)!r}: {name} must be an array of tables ([[{name}]])")
    return value


def as_flows(items: Iterable[Any]) -> tuple[Flow, ...]:
    """Flows from :class:`Flow` objects and ``--flow`` strings, mixed."""
    result = []
    for item in items:
        if isinstance(item, Flow):
            result.append(item)
        elif isinstance(item, str):
            result.append(parse_flow(item))
        else:
            raise InputError(f"not a flow: {item!r} (give a Flow or a string like 'h1->h2:packets=2')")
    return tuple(result)
