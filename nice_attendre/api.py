"""The library entry points: ``verify`` and ``compare`` (front end, like the CLI).

These assemble a network from names (app, topology, protocol, properties) and run the
checker. They are the only place, besides the CLI, where the core meets the models.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

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
          properties: Any = None, app_options: Mapping[str, Any] | None = None,
          sender: str | None = None, receiver: str | None = None, count_load: bool = False,
          instant_stats: bool | None = None, threaded_controller: bool = False,
          command_order: str = "fifo", flows: Any = None, scenario: Any = None) -> Run:
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
    wanted = registry.resolve(properties, app_obj)
    if instant_stats is None:
        instant_stats = getattr(app_obj, "instant_stats", False)
    options = Options(monitors=registry.monitors_of(wanted), count_load=count_load,
                      instant_stats=bool(instant_stats), threaded_controller=bool(threaded_controller),
                      command_order=command_order)
    traffic = make_scenario(app_obj, topo, packets, sender, receiver, flows, scenario)
    net = Network(traffic, app_obj, protocol, options)
    metrics: tuple[Metric, ...] = ()
    if count_load:
        slot = net.slot_load
        values = net.interned(slot)
        metrics = tuple(Metric(name, (lambda state, i=i: values[state[slot]][i]), f"{name} per complete execution")
                        for i, name in enumerate(LOAD_COUNTERS))
    return Run(net, registry.bind(net, wanted), metrics, packets)


def make_scenario(app: Any, topology: Any, packets: int, sender: str | None, receiver: str | None,
                  flows: Any, scenario: Any) -> Any:
    """The traffic of a run: the app's own (``sender`` pings ``receiver`` ``packets`` times,
    or what the app's ``scenario`` method says), or the user's ``flows`` / ``scenario`` (a
    TOML file or a :class:`~nice_attendre.models.scenario.Scenario`)."""
    from pathlib import Path

    from nice_attendre.models.flows import load_file
    from nice_attendre.models.scenario import Scenario

    if flows is None and scenario is None:
        return app.scenario(topology, packets, sender, receiver)
    if flows is not None and scenario is not None:
        raise InputError("give flows or a scenario file, not both")
    if sender is not None or receiver is not None:
        raise InputError("sender and receiver describe the app's own traffic: give them or flows, not both")
    if isinstance(scenario, Scenario):
        return scenario
    if scenario is not None:
        if not isinstance(scenario, (str, Path)):
            raise InputError(f"scenario must be a TOML file or a Scenario, got {type(scenario).__name__}")
        file_flows, moves = load_file(scenario)
        return Scenario.from_flows(topology, file_flows, moves)
    if isinstance(flows, str):
        flows = [flows]
    return Scenario.from_flows(topology, list(flows))


def verify(app: Any, *, topology: Any = None, packets: int = 1, protocol: str = "openflow",
           properties: Any = None, app_options: Mapping[str, Any] | None = None,
           sender: str | None = None, receiver: str | None = None,
           max_transitions: int | None = None, max_states: int | None = None,
           max_depth: int | None = None, max_seconds: float | None = None,
           keep_going: bool = False, fingerprint: bool = False, count_load: bool = False,
           instant_stats: bool | None = None, threaded_controller: bool = False,
           command_order: str = "fifo", flows: Any = None, scenario: Any = None,
           progress: ProgressCallback | None = None) -> Result:
    """Model-check ``app`` and return the :class:`Result` (``result.system`` is the network).

    ``app`` is a registered name (``"route-flow"``), ``"path/to/file.py:ClassName"``, an
    :class:`~nice_attendre.models.app.App` subclass (built with ``app_options``) or an
    instance. ``topology`` is ``"linear:N"``, a graph file, ``"file.py:factory"``, a
    networkx graph or a Topology (default: the app's). ``packets`` is how many packets the
    sender sends (the app's scenario decides the traffic); ``flows`` (a list of
    :class:`~nice_attendre.models.flows.Flow` objects or strings like
    ``"h1->h2:packets=2,proto=tcp,dport=80"``) or ``scenario`` (a TOML file, see
    :mod:`nice_attendre.models.flows`) replace that traffic by the user's. ``properties`` is one property or a list: registered
    names, ``file.py:NAME``, :mod:`nice_attendre.properties.custom` specs or
    :class:`~nice_attendre.Property` objects, mixed (default: the app's
    ``default_properties``, else :data:`nice_attendre.properties.DEFAULT_PROPERTIES`); ``app-exception``
    is always checked. Limits and ``keep_going`` as for :func:`nice_attendre.dfs`;
    ``count_load`` adds control-plane counters to the state and reports their min/max per
    complete execution in ``result.metrics``. ``threaded_controller`` lets controller
    handler calls race (type-3 races); ``command_order="any"`` lets a switch execute pending
    commands in any order no barrier forbids (see :mod:`nice_attendre.models.channels`).

    Raises :class:`~nice_attendre.errors.InputError` (or a subclass) for bad input.
    """
    run = build(app, topology=topology, packets=packets, protocol=protocol, properties=properties,
                app_options=app_options, sender=sender, receiver=receiver, count_load=count_load,
                instant_stats=instant_stats, threaded_controller=threaded_controller,
                command_order=command_order, flows=flows, scenario=scenario)
    limits = Limits(max_transitions, max_states, max_depth, max_seconds)
    result = dfs(run.network, run.properties, limits=limits, keep_going=keep_going,
                 fingerprint=fingerprint, metrics=run.metrics, progress=progress)
    return dataclasses.replace(result, system=run.network)
