"""Unmodified Ryu-API controller apps (through os-ken) as checker apps.

A Ryu app (a subclass of os-ken's ``OSKenApp``, imported as ``ryu.base.app_manager.RyuApp``
or ``os_ken.base.app_manager.OSKenApp``) is wrapped in an adapter
:class:`~nice_attendre.models.app.App` (:mod:`.adapter`): its ``@set_ev_cls`` handlers
are called one at a time with a datapath of the model (:mod:`.datapath`) whose
``send_msg`` becomes the model's commands (:mod:`.translate`); the messages it receives
are real OpenFlow messages parsed by os-ken (:mod:`.wire`) carrying real Ethernet frames
(:mod:`.codec`); its attributes are the app's state (:mod:`.state`); ``time`` is fixed
inside handlers (:mod:`.env`; randomness is reported by the nondeterminism detector). ``ryu.*`` imports are served
by os-ken (:mod:`.imports`).

This package imports os-ken only when an app is adapted: without it, the checker works and
a Ryu app gets one clear error saying what to install (:data:`MISSING`).
"""
from __future__ import annotations

import inspect
from typing import Any

from nice_attendre.models.ryu.imports import MISSING, install as install_ryu_imports

#: The modules and names of the base class of Ryu apps (os-ken's and Ryu's).
_BASES = {("os_ken.base.app_manager", "OSKenApp"), ("ryu.base.app_manager", "RyuApp")}


def is_ryu_app_class(obj: Any) -> bool:
    """Whether ``obj`` is a class deriving from os-ken's ``OSKenApp`` (or Ryu's ``RyuApp``)."""
    return inspect.isclass(obj) and any((base.__module__, base.__name__) in _BASES for base in obj.__mro__[1:])


def adapt(ryu_class: type) -> type:
    """The checker app class wrapping Ryu app class ``ryu_class`` (one per class)."""
    from nice_attendre.models.ryu.adapter import adapt_class

    return adapt_class(ryu_class)


__all__ = ["MISSING", "adapt", "install_ryu_imports", "is_ryu_app_class"]
