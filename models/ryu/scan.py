"""What a Ryu app uses that the checker's model cannot run, found when the app is loaded.

:func:`refuse_unsupported` reads the app class (``_CONTEXTS``) and the code of every function
its own classes define (not os-ken's base class): the names their code uses (attribute and
global names, nested functions included). A name that only a feature the model lacks has
(threads: ``spawn``; blocking: ``sleep``, ``send_request``; groups; meters) refuses the app
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


def _functions(klass: type) -> Iterator[tuple[str, FunctionType]]:
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
        for name, function in _functions(klass):
            for used in _names(function.__code__):
                feature = FEATURES.get(used)
                if feature is not None:
                    raise refuse(f"{feature[:-1]}, in {klass.__name__}.{name})")


def uses_xids(ryu_class: type, base: type) -> bool:
    """Whether the code of ``ryu_class``'s own classes (up to ``base``) names transaction ids
    (``xid``, ``set_xid``): then the ids its messages get are part of its state."""
    for klass in inspect.getmro(ryu_class):
        if klass is base or not issubclass(klass, base):
            break
        for _name, function in _functions(klass):
            if any(used in ("xid", "set_xid") for used in _names(function.__code__)):
                return True
    return False


__all__ = ["FEATURES", "refuse_unsupported", "uses_xids"]
