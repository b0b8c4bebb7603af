"""The library entry points: ``verify`` and ``compare`` (front end, like the CLI).

These assemble a network from names (app, topology, protocol, properties) and run the
checker. They are the only place, besides the CLI, where the core meets the models.
"""
from __future__ import annotations

import dataclasses
import math
import signal
import time
import warnings
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable, Mapping

from nice_attendre.checker import Limits, ProgressCallback, dfs
from nice_attendre.errors import AppLoadError, InputError, Interrupted, StopRequest
from nice_attendre.importing import Source, is_file, note_file, recording
from nice_attendre.output import check_writable
from nice_attendre.partition import FINGERPRINT, partition_named
from nice_attendre.property import Metric, Property
from nice_attendre.result import Result, Stats
from nice_attendre.watchdog import CallGuard, Watchdog

#: Most packets a sender may send: the state space grows exponentially with them, so far
#: fewer can be explored; more would only exhaust memory while building the scenario.
MAX_PACKETS = 1000

#: Seconds one app handler call may run before it is reported as an app exception.
DEFAULT_HANDLER_SECONDS = 10.0

#: Seconds between two checkpoints of a running search.
DEFAULT_CHECKPOINT_SECONDS = 60.0


@dataclass(frozen=True)
class Run:
    """A network built for verification, with the properties and metrics to check, and the
    user files it was built from (``sources``: each one's path and digest)."""

    network: Any
    properties: tuple[Property, ...]
    metrics: tuple[Metric, ...]
    packets: int
    sources: tuple[Source, ...] = ()
    #: whether the caller named the properties (else they are the app's or the registry's defaults)
    named: bool = False


def build(app: Any, *, topology: Any = None, packets: int = 1, protocol: Any = "openflow",
          properties: Any = None, app_options: Mapping[str, Any] | None = None,
          sender: str | None = None, receiver: str | None = None, count_load: bool = False,
          instant_stats: bool | None = None, threaded_controller: bool | str = False,
          command_order: str = "fifo", flows: Any = None, scenario: Any = None,
          faults: Mapping[str, int | str] | None = None, protocol_options: Mapping[str, Any] | str | None = None,
          guard: CallGuard | None = None, memo: bool | int = True, joins_first: bool | None = False,
          on_app: Callable[[Any], None] | None = None) -> Run:
    """Build the network and properties for one verification (see :func:`verify`).

    ``on_app`` is called with the app object once it is loaded, before the network is built
    (the switch joins): :class:`~nice_attendre.frontend.coverage.Measurement` starts there.

    ``guard`` marks the network's calls into the app (a watchdog may interrupt them).
    ``memo``: memoise transitions (True: up to :data:`~nice_attendre.models.memo.MEMO_ENTRIES`,
    a number: up to that many, False or 0: not at all); results are the same either way.
    ``joins_first``: the start-up semantics (see :func:`verify`; ``None``, as a trace saved
    before the option existed says, is ``False``).

    User files (an app, property or topology factory file, a topology or scenario file) are
    loaded as they are now, an edited file afresh (:mod:`nice_attendre.importing`); the run's
    ``sources`` say which versions were used."""
    with recording() as sources:
        run = _build(app, topology=topology, packets=packets, protocol=protocol, properties=properties,
                     app_options=app_options, sender=sender, receiver=receiver, count_load=count_load,
                     instant_stats=instant_stats, threaded_controller=threaded_controller,
                     command_order=command_order, flows=flows, scenario=scenario, faults=faults,
                     protocol_options=protocol_options, guard=guard, memo=memo,
                     joins_first=False if joins_first is None else joins_first, on_app=on_app)
    return dataclasses.replace(run, sources=tuple(sources))


def _build(app: Any, *, topology: Any, packets: int, protocol: Any, properties: Any,
           app_options: Mapping[str, Any] | None, sender: str | None, receiver: str | None,
           count_load: bool, instant_stats: bool | None, threaded_controller: bool, command_order: str,
           flows: Any, scenario: Any, faults: Mapping[str, int] | None,
           protocol_options: Mapping[str, Any] | str | None, guard: CallGuard | None,
           memo: bool | int, joins_first: bool, on_app: Callable[[Any], None] | None = None) -> Run:
    """:func:`build`'s work, inside its :func:`~nice_attendre.importing.recording`."""
    from nice_attendre import properties as registry
    from nice_attendre.frontend.loading import load_app
    from nice_attendre.models.faults import split_budgets
    from nice_attendre.models.memo import MEMO_ENTRIES
    from nice_attendre.models.network import LOAD_COUNTERS, Network, Options
    from nice_attendre.models.protocols import resolve
    from nice_attendre.models.topology import load_topology

    if isinstance(packets, bool) or not isinstance(packets, int) or not 0 <= packets <= MAX_PACKETS:
        raise InputError(f"packets must be a whole number from 0 to {MAX_PACKETS}, got {packets!r}")
    app_obj = load_app(app, app_options)
    if on_app is not None:
        on_app(app_obj)
    spec = resolve(protocol, protocol_options)  # fail early on an unknown name or a bad parameter
    topo_spec = topology if topology is not None else app_obj.default_topology
    topo = load_topology(topo_spec)
    if isinstance(topo_spec, (str, Path)) and is_file(Path(topo_spec)):
        note_file("topology file", topo_spec)
    named = properties is not None
    if properties is None:
        properties = app_obj.default_properties or registry.DEFAULT_PROPERTIES
    wanted = registry.resolve(properties, app_obj)
    if instant_stats is None:
        instant_stats = getattr(app_obj, "instant_stats", False)
    budgets, link_scope = split_budgets(faults) if faults else ((), "all")
    options = Options(monitors=registry.monitors_of(wanted), count_load=count_load,
                      instant_stats=bool(instant_stats), threaded_controller=threaded_controller,
                      command_order=command_order, faults=budgets, link_scope=link_scope,
                      memo=MEMO_ENTRIES if memo is True else int(memo), joins_first=joins_first)
    traffic = make_scenario(app_obj, topo, packets, sender, receiver, flows, scenario)
    description = _user_call(app_obj, "describe")
    if not isinstance(description, str):
        raise AppLoadError(f"{type(app_obj).__name__}.describe returned {type(description).__name__}, not a str")
    net = Network(traffic, app_obj, spec, options, guard=guard)
    metrics: tuple[Metric, ...] = ()
    if count_load:
        slot = net.slot_load
        values = net.interned(slot)
        metrics = tuple(Metric(name, (lambda state, i=i: values[state[slot]][i]), f"{name} per complete execution")
                        for i, name in enumerate(LOAD_COUNTERS))
    return Run(net, registry.bind(net, wanted), metrics, packets, named=named)


def make_scenario(app: Any, topology: Any, packets: int, sender: str | None, receiver: str | None,
                  flows: Any, scenario: Any) -> Any:
    """The traffic of a run: the app's own (``sender`` pings ``receiver`` ``packets`` times,
    or what the app's ``scenario`` method says), or the user's ``flows`` / ``scenario`` (a
    TOML file or a :class:`~nice_attendre.models.scenario.Scenario`)."""
    from pathlib import Path

    from nice_attendre.models.flows import load_file
    from nice_attendre.models.scenario import Scenario

    if flows is None and scenario is None:
        own = _user_call(app, "scenario", topology, packets, sender, receiver)
        if not isinstance(own, Scenario):
            raise AppLoadError(f"{type(app).__name__}.scenario returned {type(own).__name__}, not a Scenario")
        return own
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
        note_file("scenario file", scenario)
        return Scenario.from_flows(topology, file_flows, moves)
    if isinstance(flows, str):
        flows = [flows]
    return Scenario.from_flows(topology, list(flows))


def _user_call(app: Any, method: str, *args: Any) -> Any:
    """``app.method(*args)``, the app's own code: what it raises (``sys.exit`` included) is
    bad input naming the method, not a crash of the checker."""
    try:
        return getattr(app, method)(*args)
    except (InputError, MemoryError):
        raise
    except (Exception, SystemExit) as exc:
        why = f"called sys.exit({exc.code!r})" if isinstance(exc, SystemExit) else f"raised {type(exc).__name__}: {exc}"
        raise AppLoadError(f"{type(app).__name__}.{method} {why}") from exc


def search(run: Run, rebuild: Callable[[], Any] | None = None, *, limits: Limits = Limits(),
           keep_going: bool = False, fingerprint: bool = False,
           watchdog: Watchdog | None = None, progress: ProgressCallback | None = None,
           checkpoint: str | Path | None = None, resume: str | Path | None = None,
           checkpoint_every: float = DEFAULT_CHECKPOINT_SECONDS,
           on_checkpoint_error: Callable[[Exception], None] | None = None,
           workers: int = 1, engine: str = "processes", address: str | None = None,
           shortest: bool = False, partition: str = FINGERPRINT, simulate: bool = False,
           seed: int | None = None, walks: int | None = None, walk_depth: int | None = None,
           bias: str | None = None, shrink: bool | None = None, por: bool = False) -> Result:
    """Explore ``run``'s network; return the :class:`Result` with ``system`` set.

    With ``simulate`` the network is not explored but walked at random
    (:mod:`nice_attendre.simulate`; ``seed``, ``walks``, ``walk_depth`` and ``bias`` as for
    :func:`verify`), in this process, ``workers`` worker processes or on Ray (``engine``,
    ``address``): the result is never complete. ``shrink`` shrinks the traces of the
    violations found (:mod:`nice_attendre.shrink`; None: for a simulation only).
    Otherwise, as :func:`explore`.

    With ``por`` the search (depth-first, breadth-first with ``shortest``, or partitioned
    over ``workers`` or Ray; checkpoints too) explores a stubborn set of events in each
    state (partial-order reduction, :mod:`nice_attendre.por`; ``result.reduction`` is
    ``"partial-order"``, the counts are the reduced graph's): not with ``simulate``, nor
    with a property it cannot check (:class:`InputError`); the default ``termination`` is
    then left out and said so (``result.unchecked``)."""
    from nice_attendre.frontend.simulation import check_simulation, shrink_result, simulate_run

    check_simulation(simulate, seed=seed, walks=walks, walk_depth=walk_depth, bias=bias, shortest=shortest,
                     checkpoint=checkpoint, resume=resume, fingerprint=fingerprint, partition=partition,
                     max_states=limits.max_states, max_depth=limits.max_depth)
    if simulate and por:
        raise InputError("--por reduces the exhaustive search; random walks (--simulate) need no reduction")
    if simulate:
        check_engine(workers, engine, address, FINGERPRINT, limits.max_memory)
        return simulate_run(run, rebuild, limits=limits, keep_going=keep_going, watchdog=watchdog, progress=progress,
                            workers=workers, engine=engine, address=address, seed=seed, walks=walks,
                            walk_depth=walk_depth, bias=bias, shrink=shrink is not False)
    if por:
        result = _reduced(run, rebuild, limits=limits, keep_going=keep_going, fingerprint=fingerprint,
                          watchdog=watchdog, progress=progress, checkpoint=checkpoint, resume=resume,
                          checkpoint_every=checkpoint_every, on_checkpoint_error=on_checkpoint_error,
                          workers=workers, engine=engine, address=address, shortest=shortest, partition=partition)
        return shrink_result(result, run) if shrink else result
    result = explore(run, rebuild, limits=limits, keep_going=keep_going, fingerprint=fingerprint, watchdog=watchdog,
                     progress=progress, checkpoint=checkpoint, resume=resume, checkpoint_every=checkpoint_every,
                     on_checkpoint_error=on_checkpoint_error, workers=workers, engine=engine, address=address,
                     shortest=shortest, partition=partition)
    return shrink_result(result, run) if shrink else result


def explore(run: Run, rebuild: Callable[[], Any] | None = None, *, limits: Limits = Limits(),
            keep_going: bool = False, fingerprint: bool = False,
            watchdog: Watchdog | None = None, progress: ProgressCallback | None = None,
            checkpoint: str | Path | None = None, resume: str | Path | None = None,
            checkpoint_every: float = DEFAULT_CHECKPOINT_SECONDS,
            on_checkpoint_error: Callable[[Exception], None] | None = None,
            workers: int = 1, engine: str = "processes", address: str | None = None,
            shortest: bool = False, partition: str = FINGERPRINT, por: bool = False) -> Result:
    """Explore ``run``'s network exhaustively; return the :class:`Result` with ``system`` set.

    With ``por`` every search explores stubborn sets (see :func:`_reduced`, which calls
    this with the properties a reduced search checks).

    With ``shortest`` the search is breadth-first in this process (:func:`nice_attendre.breadth_first.bfs`):
    every trace is a shortest one; it cannot be combined with ``workers``/``engine``/checkpoints
    (:class:`~nice_attendre.errors.InputError`).

    Depth-first in this process, or partitioned over ``workers`` shards
    (:mod:`nice_attendre.parallel`) when ``workers`` is above 1 or ``engine`` is ``ray``
    (``rebuild()`` builds the same model again where Ray actors run; checkpoints are for the
    depth-first search only). ``partition`` says how the shards share the states
    (:mod:`nice_attendre.partition`): ``fingerprint``, or the name of a part of the state
    (a slot kind: ``app``, ``host``, ``table``...); it changes the search's speed only,
    never its results.

    With ``checkpoint`` the search is saved to that file every ``checkpoint_every`` seconds
    and when it ends (limits, Ctrl-C); with ``resume`` it continues the search saved in that
    file (which must be of the same run: see :mod:`nice_attendre.frontend.resume`), and the final
    counts and verdicts are those of an uninterrupted search. Raises
    :class:`~nice_attendre.checkpoint.CheckpointError` for an unusable checkpoint. A
    checkpoint that cannot be written does not stop the search: the error goes to
    ``on_checkpoint_error`` (default: a warning).
    """
    from nice_attendre.frontend import resume as checkpoints

    check_engine(workers, engine, address, partition, limits.max_memory)
    if shortest:
        from nice_attendre.breadth_first import bfs, check_shortest

        check_shortest(workers, engine, resume, checkpoint)
        result = bfs(run.network, run.properties, limits=limits, keep_going=keep_going, fingerprint=fingerprint,
                     metrics=run.metrics, progress=progress, watchdog=watchdog, por=por)
        return dataclasses.replace(result, system=run.network, sources=run.sources)
    if workers > 1 or engine != "processes":
        if checkpoint is not None or resume is not None:
            raise InputError("checkpoints are for the one-process search: drop --workers/--engine or --checkpoint")
        from nice_attendre.parallel import Cluster, ProcessCluster, check_properties, search as partitioned

        check_properties(run.properties, named=run.named)
        cluster: Cluster
        owned_by = partition_named(run.network, partition)
        if engine == "ray":
            from nice_attendre.ray_engine import RayCluster

            if rebuild is None:
                raise InputError("a Ray search needs a way to rebuild the model where its actors run")
            cluster = RayCluster(rebuild, workers, address=address, max_depth=limits.max_depth,
                                 partition=owned_by, call_seconds=None if watchdog is None else watchdog.call_seconds,
                                 por=por)
        else:
            built = (run.network, run.properties, run.metrics)
            cluster = ProcessCluster(lambda: built, workers, max_depth=limits.max_depth, partition=owned_by,
                                     call_seconds=None if watchdog is None else watchdog.call_seconds, por=por)
        result = partitioned(cluster, run.network, run.properties, limits=limits, keep_going=keep_going,
                             progress=progress, watchdog=watchdog)
        return dataclasses.replace(result, system=run.network, partition=owned_by.describe(), sources=run.sources)
    if not math.isfinite(checkpoint_every) or checkpoint_every < 0:
        raise InputError(f"checkpoint_every must be a finite number of seconds >= 0, got {checkpoint_every}")
    identity: dict[str, Any] = {}
    if checkpoint is not None or resume is not None:
        identity = checkpoints.run_identity(run, keep_going=keep_going, fingerprint=fingerprint,
                                            max_depth=limits.max_depth, por=por)
    saved = checkpoints.load(run, Path(resume), identity, por=por) if resume is not None else None
    save = (checkpoints.saver(run, Path(checkpoint), identity, on_error=on_checkpoint_error or _warn)
            if checkpoint is not None else None)
    result = dfs(run.network, run.properties, limits=limits, keep_going=keep_going, fingerprint=fingerprint,
                 metrics=run.metrics, progress=progress, watchdog=watchdog, checkpoint=save,
                 checkpoint_interval=checkpoint_every, resume=saved, por=por)
    return dataclasses.replace(result, system=run.network, sources=run.sources)


#: Why a reduced search leaves out the default properties of whole executions.
POR_UNCHECKED_WHY = "--por does not check properties of whole executions yet"


def _reduced(run: Run, rebuild: Callable[[], Any] | None, *, limits: Limits, keep_going: bool,
             fingerprint: bool, watchdog: Watchdog | None, progress: ProgressCallback | None, checkpoint: Any,
             resume: Any, checkpoint_every: float, on_checkpoint_error: Callable[[Exception], None] | None,
             workers: int, engine: str, address: str | None, shortest: bool, partition: str) -> Result:
    """:func:`search` with ``por``: :func:`explore` (depth-first, breadth-first with
    ``shortest``, or partitioned) over stubborn sets, with the properties a reduced search
    checks."""
    from nice_attendre.por import unsupported
    from nice_attendre.property import EXECUTION_EXPECTATIONS, Expectation

    problem = unsupported(run.network)
    if problem is not None:
        raise InputError(problem)
    unchecked: tuple[tuple[str, str], ...] = ()
    # the depth-first search checks termination (it finds every cycle it closes); the
    # breadth-first and partitioned ones check no property of whole executions
    depth_first = not shortest and workers <= 1 and engine == "processes"
    if not run.named:  # the defaults: leave out what this search cannot check, and say so
        left_out = (EXECUTION_EXPECTATIONS - {Expectation.TERMINATION} if depth_first else EXECUTION_EXPECTATIONS)
        unchecked = tuple((p.name, POR_UNCHECKED_WHY) for p in run.properties if p.expectation in left_out)
        run = dataclasses.replace(run, properties=tuple(p for p in run.properties if p.expectation not in left_out))
    else:
        from nice_attendre.por import refusal

        problem = refusal(run.properties, cycles=depth_first)
        if problem is not None:
            raise InputError(problem)
    result = explore(run, rebuild, limits=limits, keep_going=keep_going, fingerprint=fingerprint, watchdog=watchdog,
                     progress=progress, checkpoint=checkpoint, resume=resume, checkpoint_every=checkpoint_every,
                     on_checkpoint_error=on_checkpoint_error, workers=workers, engine=engine, address=address,
                     shortest=shortest, partition=partition, por=True)
    return dataclasses.replace(result, unchecked=unchecked + result.unchecked, reduction="partial-order")


def _warn(exc: Exception) -> None:
    warnings.warn(str(exc), RuntimeWarning, stacklevel=2)


def check_handler_seconds(seconds: float | None) -> None:
    """Raise :class:`InputError` unless ``seconds`` is ``None`` or a finite number above 0."""
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                                or not math.isfinite(seconds) or seconds <= 0):
        raise InputError(f"max_handler_seconds must be a finite number above 0, got {seconds!r}")


def not_started(reason: str, signum: int | None, seconds: float) -> Result:
    """The result of a run that a limit stopped while the network was being built."""
    return Result(Stats(0, 0, 0, 0, seconds), (), False, reason, signal=signum)


def model(app: Any, **options: Any) -> tuple[Any, tuple[Property, ...], tuple[Metric, ...]]:
    """``(network, properties, metrics)`` built by :func:`build`: the model factory that each
    shard of a Ray search calls where it runs (a picklable ``partial`` of it)."""
    run = build(app, **options)
    return run.network, run.properties, run.metrics


ENGINES = ("processes", "ray")


def check_engine(workers: int, engine: str, address: str | None, partition: str = FINGERPRINT,
                 max_memory: int | None = None) -> None:
    """Fail early on a bad combination of ``workers``, ``engine``, ``address``, ``partition``
    and ``max_memory``."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"workers must be a whole number >= 1, got {workers!r}")
    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r} (known: {', '.join(ENGINES)})")
    if address is not None and engine != "ray":
        raise InputError("--address joins a Ray cluster: use it with --engine ray")
    if max_memory is not None and engine == "ray":
        raise InputError("--max-memory bounds the memory of this machine's processes, and Ray actors may run "
                         "on others: drop it with --engine ray (Ray's own memory monitor bounds its workers), "
                         "or use --workers N without --engine")
    if partition != FINGERPRINT and workers == 1 and engine == "processes":
        raise InputError("--partition shares the states among the shards of a partitioned search: "
                         "use it with --workers N (N >= 2; one worker is the sequential search) or --engine ray")


def verify(app: Any, *, topology: Any = None, packets: int = 1, protocol: Any = "openflow",
           properties: Any = None, app_options: Mapping[str, Any] | None = None,
           sender: str | None = None, receiver: str | None = None,
           max_transitions: int | None = None, max_states: int | None = None,
           max_depth: int | None = None, max_seconds: float | None = None,
           max_memory: int | None = None, max_handler_seconds: float | None = DEFAULT_HANDLER_SECONDS,
           keep_going: bool = False, fingerprint: bool = False, count_load: bool = False,
           instant_stats: bool | None = None, threaded_controller: bool | str = False,
           command_order: str = "fifo", flows: Any = None, scenario: Any = None,
           faults: Mapping[str, int | str] | None = None, protocol_options: Mapping[str, Any] | str | None = None,
           checkpoint: str | Path | None = None, resume: str | Path | None = None,
           checkpoint_every: float = DEFAULT_CHECKPOINT_SECONDS,
           progress: ProgressCallback | None = None, workers: int = 1, engine: str = "processes",
           address: str | None = None, shortest: bool = False, memo: bool | int = True,
           partition: str = FINGERPRINT, joins_first: bool = False, coverage: bool = False,
           simulate: bool = False, seed: int | None = None, walks: int | None = None,
           walk_depth: int | None = None, bias: str | None = None, shrink: bool | None = None,
           por: bool = False, discover: bool = False, discover_seconds: float = 30.0) -> Result:
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
    ``max_seconds`` counts from the start (building the network included) and
    ``max_memory`` is in bytes of resident memory. ``max_handler_seconds`` bounds one app
    handler call (longer is the violation ``app-exception``; ``None``: unbounded). User code
    that goes on 2 s after it was told to stop (a handler or property that catches what
    stops it in a loop, or ignores the alarm) cannot be stopped from inside the process: the
    process is then ended (``os._exit``) with ``nice-attendre: ...`` and why on stderr and
    exit status 3, as the command line does, rather than hang for ever.
    ``count_load`` adds control-plane counters to the state and reports their min/max per
    complete execution in ``result.metrics``. ``threaded_controller`` lets controller
    handler calls race (type-3 races): ``"per-switch"`` (or ``True``: each switch's messages
    in order) or ``"any"`` (also one switch's messages in any order); ``command_order="any"``
    lets a switch execute pending commands in any order no barrier forbids (see
    :mod:`nice_attendre.models.channels`). ``faults`` gives fault budgets by kind
    (``{"loss": 1, "link": 1}``; a scoped link budget ``{"link": "1:switches"}``; see
    :mod:`nice_attendre.models.faults`). ``checkpoint``, ``resume`` and ``checkpoint_every``
    as for :func:`search`.
    ``protocol`` is a variant's name, optionally with parameters (``"pif:action=drop"``);
    ``protocol_options`` gives parameters as a mapping (``{"action": "drop"}``) or the same
    ``KEY=VALUE,...`` text (see ``nice-attendre list`` for each variant's parameters).

    ``workers`` above 1 explores with that many processes, each owning the states whose
    fingerprint it is given (:mod:`nice_attendre.parallel`: the same transitions and unique
    states, breadth-first, so ``max_depth`` and traces are a shortest path's);
    ``engine="ray"`` runs those shards as Ray actors (``pip install 'nice-attendre[cluster]'``),
    on the Ray cluster at ``address`` if given, else on a local Ray instance. ``partition``
    says which shard owns a state (:mod:`nice_attendre.partition`): by its ``fingerprint``,
    or by the hash of one kind of slot (``app``, ``host``, ``table``...); results are the same.

    ``shortest`` explores breadth-first in this process so that every trace is a shortest
    one (:mod:`nice_attendre.breadth_first`: the same transition and unique-state counts for a complete
    search; ``max_depth`` is the deepest level); it refuses ``workers`` above 1, ``engine="ray"``,
    ``checkpoint`` and ``resume`` with :class:`~nice_attendre.errors.InputError`.
    ``memo`` memoises transitions (see :func:`build`): faster, the same results.
    ``por`` reduces the depth-first search by partial-order reduction (see :func:`search`).

    ``joins_first`` is the start-up semantics: by default hosts may send from the first step,
    while the switches are still executing what the app sent them when they joined (an
    OpenFlow 1.3 switch drops a frame that arrives before its table-miss entry: the race is
    real); with ``joins_first=True`` no host acts until every switch has executed the
    commands in its channel and the app has handled what the switches answered (see
    :class:`~nice_attendre.models.network.Options`). Every report says which.

    ``coverage`` measures the app's code the search runs (its handlers' lines and branches,
    in this process and the ``workers``): ``result.coverage`` is then an
    :class:`~nice_attendre.frontend.coverage.AppCoverage`; it refuses ``engine="ray"`` and
    ``resume`` (:class:`~nice_attendre.errors.InputError`).

    ``discover`` first discovers representative packets of the app's packet-in handler by
    symbolic execution (:mod:`nice_attendre.discover`, the ``discover`` extra), within
    ``discover_seconds`` of solver time, and verifies them as one-packet flows with the app's
    default traffic (or with ``flows``); ``result.packets_discovered`` says what was found. Not with
    ``scenario``.

    ``simulate`` walks the network at random instead of exploring it (:mod:`nice_attendre.simulate`):
    each walk from the initial state to quiescence, a violation, a state it has been in, or
    ``walk_depth`` events; ``seed`` makes the run reproducible (the same seed, options and
    code give the same walks and result with any ``workers`` or ``engine``; default: a
    random one, in ``result.simulation.seed``); ``bias`` is how walks choose among event
    kinds: ``swarm`` (the default: each walk draws one of the others), ``uniform``,
    ``control-first`` (the controller's and switches' steps first, NICE's no-delay) or
    ``packets-first``. It stops after ``walks`` walks, at the first violation (unless
    ``keep_going``), at ``max_transitions`` (at the end of that walk), ``max_seconds`` or
    Ctrl-C; given none, after 1,000 walks. A simulation is never complete: without a
    violation its verdict is ``incomplete``; ``result.simulation`` says what it covered.
    ``workers``/``engine``/``address`` run the walks in processes or on Ray. It refuses
    ``shortest``, ``checkpoint``, ``resume``, ``fingerprint``, ``partition``, ``max_states``
    and ``max_depth``. ``shrink`` shrinks each violation's trace before it is returned
    (:mod:`nice_attendre.shrink`: its length as found is the discovery's
    ``unshrunk_length``); None: for a simulation, not for a search.

    A file named by ``app``, ``properties``, ``topology`` or ``scenario`` is loaded as it is
    at this call (edited since an earlier call: afresh), and ``result.sources`` lists each
    such file with the SHA-256 of the content checked.

    ``result.ok`` is true only for a complete search without violation. A limit gives an
    ``incomplete`` verdict (the result of a limit reached while building has zero counts
    and no ``system``). Ctrl-C during the search ends it cleanly and raises
    :class:`~nice_attendre.errors.Interrupted` (a ``KeyboardInterrupt``) whose ``result``
    is the partial result. Raises :class:`~nice_attendre.errors.InputError` (or a
    subclass) for bad input.
    """
    limits = Limits(max_transitions, max_states, max_depth, max_seconds, max_memory)
    check_handler_seconds(max_handler_seconds)
    check_engine(workers, engine, address, max_memory=max_memory)
    from nice_attendre.frontend.simulation import check_simulation

    check_simulation(simulate, seed=seed, walks=walks, walk_depth=walk_depth, bias=bias, shortest=shortest,
                     checkpoint=checkpoint, resume=resume, fingerprint=fingerprint, partition=partition,
                     max_states=max_states, max_depth=max_depth)
    if shortest:
        from nice_attendre.breadth_first import check_shortest

        check_shortest(workers, engine, resume, checkpoint)
    if checkpoint is not None:
        check_writable(Path(checkpoint), "checkpoint")
    from nice_attendre.frontend.coverage import check_coverage, measuring

    if coverage:
        check_coverage(engine, resume)
    discovery = None
    if discover:
        from nice_attendre.discover.run import discovered_traffic

        discovery, traffic = discovered_traffic(app, topology=topology, packets=packets, app_options=app_options,
                                                sender=sender, receiver=receiver, flows=flows, scenario=scenario,
                                                seconds=discover_seconds)
        packets, flows, scenario, sender, receiver = traffic["packets"], traffic["flows"], None, None, None
    started = time.monotonic()
    with Watchdog(max_seconds=max_seconds, max_memory=max_memory, call_seconds=max_handler_seconds) as watchdog, \
            measuring(coverage, workers) as measurement:
        options = dict(topology=topology, packets=packets, protocol=protocol, properties=properties,
                       app_options=app_options, sender=sender, receiver=receiver, count_load=count_load,
                       instant_stats=instant_stats, threaded_controller=threaded_controller,
                       command_order=command_order, flows=flows, scenario=scenario, faults=faults,
                       protocol_options=protocol_options, memo=memo, joins_first=joins_first)
        try:
            run = build(app, **options, guard=watchdog.guard,  # type: ignore[arg-type]
                        on_app=None if measurement is None else measurement.start)
            result = search(run, partial(model, app, **options), limits=limits, keep_going=keep_going,
                            fingerprint=fingerprint, watchdog=watchdog, progress=progress, checkpoint=checkpoint,
                            resume=resume, checkpoint_every=checkpoint_every, workers=workers, engine=engine,
                            address=address, shortest=shortest, partition=partition, simulate=simulate, seed=seed,
                            walks=walks, walk_depth=walk_depth, bias=bias, shrink=shrink, por=por)
            if measurement is not None:
                result = dataclasses.replace(result, coverage=measurement.finish(result.complete, result.stop_reason))
        except StopRequest as stop:  # a limit was reached before the search started (while building)
            watchdog.unbind()  # the limits are off from here: the timer would raise it again
            return not_started(stop.reason, stop.signum, time.monotonic() - started)
    if discovery is not None:
        result = dataclasses.replace(result, packets_discovered=discovery)
    if result.stop_reason == "interrupted":
        raise Interrupted(result.signal if result.signal is not None else signal.SIGINT, result)
    return result
