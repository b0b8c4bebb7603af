"""Values in a Ryu app's code that the model refuses, found when the app is loaded.

:mod:`.scan` refuses an app by the names its code uses (threads, groups, ...). Many
refusals depend on values instead (a masked Ethernet match, an output to the controller
that truncates, a delete restricted to an out-port): :mod:`.translate` meets them only when
a handler sends the message, in the middle of a search. :func:`refuse_literal_values`
reads the source of every function of the app's own classes (their syntax trees) and
evaluates the arguments of the os-ken message and action constructors it calls where they
are constants: literals, OpenFlow constants (``ofp.OFPP_CONTROLLER``, ``OFPCML_NO_BUFFER``
of the app's OpenFlow version), ``ether_types.ETH_TYPE_*``, ``in_proto.IPPROTO_*``, tuples
and ``|`` of those, and a constructor's defaults for the arguments it is not given. What
:mod:`.translate` would refuse is refused now, before the first transition, with
:class:`~nice_attendre.errors.UnsupportedFeature` naming the feature and where
(``Class.method (file.py:line)``).

Values computed at run time cannot be read here; :mod:`.translate` still refuses them when
it meets them, and the search then reports what it explored (see
:mod:`nice_attendre.models.ryu.refusals`).
"""
from __future__ import annotations

import ast
import inspect
import os
import textwrap
from types import FunctionType, ModuleType
from typing import Any, Callable

from os_ken.lib.packet import ether_types, in_proto

from nice_attendre.errors import UnsupportedFeature
from nice_attendre.models.ryu.codec import ETH_TYPE_IPV4, FRAME_LENGTH, IP_PROTO_TCP
from nice_attendre.models.ryu.scan import own_functions
from nice_attendre.models.ryu.translate import _unmasked, refuse

#: A value the scan cannot know (computed at run time).
UNKNOWN = object()

#: Match fields the model runs (1.0 and 1.2+ names); the others are refused.
MATCH_FIELDS = frozenset({"in_port", "eth_src", "eth_dst", "ipv4_src", "ipv4_dst", "tcp_src", "tcp_dst", "eth_type",
                          "ip_proto", "vlan_vid", "ip_dscp", "ip_ecn", "wildcards", "dl_src", "dl_dst", "dl_vlan",
                          "dl_type", "nw_tos", "nw_proto", "nw_src", "nw_dst", "tp_src", "tp_dst", "nw_src_mask",
                          "nw_dst_mask"})
#: Constructors whose leading parameters are the same in every OpenFlow version.
_SAME_POSITIONS = frozenset({"OFPActionOutput", "OFPSetConfig", "OFPPortStatsRequest"})
#: Match fields every packet of the model has one value of: (field, value, meaning).
_CONSTANT_FIELDS = {"eth_type": (ETH_TYPE_IPV4, "IPv4"), "dl_type": (ETH_TYPE_IPV4, "IPv4"),
                    "ip_proto": (IP_PROTO_TCP, "TCP"), "nw_proto": (IP_PROTO_TCP, "TCP"),
                    "ip_dscp": (0, "0"), "ip_ecn": (0, "0"), "nw_tos": (0, "TOS 0")}


class _Reader:
    """Evaluates constant expressions of one app's code for OpenFlow version ``ofproto``."""

    def __init__(self, ofproto: ModuleType) -> None:
        self.ofproto = ofproto

    def value(self, node: ast.expr | None) -> Any:
        """The value of ``node`` if the scan can know it, else :data:`UNKNOWN`."""
        if node is None:
            return UNKNOWN
        if isinstance(node, ast.Constant):
            return node.value
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
        if name is not None:
            for module, prefix in ((self.ofproto, "OFP"), (ether_types, "ETH_TYPE_"), (in_proto, "IPPROTO_")):
                if name.startswith(prefix) and hasattr(module, name):
                    return getattr(module, name)
            return UNKNOWN
        if isinstance(node, ast.Tuple):
            items = tuple(self.value(item) for item in node.elts)
            return UNKNOWN if any(item is UNKNOWN for item in items) else items
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            left, right = self.value(node.left), self.value(node.right)
            if isinstance(left, int) and isinstance(right, int):
                return left | right
        return UNKNOWN


class _Call:
    """A call of an os-ken constructor: its arguments by parameter name (None when the call
    passes ``*args`` or ``**kwargs``, which the scan cannot read)."""

    def __init__(self, node: ast.Call, function: Callable[..., Any] | None, reader: _Reader,
                 positional: bool = True) -> None:
        self.node = node
        self.reader = reader
        self.arguments: dict[str, ast.expr] | None = {}
        self.defaults: dict[str, Any] = {}
        if any(isinstance(arg, ast.Starred) for arg in node.args) or any(kw.arg is None for kw in node.keywords):
            self.arguments = None
            return
        parameters: list[inspect.Parameter] = []
        if function is not None:
            try:
                parameters = [p for p in inspect.signature(function).parameters.values() if p.name != "self"]
            except (TypeError, ValueError):
                parameters = []
        if positional:
            for parameter, arg in zip(parameters, node.args):
                self.arguments[parameter.name] = arg
        elif len(node.args) > 1:  # (datapath first: the other positions depend on the version)
            self.arguments = None
            return
        for keyword in node.keywords:
            self.arguments[keyword.arg] = keyword.value  # type: ignore[index]
        self.defaults = {p.name: p.default for p in parameters if p.default is not inspect.Parameter.empty}

    def given(self, name: str) -> bool:
        return self.arguments is not None and name in self.arguments

    def __getitem__(self, name: str) -> Any:
        """The argument's value (its default when not given), or :data:`UNKNOWN`."""
        if self.arguments is None:
            return UNKNOWN
        if name in self.arguments:
            return self.reader.value(self.arguments[name])
        return self.defaults.get(name, UNKNOWN)


def _callee(node: ast.Call) -> str | None:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _problem(name: str, call: _Call, ofp: ModuleType, parser: ModuleType) -> str | None:
    """What the model refuses in ``call`` of constructor ``name`` (the feature, as
    :mod:`.translate` names it), or None."""
    if name == "OFPSetConfig":
        harmless = ofp.OFPC_FRAG_MASK | getattr(ofp, "OFPC_INVALID_TTL_TO_CONTROLLER", 0)
        flags, length = call["flags"], call["miss_send_len"]
        if isinstance(flags, int) and flags & ~harmless:
            return f"OFPSetConfig flags {flags:#x} (accepted: the IP-fragment flags OFPC_FRAG_*)"
        if isinstance(length, int) and length < FRAME_LENGTH:
            return (f"OFPSetConfig with miss_send_len={length} (truncated packet-ins; accepted: miss_send_len >= "
                    f"{FRAME_LENGTH}, the model's frame length)")
    elif name == "OFPActionOutput":
        port, max_len = call["port"], call["max_len"]
        no_buffer = getattr(ofp, "OFPCML_NO_BUFFER", None)
        if port == ofp.OFPP_CONTROLLER and isinstance(max_len, int) and max_len < FRAME_LENGTH \
                and max_len != no_buffer:
            return f"output to CONTROLLER with max_len={max_len} (truncated packet-ins; frames are {FRAME_LENGTH} bytes)"
    elif name == "OFPMatch":
        return _match_problem(call, ofp)
    elif name == "OFPFlowMod":
        command, table_id, flags = call["command"], call["table_id"], call["flags"]
        if command in (ofp.OFPFC_DELETE, ofp.OFPFC_DELETE_STRICT):
            any_port = getattr(ofp, "OFPP_ANY", getattr(ofp, "OFPP_NONE", None))
            out_port, out_group = call["out_port"], call["out_group"]
            if isinstance(out_port, int) and out_port != any_port:
                return (f"deleting only entries that output to a port (out_port={out_port:#x}; give "
                        f"{'OFPP_ANY and OFPG_ANY' if hasattr(ofp, 'OFPP_ANY') else 'OFPP_NONE'} to delete every "
                        "matching entry)")
            if hasattr(ofp, "OFPG_ANY") and isinstance(out_group, int) and out_group != ofp.OFPG_ANY:
                return f"deleting only entries that output to a group (out_group={out_group:#x}; give OFPG_ANY)"
        if hasattr(ofp, "OFPTT_ALL") and table_id == ofp.OFPTT_ALL:
            return "flow-mods for every table (OFPTT_ALL)"
        if isinstance(flags, int) and hasattr(ofp, "OFPFF_EMERG") and flags & ofp.OFPFF_EMERG:
            return "flow-mod flags OFPFF_EMERG"
    elif name == "OFPPacketOut" and call.given("match"):
        match = call.arguments["match"] if call.arguments is not None else None
        if isinstance(match, ast.Call) and (match.args or any(kw.arg != "in_port" for kw in match.keywords)):
            return "packet-out match fields other than in_port"
    elif name == "OFPPortStatsRequest":
        port_no = call["port_no"]
        if isinstance(port_no, int) and port_no not in (getattr(ofp, "OFPP_NONE", None), getattr(ofp, "OFPP_ANY", None)):
            return f"port statistics of one port (port_no={port_no})"
    return None


#: OpenFlow 1.0: the wildcard bit of each match field.
_WILDCARDS = {"in_port": "OFPFW_IN_PORT", "dl_vlan": "OFPFW_DL_VLAN", "dl_src": "OFPFW_DL_SRC",
              "dl_dst": "OFPFW_DL_DST", "dl_type": "OFPFW_DL_TYPE", "nw_proto": "OFPFW_NW_PROTO",
              "tp_src": "OFPFW_TP_SRC", "tp_dst": "OFPFW_TP_DST", "dl_vlan_pcp": "OFPFW_DL_VLAN_PCP",
              "nw_tos": "OFPFW_NW_TOS", "nw_src": "OFPFW_NW_SRC_ALL", "nw_dst": "OFPFW_NW_DST_ALL"}


def _match_problem(call: _Call, ofp: ModuleType) -> str | None:
    """What the model refuses in a call of OFPMatch (fields given None, or wildcarded by an
    OpenFlow 1.0 ``wildcards`` argument, are not matched)."""
    if call.arguments is None:
        return None
    wildcards = call["wildcards"] if call.given("wildcards") else 0
    if wildcards is UNKNOWN:
        return None
    for field in call.arguments:
        value = call[field]
        if value is None or field == "wildcards":
            continue
        bit = getattr(ofp, _WILDCARDS.get(field, ""), 0) if isinstance(wildcards, int) else 0
        if bit and wildcards & bit == bit:
            continue
        if field == "dl_vlan_pcp":
            return "matching dl_vlan_pcp (the model's frames have no VLAN tag)"
        if field not in MATCH_FIELDS:
            return f"matching {field}"
        if value is UNKNOWN:
            continue
        if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, str) for v in value):
            try:
                _unmasked(field, *value)
            except UnsupportedFeature as exc:
                return _feature(exc)
            continue
        every = _CONSTANT_FIELDS.get(field) or _vlan_none(field, ofp)
        if every is not None and value != every[0]:
            return f"matching {field}={value!r} (every packet of the model has {field}={every[0]!r}: {every[1]})"
    return None


def _vlan_none(field: str, ofp: ModuleType) -> tuple[Any, str] | None:
    """For a VLAN field, the value every packet of the model has (no tag) in ``ofp``'s terms."""
    if field == "vlan_vid" and hasattr(ofp, "OFPVID_NONE"):
        return ofp.OFPVID_NONE, "no VLAN tag"
    if field == "dl_vlan" and hasattr(ofp, "OFP_VLAN_NONE"):
        return ofp.OFP_VLAN_NONE, "no VLAN tag"
    return None


def _feature(exc: UnsupportedFeature) -> str:
    """The feature an error of :func:`.translate.refuse` names."""
    text = str(exc)
    head, tail = "Ryu apps: ", " is not supported by the checker's model"
    return text[len(head):-len(tail)] if text.startswith(head) and text.endswith(tail) else text


def _tree(function: FunctionType) -> tuple[ast.AST, int, str] | None:
    """The syntax tree of ``function``'s source, the line its source starts at and its
    file's name; None when its source cannot be read."""
    try:
        lines, first = inspect.getsourcelines(function)
        path = inspect.getsourcefile(function) or "?"
    except (OSError, TypeError):
        return None
    try:
        return ast.parse(textwrap.dedent("".join(lines))), first, os.path.basename(path)
    except SyntaxError:
        return None


def refuse_literal_values(ryu_class: type, base: type, ofproto: ModuleType, parser: ModuleType) -> None:
    """Raise :class:`UnsupportedFeature` for the first os-ken constructor call in the code of
    ``ryu_class``'s own classes (up to ``base``) whose constant arguments the model refuses
    (see the module docstring), naming the feature and ``Class.method (file:line)``.
    ``ofproto``/``parser`` are the modules of the app's OpenFlow version. Positional
    arguments are read by the version's signatures only when the class names that version
    alone in ``OFP_VERSIONS`` (code for several versions may call another version's
    constructors, whose positions differ): otherwise only keywords are read."""
    reader = _Reader(ofproto)
    versions = getattr(ryu_class, "OFP_VERSIONS", None)
    positional = versions is not None and len(set(versions)) == 1
    for klass in inspect.getmro(ryu_class):
        if klass is base or not issubclass(klass, base):
            break
        for method, function in own_functions(klass):
            found = _tree(function)
            if found is None:
                continue
            tree, first, file = found
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call):
                    continue
                name = _callee(node)
                if name is None or not name.startswith("OFP"):
                    continue
                call = _Call(node, getattr(parser, name, None), reader, positional or name in _SAME_POSITIONS)
                problem = _problem(name, call, ofproto, parser)
                if problem is not None:
                    raise refuse(f"{problem} (in {klass.__name__}.{method}, {file}:{first + node.lineno - 1})")


__all__ = ["MATCH_FIELDS", "UNKNOWN", "refuse_literal_values"]
