"""The adapter: a Ryu app class as a checker :class:`~nice_attendre.models.app.App`.

:func:`adapt_class` makes one subclass of :class:`RyuAdapter` per Ryu app class, named like
it (so traces say ``SimpleSwitch13.on_packet_in``). Building it builds the Ryu app (its
constructor gets the app options as keyword arguments). Then:

* **Options.** App options (``-o KEY=VALUE``) are keyword arguments of the Ryu app's
  constructor; one that no ``__init__`` of the app's classes names is an error (os-ken's
  own constructor would swallow it).
* **State.** The app's own attributes (every instance attribute but os-ken's framework ones)
  are frozen into a canonical hashable value after each handler call and restored before the
  next (:mod:`.state`); the Ryu object itself is configuration, reused for every call.
* **Events.** The ``@set_ev_cls`` handlers are called synchronously, one at a time, in name
  order (as os-ken registers them), honouring their dispatcher phases:
  ``EventOFPSwitchFeatures`` (CONFIG phase) then ``EventOFPStateChange`` (MAIN) when a switch
  joins; ``EventOFPPacketIn``, ``EventOFPPortStatsReply``, ``EventOFPBarrierReply``,
  ``EventOFPFlowRemoved`` (an entry installed with OFPFF_SEND_FLOW_REM expired or was
  deleted), ``EventOFPPortStatus`` (a link went down or up: ``--fault link``) and
  ``EventOFPErrorMsg`` (a flow-mod with OFPFF_CHECK_OVERLAP refused) (MAIN)
  when the controller handles them. No other event occurs in the model (echo, ...), so
  handlers for other events are never called.
* **Transaction ids.** Each datapath numbers the messages the app sends from 1, as os-ken's
  does (``datapath.set_xid``), over the whole run. The counters are state only when the
  app's code names ``xid`` or ``set_xid`` (it may then tell messages apart by them): kept
  per switch in the frozen state (:data:`XIDS`; switches that sent nothing left out), so
  equal app states with different message histories differ, as they would for the app. An
  app that never reads them cannot tell, so for it the counters restart at every handler
  call and cost no states (DESIGN: no monotone counters in the state).
* **OpenFlow version.** The highest of 1.0, 1.2, 1.3, 1.4 and 1.5 in the class's
  ``OFP_VERSIONS`` (1.3 when it is None); the switches speak it, with the semantics of
  :data:`VERSIONS` (``App.openflow_version``).
* **Refused** (:class:`UnsupportedFeature`, naming the feature) when the class is adapted,
  before any transition, by reading its code: the names it uses (:mod:`.scan`) and the
  constant arguments of the os-ken messages it builds (:mod:`.literals`); and, as a safeguard, when
  called: ``_CONTEXTS``, threads
  (``hub.spawn`` in the constructor, ``start`` or a handler), blocking (``hub.sleep``,
  ``time.sleep``), ``send_request`` (blocking requests, as ``ofctl.api`` makes),
  ``send_event``/``send_event_to_observers`` (events between apps), other OpenFlow
  versions, and what :mod:`.translate` refuses.
"""
from __future__ import annotations

import inspect
import os
from functools import lru_cache
from typing import Any, Callable, ClassVar

from os_ken.base import app_manager
from os_ken.controller import handler as ryu_handler
from os_ken.controller import ofp_event
from os_ken.ofproto import ofproto_protocol, ofproto_v1_0, ofproto_v1_3

from nice_attendre.errors import UnsupportedFeature
from nice_attendre.models import determinism
from nice_attendre.models.app import App, Out
from nice_attendre.models.messages import BarrierReply, Error, FlowRemoved, PacketIn, PortStatsReply, PortStatus
from nice_attendre.models.ryu import env
from nice_attendre.models.ryu.codec import Codec
from nice_attendre.models.ryu.datapath import CheckerDatapath
from nice_attendre.models.ryu.literals import refuse_literal_values
from nice_attendre.models.ryu.scan import names, refuse_unsupported, uses_xids
from nice_attendre.models.ryu.state import Frozen, freeze_attributes, restore_attributes
from nice_attendre.models.ryu.translate import Translator, refuse
from nice_attendre.models.ryu.wire import Wire
from nice_attendre.models.topology import Topology

#: Wire version -> the version's name.
NAMES = {ofproto_v1_0.OFP_VERSION: "1.0", 0x03: "1.2", ofproto_v1_3.OFP_VERSION: "1.3", 0x05: "1.4", 0x06: "1.5"}
#: Wire version -> the model's switch semantics (``App.openflow_version``): OpenFlow 1.2's
#: switches send a packet-in on a table miss (its default table configuration,
#: OFPTC_TABLE_MISS_CONTROLLER), as the model's 1.0 switches do, and otherwise behave as 1.3's
#: (no exact-match precedence; a flow-mod's buffered packet goes through the flow table):
#: "1.2"; 1.4 and 1.5 keep 1.3's table-miss entry.
VERSIONS = {ofproto_v1_0.OFP_VERSION: "1.0", 0x03: "1.2", ofproto_v1_3.OFP_VERSION: "1.3", 0x05: "1.3", 0x06: "1.3"}

#: The name of the datapaths' transaction-id counters in the frozen state (put first; an
#: app attribute of that name is refused).
XIDS = "datapath_xid"

#: App methods that would need a running os-ken: refused when called.
_REFUSED_METHODS = {
    "send_request": "blocking requests (send_request, as os_ken.app.ofctl.api makes)",
    "send_event": "events between apps (send_event)",
    "send_event_to_observers": "events between apps (send_event_to_observers)",
    "reply_to_request": "replies to requests between apps (reply_to_request)",
}

#: The events (and phases) each of the checker's handler calls delivers.
_EVENTS_OF_CALL = {
    "on_switch_join": (("EventOFPSwitchFeatures", ryu_handler.CONFIG_DISPATCHER),
                       ("EventOFPStateChange", ryu_handler.MAIN_DISPATCHER)),
    "on_packet_in": (("EventOFPPacketIn", ryu_handler.MAIN_DISPATCHER),),
    "on_port_stats": (("EventOFPPortStatsReply", ryu_handler.MAIN_DISPATCHER),),
    "on_barrier_reply": (("EventOFPBarrierReply", ryu_handler.MAIN_DISPATCHER),),
    "on_flow_removed": (("EventOFPFlowRemoved", ryu_handler.MAIN_DISPATCHER),),
    "on_port_status": (("EventOFPPortStatus", ryu_handler.MAIN_DISPATCHER),),
    "on_error": (("EventOFPErrorMsg", ryu_handler.MAIN_DISPATCHER),),
}

#: The events the model generates, by event class name.
_DELIVERED = ("EventOFPSwitchFeatures", "EventOFPStateChange", "EventOFPPacketIn", "EventOFPPortStatsReply",
              "EventOFPBarrierReply", "EventOFPFlowRemoved", "EventOFPPortStatus", "EventOFPErrorMsg")


def _refused(feature: str) -> Callable[..., Any]:
    def refused(*_args: Any, **_kwargs: Any) -> Any:
        raise refuse(feature)
    return refused


def _app_files(ryu_class: type) -> frozenset[str]:
    """The source files of the app's own classes (not os-ken's), as real paths."""
    files = set()
    for klass in ryu_class.__mro__:
        if klass is app_manager.OSKenApp:
            break
        try:
            files.add(os.path.realpath(inspect.getfile(klass)))
        except (TypeError, OSError):
            pass
    return frozenset(files)


def _locate(exc: BaseException, files: frozenset[str]) -> None:
    """Set ``exc.app_where`` to where in the app's files it was raised (the innermost such
    frame: ``ryu_app.py:63 in flow_removed_handler``), which the report names."""
    where = None
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if os.path.realpath(code.co_filename) in files:
            where = f"{os.path.basename(code.co_filename)}:{tb.tb_lineno} in {code.co_name}"
        tb = tb.tb_next
    if where is not None and getattr(exc, "app_where", None) is None:
        try:
            exc.app_where = where  # type: ignore[attr-defined]
        except (AttributeError, TypeError):  # an exception class with __slots__: not named
            pass


@lru_cache(maxsize=None)
def _framework_attributes() -> frozenset[str]:
    """The instance attributes os-ken's own ``OSKenApp.__init__`` sets (not app state)."""
    return frozenset(vars(app_manager.OSKenApp())) | frozenset(_REFUSED_METHODS)


def _named_parameters(ryu_class: type) -> set[str]:
    """The keyword parameters the ``__init__`` methods of the app's own classes name."""
    names: set[str] = set()
    for klass in ryu_class.__mro__:
        if klass is app_manager.OSKenApp:
            break
        init = klass.__dict__.get("__init__")
        if init is not None:
            for parameter in inspect.signature(init).parameters.values():
                if parameter.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
                    names.add(parameter.name)
    return names - {"self"}


def negotiate(ryu_class: type) -> int:
    """The wire version the model's switches speak with ``ryu_class``: the highest of its
    ``OFP_VERSIONS`` (1.3 when it is None, os-ken's default of every version: the version
    the checker's Ryu apps are usually written for)."""
    offered = getattr(ryu_class, "OFP_VERSIONS", None)
    if offered is None:
        return ofproto_v1_3.OFP_VERSION
    versions = set(offered) & set(VERSIONS)
    if not versions:
        names = ", ".join(f"{v:#x}" for v in offered or ())
        raise UnsupportedFeature(f"Ryu app {ryu_class.__name__}: OFP_VERSIONS [{names}] names no OpenFlow version "
                                 "the checker's switches speak (1.0, 1.2, 1.3, 1.4, 1.5: 0x01, 0x03-0x06)")
    return max(versions)


class _Switches:
    """Per topology: the codec, the wire builder, the translator and one datapath per switch."""

    def __init__(self, adapter: "RyuAdapter", topology: Topology) -> None:
        self.topology = topology
        self.codec = Codec(topology)
        self.wire = Wire(self.codec, adapter.load_classes)
        self.translator = Translator(self.codec, adapter.wire_version)
        self.datapaths: dict[int, CheckerDatapath] = {}
        for dpid in topology.switches:
            datapath = CheckerDatapath(dpid, adapter.wire_version, {}, adapter._receive)
            datapath.ports.update(self.wire.ports(datapath, topology.ports[dpid]))
            self.datapaths[dpid] = datapath


class RyuAdapter(App[Frozen]):
    """A Ryu app run by the checker (see the module docstring). Subclasses are made by
    :func:`adapt_class`; ``ryu_class`` is the app class, ``wire_version`` its OpenFlow version."""

    ryu_class: ClassVar[type] = app_manager.OSKenApp
    wire_version: ClassVar[int] = ofproto_v1_3.OFP_VERSION
    default_properties: ClassVar[tuple[str, ...] | None] = ("no-forwarding-loops", "no-black-holes",
                                                            "no-forgotten-packets")
    #: Remember each handler call's outcome per (handler, state, message): see :meth:`_run`.
    memoize: ClassVar[bool] = True
    #: The adapter runs the handlers twice itself (its memo would answer a second call).
    checks_own_determinism: ClassVar[bool] = True
    #: Whether the app's code names transaction ids (see :func:`.scan.uses_xids`): then each
    #: datapath's counter is state (see the module docstring).
    tracks_xids: ClassVar[bool] = False

    def __init__(self, **options: Any) -> None:
        cls = self.ryu_class
        if getattr(cls, "_CONTEXTS", None):
            raise refuse(f"contexts (_CONTEXTS: {', '.join(sorted(cls._CONTEXTS))})")
        self._out: Out | None = None
        self._context: PacketIn | None = None
        self._switches: _Switches | None = None
        self._memo: dict[tuple[Any, ...], tuple[Frozen, tuple[Any, ...], tuple[determinism.Read, ...]]] = {}
        accepted = _named_parameters(cls)
        unknown = sorted(set(options) - accepted)
        if unknown:  # os-ken's constructor would swallow them silently
            raise TypeError(f"{cls.__name__} takes no option {unknown[0]!r} (its constructors name: "
                            f"{', '.join(sorted(accepted)) or 'none'})")
        with env.handler_environment():
            app = cls(**options)
        for name, feature in _REFUSED_METHODS.items():
            setattr(app, name, _refused(feature))
        if type(app).start is not app_manager.OSKenApp.start:
            self._start(app)
        self.ryu = app
        self._skip = _framework_attributes()
        self._handlers = self._find_handlers(app)
        self._names: dict[str, str] = {}
        self._files = _app_files(cls)

    @staticmethod
    def _start(app: Any) -> None:
        """Run the app's own ``start``: os-ken's event loop is the checker's; any other thread
        is refused."""
        spawn = env.hub.spawn

        def start_thread(function: Any, *args: Any, **kwargs: Any) -> None:
            if getattr(function, "__func__", None) is app_manager.OSKenApp._event_loop:
                return None
            raise refuse("starting threads (hub.spawn in start)")

        with env.handler_environment():
            env.hub.spawn = start_thread
            try:
                app.start()
            finally:
                env.hub.spawn = spawn

    @staticmethod
    def _find_handlers(app: Any) -> dict[str, list[tuple[Callable[[Any], Any], list[str]]]]:
        """Event class name -> [(bound handler, dispatcher phases)], in os-ken's order."""
        handlers: dict[str, list[tuple[Callable[[Any], Any], list[str]]]] = {}
        for _name, method in inspect.getmembers(app, inspect.ismethod):
            for ev_cls, caller in getattr(method, "callers", {}).items():
                handlers.setdefault(ev_cls.__name__, []).append((method, list(caller.dispatchers or [])))
        return handlers

    # ---- the app's identity -------------------------------------------------------------

    def describe(self) -> str:
        return f"{self.ryu_class.__name__} (Ryu app, OpenFlow {NAMES[self.wire_version]})"

    def handler_name(self, handler: str) -> str:
        """The app's own handler methods a call of ``handler`` runs (``SimpleSwitch13._packet_in_handler``;
        several joined by ", "), or ``SimpleSwitch13.on_packet_in`` when it has none."""
        names = self._names.get(handler)
        if names is None:
            methods = [method.__name__ for event, phase in _EVENTS_OF_CALL.get(handler, ())
                       for method, phases in self._handlers.get(event, ()) if not phases or phase in phases]
            cls = self.ryu_class.__name__
            names = self._names[handler] = ", ".join(f"{cls}.{m}" for m in dict.fromkeys(methods)) or f"{cls}.{handler}"
        return names

    def handled_events(self) -> tuple[str, ...]:
        """The event classes the app has handlers for that the model generates."""
        return tuple(name for name in _DELIVERED if name in self._handlers)

    # ---- calling handlers ---------------------------------------------------------------

    def _switches_for(self, topology: Topology) -> _Switches:
        if self._switches is None or self._switches.topology is not topology:
            self._switches = _Switches(self, topology)
            self._memo.clear()
        return self._switches

    def _receive(self, datapath: CheckerDatapath, msg: Any) -> None:
        """``datapath.send_msg`` of the app: translate into the current handler's ``out``."""
        if self._out is None or self._switches is None:
            raise refuse("sending messages outside an event handler")
        self._switches.translator.send(datapath, msg, self._out, self._context)

    def _run(self, state: Frozen, out: Out, context: PacketIn | None,
             events: Callable[[_Switches], list[tuple[Any, str]]], key: tuple[Any, ...]) -> Frozen:
        """Restore ``state``, dispatch the (event, phase) pairs ``events`` builds, freeze.

        A handler call is a function of the app's state and the message (the clock is
        fixed, the datapaths are configuration; randomness is the detector's to report), so its outcome (new state and
        requests) is remembered per (``key``, state) and replayed: the same packet-in in the
        same app state recurs across many interleavings. Calls that raise are not remembered.

        While the platform watches the call for nondeterminism
        (:func:`nice_attendre.models.determinism.active`), the handlers run twice and the two
        outcomes must agree (else :class:`~nice_attendre.models.determinism.NondeterministicCall`,
        which the platform reports); the reads of the clock, randomness and addresses they
        made are remembered with the outcome and replayed with it.
        """
        switches = self._switches_for(out.topology)
        memo_key = (key, state)
        detector = determinism.active()
        if self.memoize:
            known = self._memo.get(memo_key)
            if known is not None:
                out.requests.extend(known[1])
                if detector is not None and known[2]:
                    detector.replay(known[2])
                return known[0]
        seen = len(detector.reads) if detector is not None else 0
        new, requests = self._dispatch(switches, state, out, context, events)
        if detector is not None and len(detector.reads) == seen:
            with detector.unwatched():  # (the first run was watched)
                again, repeated = self._dispatch(switches, state, out.fresh(), context, events)
            differ = determinism.difference(determinism.Outcome(None, new, new, requests),
                                            determinism.Outcome(None, again, again, repeated))
            if differ is not None:
                raise determinism.NondeterministicCall(differ)
        out.requests.extend(requests)
        if self.memoize:
            self._memo[memo_key] = (new, requests, tuple(detector.reads[seen:]) if detector is not None else ())
        return new

    def _dispatch(self, switches: _Switches, state: Frozen, out: Out, context: PacketIn | None,
                  events: Callable[[_Switches], list[tuple[Any, str]]]) -> tuple[Frozen, tuple[Any, ...]]:
        """One run of the handlers from ``state``: the frozen state after it and the requests
        it made (into ``out``, which was empty)."""
        datapaths = switches.datapaths
        first = len(out.requests)
        xids: dict[int, int] = {}
        if self.tracks_xids and state and state[0][0] == XIDS:
            xids = dict(state[0][1][1])
            state = state[1:]
        restore_attributes(self.ryu, state, self._skip, datapaths.__getitem__)
        for dpid, datapath in datapaths.items():
            datapath.xid = xids.get(dpid, 0)
        self._out, self._context = out, context
        try:
            with env.handler_environment():
                for ev, phase in events(switches):
                    for method, phases in self._handlers.get(type(ev).__name__, ()):
                        if not phases or phase in phases:
                            try:
                                method(ev)
                            except UnsupportedFeature as exc:  # met mid-search: say where
                                _locate(exc, self._files)
                                where = getattr(exc, "app_where", None)
                                if where is None:
                                    raise
                                raise UnsupportedFeature(f"{exc} (sent at {where})") from None
                            except BaseException as exc:
                                _locate(exc, self._files)
                                raise
        finally:
            self._out, self._context = None, None
        requests = tuple(out.requests[first:])
        del out.requests[first:]
        new = freeze_attributes(self.ryu, self._skip, CheckerDatapath)
        if self.tracks_xids:
            if XIDS in vars(self.ryu):
                raise refuse(f"an app attribute named {XIDS} (the checker keeps the datapaths' transaction ids "
                             "under that name)")
            counters = tuple((dpid, datapath.xid) for dpid, datapath in sorted(datapaths.items()) if datapath.xid)
            if counters:
                new = ((XIDS, ("dict", counters)),) + new
        return new, requests

    def initial_state(self) -> Frozen:
        return freeze_attributes(self.ryu, self._skip, CheckerDatapath)

    def on_switch_join(self, state: Frozen, dpid: int, out: Out) -> Frozen:
        def events(switches: _Switches) -> list[tuple[Any, str]]:
            datapath = switches.datapaths[dpid]
            features = ofp_event.ofp_msg_to_ev(switches.wire.switch_features(datapath, switches.topology.ports[dpid]))
            change = ofp_event.EventOFPStateChange(datapath)
            change.state = ryu_handler.MAIN_DISPATCHER
            return [(features, ryu_handler.CONFIG_DISPATCHER), (change, ryu_handler.MAIN_DISPATCHER)]

        return self._run(state, out, None, events, ("join", dpid))

    def on_packet_in(self, state: Frozen, ev: PacketIn, out: Out) -> Frozen:
        def events(switches: _Switches) -> list[tuple[Any, str]]:
            msg = switches.wire.packet_in(switches.datapaths[ev.dpid], ev)
            return [(ofp_event.ofp_msg_to_ev(msg), ryu_handler.MAIN_DISPATCHER)]

        return self._run(state, out, ev, events, ("packet-in", ev))

    def on_port_stats(self, state: Frozen, ev: PortStatsReply, out: Out) -> Frozen:
        def events(switches: _Switches) -> list[tuple[Any, str]]:
            msg = switches.wire.port_stats_reply(switches.datapaths[ev.dpid], switches.topology.ports[ev.dpid],
                                                 ev.load)
            return [(ofp_event.ofp_msg_to_ev(msg), ryu_handler.MAIN_DISPATCHER)]

        return self._run(state, out, None, events, ("port-stats", ev))

    def on_flow_removed(self, state: Frozen, ev: FlowRemoved, out: Out) -> Frozen:
        def events(switches: _Switches) -> list[tuple[Any, str]]:
            msg = switches.wire.flow_removed(switches.datapaths[ev.dpid], ev)
            return [(ofp_event.ofp_msg_to_ev(msg), ryu_handler.MAIN_DISPATCHER)]

        return self._run(state, out, None, events, ("flow-removed", ev))

    def on_error(self, state: Frozen, ev: Error, out: Out) -> Frozen:
        def events(switches: _Switches) -> list[tuple[Any, str]]:
            msg = switches.wire.error(switches.datapaths[ev.dpid], ev)
            return [(ofp_event.ofp_msg_to_ev(msg), ryu_handler.MAIN_DISPATCHER)]

        return self._run(state, out, None, events, ("error", ev))

    def on_port_status(self, state: Frozen, ev: PortStatus, out: Out) -> Frozen:
        def events(switches: _Switches) -> list[tuple[Any, str]]:
            msg = switches.wire.port_status(switches.datapaths[ev.dpid], ev)
            return [(ofp_event.ofp_msg_to_ev(msg), ryu_handler.MAIN_DISPATCHER)]

        return self._run(state, out, None, events, ("port-status", ev))

    def on_barrier_reply(self, state: Frozen, ev: BarrierReply, out: Out) -> Frozen:
        def events(switches: _Switches) -> list[tuple[Any, str]]:
            msg = switches.wire.barrier_reply(switches.datapaths[ev.dpid], ev.xid if isinstance(ev.xid, int) else 0)
            return [(ofp_event.ofp_msg_to_ev(msg), ryu_handler.MAIN_DISPATCHER)]

        return self._run(state, out, None, events, ("barrier", ev))


@lru_cache(maxsize=None)
def adapt_class(ryu_class: type) -> type:
    """The :class:`RyuAdapter` subclass for ``ryu_class``, named like it (made once per class)."""
    refuse_unsupported(ryu_class, app_manager.OSKenApp)
    wire_version = negotiate(ryu_class)
    refuse_literal_values(ryu_class, app_manager.OSKenApp, *ofproto_protocol._versions[wire_version])
    if wire_version not in (ofproto_v1_0.OFP_VERSION, ofproto_v1_3.OFP_VERSION) \
            and "OFPPortStatsRequest" in names(ryu_class, app_manager.OSKenApp):
        raise refuse(f"port statistics in OpenFlow {NAMES[wire_version]} (the checker's switches report them in 1.0 "
                     f"and 1.3; in {ryu_class.__name__})")
    namespace = {
        "tracks_xids": uses_xids(ryu_class, app_manager.OSKenApp),
        "ryu_class": ryu_class,
        "wire_version": wire_version,
        "openflow_version": VERSIONS[wire_version],
        "__doc__": (inspect.getdoc(ryu_class) or f"Ryu app {ryu_class.__name__}").splitlines()[0],
        "__module__": ryu_class.__module__,
        "__qualname__": ryu_class.__qualname__,
    }
    return type(ryu_class.__name__, (RyuAdapter,), namespace)
