"""Checkpoints of a verification run: what identifies the run, saving, and resuming (front end).

The core saves and loads a :class:`~nice_attendre.checkpoint.SearchState`; this module adds
what a network run needs: the network's interning tables (to decode the saved states) and
the run's identity. A checkpoint is refused by a run that differs in anything that changes
the search: the app (its class, source file and options), the topology, the traffic, the
protocol, the model options, the properties, ``keep_going``, ``fingerprint`` and
``max_depth``, or the version of nice-attendre. The budgets (``max_transitions``,
``max_states``, ``max_seconds``, ``max_memory``) may differ: raising them is how a
search is continued.
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


def run_identity(run: Any, *, keep_going: bool, fingerprint: bool, max_depth: int | None) -> dict[str, Any]:
    """What a checkpoint of ``run`` (a :class:`nice_attendre.frontend.api.Run`) must match."""
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
    }


def app_modules(run: Any) -> tuple[str, ...]:
    """Module prefixes whose classes a checkpoint of ``run`` may contain (the app's package)."""
    return (type(run.network.app).__module__.split(".")[0],)


def load(run: Any, path: Path, identity: dict[str, Any]) -> SearchState:
    """Read the checkpoint at ``path`` for ``run`` and restore the network's tables; return
    the search to resume. Raises :class:`~nice_attendre.checkpoint.CheckpointError`."""
    from nice_attendre.models.snapshot import restore_tables

    tables, search = files.load(path, identity, app_modules(run))
    restore_tables(run.network, tables)
    return search


def saver(run: Any, path: Path, identity: dict[str, Any], option: str = "--checkpoint",
          on_error: Callable[[Exception], None] | None = None) -> Callable[[SearchState], None]:
    """The callback :func:`nice_attendre.dfs` calls to save the search (with the tables).
    A write that fails is reported to ``on_error`` and the search goes on."""
    from nice_attendre.models.snapshot import network_tables

    def save(search: SearchState) -> None:
        try:
            files.save(path, identity, network_tables(run.network), search, option)
        except OutputError as exc:  # a full disk must not end the search: say so, go on
            if on_error is not None:
                on_error(exc)
            return
        save.saves += 1  # type: ignore[attr-defined]

    save.saves = 0  # type: ignore[attr-defined]
    return save
