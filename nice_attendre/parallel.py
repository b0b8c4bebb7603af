"""The partitioned search: every state owned by one shard, chosen by its fingerprint.

:func:`search` drives shards (:class:`~nice_attendre.shard.Shard`) level by level on any
*cluster*: :class:`ProcessCluster` (worker processes on this machine, ``--workers N``),
:class:`nice_attendre.ray_engine.RayCluster` (Ray actors, ``--engine ray``) or
:class:`InProcessCluster` (every shard in this process, for tests). Each level, every
shard expands its frontier and offers each successor's fingerprint to its owner; the owners
ask for the new ones, which travel as component hashes plus the components the owner has not
been sent yet; then every shard stores and checks its new states.

What it reports, compared with :func:`~nice_attendre.dfs` on the same system:

* ``transitions``, ``unique_states`` and ``revisits`` are identical for a complete search
  (transitions = the sum of enabled events over the expanded states, whatever the order);
  states are stored as 64-bit fingerprints, so ``collision_probability`` is set;
* ``max_depth`` is the deepest breadth-first level: the largest number of events on a
  *shortest* path from an initial state to a stored state. The DFS reports the deepest
  stack, which follows whatever path it took first, so it is usually larger. (Like the DFS,
  which explores all that one initial state reaches before it starts from the next, the
  search runs one round per initial state, from those not reached in earlier rounds; levels
  count from each round's initial state. The network model has one initial state.);
* discoveries and their traces are deterministic (the same for any number of shards and
  either engine) but not the DFS's: a trace is a shortest path to the violating state, rebuilt
  by replaying, from the initial state, the events whose successors have the recorded parent
  fingerprints. Without ``keep_going`` the search stops after the level that stored the
  first violating state and reports the violating state with the smallest fingerprint of
  that level (the DFS stops at once, at the first it meets). Properties of transitions are
  checked on every step, as the DFS checks them (a violating step is not followed further);
  a violating step is reported at the level it leads to, after the state before it, and its
  trace is the shortest path to that state followed by the step;
* limits: ``max_transitions`` is split between the shards per level and never exceeded;
  ``max_states`` and ``max_depth`` apply at level ends (the last level may store more states
  than ``max_states``); ``max_seconds`` is checked within levels too. Ctrl-C ends the search with the
  counts of the levels completed, and never loses a violation already found (a
  ``KeyboardInterrupt`` before its trace was rebuilt reports it without one). With a :class:`~nice_attendre.watchdog.Watchdog` (the
  command line's), its limits and signals stop the search as they stop the DFS: its deadline
  and Ctrl-C, and its memory bound applied to this process and the workers' together; the
  shards end the level they are expanding early (in worker processes; Ray actors finish their
  step), and the report gives the counts up to there;
* with partial-order reduction (a cluster built with ``por``) the shards explore stubborn
  sets with the breadth-first proviso across shards (:mod:`nice_attendre.shard`): each level
  has a second round (:meth:`Cluster.widen`) and the counts are those of
  :func:`~nice_attendre.breadth_first.bfs` with ``por`` for any number of shards (one initial
  state); ``max_transitions`` bounds both rounds;
* a worker lost mid-search (its process killed or exited, or stopped and not answering; a
  Ray actor that died: the cluster raises :class:`WorkerLost`) ends the search with
  ``stop_reason`` ``worker-lost``, ``stop_detail`` saying which worker and what happened,
  and the counts of the levels completed; violations found before are kept, without traces
  (the lost worker's parent log is gone). Worker processes die with the coordinator, even
  when it is killed (:func:`die_with_parent`).
"""
from __future__ import annotations

import math
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
import traceback
from typing import Any, Callable, Protocol, Sequence

from nice_attendre.checker import Limits, Progress, ProgressCallback, end_of_search
from nice_attendre.errors import InputError, ModelError, NiceAttendreError, UnsupportedFeature
from nice_attendre.fingerprint import fingerprint_functions
from nice_attendre.partition import BY_FINGERPRINT, Partition
from nice_attendre.property import EXECUTION_EXPECTATIONS, Expectation, Metric, Property
from nice_attendre.result import Balance, Discovery, Result, Stats
from nice_attendre.shard import Found, Intake, LevelReport, Shard, tune_gc
from nice_attendre.trace import Step, Trace
from nice_attendre.visited import collision_probability
from nice_attendre.watchdog import Watchdog, memory_usage

#: ``make()`` -> (system, properties, metrics): builds the model in each place it runs.
ModelFactory = Callable[[], "tuple[Any, Sequence[Property], Sequence[Metric]]"]


def kill_processes(procs: Sequence[Any]) -> None:
    """SIGKILL every process of ``procs`` still running, then reap each."""
    for process in procs:
        if process.is_alive():
            try:
                process.kill()
            except OSError:
                pass
    for process in procs:
        process.join(5)


def shut_down(conns: Sequence[Any], procs: Sequence[Any]) -> None:
    """Ask each worker to close (over ``conns``), then end ``procs``: a worker still running
    after 2 s gets SIGTERM, after 2 more SIGKILL (a stopped one, or one ignoring SIGTERM);
    the connections are closed last."""
    for conn in conns:
        try:
            conn.send(("close", ()))
        except (OSError, ValueError):
            pass
    for process in procs:
        process.join(2)
        if process.is_alive():
            process.terminate()
            process.join(2)
        if process.is_alive():  # stopped, or ignoring SIGTERM
            process.kill()
            process.join(5)
    for conn in conns:
        conn.close()


class WorkerError(NiceAttendreError):
    """A shard's process or actor failed (it crashed, was killed, or could not start)."""


class WorkerLost(WorkerError):
    """A worker process or actor was lost during the search: it died (killed by a signal,
    or exited) or was stopped and does not answer. :func:`search` ends the search there
    (``stop_reason`` ``worker-lost``, the counts of the levels completed); ``str`` says
    which worker, its process id and what happened."""


class Cluster(Protocol):
    """Shards running somewhere, driven level by level (each owns the states its partition gives it)."""

    shards: int
    #: whether the shards explore stubborn sets (partial-order reduction)
    por: bool

    def seed(self, position: int) -> list[Intake]:
        """Every shard starts a round from initial state number ``position``."""
        ...

    def expand(self, budgets: Sequence[int | None], seconds: float | None) -> list[LevelReport]:
        """Every shard expands its frontier; the payloads stay with the cluster for :meth:`take`."""
        ...

    def widen(self, budgets: Sequence[int | None], seconds: float | None) -> list[LevelReport]:
        """With partial-order reduction (``por``), after :meth:`expand`: every shard answers
        the offers (``want``), then expands fully the states the answers and its own
        successors name (``widen``: see :mod:`nice_attendre.shard`); its offers stay with the
        cluster for :meth:`take`."""
        ...

    def take(self) -> list[Intake]:
        """Every shard takes in what the last :meth:`expand` (and :meth:`widen`) offered it:
        ``want``, ``ship`` and ``take`` on every shard, each given what the others addressed
        to it."""
        ...

    def parents(self, fingerprints: Sequence[Sequence[int]]) -> list[list[int | None]]:
        """Shard ``i`` answers the parents of ``fingerprints[i]``."""
        ...

    def close(self) -> None:
        """Stop every shard (also after an error or Ctrl-C)."""
        ...

    def stop(self) -> None:
        """Ask the shards to end the level they are expanding early (called from a signal
        handler: it only sets a flag; a cluster that cannot reach its shards at once does
        nothing, and they stop at the end of the step)."""
        ...

    def memory(self) -> int:
        """Bytes of memory the shards use outside this process (0 if they run in it)."""
        ...


# ---- the search ---------------------------------------------------------------------------


def search(cluster: Cluster, system: Any, properties: Sequence[Property] = (), *,
           limits: Limits = Limits(), keep_going: bool = False, progress: ProgressCallback | None = None,
           progress_interval: float = 0.5, watchdog: Watchdog | None = None) -> Result:
    """Explore ``system`` with the shards of ``cluster``; see the module docstring for what is
    reported. ``system`` (this process's copy) rebuilds the traces. Closes the cluster.

    ``watchdog``: bound for the search (see :meth:`Watchdog.bind`), with the cluster's
    :meth:`~Cluster.stop` and this process's and the workers' memory."""
    start = time.monotonic()
    deadline = None if limits.max_seconds is None else start + limits.max_seconds
    if watchdog is not None and watchdog.deadline is not None:
        deadline = watchdog.deadline if deadline is None else min(deadline, watchdog.deadline)
    stop_at = [math.inf]  # lowered to -1 by the watchdog: a limit or a signal stops the search
    signum: int | None = None
    next_progress = start + progress_interval
    shards = cluster.shards
    transitions = unique = revisits = max_depth = level = 0
    found: list[tuple[int, Found]] = []  # (round, found)
    round_index = 0
    held: set[str] = set()
    metrics: dict[str, tuple[int, int]] = {}
    stop_reason: str | None = None
    stop_detail: str | None = None
    depth_cut = False
    busy = [0.0] * shards  # each shard's CPU time
    busiest = 0.0  # the sum over steps of the busiest shard's time in each (see Balance)
    por = getattr(cluster, "por", False)

    def take_in(intakes: list[Intake]) -> int:
        nonlocal unique, revisits, busiest
        for step in zip(*(intake.seconds for intake in intakes)):
            busiest += max(step)
            for index, seconds in enumerate(step):  # summed step by step, as busiest is
                busy[index] += seconds
        for intake in intakes:
            unique += intake.new_states
            revisits += intake.revisits
            found.extend((round_index, item) for item in intake.found)
            held.update(intake.sometimes_held)
            for name, (low, high) in intake.metrics.items():
                old = metrics.get(name, (low, high))
                metrics[name] = (min(old[0], low), max(old[1], high))
        return sum(intake.new_states for intake in intakes)

    def expanded(reports: list[LevelReport], stop_reason: str | None) -> str | None:
        """Count what the shards' expansion ``reports`` say; the stop reason then."""
        nonlocal busiest, transitions, depth_cut
        busiest += max(report.seconds for report in reports)
        for index, report in enumerate(reports):
            busy[index] += report.seconds
            transitions += report.transitions
            found.extend((round_index, item) for item in report.found)
            depth_cut = depth_cut or report.depth_cut
            if report.stop_reason == "stopped":  # the watchdog asked: its reason
                stop_reason = stop_reason or stopped() or "interrupted"
            stop_reason = stop_reason or report.stop_reason
        return stop_reason

    def stopped() -> str | None:
        """The watchdog's reason to stop, if it asked."""
        nonlocal signum
        if stop_at[0] >= 0 or watchdog is None:
            return None
        signum = watchdog.signum
        return watchdog.reason or "interrupted"

    if watchdog is not None:
        watchdog.bind(stop_at, on_stop=cluster.stop, memory=MemoryGauge(cluster))
    try:
        for round_index in range(len(system.initial_states())):
            frontier = take_in(cluster.seed(round_index))
            level = 0
            while True:
                if stop_at[0] < 0:
                    stop_reason = stopped()
                elif found and not keep_going:
                    stop_reason = "violation"
                elif not frontier:
                    break
                elif limits.max_states is not None and unique >= limits.max_states:
                    stop_reason = "max-states"
                elif deadline is not None and time.monotonic() >= deadline:
                    stop_reason = "max-seconds"
                if stop_reason is not None:
                    break
                budgets: list[int | None] = [None] * shards
                if limits.max_transitions is not None:
                    left = max(limits.max_transitions - transitions, 0)
                    budgets = [left // shards + (1 if i < left % shards else 0) for i in range(shards)]
                seconds = None if deadline is None else max(deadline - time.monotonic(), 0.0)
                reports = cluster.expand(budgets, seconds)
                stop_reason = expanded(reports, stop_reason)
                if por:  # the proviso's second round (see nice_attendre.shard)
                    budgets = [None if budget is None else max(budget - report.transitions, 0)
                               for budget, report in zip(budgets, reports)]
                    seconds = None if deadline is None else max(deadline - time.monotonic(), 0.0)
                    stop_reason = expanded(cluster.widen(budgets, seconds), stop_reason)
                frontier = take_in(cluster.take())
                level += 1
                if frontier:
                    max_depth = max(max_depth, level)
                now = time.monotonic()
                if progress is not None and now >= next_progress:
                    next_progress = now + progress_interval
                    progress(Progress(transitions, unique, level, max_depth, now - start))
                stop_reason = stop_reason or stopped()
                if stop_reason is not None:
                    break
            if stop_reason is not None:
                break
        if watchdog is not None:  # the traces are the report's: no limit cuts them short
            watchdog.unbind()
        discoveries = _discoveries(cluster, system, found, keep_going) if found else []
    except KeyboardInterrupt as exc:
        stop_reason, signum = "interrupted", getattr(exc, "signum", signal.SIGINT)
        # a violation found is never lost: reported without its trace (a shard's answer may
        # still be on its way, so the shards are not asked for parents now)
        discoveries = _untraced(found, keep_going, "the search was interrupted before its trace was rebuilt")
    except WorkerLost as exc:  # the counts are those of the levels completed
        stop_reason, stop_detail = "worker-lost", str(exc)
        # the lost worker's parent log is gone with it: violations are reported without traces
        discoveries = _untraced(found, keep_going, "a worker was lost before its trace was rebuilt")
    except UnsupportedFeature as exc:  # a shard's app met a feature the model lacks (a value computed at run
        stop_reason, stop_detail = "unsupported-feature", str(exc)  # time): the levels completed are reported
        # (the other shards' answers to that level may still be on their way: no traces asked for)
        discoveries = _untraced(found, keep_going, "the search stopped at a feature the model does not have "
                                "before its trace was rebuilt")
    finally:
        if watchdog is not None:
            watchdog.unbind()
        cluster.close()
    unmet = [p for p in properties if p.expectation is Expectation.SOMETIMES and p.name not in held]
    unchecked = tuple((p.name, UNCHECKED_WHY) for p in properties if p.expectation in EXECUTION_EXPECTATIONS)
    stop_reason = end_of_search(stop_reason, depth_cut, unmet, discoveries)
    stats = Stats(transitions, unique, revisits, max_depth, time.monotonic() - start)
    return Result(stats, tuple(discoveries), stop_reason is None, stop_reason, metrics,
                  collision_probability=collision_probability(unique, unique + revisits),
                  balance=Balance(tuple(busy), busiest), signal=signum if stop_reason == "interrupted" else None,
                  stop_detail=stop_detail if stop_reason in ("worker-lost", "unsupported-feature") else None,
                  unchecked=unchecked)


#: Why the partitioned search leaves out the properties of whole executions.
UNCHECKED_WHY = "the partitioned search (--workers, --engine ray) cannot see cycles: run in one process to check it"


def check_properties(properties: Sequence[Property], *, named: bool) -> None:
    """Raise :class:`~nice_attendre.errors.InputError` when the user ``named`` a property of
    whole executions (``termination``, an ``eventually`` one): the partitioned search cannot
    check it. Left to the defaults, :func:`search` leaves it out and says so
    (``Result.unchecked``)."""
    execution = [p.name for p in properties if p.expectation in EXECUTION_EXPECTATIONS]
    if named and execution:
        raise InputError(f"{', '.join(execution)}: the partitioned search (--workers, --engine ray) cannot see "
                         "cycles; run in one process to check it, or leave it out")


def _untraced(found: list[tuple[int, Found]], keep_going: bool, why: str) -> list[Discovery]:
    """The reported violations without their traces, each saying ``why``."""
    return [Discovery(name, Expectation(expectation), None, f"{reason} ({why})")
            for item in _reported(found, keep_going) for name, expectation, reason in item.violations]


def _reported(found: list[tuple[int, Found]], keep_going: bool) -> list[Found]:
    """The violating states and steps reported (see the module docstring for which), in the
    order (round, level, fingerprint, step; a state's own violation before its steps')."""
    ordered = [item for _round, item in sorted(found, key=lambda rf: (rf[0], rf[1].level, rf[1].fingerprint,
                                                                       -1 if rf[1].step is None else rf[1].step))]
    return ordered if keep_going else ordered[:1]


def _discoveries(cluster: Cluster, system: Any, found: list[tuple[int, Found]], keep_going: bool) -> list[Discovery]:
    """The reported violations with their traces, in the order of :func:`_reported`."""
    ordered = _reported(found, keep_going)
    chains = _parent_chains(cluster, [f.fingerprint for f in ordered])
    discoveries = []
    for item in ordered:
        trace = rebuild_trace(system, chains[item.fingerprint], item.step)
        for name, expectation, reason in item.violations:
            discoveries.append(Discovery(name, Expectation(expectation), trace, reason))
    return discoveries


def _parent_chains(cluster: Cluster, fingerprints: Sequence[int]) -> dict[int, list[int]]:
    """For each fingerprint, the fingerprints from its initial state down to it (every shard
    is asked: the owner of a state owned by a part of it is not known from its fingerprint)."""
    chains = {fp: [fp] for fp in fingerprints}
    open_chains = list(chains.values())
    while open_chains:
        ask = [chain[-1] for chain in open_chains]
        answers = cluster.parents([ask] * cluster.shards)
        parent_of: dict[int, int | None] = dict.fromkeys(ask)
        for got in answers:
            for fp, parent in zip(ask, got):
                if parent is not None:
                    parent_of[fp] = parent
        still = []
        for chain in open_chains:
            parent = parent_of[chain[-1]]
            if parent is None:
                raise ModelError(f"no shard stores the state with fingerprint {chain[-1]:#018x}")
            if parent != chain[-1]:
                chain.append(parent)
                still.append(chain)
        open_chains = still
    return {fp: chain[::-1] for fp, chain in chains.items()}


def rebuild_trace(system: Any, chain: Sequence[int], last: int | None = None) -> Trace:
    """The trace through the states with fingerprints ``chain`` (an initial state's first):
    from that initial state, at each step the first enabled event (in ``enabled`` order)
    whose successor has the next fingerprint; then, if ``last`` is given, the step by the
    event at that index of the last state's enabled events (a step that violated a
    property of transitions)."""
    fingerprint_of, step = fingerprint_functions(system)
    initial = next((s for s in system.initial_states() if fingerprint_of(s) == chain[0]), None)
    if initial is None:
        raise ModelError(f"no initial state has the fingerprint {chain[0]:#018x}")
    state, fp, steps = initial, chain[0], []
    for number, target in enumerate(chain[1:], start=1):
        for event in system.enabled(state):
            successor, sfp = step(state, fp, event)
            if sfp == target:
                steps.append(Step(event, successor))
                state, fp = successor, sfp
                break
        else:
            raise ModelError(f"step {number} of a trace: no enabled event leads to the state with "
                             f"fingerprint {target:#018x}; the model is not deterministic")
    if last is not None:
        events = system.enabled(state)
        if last >= len(events):
            raise ModelError(f"the last step of a trace: the state has {len(events)} events, not {last + 1}; "
                             "the model is not deterministic")
        steps.append(Step(events[last], step(state, fp, events[last])[0]))
    return Trace(initial, tuple(steps))


# ---- shards in this process ----------------------------------------------------------------


class InProcessCluster:
    """Every shard in this process, run one after another: the partitioned search without
    parallelism (for tests, and to debug a model's codec or fingerprints)."""

    def __init__(self, make: ModelFactory, shards: int, *, max_depth: int | None = None,
                 partition: Partition = BY_FINGERPRINT, por: bool = False) -> None:
        system, properties, metrics = make()
        self.shards = shards
        self.por = por
        self._shards = [Shard(i, shards, system, properties, metrics, max_depth=max_depth, partition=partition,
                              por=por) for i in range(shards)]
        self._stop = _Flag()
        for shard in self._shards:
            shard.stop = self._stop
        self._payloads: list[list[bytes]] = [[b""] * shards for _ in range(shards)]

    def seed(self, position: int) -> list[Intake]:
        return [shard.seed(position) for shard in self._shards]

    def expand(self, budgets: Sequence[int | None], seconds: float | None) -> list[LevelReport]:
        results = [shard.expand(budget, seconds) for shard, budget in zip(self._shards, budgets)]
        self._payloads = [payloads for _report, payloads in results]
        return [report for report, _payloads in results]

    def widen(self, budgets: Sequence[int | None], seconds: float | None) -> list[LevelReport]:
        n, shards = self.shards, self._shards
        offers = self._payloads
        answers = [shard.want([offers[i][j] for i in range(n)]) for j, shard in enumerate(shards)]
        results = [shard.widen(budget, seconds, [answers[j][i] for j in range(n)])
                   for i, (shard, budget) in enumerate(zip(shards, budgets))]
        self._payloads = [payloads for _report, payloads in results]
        return [report for report, _payloads in results]

    def take(self) -> list[Intake]:
        n, shards = self.shards, self._shards
        offers, self._payloads = self._payloads, [[b""] * n for _ in range(n)]
        requests = [shard.want([offers[i][j] for i in range(n)]) for j, shard in enumerate(shards)]
        payloads = [shard.ship([requests[j][i] for j in range(n)]) for i, shard in enumerate(shards)]
        return [shard.take([payloads[i][j] for i in range(n)]) for j, shard in enumerate(shards)]

    def parents(self, fingerprints: Sequence[Sequence[int]]) -> list[list[int | None]]:
        return [shard.parents(fps) for shard, fps in zip(self._shards, fingerprints)]

    def close(self) -> None:
        self._shards = []

    def stop(self) -> None:
        self._stop.value = 1

    def memory(self) -> int:
        return 0  # the shards are in this process


class _Flag:
    """A stop flag in this process (a worker process shares a ``RawValue`` instead)."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


# ---- worker processes on this machine -------------------------------------------------------


#: Seconds between two looks at a worker that has not answered yet: is it still alive, and
#: not stopped? (Never a bound on how long it may work: a level may take hours.)
POLL_SECONDS = 0.5

#: Looks in a row that must find a worker stopped (SIGSTOP, SIGTSTP) before it counts as lost:
#: a stop that a SIGCONT ends at once is not a loss.
STOPPED_LOOKS = 2

#: Linux's prctl option that sends a process a signal when its parent dies.
_PR_SET_PDEATHSIG = 1

#: Whether a worker process asks Linux to kill it when the coordinator dies (prctl's
#: PR_SET_PDEATHSIG); where it cannot (not Linux, or False here), it watches a pipe instead.
PARENT_DEATH_SIGNAL = sys.platform.startswith("linux")

#: The exit code of a worker that ends because the coordinator died.
ORPHAN_EXIT = 1


def _parent_death_signal() -> bool:
    """Ask the kernel to SIGKILL this process when its parent dies; False if it cannot."""
    if not PARENT_DEATH_SIGNAL:
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):  # no libc or no prctl
        return False


def _watch_parent(fd: int) -> None:
    """A worker's thread: wait until the pipe ``fd`` reaches its end (the coordinator, its
    only writer, died or closed it), then end this process at once."""
    try:
        while os.read(fd, 64):
            pass
    except OSError:
        pass
    os._exit(ORPHAN_EXIT)


def die_with_parent(parent: int, watch: tuple[int, int]) -> None:
    """In a worker process, first thing: make sure it ends when the coordinator (process
    ``parent``) dies, even in the middle of a long level or a call into the app.

    On Linux by the parent-death signal (SIGKILL; Linux sends it when the *thread* that
    forked the worker ends, so a :class:`ProcessCluster` must be used and closed by the
    thread that made it, as :func:`search` does); elsewhere by a thread that watches the
    pipe ``watch`` (read end, write end), whose write end only the coordinator keeps open.
    If the coordinator died before that was set up, this process ends now."""
    reader, writer = watch
    os.close(writer)  # the coordinator's: this process must not keep the pipe open
    if _parent_death_signal():
        os.close(reader)
    else:
        threading.Thread(target=_watch_parent, args=(reader,), name="nice-attendre-parent-watch",
                         daemon=True).start()
    if os.getppid() != parent:  # orphaned already (then no signal comes)
        os._exit(ORPHAN_EXIT)


def _serve(conn: Any, index: int, shards: int, model: tuple[Any, Sequence[Property], Sequence[Metric]],
           max_depth: int | None, partition: Partition, stop: Any, call_seconds: float | None,
           parent: int, watch: tuple[int, int], por: bool = False) -> None:
    """A worker process: run shard ``index``'s methods as the coordinator asks (``stop``: the
    flag, in memory shared with the coordinator, that ends an expansion early; ``parent``
    and ``watch``: see :func:`die_with_parent`)."""
    die_with_parent(parent, watch)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the coordinator's to handle
    tune_gc()
    try:
        system, properties, metrics = model
        shard = Shard(index, shards, system, properties, metrics, max_depth=max_depth, partition=partition,
                      por=por)
        shard.stop = stop
    except BaseException as exc:  # noqa: BLE001 - reported to the coordinator
        conn.send(("error", _portable(exc)))
        return
    # This process's own watchdog, on the guard of its copy of the model: an app handler
    # that runs longer than ``call_seconds`` becomes the violation app-exception, as in the
    # sequential search, and one still running when the coordinator stops the search is
    # stopped too (a stop never raises outside a call into the app: see Watchdog).
    watchdog = Watchdog(guard=getattr(system, "guard", None), call_seconds=call_seconds, signals=False,
                        stop_flag=stop)
    with watchdog:
        watchdog.bind([math.inf])
        conn.send(("ok", None))
        _answer(conn, shard)


def _answer(conn: Any, shard: Shard) -> None:
    """Run the coordinator's requests on ``shard`` until it closes the connection."""
    while True:
        try:
            method, args = conn.recv()
        except EOFError:  # the coordinator is gone
            return
        if method == "close":
            return
        try:
            conn.send(("ok", getattr(shard, method)(*args)))
        except BaseException as exc:  # noqa: BLE001 - reported to the coordinator
            conn.send(("error", _portable(exc)))


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling, else a :class:`WorkerError` with its text."""
    try:
        clone = pickle.loads(pickle.dumps(exc))
        if type(clone) is type(exc) and str(clone) == str(exc):
            return exc
    except Exception:  # noqa: BLE001 - any failure to pickle
        pass
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return WorkerError(f"a shard failed: {detail}")


def process_state(pid: int) -> str | None:
    """The state letter of process ``pid`` from /proc/<pid>/stat (``R``, ``S``, ``D``, ``T``
    stopped, ``t`` stopped by a debugger, ``Z`` zombie...); None if it is gone or /proc does
    not say."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    after = data.rfind(b")")  # the command name, in parentheses, may hold anything
    fields = data[after + 2:].split(maxsplit=1) if after >= 0 else []
    return fields[0].decode("ascii", "replace") if fields else None


def what_ended(exitcode: int | None) -> str:
    """How a process ended, from its exit code as :mod:`multiprocessing` gives it."""
    if exitcode is None:
        return "closed its connection"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"was killed by {name}" + (" (out of memory?)" if -exitcode == signal.SIGKILL else "")
    return f"exited with code {exitcode}"


class ForkedWorkers:
    """Worker processes forked from this one (they inherit the built model), each with a pipe
    to this process, a stop flag in shared memory and the pipe they watch where the
    parent-death signal is missing: the machinery the partitioned search's
    :class:`ProcessCluster` and the walks' ``WalkProcesses`` share. A subclass calls
    :meth:`_fork` from its constructor."""

    _conns: list[Any]
    _procs: list[Any]

    def _fork(self, count: int, target: Callable[..., None], args_of: Callable[[Any, int], tuple[Any, ...]],
              name: str) -> None:
        """Start ``count`` processes running ``target(*args_of(pipe_end, index))`` (``args_of``
        may read ``self._stop`` and ``self._watch``); :class:`WorkerError` if they cannot start."""
        if "fork" not in multiprocessing.get_all_start_methods():
            raise WorkerError("--workers needs the 'fork' start method (Linux or macOS)")
        context = multiprocessing.get_context("fork")
        self._conns = []
        self._procs = []
        self._stop = context.RawValue("b", 0)
        self._memory = (0.0, 0)  # (when, bytes): the workers' memory, read at most once a second
        # the pipe the workers watch where the parent-death signal is missing: this process
        # keeps its write end open for as long as it lives
        self._watch: tuple[int, int] | None = os.pipe()
        self._watch_read: int | None = self._watch[0]
        try:
            for index in range(count):
                mine, theirs = context.Pipe()
                process = context.Process(target=target, args=args_of(theirs, index), name=f"{name}-{index}",
                                          daemon=True)
                process.start()
                theirs.close()
                self._conns.append(mine)
                self._procs.append(process)
            self._close_watch_read()  # the workers have it
        except OSError as exc:  # no fork: out of processes or memory
            self.close()
            raise WorkerError(f"cannot start {count} worker processes: {exc}") from None
        except BaseException:
            self.close()
            raise

    def _kill_all(self) -> None:
        """SIGKILL every worker still running and reap it."""
        kill_processes(self._procs)

    def close(self) -> None:
        """End every worker (close request, then SIGTERM, SIGKILL) and the watched pipe."""
        shut_down(self._conns, self._procs)
        self._conns, self._procs = [], []
        self._close_watch_read()
        if self._watch is not None:
            os.close(self._watch[1])  # (the workers watching it are gone, or end now)
            self._watch = None

    def _close_watch_read(self) -> None:
        if self._watch_read is not None:
            os.close(self._watch_read)
            self._watch_read = None

    def stop(self) -> None:
        self._stop.value = 1

    def memory(self) -> int:
        """The workers' memory (:func:`process_memory`), read again at most once a second
        (reading it makes the kernel walk the workers' page tables)."""
        now = time.monotonic()
        when, total = self._memory
        if now - when >= 1.0:
            total = sum(process_memory(process.pid) for process in self._procs if process.pid is not None)
            self._memory = (now, total)
        return total


class ProcessCluster(ForkedWorkers):
    """``shards`` worker processes forked from this one (each inherits the built model).

    ``call_seconds`` bounds each call into the app in the workers, as the command line's
    ``--max-handler-seconds`` does in the sequential search (see :class:`Watchdog`).

    Payloads travel through this process as opaque bytes. A worker that dies (killed by a
    signal, or exited) or is stopped (SIGSTOP, SIGTSTP: found stopped at
    :data:`STOPPED_LOOKS` looks in a row, :data:`POLL_SECONDS` apart, while this process
    waits for its answer) raises :class:`WorkerLost`, and then every worker is killed. The
    workers end with this process, even if it is killed (:func:`die_with_parent`).
    :meth:`close` ends every worker.
    """

    def __init__(self, make: ModelFactory, shards: int, *, max_depth: int | None = None,
                 partition: Partition = BY_FINGERPRINT, call_seconds: float | None = None,
                 por: bool = False) -> None:
        if shards < 1:
            raise ValueError(f"shards must be at least 1, got {shards}")
        if "fork" not in multiprocessing.get_all_start_methods():
            raise WorkerError("--workers needs the 'fork' start method (Linux or macOS)")
        self.shards = shards
        self.por = por
        model = make()
        self._payloads: list[list[bytes]] | None = None
        self._lost = False
        self._waiting_ready = False
        self._fork(shards, _serve, lambda theirs, index: (theirs, index, shards, model, max_depth, partition,
                                                          self._stop, call_seconds, os.getpid(), self._watch, por),
                   "nice-attendre-shard")
        # Each worker says it is ready (or why it is not) in answer to the first request: a
        # worker lost while starting is lost during the search, and ends it as any loss does.
        self._waiting_ready = True

    def _lose(self, index: int, what: str) -> WorkerLost:
        """Worker ``index`` is lost: kill every worker now (what they do is of no use any
        more, and one that is stopped only dies by SIGKILL); the error to raise."""
        self._lost = True
        pid = self._procs[index].pid
        self._kill_all()
        return WorkerLost(f"worker {index} (process {pid}) {what}")

    def _receive(self, index: int) -> Any:
        conn, process = self._conns[index], self._procs[index]
        stopped = 0
        while not conn.poll(POLL_SECONDS):  # (an answer, or the end of the pipe: the worker died)
            state = process_state(process.pid)
            if state in ("Z", "X") or (state is None and not process.is_alive()):
                break  # dead: its end of the pipe is closing
            stopped = stopped + 1 if state == "T" else 0
            if stopped >= STOPPED_LOOKS:
                raise self._lose(index, "was stopped (SIGSTOP or SIGTSTP) and does not answer")
        try:
            status, value = conn.recv()
        except (EOFError, OSError):
            process.join(5)  # it is ending: its exit code says how
            raise self._lose(index, what_ended(process.exitcode)) from None
        if status == "error":
            raise value
        return value

    def _all(self, method: str, args: Sequence[tuple[Any, ...]]) -> list[Any]:
        if self._waiting_ready:
            self._waiting_ready = False
            for index in range(self.shards):
                self._receive(index)
        for index, (conn, arguments) in enumerate(zip(self._conns, args)):
            try:
                conn.send((method, arguments))
            except (OSError, ValueError):  # its end of the pipe is closed: it died
                self._procs[index].join(5)
                raise self._lose(index, what_ended(self._procs[index].exitcode)) from None
        return [self._receive(index) for index in range(self.shards)]

    def seed(self, position: int) -> list[Intake]:
        return self._all("seed", [(position,)] * self.shards)

    def expand(self, budgets: Sequence[int | None], seconds: float | None) -> list[LevelReport]:
        results = self._all("expand", [(budget, seconds) for budget in budgets])
        self._payloads = [payloads for _report, payloads in results]
        return [report for report, _payloads in results]

    def widen(self, budgets: Sequence[int | None], seconds: float | None) -> list[LevelReport]:
        n = self.shards
        offers = self._payloads or [[b""] * n] * n
        answers = self._all("want", [([offers[i][j] for i in range(n)],) for j in range(n)])
        results = self._all("widen", [(budget, seconds, [answers[j][i] for j in range(n)])
                                      for i, budget in enumerate(budgets)])
        self._payloads = [payloads for _report, payloads in results]
        return [report for report, _payloads in results]

    def take(self) -> list[Intake]:
        n = self.shards
        offers = self._payloads or [[b""] * n] * n
        self._payloads = None
        requests = self._all("want", [([offers[i][j] for i in range(n)],) for j in range(n)])
        payloads = self._all("ship", [([requests[j][i] for j in range(n)],) for i in range(n)])
        return self._all("take", [([payloads[i][j] for i in range(n)],) for j in range(n)])

    def parents(self, fingerprints: Sequence[Sequence[int]]) -> list[list[int | None]]:
        return self._all("parents", [(list(fps),) for fps in fingerprints])

    def close(self) -> None:
        if self._lost:
            self._kill_all()
        super().close()


class MemoryGauge:
    """This process's memory and the workers' (:meth:`Cluster.memory`): what a watchdog's
    memory bound applies to in a partitioned search.

    The watchdog reads it from its timer's signal handler, and Python runs a signal handler
    that arrives while another runs inside it: reading /proc walks page tables, and on a
    loaded machine a reading could take longer than the timer's period, so every handler
    was interrupted by the next and they nested until a ``RecursionError`` (``--workers 2
    --max-memory`` on a busy machine). A call made while a reading is in progress (a nested
    handler's) returns the last reading at once, so the nesting stops there.
    """

    __slots__ = ("cluster", "reading", "last")

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.reading = False
        self.last = 0

    def __call__(self) -> int:
        if self.reading:
            return self.last
        self.reading = True
        try:
            self.last = process_memory() + self.cluster.memory()
        finally:
            self.reading = False
        return self.last


def process_memory(pid: int | None = None) -> int:
    """The memory of process ``pid`` (this one by default) in bytes, as its share of the
    machine's: its proportional set size where Linux tells it (pages shared by processes
    forked from one another count once in all, so a sum over the coordinator and its workers
    is what they use together), else its resident size (this process's peak where /proc is
    missing; another process's then counts as 0)."""
    where = "self" if pid is None else str(pid)
    try:
        with open(f"/proc/{where}/smaps_rollup", "rb") as handle:
            for line in handle:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return memory_usage(pid)


def cpu_count() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
