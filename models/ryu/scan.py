"""What a Ryu app uses that the checker's model cannot run, found when the app is loaded.

:func:`refuse_unsupported` reads the app class (``_CONTEXTS``) and the code of every function
its own classes define (not os-ken's base class): the names their code uses (attribute and
global names, nested functions included). A name that only a feature the model lacks has
(threads: ``spawn``; blocking: ``sleep``, ``send_request``; groups; meters; OpenFlow
messages, actions and instructions other than :data:`SUPPORTED`; strict flow-mod commands,
action sets, output to NORMAL/LOCAL/IN_PORT) refuses the app
with :class:`UnsupportedFeature` naming the feature and the method, before the search
starts: never mid-search. The scan reads names, not behaviour: an app that defines such a
name for another purpose is refused too (the message says where, so the user can see why).
"""
from __future__ import annotations

import inspect
from types import CodeType, FunctionType
from typing import Iterator

from nice_attendre.models.ryu.translate import refuse

#: A name in an app's code -> the feature it belongs to (ending with ")").
FEATURES = {
    "spawn": "starting threads (hub.spawn)",
    "spawn_after": "starting threads (hub.spawn_after)",
    "Thread": "starting threads (threading.Thread.start)",
    "sleep": "blocking (hub.sleep, time.sleep)",
    "send_request": "blocking requests (send_request, as os_ken.app.ofctl.api makes)",
    "OFPGroupMod": "groups (OFPGroupMod)",
    "OFPActionGroup": "groups (OFPActionGroup)",
    "OFPGroupStatsRequest": "groups (OFPGroupStatsRequest)",
    "OFPGroupDescStatsRequest": "groups (OFPGroupDescStatsRequest)",
    "OFPMeterMod": "meters (OFPMeterMod)",
    "OFPInstructionMeter": "meters (OFPInstructionMeter)",
    "OFPActionMeter": "meters (OFPActionMeter)",
    "OFPMeterStatsRequest": "meters (OFPMeterStatsRequest)",
    "WSGIApplication": "WSGI (ryu.app.wsgi: a web server for REST APIs)",
}


#: OpenFlow names the model runs (every other message, action and instruction is refused).
SUPPORTED = frozenset({"OFPFlowMod", "OFPBarrierRequest", "OFPPortStatsRequest", "OFPActionOutput",
                       "OFPInstructionActions", "OFPInstructionGotoTable"})
_CONSTANTS = {
    "OFPIT_WRITE_ACTIONS": "action sets (OFPIT_WRITE_ACTIONS)",
    "OFPIT_CLEAR_ACTIONS": "action sets (OFPIT_CLEAR_ACTIONS)",
    "OFPFC_MODIFY_STRICT": "strict flow-mod commands (OFPFC_MODIFY_STRICT)",
    "OFPFC_DELETE_STRICT": "strict flow-mod commands (OFPFC_DELETE_STRICT)",
    "OFPP_NORMAL": "output to the switch's own forwarding (OFPP_NORMAL)",
    "OFPP_LOCAL": "output to the switch's local port (OFPP_LOCAL)",
    "OFPP_IN_PORT": "output to the in-port (OFPP_IN_PORT)",
}


def feature(name: str) -> str | None:
    """The unsupported feature a name in an app's code belongs to (ending with ")"), or None."""
    known = FEATURES.get(name)
    if known is not None:
        return known
    if name in _CONSTANTS:
        return _CONSTANTS[name]
    if name in SUPPORTED or not name.startswith("OFP"):
        return None
    if name.startswith("OFPAction"):
        return f"actions other than output ({name}: header rewriting, queues, ...)"
    if name.startswith("OFPInstruction"):
        return f"instructions other than apply-actions and goto-table ({name})"
    if name.endswith(("Request", "Mod")) and name[3:4].isupper():
        return f"{name} messages (the checker's switches take flow-mods, packet-outs, barriers, port statistics)"
    return None


def own_functions(klass: type) -> Iterator[tuple[str, FunctionType]]:
    """(name, function) of every function ``klass`` itself defines, in name order."""
    for name, value in sorted(vars(klass).items()):
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        elif isinstance(value, property):
            value = value.fget
        if isinstance(value, FunctionType):
            yield name, value


def _names(code: CodeType) -> Iterator[str]:
    """The global and attribute names ``code`` and the code nested in it use."""
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _names(const)


def refuse_unsupported(ryu_class: type, base: type) -> None:
    """Raise :class:`UnsupportedFeature` for the first feature the model lacks that
    ``ryu_class`` uses (its classes up to ``base``, os-ken's app class), naming it and where."""
    contexts = getattr(ryu_class, "_CONTEXTS", None)
    if contexts:
        raise refuse(f"contexts (_CONTEXTS: {', '.join(sorted(contexts))}, in {ryu_class.__name__})")
    for klass in inspect.getmro(ryu_class):
        if klass is base or not issubclass(klass, base):
            break
        for name, function in own_functions(klass):
            for used in _names(function.__code__):
                found = feature(used)
                if found is not None:
                    raise refuse(f"{found[:-1]}, in {klass.__name__}.{name})")


def names(ryu_class: type, base: type) -> frozenset[str]:
    """Every name the code of ``ryu_class``'s own classes (up to ``base``) uses."""
    found: set[str] = set()
    for klass in inspect.getmro(ryu_class):
        if klass is base or not issubclass(klass, base):
            break
        for _name, function in own_functions(klass):
            found.update(_names(function.__code__))
    return frozenset(found)


def uses_xids(ryu_class: type, base: type) -> bool:
    """Whether the code of ``ryu_class``'s own classes (up to ``base``) names transaction ids
    (``xid``, ``set_xid``): then the ids its messages get are part of its state."""
    for klass in inspect.getmro(ryu_class):
        if klass is base or not issubclass(klass, base):
            break
        for _name, function in own_functions(klass):
            if any(used in ("xid", "set_xid") for used in _names(function.__code__)):
                return True
    return False


__all__ = ["FEATURES", "SUPPORTED", "feature", "names", "own_functions", "refuse_unsupported", "uses_xids"]
