"""Discovery of representative packets (``nice-attendre discover``, ``verify --discover``).

NICE's central idea, with a maintained engine: the app's packet-in handler is executed
symbolically (CrossHair, on z3) on one packet whose header fields and network inputs are
symbolic, in concrete app states the model reaches, to find one packet per path through the
handler. Those packets become flows of a scenario (:mod:`nice_attendre.discover.traffic`),
which the model checker then verifies with the app's default traffic.

The modules, one job each: :mod:`~nice_attendre.discover.domain` (what a packet may be),
:mod:`~nice_attendre.discover.handler` (calling the handler, recording lines),
:mod:`~nice_attendre.discover.engine` (CrossHair's path exploration),
:mod:`~nice_attendre.discover.canonical` (a canonical set of packets),
:mod:`~nice_attendre.discover.states` (which app states), :mod:`~nice_attendre.discover.isolate`
(the child process), :mod:`~nice_attendre.discover.run` (the whole),
:mod:`~nice_attendre.discover.report` (how it is shown).

Nothing here imports CrossHair at import time: it is the ``discover`` extra.
"""
from nice_attendre.discover.run import DEFAULT_SECONDS, Discovery, discover

__all__ = ["DEFAULT_SECONDS", "Discovery", "discover"]
