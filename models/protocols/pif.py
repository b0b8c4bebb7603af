"""Packet-in filtering (Kotani and Okabe, IEICE 2016: ``papers/002``): pending flow rules and tables.

Before traffic the controller sets a *pending flow rule* in each switch (configuration: the
parameters): a match (which missed packets it applies to), *clone fields* (the header fields
whose values the controller uses), a *predefined action* and a timeout for the entries it
creates. Per rule the switch keeps a *pending flow table* of the clone fields' values of the
packets it sent to the controller (switch state, the ``ext:D`` slot). On a table miss
(paper 3.2, Fig. 1: flow table, then pending flow rules, then the rule's pending table):

* no pending flow rule matches the packet: it is dropped;
* the rule's pending table has no entry with the packet's clone values: an entry is added
  and the packet goes to the controller as OpenFlow does it (buffered, packet-in);
* the pending table has such an entry: the predefined action, and no new entry (3.2, 3.4):
  ``drop``; ``flood`` (out of every port but the in-port); or ``rate-limit``, the paper's
  prototype (a meter before the packet-in, 4): a nondeterministic choice between sending
  the packet-in (the ordinary processing event) and the meter dropping the packet (the
  event :class:`MeterDropsPacket`).

Several pending flow rules (3.3: "If a packet matches multiple rules, the highest priority
rule is applied"), each with its own pending table: ``rules`` gives the rules above the one
of ``match``, ``clone`` and ``action`` (the lowest), highest first, as
``MATCH>CLONE[>ACTION]`` items separated by ``;`` (MATCH: ``any`` or ``FIELD:VALUE`` items,
an IPv4 prefix for ``ip_src``/``ip_dst``; CLONE: the fields; ACTION: the rule's predefined
action, by default ``action``). The paper's configurations of 5.1 (Table 2) are expressed
so, within the fields the model's packets have (no EtherType, no IPv6, so no separate rules
for Neighbor Discovery or IPv6 packets, and an ARP packet is told by its broadcast
destination):

* IP routing: ``rules=eth_dst:ff:ff:ff:ff:ff:ff>eth_src,ip_src,ip_dst;any>eth_src,
  eth_dst,ip_src,ip_dst`` (ARP: the sender's hardware and protocol addresses and the
  target's protocol address, the ARP header's fields the model has; IPv4: Ethernet and IP
  addresses) above the Ethernet switching rule ``match=any,clone=in_port,eth_src,eth_dst``;
* NAPT: a first rule per inside source prefix, ``ip_src:10.0.0.0/24>eth_src,eth_dst,ip_src,
  ip_dst,tp_src,tp_dst,ip_proto``, above the IP routing rules.

The global packet-in rate limit (the prototype's "Rate Control for Controllers", 4: "All
Packet-In messages sent by a switch pass through this mechanism"): ``limit=global`` puts
every packet-in of a table miss through it, a nondeterministic choice between sending it
and the limit dropping the packet (the event :class:`MeterDropsPacket`); a dropped first
packet has still added its pending entry, so its repeats are filtered. ``limit=none`` (the
default) has no such limit. (An explicit output-to-controller action of an entry the app
installed is not metered: the model's filtering is at a table miss.)

Pending entries expire after their timeout ("Timeout for Table", 3.3): since the model has
no clock, by the nondeterministic event :class:`PendingEntryExpires`, enabled for every
entry at any time (``expire=event``), or never within a run (``expire=never``).

Removal when the controller answers. The available text of the paper gives no rule of its
own; it says the entries "are soon expired, and we regard that the controllers replace the
pending flow entries with the flow entries" (6.2). We read "replace" as: when a flow-mod
that adds an entry is installed at the switch, the pending entries for that flow go away
(``remove=flow-mod``, the default): every pending entry whose clone values agree with the
flow-mod's match on each field both name (the new entry and the pending entry overlap).
``remove=never`` leaves them to expiry alone. This, the removal rule, is our
interpretation; the rest follows the paper.

Clone fields by default (``clone=auto``) follow the paper's Table 2 by the kind of app:
``mac-learning`` is Ethernet switching (in_port, eth_src, eth_dst); ``route-flow`` and
``energy-te`` install entries that match a packet's whole header (any in-port), like the
NAPT row's per-flow fields, so their clone fields are the header fields (addresses and
ports): coarser clone fields would filter the first packet of a flow the app would route
differently. Any other app gets the in-port and every header field (only exact repeats are
filtered, as in the authors' earlier work [21]). The pending flow rule of ``match``,
``clone`` and ``action`` matches every packet unless ``match`` says otherwise; rules never
expire within a run (as in the paper's evaluation, 5.2).

The switches are OpenFlow 1.0 switches (a table miss is where filtering applies); apps that
speak OpenFlow 1.3 are refused.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping, NamedTuple, Sequence

from nice_attendre.errors import InputError
from nice_attendre.models.addresses import in_prefix, is_prefix, normalise_prefix
from nice_attendre.models.messages import FlowMod, PacketIn
from nice_attendre.models.packet import HEADER_FIELDS, Flood, Header, Match, Packet
from nice_attendre.models.protocols.lookahead import head_events, head_miss
from nice_attendre.models.protocols.openflow import OpenFlow, SwitchEvents, releases
from nice_attendre.models.protocols.params import MATCH_FIELDS, Param

if TYPE_CHECKING:
    from nice_attendre.models.network import Network, Tx

ACTIONS = ("drop", "flood", "rate-limit")

#: ``clone=auto`` by app name (see the module docstring): Ethernet switching of the paper's
#: Table 2 for MAC learning; the header fields for the apps whose entries match whole headers.
AUTO_CLONE: dict[str, tuple[str, ...]] = {
    "mac-learning": ("in_port", "eth_src", "eth_dst"),
    "route-flow": HEADER_FIELDS,
    "energy-te": HEADER_FIELDS,
}
#: ``clone=auto`` for any other app: every field, so that only exact repeats are filtered.
DEFAULT_CLONE = MATCH_FIELDS

#: ``tx.choice`` of the meter-drop event.
METER_DROP = "meter-drop"

Key = tuple[Any, ...]  # the values of a rule's clone fields, in their order


class PendingRule(NamedTuple):
    """A pending flow rule (paper 3.3): which missed packets it takes (``match``: field values
    they must have), whose values it records (``clone``), what it does to repeats."""

    match: tuple[tuple[str, Any], ...]
    clone: tuple[str, ...]
    action: str

    def matches(self, hdr: Header, in_port: int) -> bool:
        """Whether a packet with ``hdr`` from ``in_port`` matches the rule (an IPv4 prefix
        value matches the addresses in it)."""
        for name, value in self.match:
            field = _field(hdr, in_port, name)
            if field != value and not (is_prefix(value) and in_prefix(field, value)):
                return False
        return True

    def key(self, hdr: Header, in_port: int) -> Key:
        """The packet's clone-field values (the pending table's key)."""
        return tuple(_field(hdr, in_port, name) for name in self.clone)

    def describe_key(self, key: Key) -> str:
        return "{" + ", ".join(f"{name}={value}" for name, value in zip(self.clone, key)) + "}"


def _field(hdr: Header, in_port: int, name: str) -> Any:
    return in_port if name == "in_port" else getattr(hdr, name)


def overlaps(rule: PendingRule, key: Key, match: Match) -> bool:
    """Whether flow-mod match ``match`` agrees with pending entry ``key`` on every field both name."""
    fields = dict(match.fields)
    for name, value in zip(rule.clone, key):
        if name == "in_port":
            if match.in_port is not None and match.in_port != value:
                return False
        elif name in fields and fields[name] != value:
            return False
    return True


PendingTables = tuple[tuple[Key, ...], ...]  # per rule, its entries' keys, sorted

_MATCH = Param("match", "match", (), "")
_CLONE = Param("clone", "list", (), "", choices=MATCH_FIELDS)
_ACTION = Param("action", "choice", "rate-limit", "", choices=ACTIONS)


def _rule_match(value: Any) -> tuple[tuple[str, Any], ...]:
    """A rule's match, parsed, with IPv4 prefixes normalised (``ValueError`` if it is bad)."""
    match = _MATCH._parse(value)
    fields = []
    for name, item in match:
        if is_prefix(item):
            if name not in ("ip_src", "ip_dst"):
                raise ValueError(f"only ip_src and ip_dst take a prefix, not {name}={item!r}")
            item = normalise_prefix(item)
        fields.append((name, item))
    return tuple(fields)


class RulesParam(Param):
    """The ``rules`` parameter: pending flow rules above the one of ``match``, ``clone`` and
    ``action``, highest priority first. Text: ``MATCH>CLONE[>ACTION]`` items separated by
    ``;`` (``none``: no rule); the library also takes a list of mappings with ``match``,
    ``clone`` and ``action`` keys. Its canonical value is a tuple of (match, clone, action),
    ``action`` ``None`` when the rule takes the ``action`` parameter's."""

    def allowed(self) -> str:
        return ("none, or MATCH>CLONE[>ACTION] items separated by ';' (MATCH: any or FIELD:VALUE items; "
                f"CLONE: one or more of {', '.join(MATCH_FIELDS)}; ACTION: one of {', '.join(ACTIONS)})")

    def _parse(self, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip()
            if text in ("", "none"):
                return ()
            items: list[Any] = []
            for part in text.split(";"):
                pieces = [piece.strip() for piece in part.split(">")]
                if len(pieces) not in (2, 3) or not all(pieces):
                    raise ValueError(f"rule {part.strip()!r} is not MATCH>CLONE or MATCH>CLONE>ACTION")
                items.append(dict(zip(("match", "clone", "action"), pieces)))
        elif isinstance(value, (list, tuple)):
            items = list(value)
        else:
            raise ValueError("expected MATCH>CLONE[>ACTION] rules")
        rules = []
        for item in items:
            if isinstance(item, (list, tuple)) and len(item) in (2, 3):
                item = dict(zip(("match", "clone", "action"), item))
            if not isinstance(item, Mapping) or not {"match", "clone"} <= set(item) or \
                    set(item) - {"match", "clone", "action"}:
                raise ValueError("a rule has a match, clone fields and maybe an action")
            action = item.get("action")
            rules.append((_rule_match(item["match"]), _CLONE._parse(item["clone"]),
                          None if action is None else _ACTION._parse(action)))
        return tuple(rules)

    def format(self, value: Any) -> str:
        if not value:
            return "none"
        return ";".join(f"{_MATCH.format(match)}>{','.join(clone)}" + (f">{action}" if action else "")
                        for match, clone, action in value)

    def to_json(self, value: Any) -> Any:
        return [{"match": dict(match), "clone": list(clone), "action": action} for match, clone, action in value]


@dataclass(frozen=True, slots=True)
class MeterDropsPacket:
    """Rate-limit meter: switch ``dpid`` takes the head packet of port ``port``, a repeat of a
    pending entry, and the meter drops it instead of sending the packet-in."""

    dpid: int
    port: int
    rank: ClassVar[int] = 7

    def __str__(self) -> str:
        return f"s{self.dpid}'s packet-in meter drops the packet from port {self.port}"


@dataclass(frozen=True, slots=True)
class PendingEntryExpires:
    """Pending entry ``key`` of rule ``rule`` at switch ``dpid`` times out."""

    dpid: int
    rule: int
    key: Key
    rank: ClassVar[int] = 8

    def __str__(self) -> str:
        return f"s{self.dpid}: pending entry {self.key} of rule {self.rule} expires"


class PacketInFiltering(OpenFlow):
    """Packet-in filtering (Kotani, Okabe): pending flow rules and tables filter repeated packet-ins."""

    name = "pif"
    params = (
        Param("clone", "list", "auto", "the fields whose values a pending entry records; auto: in_port, "
              "eth_src, eth_dst for mac-learning (the paper's Ethernet switching), the header fields for "
              "route-flow and energy-te, every field for other apps", choices=MATCH_FIELDS, auto=True),
        Param("match", "match", (), "the missed packets the (lowest) pending flow rule takes; a packet no "
              "rule takes is dropped"),
        Param("action", "choice", "rate-limit", "predefined action on a packet whose values are pending",
              choices=ACTIONS),
        Param("expire", "choice", "event", "pending entries expire by a nondeterministic event, or never",
              choices=("event", "never")),
        Param("remove", "choice", "flow-mod", "a flow-mod for the flow removes its pending entries, or not",
              choices=("flow-mod", "never")),
        RulesParam("rules", "match", (), "pending flow rules above the one of match, clone and action, "
                   "highest priority first (each with its own pending table)"),
        Param("limit", "choice", "none", "the switch's global packet-in rate limit: none, or global (every "
              "packet-in of a table miss may be dropped by it)", choices=("none", "global")),
    )

    def __init__(self, net: "Network", settings: Mapping[str, Any] | None = None) -> None:
        super().__init__(net, settings)
        if self.version == "1.3":
            raise InputError(f"protocol pif models OpenFlow 1.0 switches (filtering at a table miss); "
                             f"{net.app.describe()} speaks OpenFlow 1.3")
        clone = self.settings["clone"]
        if clone == "auto":
            clone = self.settings["clone"] = AUTO_CLONE.get(net.app.name, DEFAULT_CLONE)
        action = self.settings["action"]
        #: The pending flow rules, highest priority first: ``rules``, then the one of
        #: ``match``, ``clone`` and ``action``.
        self.rules: tuple[PendingRule, ...] = tuple(
            PendingRule(match, fields, rule_action or action) for match, fields, rule_action in self.settings["rules"]
        ) + (PendingRule(_rule_match(self.settings["match"]), clone, action),)
        #: Whether every packet-in of a table miss passes the global rate limit.
        self.global_limit = self.settings["limit"] == "global"
        self._expiries: dict[tuple[int, int], tuple[PendingEntryExpires, ...]] = {}
        self._meter: dict[tuple[int, int, int, int, int], bool] = {}

    def event_handlers(self) -> dict[type, Callable[["Tx", Any], None]]:
        return {**super().event_handlers(), MeterDropsPacket: self.meter_drop,
                PendingEntryExpires: self.expire_pending}

    def alternatives(self) -> dict[Any, type]:
        """A rate-limit meter's drop is an alternative way of processing a repeated packet."""
        return {METER_DROP: MeterDropsPacket} if self.rules[0].action == "rate-limit" else {}

    def initial_switch_state(self, dpid: int) -> PendingTables:
        return ((),) * len(self.rules)

    # ---- table miss ------------------------------------------------------------------

    def rule_for(self, hdr: Header, in_port: int) -> int:
        """Index of the highest-priority rule matching the packet, or -1."""
        for index, rule in enumerate(self.rules):
            if rule.matches(hdr, in_port):
                return index
        return -1

    def table_miss(self, tx: "Tx", dpid: int, in_port: int, packet: Packet, table_id: int) -> None:
        """Flow table missed: the pending flow rules, then the rule's pending table (3.2)."""
        index = self.rule_for(packet.hdr, in_port)
        if index < 0:
            tx.note(lambda: f"s{dpid}: table miss for {packet} from port {in_port}; no pending flow rule matches it")
            self.drop(tx, dpid, packet)
            return
        rule = self.rules[index]
        key = rule.key(packet.hdr, in_port)
        slot = self.net.slot_ext[dpid]
        tables: PendingTables = tx.get(slot)
        if key not in tables[index]:
            entries = tuple(sorted(tables[index] + (key,)))
            tx.put(slot, tables[:index] + (entries,) + tables[index + 1:])
            if tx.choice == METER_DROP:
                tx.note(lambda: f"s{dpid}: table miss for {packet} from port {in_port}; pending entry "
                        f"{rule.describe_key(key)} added; the global packet-in rate limit drops it")
                self.drop(tx, dpid, packet)
                return
            tx.note(lambda: f"s{dpid}: table miss for {packet} from port {in_port}; pending entry "
                    f"{rule.describe_key(key)} added, buffered, packet-in sent")
            self._packet_in(tx, dpid, in_port, packet, table_id)
            return
        action = rule.action
        if action == "drop":
            tx.note(lambda: f"s{dpid}: {packet} from port {in_port} matches pending entry {rule.describe_key(key)}; "
                    "dropped (predefined action)")
            self.drop(tx, dpid, packet)
        elif action == "flood":
            tx.note(lambda: f"s{dpid}: {packet} from port {in_port} matches pending entry {rule.describe_key(key)}; "
                    "flooded (predefined action)")
            self.execute(tx, dpid, in_port, packet, (Flood(),))
        elif tx.choice == METER_DROP:
            tx.note(lambda: f"s{dpid}: {packet} from port {in_port} matches pending entry {rule.describe_key(key)}; "
                    "the rate-limit meter drops it")
            self.drop(tx, dpid, packet)
        else:
            self.ties.reach(METER_DROP)  # where MeterDropsPacket is an alternative (see Ties.reach)
            tx.note(lambda: f"s{dpid}: {packet} from port {in_port} matches pending entry {rule.describe_key(key)}; "
                    "the rate-limit meter lets it through: buffered, packet-in sent")
            self._packet_in(tx, dpid, in_port, packet, table_id)

    def _packet_in(self, tx: "Tx", dpid: int, in_port: int, packet: Packet, table_id: int) -> None:
        buffer_id = self.buffer_packet(tx, dpid, in_port, packet)
        self.send_packet_in(tx, PacketIn(dpid, in_port, buffer_id, packet, table_id))

    # ---- the controller's answer -------------------------------------------------------

    def flow_mod(self, tx: "Tx", dpid: int, msg: FlowMod) -> None:
        """OpenFlow's flow-mod; one that adds an entry then replaces the pending entries it
        overlaps (``remove=flow-mod``; see the module docstring)."""
        entry = self.install(tx, dpid, msg)
        if releases(msg):
            self.release_buffered(tx, dpid, msg.buffer_id, self.release_actions(msg))
        if self.settings["remove"] != "flow-mod" or entry is None:
            return
        slot = self.net.slot_ext[dpid]
        tables: PendingTables = tx.get(slot)
        kept = tuple(tuple(key for key in keys if not overlaps(rule, key, msg.match))
                     for rule, keys in zip(self.rules, tables))
        if kept != tables:
            tx.put(slot, kept)
            removed = [rule.describe_key(key) for rule, keys in zip(self.rules, tables) for key in keys
                       if overlaps(rule, key, msg.match)]
            tx.note(lambda: f"s{dpid}: the new entry replaces pending entr{'y' if len(removed) == 1 else 'ies'} "
                    + ", ".join(removed))

    # ---- the variant's events ----------------------------------------------------------

    def switch_events(self) -> tuple[SwitchEvents, ...]:
        """Meter drops (by switch, port) when a rule rate-limits or the global limit is on,
        then (``expire=event``) expiries (by switch, rule, entry): each decided by the
        switch's own slots."""
        kinds = []
        if self.global_limit or any(rule.action == "rate-limit" for rule in self.rules):
            kinds.append(SwitchEvents(("ext", "table", "ports"), self._meter_events))
        if self.settings["expire"] == "event":
            kinds.append(SwitchEvents(("ext",), self._switch_expiries))
        return tuple(kinds)

    def _meter_events(self, state: Sequence[int], dpid: int) -> tuple[MeterDropsPacket, ...]:
        """A meter drop for each port of ``dpid`` whose head packet would be a packet-in
        through a meter: a repeat of a pending entry of a rate-limited rule, or (the global
        limit) any packet-in of a table miss."""
        slot = self.net.slot_ext[dpid]
        ext = state[slot]
        if not self.global_limit and not any(self.net._values[slot][ext]):
            return ()  # no pending entry: nothing to meter
        return head_events(self.net, state, dpid, ext, self._metered, MeterDropsPacket)

    def _switch_expiries(self, state: Sequence[int], dpid: int) -> tuple[PendingEntryExpires, ...]:
        return self._expiry_events(dpid, state[self.net.slot_ext[dpid]])

    def _metered(self, state: Sequence[int], dpid: int, port: int, table: int, ext: int, queue: int) -> bool:
        """Whether the head packet of ``dpid``:``port`` would be a packet-in through a meter:
        it misses, a rule takes it, and it repeats a pending entry of a rate-limited rule or
        (the global limit) goes to the controller at all (cached per table, pending tables
        and queue)."""
        key = (dpid, port, table, ext, queue)
        found = self._meter.get(key)
        if found is None:
            found = False
            missed = head_miss(self.net, state, dpid, port)
            if missed is not None:
                packet, _table_id = missed
                index = self.rule_for(packet.hdr, port)
                if index >= 0:
                    rule = self.rules[index]
                    tables: PendingTables = self.net._values[self.net.slot_ext[dpid]][ext]
                    pending = rule.key(packet.hdr, port) in tables[index]
                    found = rule.action == "rate-limit" if pending else self.global_limit
            self._meter[key] = found
        return found

    def _expiry_events(self, dpid: int, ext: int) -> tuple[PendingEntryExpires, ...]:
        cached = self._expiries.get((dpid, ext))
        if cached is None:
            tables: PendingTables = self.net._values[self.net.slot_ext[dpid]][ext]
            cached = self._expiries[(dpid, ext)] = tuple(
                PendingEntryExpires(dpid, index, key) for index, keys in enumerate(tables) for key in keys)
        return cached

    def meter_drop(self, tx: "Tx", ev: MeterDropsPacket) -> None:
        """The switch processes the head packet; the rate-limit meter drops it."""
        tx.choice = METER_DROP
        self.switch_packet(tx, ev.dpid, ev.port)

    def expire_pending(self, tx: "Tx", ev: PendingEntryExpires) -> None:
        """A pending entry times out."""
        slot = self.net.slot_ext[ev.dpid]
        tables: PendingTables = tx.get(slot)
        keys = tuple(key for key in tables[ev.rule] if key != ev.key)
        tx.put(slot, tables[:ev.rule] + (keys,) + tables[ev.rule + 1:])
        tx.note(lambda: f"s{ev.dpid}: pending entry {self.rules[ev.rule].describe_key(ev.key)} expires")
