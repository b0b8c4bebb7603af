"""The library entry points: ``verify`` and ``compare`` (front end, like the CLI).

These assemble a network from names (app, topology, protocol, properties) and run the
checker. They are the only place, besides the CLI, where the core meets the models.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Mapping, Sequence

from nice_attendre.checker import Limits, ProgressCallback, dfs
from nice_attendre.errors import InputError
from nice_attendre.property import Metric, Property
from nice_attendre.result import Result


@dataclass(frozen=True)
class Run:
    """A network built for verification, with the properties and metrics to check."""

    network: Any
    properties: tuple[Property, ...]
    metrics: tuple[Metric, ...]
    packets: int


def build(app: Any, *, topology: Any = None, packets: int = 1, protocol: str = "openflow",
          properties: Sequence[str] | None = None, app_options: Mapping[str, Any] | None = None,
          sender: str | None = None, receiver: str | None = None, count_load: bool = False,
          instant_stats: bool | None = None, controller_threads: int = 1) -> Run:
    """Build the network and properties for one verification (see :func:`verify`)."""
    from nice_attendre import properties as registry
    from nice_attendre.loading import load_app
    from nice_attendre.models.network import LOAD_COUNTERS, Network, Options
    from nice_attendre.models.protocols import protocol_class
    from nice_attendre.models.topology import load_topology

    if isinstance(packets, bool) or not isinstance(packets, int) or packets < 0:
        raise InputError(f"packets must be a whole number >= 0, got {packets!r}")
    app_obj = load_app(app, app_options)
    protocol_class(protocol)  # fail early on an unknown name
    topo = load_topology(topology if topology is not None else app_obj.default_topology)
    if properties is None:
        properties = app_obj.default_properties or registry.DEFAULT_PROPERTIES
    names = registry.check_names(properties)
    if instant_stats is None:
        instant_stats = getattr(app_obj, "instant_stats", False)
    options = Options(monitors=registry.monitors_for(names), count_load=count_load,
                      instant_stats=bool(instant_stats), controller_threads=controller_threads)
    scenario = app_obj.scenario(topo, packets, sender, receiver)
    net = Network(scenario, app_obj, protocol, options)
    metrics: tuple[Metric, ...] = ()
    if count_load:
        slot = net.slot_load
        values = net.interned(slot)
        metrics = tuple(Metric(name, (lambda state, i=i: values[state[slot]][i]), f"{name} per complete execution")
                        for i, name in enumerate(LOAD_COUNTERS))
    return Run(net, registry.build(net, names), metrics, packets)


def model(app: Any, **options: Any) -> tuple[Any, tuple[Property, ...], tuple[Metric, ...]]:
    """``(network, properties, metrics)`` built by :func:`build`: the model factory that each
    shard of a Ray search calls where it runs (a picklable ``partial`` of it)."""
    run = build(app, **options)
    return run.network, run.properties, run.metrics


ENGINES = ("processes", "ray")


def check_engine(workers: int, engine: str, address: str | None) -> None:
    """Fail early on a bad combination of ``workers``, ``engine`` and ``address``."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"workers must be a whole number >= 1, got {workers!r}")
    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r} (known: {', '.join(ENGINES)})")
    if address is not None and engine != "ray":
        raise InputError("--address joins a Ray cluster: use it with --engine ray")


def search(run: Run, rebuild: Callable[[], Any], *, limits: Limits, keep_going: bool = False,
           fingerprint: bool = False, workers: int = 1, engine: str = "processes",
           address: str | None = None, progress: ProgressCallback | None = None) -> Result:
    """Explore ``run``: depth-first in this process, or partitioned over ``workers`` shards
    (:mod:`nice_attendre.parallel`) when ``workers`` is above 1 or ``engine`` is ``ray``.
    ``rebuild()`` builds the same model again (Ray actors call it where they run)."""
    check_engine(workers, engine, address)
    if workers == 1 and engine == "processes":
        result = dfs(run.network, run.properties, limits=limits, keep_going=keep_going,
                     fingerprint=fingerprint, metrics=run.metrics, progress=progress)
    else:
        from nice_attendre.parallel import Cluster, ProcessCluster, search as partitioned

        cluster: Cluster
        if engine == "ray":
            from nice_attendre.ray_engine import RayCluster

            cluster = RayCluster(rebuild, workers, address=address, max_depth=limits.max_depth)
        else:
            built = (run.network, run.properties, run.metrics)
            cluster = ProcessCluster(lambda: built, workers, max_depth=limits.max_depth)
        result = partitioned(cluster, run.network, run.properties, limits=limits, keep_going=keep_going,
                             progress=progress)
    return dataclasses.replace(result, system=run.network)


def verify(app: Any, *, topology: Any = None, packets: int = 1, protocol: str = "openflow",
           properties: Sequence[str] | None = None, app_options: Mapping[str, Any] | None = None,
           sender: str | None = None, receiver: str | None = None,
           max_transitions: int | None = None, max_states: int | None = None,
           max_depth: int | None = None, max_seconds: float | None = None,
           keep_going: bool = False, fingerprint: bool = False, count_load: bool = False,
           instant_stats: bool | None = None, controller_threads: int = 1,
           progress: ProgressCallback | None = None, workers: int = 1, engine: str = "processes",
           address: str | None = None) -> Result:
    """Model-check ``app`` and return the :class:`Result` (``result.system`` is the network).

    ``app`` is a registered name (``"route-flow"``), ``"path/to/file.py:ClassName"``, an
    :class:`~nice_attendre.models.app.App` subclass (built with ``app_options``) or an
    instance. ``topology`` is ``"linear:N"``, a graph file, ``"file.py:factory"``, a
    networkx graph or a Topology (default: the app's). ``packets`` is how many packets the
    sender sends (the app's scenario decides the traffic). ``properties`` are registered
    names (default: :data:`nice_attendre.properties.DEFAULT_PROPERTIES`); ``app-exception``
    is always checked. Limits and ``keep_going`` as for :func:`nice_attendre.dfs`;
    ``count_load`` adds control-plane counters to the state and reports their min/max per
    complete execution in ``result.metrics``. ``controller_threads`` above 1 lets the
    commands of different controller handler calls race (type-3 races).

    ``workers`` above 1 explores with that many processes, each owning the states whose
    fingerprint it is given (:mod:`nice_attendre.parallel`: the same transitions and unique
    states, breadth-first, so ``max_depth`` and traces are a shortest path's);
    ``engine="ray"`` runs those shards as Ray actors (``pip install 'nice-attendre[cluster]'``),
    on the Ray cluster at ``address`` if given, else on a local Ray instance.

    Raises :class:`~nice_attendre.errors.InputError` (or a subclass) for bad input.
    """
    check_engine(workers, engine, address)
    options = dict(topology=topology, packets=packets, protocol=protocol, properties=properties,
                   app_options=app_options, sender=sender, receiver=receiver, count_load=count_load,
                   instant_stats=instant_stats, controller_threads=controller_threads)
    run = build(app, **options)  # type: ignore[arg-type]
    limits = Limits(max_transitions, max_states, max_depth, max_seconds)
    return search(run, partial(model, app, **options), limits=limits, keep_going=keep_going,
                  fingerprint=fingerprint, workers=workers, engine=engine, address=address,
                  progress=progress)
