"""Calling the app's packet-in handler on one packet, on a copy of a state, its output
discarded: what discovery runs symbolically and replays concretely.

The handler is the app's ``on_packet_in`` (a Ryu app's, through the adapter: its
``EventOFPPacketIn`` handler, on the packet os-ken parses from the bytes the adapter
serialises). It runs on a deep copy of the app state and a fresh :class:`~nice_attendre.models.app.Out`
that is thrown away: nothing of a call reaches the model.
"""
from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any, Callable

from nice_attendre.errors import InputError
from nice_attendre.models.app import App, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Header, Packet


class NoPacketInHandler(InputError):
    """The app handles no packet-in: there is nothing to discover (exit 2)."""


def check_handler(app: Any) -> None:
    """Raise :class:`NoPacketInHandler` unless ``app`` handles packet-ins."""
    name = type(app).__name__
    if getattr(type(app), "ryu_class", None) is not None:
        if "EventOFPPacketIn" not in app.handled_events():
            raise NoPacketInHandler(f"{name} has no EventOFPPacketIn handler: discovery explores the packet-in "
                                    "handler, and there is none")
        return
    if getattr(type(app), "on_packet_in", App.on_packet_in) is App.on_packet_in:
        raise NoPacketInHandler(f"{name} has no packet-in handler (on_packet_in): discovery explores it, and "
                                "there is none")


def packet_in(hdr: Header, dpid: int, in_port: int) -> PacketIn:
    """The packet-in of a packet with header ``hdr`` that missed at ``dpid`` coming in on
    ``in_port`` (buffered, as a table miss of OpenFlow 1.0 is)."""
    return PacketIn(dpid, in_port, (hdr.eth_src, 0, 0), Packet(hdr, hdr.eth_src, 0))


def call(app: Any, state: Any, topology: Any, hdr: Header, dpid: int, in_port: int) -> list[Any]:
    """The handler on ``hdr`` arriving at ``dpid`` on ``in_port``, in a copy of ``state``:
    the requests it made (its new state is discarded); what it raises propagates."""
    out = Out(topology, set())
    app.on_packet_in(copy.deepcopy(state), packet_in(hdr, dpid, in_port), out)
    return out.requests


def behaviour(requests: list[Any]) -> tuple[Any, ...]:
    """What the handler did, as far as it tells paths apart: each request's kind, the
    fields it rewrites with their values, and whether it forwards or drops. Switches, ports
    and matched values are left out: two packets the app treats alike from different hosts
    (or to different hosts) behave alike; a load balancer's two replicas (an index, not a
    branch) do not."""
    from nice_attendre.models.app import InstallPathRequest
    from nice_attendre.models.packet import SetField

    def rewrites(actions: Any) -> tuple[str, ...]:
        return tuple(str(action) for action in actions if type(action) is SetField)

    summary: list[Any] = []
    for request in requests:
        if isinstance(request, InstallPathRequest):
            summary.append(("path", tuple(rewrites(hop.actions) for hop in request.hops),
                            all(hop.actions for hop in request.hops)))
            continue
        actions = tuple(getattr(request, "actions", ()))
        summary.append((type(request).__name__.removesuffix("Request"), rewrites(actions), bool(actions)))
    return tuple(summary)


class LineRecorder:
    """The lines of ``files`` a call runs (``sys.settrace``; for concrete calls only)."""

    def __init__(self, files: tuple[str, ...]) -> None:
        self.files = frozenset(files)
        self._known: dict[str, str | None] = {}
        self.lines: set[tuple[str, int]] = set()

    def _file(self, name: str) -> str | None:
        if name not in self._known:
            resolved = str(Path(name).resolve()) if not name.startswith("<") else name
            self._known[name] = resolved if resolved in self.files else None
        return self._known[name]

    def _global(self, frame: Any, event: str, arg: Any) -> Callable[..., Any] | None:
        found = self._file(frame.f_code.co_filename)
        if found is None:
            return None
        lines = self.lines

        def local(frame: Any, event: str, arg: Any) -> Any:
            if event == "line":
                lines.add((found, frame.f_lineno))
            return local

        return local

    def run(self, function: Callable[[], list[Any]]) -> tuple[frozenset[tuple[str, int]], str | None, Any]:
        """(lines run, the name of the exception ``function`` raised or None, the
        :func:`behaviour` of the requests it returned)."""
        self.lines = set()
        previous = sys.gettrace()
        sys.settrace(self._global)
        requests: list[Any] = []
        try:
            requests = function()
            raised = None
        except Exception as exc:  # noqa: BLE001 - the app's own failure: part of the path
            raised = type(exc).__name__
        finally:
            sys.settrace(previous)
        return frozenset(self.lines), raised, behaviour(requests)
