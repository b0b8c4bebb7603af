"""Checkpoints of a verification run: what identifies the run, saving, and resuming (front end).

The core saves and loads a :class:`~nice_attendre.checkpoint.SearchState`; this module adds
what a network run needs: the network's interning tables (to decode the saved states) and
the run's identity. A checkpoint is refused by a run that differs in anything that changes
the search: the app (its class, source file and options), the topology, the traffic, the
protocol, the model options, the properties, ``keep_going``, ``fingerprint`` and
``max_depth``, or the version of nice-attendre. The budgets (``max_transitions``,
``max_states``, ``max_seconds``, ``max_memory``) may differ: raising them is how a
search is continued.

A checkpoint holds only the classes listed in :data:`NETWORK_CLASSES` (the network's
events and the values its states intern), the core's (see
:class:`~nice_attendre.checkpoint.Admitted`) and the classes defined in the app's own module
(:func:`admitted`); loading one runs no code from the file. After its digest, identity and
shape, the search is checked against the rebuilt network
(:func:`~nice_attendre.checkpoint.check_against`).
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import inspect
from pathlib import Path
from typing import Any, Callable

from nice_attendre import checkpoint as files
from nice_attendre.checkpoint import SearchState
from nice_attendre.output import OutputError


def _digest(value: Any) -> str:
    return hashlib.sha256(repr(value).encode("utf-8", "backslashreplace")).hexdigest()[:16]


def _canonical(value: Any) -> Any:
    """A value whose repr does not depend on the hash seed (sets sorted)."""
    if isinstance(value, (set, frozenset)):
        return sorted(repr(v) for v in value)
    return value


def _version() -> str:
    try:
        return importlib.metadata.version("nice-attendre")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - always installed
        return "unknown"


def _app_source(app: Any) -> str:
    try:
        source = inspect.getsourcefile(type(app))
        return hashlib.sha256(Path(source).read_bytes()).hexdigest()[:16] if source else ""
    except (OSError, TypeError):
        return ""


def run_identity(run: Any, *, keep_going: bool, fingerprint: bool, max_depth: int | None,
                 por: bool = False) -> dict[str, Any]:
    """What a checkpoint of ``run`` (a :class:`nice_attendre.frontend.api.Run`) must match
    (``por``: whether the search explores stubborn sets: a reduced search and a full one
    store other states and stacks, so neither continues the other)."""
    net = run.network
    app = net.app
    topology = net.topology
    settings = {name: value for name, value in sorted(vars(app).items())
                if isinstance(value, (int, float, str, bool, type(None), tuple))}
    # (the memo changes the speed only: a search may be resumed with or without it)
    options = {field.name: _canonical(getattr(net.options, field.name)) for field in dataclasses.fields(net.options)
               if field.name != "memo"}
    layout = (topology.switches, topology.hosts, sorted((k, str(v)) for k, v in topology.links.items()),
              sorted(topology.host_port.items()), sorted(topology.spare_ports.items()))
    return {
        "nice-attendre": _version(),
        "app": f"{type(app).__module__}.{type(app).__qualname__}",
        "app description": app.describe(),
        "app settings": _digest(settings),
        "app source": _app_source(app),
        "protocol": net.protocol.name,
        "topology": topology.name,
        "topology layout": _digest(layout),
        "traffic": _digest(net.scenario.hosts),
        "model options": _digest(options),
        "properties": [p.name for p in run.properties],
        "metrics": [m.name for m in run.metrics],
        "keep going": keep_going,
        "fingerprint": fingerprint,
        "max depth": max_depth,
        "partial-order reduction": por,
    }


def _network_classes() -> tuple[type, ...]:
    from nice_attendre.models import events, faults, messages, packet
    from nice_attendre.models.chunked import ChunkedState
    from nice_attendre.models.flowtable import Entry
    from nice_attendre.models.hosts import HostState
    from nice_attendre.models.protocols import attendre, batch, buffer, openflow, openflow_b, pif, ties

    return (
        # events (in stack frames and traces)
        events.HostSend, events.HostReceive, events.HostAnswer, events.HostMove, events.SwitchProcessPacket,
        events.SwitchProcessCommand, events.ControllerHandle, events.ControllerStats, events.SwitchEntryExpires,
        faults.LinkFault, faults.LinkChange, faults.ControlLoss, faults.SwitchRestart,
        pif.MeterDropsPacket, pif.PendingEntryExpires, batch.BatchTimerFires, buffer.FlowBufferTimeout,
        ties.SwitchChoosesEntry,
        # what states hold (the interned components)
        ChunkedState, HostState, Entry, faults.FaultState,
        packet.Header, packet.AttendreCommand, packet.Packet, packet.Match, packet.Output, packet.Flood,
        packet.ToController, packet.GotoTable, packet.SetField,
        messages.MessageSet, messages.Timeouts, messages.PacketIn, messages.BarrierReply, messages.PortStatsReply,
        messages.FlowMod, messages.PacketOut, messages.BarrierRequest, messages.PortStatsRequest,
        messages.FlowRemoved, messages.PortStatus, messages.Error,
        openflow.PlatformState, openflow_b.Held, attendre.SetProgress, attendre.AttendreState, pif.PendingRule,
    )


#: The classes of the network model a checkpoint may hold (besides the core's and the app's).
NETWORK_CLASSES: tuple[type, ...] = _network_classes()


def admitted(run: Any) -> files.Admitted:
    """The classes a checkpoint of ``run`` may hold: :data:`NETWORK_CLASSES`, the core's, and
    the classes defined in the app's module (its state's classes; never the app class
    itself, nor any other App: an app is configuration, never state)."""
    from nice_attendre.models.app import App

    return files.Admitted(NETWORK_CLASSES, type(run.network.app).__module__,
                          accept=lambda cls: not issubclass(cls, App))


def load(run: Any, path: Path, identity: dict[str, Any], por: bool = False) -> SearchState:
    """Read the checkpoint at ``path`` for ``run``, restore the network's tables and check
    the search against the network (``por``: its stack's events are stubborn sets); return
    the search to resume. Raises
    :class:`~nice_attendre.checkpoint.CheckpointError` (one line naming the file)."""
    from nice_attendre.models.snapshot import restore_tables

    tables, search = files.load(path, identity, admitted(run))
    try:
        restore_tables(run.network, tables)
    except files.CheckpointError as exc:
        raise files.CheckpointError(f"checkpoint {str(path)!r}: {exc}") from None
    except (MemoryError, KeyboardInterrupt):
        raise
    except Exception as exc:  # tables of a buggy build that restore_tables does not foresee
        raise files.CheckpointError(f"checkpoint {str(path)!r} holds tables this network cannot use "
                                    f"({type(exc).__name__})") from None
    problem = files.check_against(search, run.network, por=por)
    if problem is not None:
        raise files.CheckpointError(f"checkpoint {str(path)!r} holds a search of another model ({problem})")
    return search


def saver(run: Any, path: Path, identity: dict[str, Any], option: str = "--checkpoint",
          on_error: Callable[[Exception], None] | None = None) -> Callable[[SearchState], None]:
    """The callback :func:`nice_attendre.dfs` calls to save the search (with the tables).
    A write that fails is reported to ``on_error`` and the search goes on."""
    from nice_attendre.models.snapshot import network_tables

    classes = admitted(run)

    def save(search: SearchState) -> None:
        try:
            files.save(path, identity, network_tables(run.network), search, option, classes)
        except OutputError as exc:  # a full disk must not end the search: say so, go on
            if on_error is not None:
                on_error(exc)
            return
        save.saves += 1  # type: ignore[attr-defined]

    save.saves = 0  # type: ignore[attr-defined]
    return save
