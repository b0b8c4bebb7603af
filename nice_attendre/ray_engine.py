"""The partitioned search on Ray: one actor per shard, on one machine or a cluster.

``--engine ray`` (``pip install 'nice-attendre[cluster]'``) runs the same shards as
``--workers`` (:class:`~nice_attendre.shard.Shard`) as Ray actors, so the counts are the
same. Each actor builds the model itself by calling the model factory it is sent (for the
command line and :func:`~nice_attendre.verify`, the app, topology and options by name), so
every node needs nice-attendre installed, and an app or topology given as a file needs that
file at the same path on every node. The offers, requests and states of one level go
from actor to actor through Ray's object store; this process only passes their references on.

Without ``address`` a local Ray instance is started with as many CPUs as shards (at least
this machine's cores) and shut down at the end; with ``address`` (``auto``, or the head
node's ``HOST:6379``) the search joins that cluster and spreads the actors over its nodes.

An actor that dies during the search, or one on this machine that is stopped (SIGSTOP), is
:class:`~nice_attendre.parallel.WorkerLost`: the search ends incomplete (``worker-lost``)
with what it explored, as with worker processes; every actor is killed then.
"""
from __future__ import annotations

import logging
import math
from typing import Any, Sequence

from nice_attendre.errors import InputError
from nice_attendre.parallel import (POLL_SECONDS, STOPPED_LOOKS, ModelFactory, WorkerError, WorkerLost, cpu_count,
                                    process_state)
from nice_attendre.partition import BY_FINGERPRINT, Partition
from nice_attendre.shard import Intake, LevelReport, Shard, tune_gc
from nice_attendre.watchdog import Watchdog

#: Seconds to wait for the actors to start (a cluster without enough free CPUs never starts them).
START_TIMEOUT = 120.0


class ShardActor:
    """A :class:`Shard` in a Ray actor (the class is wrapped by ``ray.remote`` at run time)."""

    def __init__(self, make: ModelFactory, index: int, shards: int, max_depth: int | None,
                 partition: Partition, call_seconds: float | None = None, por: bool = False) -> None:
        tune_gc()
        system, properties, metrics = make()
        self.shard = Shard(index, shards, system, properties, metrics, max_depth=max_depth, partition=partition,
                           por=por)
        # as in a worker process (nice_attendre.parallel): an app handler that runs longer
        # than call_seconds is the violation app-exception (the timer needs the actor's
        # methods on its main thread, where Ray runs a synchronous actor's)
        self.watchdog = Watchdog(guard=getattr(system, "guard", None), call_seconds=call_seconds, signals=False)
        self.watchdog.__enter__()
        self.watchdog.bind([math.inf])

    def ready(self) -> tuple[bool, str, int]:
        """Started: whether the handler time limit can apply here (not without a timer, off
        the main thread), and where the actor runs: its node's id and its process id."""
        import os

        import ray

        return (self.watchdog.timer or self.watchdog.call_seconds is None,
                ray.get_runtime_context().get_node_id(), os.getpid())

    def seed(self, position: int) -> Intake:
        return self.shard.seed(position)

    def expand(self, budget: int | None, seconds: float | None) -> tuple[Any, ...]:
        report, payloads = self.shard.expand(budget, seconds)
        return (report, *payloads)

    def widen(self, budget: int | None, seconds: float | None, *answers: bytes) -> tuple[Any, ...]:
        report, payloads = self.shard.widen(budget, seconds, answers)
        return (report, *payloads)

    def want(self, *offers: bytes) -> Any:
        requests = self.shard.want(offers)
        return tuple(requests) if len(requests) > 1 else requests[0]

    def ship(self, *requests: bytes) -> Any:
        payloads = self.shard.ship(requests)
        return tuple(payloads) if len(payloads) > 1 else payloads[0]

    def take(self, *payloads: bytes) -> Intake:
        return self.shard.take(payloads)

    def parents(self, fingerprints: Sequence[int]) -> list[int | None]:
        return self.shard.parents(fingerprints)


class RayCluster:
    """``shards`` :class:`ShardActor` actors on a local Ray instance or the cluster at ``address``."""

    def __init__(self, make: ModelFactory, shards: int, *, address: str | None = None,
                 max_depth: int | None = None, partition: Partition = BY_FINGERPRINT,
                 call_seconds: float | None = None, por: bool = False) -> None:
        try:
            import ray
        except ImportError:
            raise InputError("--engine ray needs Ray: pip install 'nice-attendre[cluster]'") from None
        self._ray = ray
        self.shards = shards
        self.por = por
        self._started = False
        self._actors: list[Any] = []
        self._payloads: list[list[Any]] | None = None
        if not ray.is_initialized():
            options: dict[str, Any] = dict(include_dashboard=False, logging_level=logging.ERROR,
                                           log_to_driver=False)
            if address is None:
                options["num_cpus"] = max(shards, cpu_count())
            try:
                ray.init(address=address, **options)
            except Exception as exc:  # noqa: BLE001 - any failure to start or connect
                where = f"join the Ray cluster at {address!r}" if address else "start a local Ray instance"
                raise WorkerError(f"cannot {where}: {type(exc).__name__}: {exc}") from exc
            self._started = True
        #: per actor: (its node's id, its process id); this process's node
        self._where: list[tuple[str, int]] = []
        self._node = ""
        try:
            actor = ray.remote(num_cpus=1)(ShardActor)
            self._actors = [actor.options(scheduling_strategy="SPREAD").remote(make, index, shards, max_depth, partition,
                                                                               call_seconds, por)
                            for index in range(shards)]
            answers = self._start([a.ready.remote() for a in self._actors])
            if not all(ok for ok, _node, _pid in answers):
                raise WorkerError("this Ray runs the shard actors' methods off their main thread, where the app "
                                  "handlers' time limit (--max-handler-seconds) cannot apply")
            self._where = [(node, pid) for _ok, node, pid in answers]
            self._node = ray.get_runtime_context().get_node_id()
        except BaseException:
            self.close()
            raise

    def _start(self, refs: list[Any]) -> Any:
        """The actors' answers to ``ready`` (their start: failures are :class:`WorkerError`)."""
        ray = self._ray
        try:
            return ray.get(refs, timeout=START_TIMEOUT)
        except ray.exceptions.GetTimeoutError:
            raise WorkerError(f"the {self.shards} shard actors did not start within {START_TIMEOUT:.0f} s: "
                              "does the Ray cluster have that many free CPUs?") from None
        except ray.exceptions.RayActorError as exc:
            raise WorkerError(f"a shard actor could not start: {first_line(exc)}") from None
        except ray.exceptions.RayTaskError as exc:
            raise _cause(exc) from None

    def _get(self, refs: list[Any]) -> list[Any]:
        """The results of ``refs``, waited for :data:`~nice_attendre.parallel.POLL_SECONDS`
        at a time: between waits, an actor on this machine found stopped at
        :data:`~nice_attendre.parallel.STOPPED_LOOKS` looks in a row is lost. A dead actor
        (or results lost with it) is :class:`WorkerLost`; an error in an actor's method is
        raised here."""
        ray = self._ray
        stopped = [0] * len(self._where)
        while True:
            _done, waiting = ray.wait(refs, num_returns=len(refs), timeout=POLL_SECONDS)
            if not waiting:
                break
            for index, (node, pid) in enumerate(self._where):
                if node == self._node:
                    stopped[index] = stopped[index] + 1 if process_state(pid) == "T" else 0
                    if stopped[index] >= STOPPED_LOOKS:
                        raise self._lose(index, "was stopped (SIGSTOP or SIGTSTP) and does not answer")
        try:
            return ray.get(refs)
        except ray.exceptions.RayTaskError as exc:
            raise _cause(exc) from None
        except ray.exceptions.RayError as exc:  # an actor died, or results were lost with it
            raise self._lost(exc) from None

    def _lost(self, exc: Exception) -> WorkerLost:
        """The :class:`WorkerLost` for ``exc``: which actor died (by the error's actor id, else
        the first whose process on this machine is gone)."""
        dead = getattr(exc, "actor_id", None)
        ids = [getattr(getattr(actor, "_actor_id", None), "hex", lambda: None)() for actor in self._actors]
        index = ids.index(dead) if dead in ids else next(
            (i for i, (node, pid) in enumerate(self._where) if node == self._node and process_state(pid) in
             (None, "Z", "X")), None)
        return self._lose(index, f"died ({first_line(exc)})")

    def _lose(self, index: int | None, what: str) -> WorkerLost:
        """Actor ``index`` is lost: kill every actor now; the error to raise."""
        self.close_actors()
        if index is None:
            return WorkerLost(f"a shard actor {what}")
        node, pid = self._where[index] if index < len(self._where) else ("", 0)
        where = f"process {pid}" + ("" if node == self._node else f" on node {node[:12]}")
        return WorkerLost(f"actor {index} ({where}) {what}")

    def seed(self, position: int) -> list[Intake]:
        return self._get([a.seed.remote(position) for a in self._actors])

    def expand(self, budgets: Sequence[int | None], seconds: float | None) -> list[LevelReport]:
        refs = [a.expand.options(num_returns=self.shards + 1).remote(budget, seconds)
                for a, budget in zip(self._actors, budgets)]
        self._payloads = [list(r[1:]) for r in refs]
        return self._get([r[0] for r in refs])

    def widen(self, budgets: Sequence[int | None], seconds: float | None) -> list[LevelReport]:
        n, actors = self.shards, self._actors
        offers = self._payloads or [[b""] * n] * n
        answers = [self._refs(a.want.options(num_returns=n).remote(*[offers[i][j] for i in range(n)]))
                   for j, a in enumerate(actors)]
        refs = [a.widen.options(num_returns=n + 1).remote(budget, seconds, *[answers[j][i] for j in range(n)])
                for i, (a, budget) in enumerate(zip(actors, budgets))]
        self._payloads = [list(r[1:]) for r in refs]
        return self._get([r[0] for r in refs])

    def _refs(self, ref: Any) -> list[Any]:
        return list(ref) if self.shards > 1 else [ref]

    def take(self) -> list[Intake]:
        n, actors = self.shards, self._actors
        offers = self._payloads or [[b""] * n] * n
        self._payloads = None
        requests = [self._refs(a.want.options(num_returns=n).remote(*[offers[i][j] for i in range(n)]))
                    for j, a in enumerate(actors)]
        payloads = [self._refs(a.ship.options(num_returns=n).remote(*[requests[j][i] for j in range(n)]))
                    for i, a in enumerate(actors)]
        return self._get([a.take.remote(*[payloads[i][j] for i in range(n)]) for j, a in enumerate(actors)])

    def parents(self, fingerprints: Sequence[Sequence[int]]) -> list[list[int | None]]:
        return self._get([a.parents.remote(list(fps)) for a, fps in zip(self._actors, fingerprints)])

    def stop(self) -> None:
        """Nothing: an actor finishes the step it is running (the search stops after it)."""

    def memory(self) -> int:
        """0: the actors' memory is not measured here (they may run on other machines);
        ``--max-memory`` is refused with ``--engine ray``."""
        return 0

    def close_actors(self) -> None:
        """Kill every actor (also one that is stopped: Ray kills its process)."""
        ray = self._ray
        for actor in self._actors:
            try:
                ray.kill(actor)
            except Exception:  # noqa: BLE001 - already gone
                pass
        self._actors = []

    def close(self) -> None:
        ray = self._ray
        self.close_actors()
        self._payloads = None
        if self._started:
            ray.shutdown()
            self._started = False


def first_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message (Ray's run over many lines)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def actor_cause(exc: Any, who: str) -> BaseException:
    """What an actor's method raised, from Ray's wrapping of it (a :class:`WorkerError`
    saying ``who`` failed, when Ray gives no cause)."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        return cause
    return WorkerError(f"{who} failed: {first_line(exc)}")


def _cause(exc: Any) -> BaseException:
    """What a shard's method raised, from Ray's wrapping of it."""
    return actor_cause(exc, "a shard")
