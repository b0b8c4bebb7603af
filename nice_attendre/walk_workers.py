"""Random walks on all cores and on Ray: the :class:`~nice_attendre.simulate.WalkCluster`\\ s
of ``--simulate --workers N`` and ``--simulate --engine ray``.

Walks need no communication: worker ``w`` of ``N`` runs walk numbers ``w``, ``w + N``, ...
with a :class:`~nice_attendre.simulate.Walker` of its own (its own copy of the model, its
own set of states seen), a chunk of :data:`~nice_attendre.simulate.CHUNK_SECONDS` at a time,
and sends back small results; the coordinator (:func:`nice_attendre.simulate.simulate`)
folds them in walk-number order and tells each worker, with its next chunk, the walk number
not to reach (the bound: lowered by a violation, the walks asked for, the transitions).
Every walk is the same whichever worker runs it, so a seeded run gives the same counts and
trace with processes or Ray actors and any number of them.

:class:`WalkProcesses` forks worker processes from this one (they inherit the built model,
and die with it, as the partitioned search's do: :func:`nice_attendre.parallel.die_with_parent`);
a stop (the first violation, a limit, Ctrl-C) reaches them at once through a flag in shared
memory. :class:`WalkActors` runs :class:`WalkActor` Ray actors, each building the model
itself from a factory; they finish their chunk when asked to stop. A worker that dies or is
stopped (SIGSTOP) is :class:`~nice_attendre.parallel.WorkerLost`: the run ends incomplete
with what was received.
"""
from __future__ import annotations

import logging
import math
import os
import signal
from multiprocessing.connection import wait as wait_for
from typing import Any, Callable, Sequence

from nice_attendre.errors import InputError
from nice_attendre.parallel import (POLL_SECONDS, STOPPED_LOOKS, ForkedWorkers, WorkerError, WorkerLost, _portable,
                                    cpu_count, die_with_parent, process_state, what_ended)
from nice_attendre.property import Metric, Property
from nice_attendre.ray_engine import actor_cause, first_line
from nice_attendre.shard import tune_gc
from nice_attendre.simulate import (CHUNK_SECONDS, DISTINCT_LIMIT, CycleCheck, Walker, WalkOptions, WalkResult,
                                    WalkWorker)
from nice_attendre.watchdog import Watchdog

#: ``make()`` -> (system, properties, metrics): builds the model where a worker runs.
ModelFactory = Callable[[], "tuple[Any, Sequence[Property], Sequence[Metric]]"]

Answer = tuple[int, list[WalkResult], bool]

#: Chunks each Ray actor has asked of it at a time (one runs, the next waits behind it).
AHEAD = 2


def _serve(conn: Any, index: int, workers: int, model: tuple[Any, Sequence[Property], Sequence[Metric]],
           options: WalkOptions, stop: Any, call_seconds: float | None, parent: int, watch: tuple[int, int],
           on_cycle: CycleCheck | None, distinct_limit: int) -> None:
    """A worker process: run chunks of walks as the coordinator asks, until it closes the
    connection (``stop``: the shared flag that ends a walk at once)."""
    die_with_parent(parent, watch)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the coordinator's to handle
    tune_gc()
    failed: BaseException | None = None
    worker: WalkWorker | None = None
    stop_at = [math.inf]
    try:
        system, properties, metrics = model
        worker = WalkWorker(Walker(system, properties, metrics, options, on_cycle=on_cycle,
                                   distinct_limit=distinct_limit, stop_at=stop_at), index, workers)
    except BaseException as exc:  # noqa: BLE001 - the answer to every request
        failed = _portable(exc)
    # as in the partitioned search's workers: an app handler that runs longer than
    # call_seconds is the violation app-exception, and the stop flag ends a walk (and a
    # call into the app) at once
    watchdog = Watchdog(guard=getattr(model[0], "guard", None), call_seconds=call_seconds, signals=False,
                        stop_flag=stop)
    with watchdog:
        watchdog.bind(stop_at)
        _stream(conn, worker, failed)


def _stream(conn: Any, worker: WalkWorker | None, failed: BaseException | None) -> None:
    """Wait for ``("run", bound)``, then run chunk after chunk, sending each one's results,
    reading a lowered bound (``("bound", b)``) between chunks without waiting for it, until
    the worker is done; then wait for ``("close", ())`` (or the coordinator's end)."""
    bound: float | None = None
    done = False
    while True:
        if bound is None or done or conn.poll():
            try:
                method, args = conn.recv()
            except EOFError:  # the coordinator is gone
                return
            if method == "close":
                return
            bound = args[0] if bound is None else min(bound, args[0])
            continue
        if failed is not None or worker is None:
            conn.send(("error", failed))
            done = True
            continue
        try:
            results, done = worker.run(bound)
        except BaseException as exc:  # noqa: BLE001 - reported to the coordinator
            conn.send(("error", _portable(exc)))
            done = True
            continue
        conn.send(("ok", (results, done)))


class WalkProcesses(ForkedWorkers):
    """``workers`` worker processes forked from this one, each running walks with its own
    :class:`~nice_attendre.simulate.Walker` of ``model`` (``(system, properties, metrics)``,
    inherited by the fork). ``call_seconds`` bounds each call into the app, as
    ``--max-handler-seconds`` does in one process."""

    def __init__(self, model: tuple[Any, Sequence[Property], Sequence[Metric]], workers: int, options: WalkOptions,
                 *, on_cycle: CycleCheck | None = None, distinct_limit: int = DISTINCT_LIMIT,
                 call_seconds: float | None = None) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers
        self._asked: set[int] = set()
        self._stopped = [0] * workers
        self._fork(workers, _serve, lambda theirs, index: (theirs, index, workers, model, options, self._stop,
                                                           call_seconds, os.getpid(), self._watch, on_cycle,
                                                           distinct_limit),
                   "nice-attendre-walks")

    def _lose(self, index: int, what: str) -> WorkerLost:
        """Worker ``index`` is lost: kill every worker; the error to raise."""
        pid = self._procs[index].pid
        self._kill_all()
        return WorkerLost(f"worker {index} (process {pid}) {what}")

    def _send(self, worker: int, message: tuple[str, tuple[Any, ...]]) -> None:
        try:
            self._conns[worker].send(message)
        except (OSError, ValueError):  # its end of the pipe is closed: it died
            self._procs[worker].join(5)
            raise self._lose(worker, what_ended(self._procs[worker].exitcode)) from None

    def start(self, bound: float) -> None:
        for worker in range(self.workers):
            self._send(worker, ("run", (bound,)))
            self._asked.add(worker)

    def lower(self, bound: float) -> None:
        for worker in sorted(self._asked):
            self._send(worker, ("bound", (bound,)))

    def answers(self, timeout: float) -> list[Answer]:
        asked = sorted(self._asked)
        if not asked:
            return []
        ready = wait_for([self._conns[w] for w in asked], timeout)
        got: list[Answer] = []
        for worker in asked:
            conn = self._conns[worker]
            if conn not in ready:
                continue
            self._stopped[worker] = 0
            while worker in self._asked and conn.poll():
                try:
                    status, value = conn.recv()
                except (EOFError, OSError):
                    self._procs[worker].join(5)  # it is ending: its exit code says how
                    raise self._lose(worker, what_ended(self._procs[worker].exitcode)) from None
                if status == "error":
                    self._kill_all()
                    raise value
                results, done = value
                if done:
                    self._asked.discard(worker)
                got.append((worker, results, done))
        if not ready:
            self._look(asked)
        return got

    def _look(self, asked: Sequence[int]) -> None:
        """The workers asked that have not answered: dead or stopped ones are lost."""
        for worker in asked:
            process = self._procs[worker]
            state = process_state(process.pid)
            if state in ("Z", "X") or (state is None and not process.is_alive()):
                continue  # dead: its end of the pipe closes, and the next wait reads that
            self._stopped[worker] = self._stopped[worker] + 1 if state == "T" else 0
            if self._stopped[worker] >= STOPPED_LOOKS * max(1, round(POLL_SECONDS / 0.05)):
                raise self._lose(worker, "was stopped (SIGSTOP or SIGTSTP) and does not answer")



class WalkActor:
    """A :class:`~nice_attendre.simulate.WalkWorker` in a Ray actor (wrapped by ``ray.remote`` at
    run time); it builds the model with ``make``."""

    def __init__(self, make: ModelFactory, index: int, workers: int, options: WalkOptions,
                 call_seconds: float | None = None, distinct_limit: int = DISTINCT_LIMIT) -> None:
        tune_gc()
        system, properties, metrics = make()
        self.stop_at = [math.inf]
        self.worker = WalkWorker(Walker(system, properties, metrics, options, distinct_limit=distinct_limit,
                                        stop_at=self.stop_at), index, workers)
        self.watchdog = Watchdog(guard=getattr(system, "guard", None), call_seconds=call_seconds, signals=False)
        self.watchdog.__enter__()
        self.watchdog.bind(self.stop_at)

    def ready(self) -> bool:
        """Started; whether the handler time limit can apply here."""
        return bool(self.watchdog.timer or self.watchdog.call_seconds is None)

    def run(self, bound: float, seconds: float) -> tuple[list[WalkResult], bool]:
        return self.worker.run(bound, seconds)


class WalkActors:
    """``workers`` :class:`WalkActor` actors on a local Ray instance or the cluster at ``address``."""

    def __init__(self, make: ModelFactory, workers: int, options: WalkOptions, *, address: str | None = None,
                 call_seconds: float | None = None, distinct_limit: int = DISTINCT_LIMIT) -> None:
        try:
            import ray
        except ImportError:
            raise InputError("--engine ray needs Ray: pip install 'nice-attendre[cluster]'") from None
        from nice_attendre.ray_engine import START_TIMEOUT

        self._ray = ray
        self.workers = workers
        self._started = False
        self._actors: list[Any] = []
        self._refs: dict[Any, int] = {}
        self._done: set[int] = set()
        self._bound: float = math.inf
        if not ray.is_initialized():
            settings: dict[str, Any] = dict(include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
            if address is None:
                settings["num_cpus"] = max(workers, cpu_count())
            try:
                ray.init(address=address, **settings)
            except Exception as exc:  # noqa: BLE001 - any failure to start or connect
                where = f"join the Ray cluster at {address!r}" if address else "start a local Ray instance"
                raise WorkerError(f"cannot {where}: {type(exc).__name__}: {exc}") from exc
            self._started = True
        try:
            actor = ray.remote(num_cpus=1)(WalkActor)
            self._actors = [actor.options(scheduling_strategy="SPREAD").remote(make, index, workers, options,
                                                                               call_seconds, distinct_limit)
                            for index in range(workers)]
            try:
                ready = ray.get([a.ready.remote() for a in self._actors], timeout=START_TIMEOUT)
            except ray.exceptions.GetTimeoutError:
                raise WorkerError(f"the {workers} walk actors did not start within {START_TIMEOUT:.0f} s: "
                                  "does the Ray cluster have that many free CPUs?") from None
            except ray.exceptions.RayTaskError as exc:
                raise _cause(exc) from None
            except ray.exceptions.RayActorError as exc:
                raise WorkerError(f"a walk actor could not start: {first_line(exc)}") from None
            if not all(ready):
                raise WorkerError("this Ray runs the walk actors' methods off their main thread, where the app "
                                  "handlers' time limit (--max-handler-seconds) cannot apply")
        except BaseException:
            self.close()
            raise

    def _ask(self, worker: int) -> None:
        self._refs[self._actors[worker].run.remote(self._bound, CHUNK_SECONDS)] = worker

    def start(self, bound: float) -> None:
        self._bound = bound
        for worker in range(self.workers):  # one chunk queued behind the one running: no wait
            for _ in range(AHEAD):
                self._ask(worker)

    def lower(self, bound: float) -> None:
        self._bound = min(self._bound, bound)

    def answers(self, timeout: float) -> list[Answer]:
        ray = self._ray
        if not self._refs:
            return []
        ready, _waiting = ray.wait(list(self._refs), num_returns=1, timeout=timeout)
        got: list[Answer] = []
        for ref in ready:
            worker = self._refs.pop(ref)
            try:
                results, done = ray.get(ref)
            except ray.exceptions.RayTaskError as exc:
                raise _cause(exc) from None
            except ray.exceptions.RayError as exc:  # the actor died, or its result was lost with it
                self.close_actors()
                raise WorkerLost(f"actor {worker} died ({first_line(exc)})") from None
            if done:
                self._done.add(worker)
            elif worker not in self._done:
                self._ask(worker)
            # the worker is done once it said so and its queued chunks came back
            last = worker in self._done and worker not in self._refs.values()
            got.append((worker, results, last))
        return got

    def stop(self) -> None:
        """Nothing: an actor finishes its chunk (the run ignores what is beyond the bound)."""

    def memory(self) -> int:
        return 0

    def close_actors(self) -> None:
        for actor in self._actors:
            try:
                self._ray.kill(actor)
            except Exception:  # noqa: BLE001 - already gone
                pass
        self._actors = []
        self._refs = {}

    def close(self) -> None:
        self.close_actors()
        if self._started:
            self._ray.shutdown()
            self._started = False


def _cause(exc: Any) -> BaseException:
    """What an actor's method raised, from Ray's wrapping of it."""
    return actor_cause(exc, "a walk worker")
