"""Seeded random walks (``--simulate``): the domain-free walk engine.

A walk starts in an initial state and takes one enabled event after another, chosen at
random, until the state is quiescent (nothing enabled), a property fails, the walk comes
back to a state it has already been in (a cycle), or its depth bound is reached. It checks
the properties the depth-first search checks: ``always`` in every state it enters,
``at_quiescence`` where it ends quiescent, properties of transitions on every step;
``sometimes`` properties are noted as *seen*. A simulation is never complete: finding
nothing proves nothing, so its result is never ``ok``.

Determinism (the contract a run with ``seed`` keeps): walk number ``i`` draws every choice
from its own random stream, :func:`walk_random` ``(seed, i)`` (BLAKE2b of the two numbers,
never Python's ``hash()``), and chooses among the events in the order the system's
``enabled`` defines, so walk ``i`` is the same walk in every run, process, worker count and
hash seed. Each walk also draws its configuration from that stream (a swarm: the
:class:`Bias` among event groups, and a depth bound), so the walks of one run are diverse.

What a run counts (see :class:`Tally`) is a *prefix* of the walk numbers, 0, 1, 2, ...: the
first ``walks`` walks; or, at the first violation, every walk up to the violating one with
the smallest number (walks with smaller numbers that were still running are finished
first); or, for ``max_transitions``, up to the walk during which the count reached it (a
walk is never cut by it). A run with the same seed and limits therefore gives the same
counts, coverage, violation and trace whatever the number of workers or the engine. Only a
wall-clock limit, a signal or a lost worker end a run where it happens to be; those runs
count every walk done, the part of a walk cut short too.

A worker keeps a bounded set of the fingerprints of the states it has checked and found
good (:data:`DISTINCT_LIMIT`): a walk does not check such a state again (properties are
functions of the state, so the result is the same) and reports only the fingerprints new to
its worker; as a worker runs its walks in increasing order, the union over the counted
walks is the set of states they entered, the same for any number of workers (when a set
fills up, the distinct count is a lower bound and the coverage says so).

Cycles: a walk that enters a state it has been in (by fingerprint) ends there (``cycle``):
its events are a lasso, an execution that can repeat for ever. It violates ``termination``
and each ``eventually`` property that held in no state of the walk; a walk that ends
quiescent violates each ``eventually`` property that held nowhere on it. A property that
assumes weak fairness (the default) counts a cycle only if a weakly fair scheduler repeats a
cycle through its entry (:class:`nice_attendre.walk_cycles.Fairness`, as the depth-first
search judges it; else the walk just ends ``cycle``). Their traces are
lassos made fair and explained as the depth-first search does
(:func:`nice_attendre.walk_cycles.cycle_discovery`). Other claims about a cycle can be given
as ``on_cycle`` (see :data:`CycleCheck`); a cycle no property is about is counted in the
coverage.
"""
from __future__ import annotations

import hashlib
import math
import time
from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Protocol, Sequence

from nice_attendre.checker import Limits, Progress, ProgressCallback
from nice_attendre.errors import InputError, NondeterminismError, StopRequest, UnsupportedFeature
from nice_attendre.fingerprint import fingerprint_functions
from nice_attendre.property import EXECUTION_EXPECTATIONS, Expectation, Metric, Property
from nice_attendre.result import Discovery, Result, Stats
from nice_attendre.trace import Step, Trace

#: Fingerprints of good states one process remembers (a Python set: about 70 bytes each).
DISTINCT_LIMIT = 1 << 20

#: How a walk ends (``unsupported``: the app asked for a feature the model does not have, in a
#: value it computed, which the load-time checks cannot see; the run ends with that walk).
QUIESCENT, CYCLE, DEPTH, VIOLATION, STOPPED, UNSUPPORTED = ("quiescent", "cycle", "depth", "violation", "stopped",
                                                            "unsupported")
ENDS = (QUIESCENT, CYCLE, DEPTH, VIOLATION, STOPPED, UNSUPPORTED)

#: The run's stop reason after an :data:`UNSUPPORTED` walk (as the searches'; its detail the message).
UNSUPPORTED_FEATURE = "unsupported-feature"

#: The expectations a walk checks; properties of any other kind are listed as not checked.
CHECKED = (Expectation.ALWAYS, Expectation.AT_QUIESCENCE, Expectation.TRANSITION, Expectation.SOMETIMES,
           Expectation.TERMINATION, Expectation.EVENTUALLY)

#: ``on_cycle(initial, events, loop_start)`` -> violations: a walk from ``initial`` took
#: ``events`` and its last state is the state after ``events[:loop_start]`` (``loop_start``
#: 0: the initial state), so ``events[loop_start:]`` can repeat for ever. Each violation is
#: ``(property, expectation value, reason)``; the walk is then a violating one, its trace
#: the lasso.
CycleCheck = Callable[[Any, Sequence[Any], int], Sequence[tuple[str, str, str]]]


def walk_seed(seed: int, index: int) -> int:
    """The 64-bit seed of walk ``index`` of a run with ``seed``: BLAKE2b of both numbers
    (stable across processes, Python versions and hash seeds)."""
    data = f"{seed}:{index}".encode("ascii")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8, person=b"nice-attendre-wk").digest(), "big")


def walk_random(seed: int, index: int) -> Any:
    """Walk ``index``'s own random stream (a :class:`random.Random` seeded by :func:`walk_seed`)."""
    import random

    return random.Random(walk_seed(seed, index))


@dataclass(frozen=True, slots=True)
class Bias:
    """How a walk chooses among the enabled events: an event of a ``favoured`` group weighs
    ``weight``, any other 1 (``math.inf``: a favoured event whenever there is one, as NICE's
    no-delay heuristic runs the controller's and switches' steps at once). Without favoured
    groups the choice is uniform. Groups are named by the run's ``group_of(event)``."""

    name: str
    favoured: frozenset[str] = frozenset()
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not (self.weight > 0):
            raise InputError(f"bias {self.name!r}: weight must be above 0, got {self.weight!r}")


UNIFORM = Bias("uniform")


def favour(group: str, weight: float = math.inf) -> Bias:
    """The bias ``<group>-first``: events of ``group`` weigh ``weight`` (default: always first)."""
    return Bias(f"{group}-first", frozenset({group}), weight)


@dataclass(frozen=True, slots=True)
class WalkOptions:
    """The configurations a run's walks are drawn from (a swarm).

    * ``seed``: the run's seed (see :func:`walk_random`);
    * ``biases``: each walk uses one of them, drawn from its stream;
    * ``walk_depth``: the most events a walk takes (None: until quiescence, a violation or a
      cycle); with ``spread_depth`` each walk's bound is drawn among ``walk_depth``, its half
      and its quarter (at least 1), so short walks are cheap and many;
    * ``group_of(event) -> str``: the group a bias favours (default: none; it must be a
      function of the event alone, defined at a module's top level for other processes).
    """

    seed: int
    biases: tuple[Bias, ...] = (UNIFORM,)
    walk_depth: int | None = None
    spread_depth: bool = True
    group_of: Callable[[Any], str] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise InputError(f"seed must be a whole number >= 0, got {self.seed!r}")
        if not self.biases:
            raise InputError("a simulation needs at least one bias")
        if self.walk_depth is not None and (isinstance(self.walk_depth, bool) or not isinstance(self.walk_depth, int)
                                            or self.walk_depth < 1):
            raise InputError(f"walk_depth must be a whole number >= 1, got {self.walk_depth!r}")
        if any(bias.favoured for bias in self.biases) and self.group_of is None:
            raise InputError("a bias that favours a group of events needs group_of")

    def depths(self) -> tuple[int | None, ...]:
        """The depth bounds a walk draws from."""
        if self.walk_depth is None:
            return (None,)
        if not self.spread_depth:
            return (self.walk_depth,)
        return tuple(dict.fromkeys(max(1, self.walk_depth // k) for k in (1, 2, 4)))


@dataclass(frozen=True, slots=True)
class WalkResult:
    """What one walk did (small, and picklable: workers send it to the coordinator).

    ``bias`` is the index of its bias, ``depth`` the events it took (its transitions),
    ``end`` how it ended (:data:`ENDS`), ``loop_start`` for a cycle the step its last state
    was first entered at. ``new`` holds the fingerprints (``array('Q')``) its worker had not
    seen before, ``sometimes`` the names of sometimes-properties it was the first of its
    worker to see hold, ``kinds`` the events it took per event class name, ``metrics``
    each metric's (min, max) over the quiescent states new to its worker. ``violations`` are
    ``(property, expectation value, reason)``; ``events`` (only for a violating walk) the
    events it took from initial state number ``initial``. ``unsupported`` is the refusal's
    message of a walk that ended :data:`UNSUPPORTED`.
    """

    index: int
    bias: int
    depth_bound: int | None
    depth: int
    end: str
    new: bytes
    kinds: tuple[tuple[str, int], ...]
    sometimes: tuple[str, ...] = ()
    metrics: tuple[tuple[str, int, int], ...] = ()
    violations: tuple[tuple[str, str, str], ...] = ()
    events: tuple[Any, ...] | None = None
    initial: int = 0
    loop_start: int | None = None
    saturated: bool = False
    unsupported: str | None = None


def _chooser(bias: Bias, group_of: Callable[[Any], str] | None) -> Callable[[Sequence[Any], Any], Any]:
    """``choose(events, rng)`` for ``bias``: uniform, weighted or favoured-first; the weight of
    an event's class is worked out once per class."""
    if not bias.favoured:
        def uniform(events: Sequence[Any], rng: Any) -> Any:
            return events[int(rng.random() * len(events))]

        return uniform
    assert group_of is not None
    favoured = bias.favoured
    weight = bias.weight
    # (the group of an event is a function of the event; cached per event, as events repeat)
    is_favoured: dict[Any, bool] = {}

    def favoured_of(event: Any) -> bool:
        known = is_favoured.get(event)
        if known is None:
            known = is_favoured[event] = group_of(event) in favoured
        return known

    if weight == math.inf:
        def first(events: Sequence[Any], rng: Any) -> Any:
            preferred = [event for event in events if favoured_of(event)]
            pool = preferred or events
            return pool[int(rng.random() * len(pool))]

        return first

    def weighted(events: Sequence[Any], rng: Any) -> Any:
        preferred = [event for event in events if favoured_of(event)]
        if not preferred or len(preferred) == len(events):
            return events[int(rng.random() * len(events))]
        others = [event for event in events if not favoured_of(event)]
        total = len(preferred) * weight + len(others)
        pick = rng.random() * total
        if pick < len(preferred) * weight:
            return preferred[min(int(pick / weight), len(preferred) - 1)]
        return others[min(int(pick - len(preferred) * weight), len(others) - 1)]

    return weighted


class Walker:
    """Runs walks of ``system`` by their numbers (one per process: it keeps the set of good
    states its walks met, see the module docstring). ``stop_at`` is the watchdog's list: a
    walk stops (``stopped``) once ``stop_at[0]`` is below 0."""

    def __init__(self, system: Any, properties: Iterable[Property], metrics: Iterable[Metric],
                 options: WalkOptions, *, on_cycle: CycleCheck | None = None,
                 distinct_limit: int = DISTINCT_LIMIT, stop_at: list[float] | None = None) -> None:
        props = tuple(properties)
        self.system = system
        self.options = options
        self.always = tuple(p for p in props if p.expectation is Expectation.ALWAYS)
        self.at_end = tuple(p for p in props if p.expectation is Expectation.AT_QUIESCENCE)
        self.on_step = tuple(p for p in props if p.expectation is Expectation.TRANSITION)
        self.sometimes = [p for p in props if p.expectation is Expectation.SOMETIMES]
        self.cycles = tuple(p for p in props if p.expectation is Expectation.TERMINATION)
        self.eventually = tuple(p for p in props if p.expectation is Expectation.EVENTUALLY)
        self.metrics = tuple(metrics)
        self.on_cycle = on_cycle
        self.fairness: Any = None
        if self.cycles or self.eventually:
            from nice_attendre.walk_cycles import Fairness

            self.fairness = Fairness(system, props)
        self.known: set[int] = set()
        self.distinct_limit = distinct_limit
        self.stop_at = stop_at if stop_at is not None else [math.inf]
        self.initials = tuple(system.initial_states())
        if not self.initials:
            raise InputError("the system has no initial state")
        self.fingerprint_of, self.step = fingerprint_functions(system)
        self.choosers = [_chooser(bias, options.group_of) for bias in options.biases]
        self.depths = options.depths()
        self.kind_names: dict[type, str] = {}

    def _visit(self, state: Any, fp: int, new: Any, violations: list[tuple[str, str, str]],
               sometimes: list[str], metrics: dict[str, list[int]]) -> Sequence[Any]:
        """Check a state this worker has not found good yet; remember it if it is good.
        Returns its enabled events."""
        bad = False
        for prop in self.always:
            if not prop.holds(state):
                violations.append((prop.name, prop.expectation.value, prop.why(state)))
                bad = True
        if self.sometimes:
            for prop in list(self.sometimes):
                if prop.holds(state):
                    self.sometimes.remove(prop)
                    sometimes.append(prop.name)
        if bad:
            return ()
        events = self.system.enabled(state)
        if not events:
            for prop in self.at_end:
                if not prop.holds(state):
                    violations.append((prop.name, prop.expectation.value, prop.why(state)))
                    bad = True
            for metric in self.metrics:
                value = metric.value(state)
                low_high = metrics.get(metric.name)
                if low_high is None:
                    metrics[metric.name] = [value, value]
                else:
                    low_high[0] = min(low_high[0], value)
                    low_high[1] = max(low_high[1], value)
        if not bad and len(self.known) < self.distinct_limit:
            self.known.add(fp)
            new.append(fp)
        return events

    def walk(self, index: int) -> WalkResult:
        """Walk number ``index`` (see the module docstring). A stop request (the watchdog's,
        or one raised inside the system's call into user code) ends it ``stopped``."""
        rng = walk_random(self.options.seed, index)
        count = len(self.choosers)
        bias = rng.randrange(count) if count > 1 else 0
        choose = self.choosers[bias]
        depth_bound = self.depths[rng.randrange(len(self.depths))] if len(self.depths) > 1 else self.depths[0]
        initial = rng.randrange(len(self.initials)) if len(self.initials) > 1 else 0
        state = self.initials[initial]
        known = self.known
        enabled = self.system.enabled
        step = self.step
        on_step = self.on_step
        stop_at = self.stop_at
        new = array("Q")
        violations: list[tuple[str, str, str]] = []
        sometimes: list[str] = []
        metrics: dict[str, list[int]] = {}
        taken: list[Any] = []
        depth = 0
        end = STOPPED
        loop_start: int | None = None
        saturated = False
        unsupported: str | None = None
        # the eventually-properties that have held in no state of the walk yet
        unheld = [p for p in self.eventually if not p.holds(state)]
        try:
            fp = self.fingerprint_of(state)
            on_walk = {fp: 0}
            events = enabled(state) if fp in known else self._visit(state, fp, new, violations, sometimes, metrics)
            limit = math.inf if depth_bound is None else depth_bound
            while True:
                if violations:
                    end = VIOLATION
                    break
                if not events:
                    end = QUIESCENT
                    violations.extend((p.name, p.expectation.value, "") for p in unheld)  # the walk ends
                    break
                if depth >= limit:
                    end = DEPTH
                    break
                if stop_at[0] < 0:
                    break
                event = choose(events, rng)
                after, after_fp = step(state, fp, event)
                depth += 1
                taken.append(event)
                if on_step:
                    for prop in on_step:
                        if not prop.holds(state, event, after):
                            violations.append((prop.name, prop.expectation.value, prop.why(after)))
                    if violations:
                        end = VIOLATION
                        break
                seen = on_walk.get(after_fp)
                if seen is not None:  # a lasso: events[seen:] can repeat for ever
                    end, loop_start = CYCLE, seen
                    violations.extend((p.name, p.expectation.value, "") for p in (*self.cycles, *unheld)
                                      if self.fairness.counts(p, self.initials[initial], taken, seen))
                    if self.on_cycle is not None:
                        violations.extend(self.on_cycle(self.initials[initial], tuple(taken), seen))
                    break
                on_walk[after_fp] = depth
                if unheld:
                    unheld = [p for p in unheld if not p.holds(after)]
                state, fp = after, after_fp
                events = enabled(state) if fp in known else self._visit(state, fp, new, violations, sometimes,
                                                                          metrics)
        except StopRequest:
            end = STOPPED
        except UnsupportedFeature as exc:  # the event that met it is not taken
            end, unsupported = UNSUPPORTED, str(exc)
        saturated = len(known) >= self.distinct_limit
        names = self.kind_names
        kinds: Counter[str] = Counter()
        for kind, number in Counter(map(type, taken)).items():
            name = names.get(kind)
            if name is None:
                name = names[kind] = kind.__name__
            kinds[name] += number
        return WalkResult(index, bias, depth_bound, depth, VIOLATION if violations else end, new.tobytes(),
                          tuple(sorted(kinds.items())), tuple(sometimes),
                          tuple((name, low, high) for name, (low, high) in sorted(metrics.items())),
                          tuple(violations), tuple(taken) if violations else None, initial, loop_start, saturated,
                          unsupported)


# ---- the coordinator's tally ----------------------------------------------------------------


@dataclass(frozen=True)
class Coverage:
    """What a simulation covered (TLC's simulation report; see :class:`Tally` for which
    walks count).

    ``distinct_states`` are the states the walks entered, by fingerprint (a lower bound when
    ``saturated``: a bounded set filled up); ``ends`` counts the walks by how they ended
    (:data:`ENDS`; ``stopped``: cut short by a limit or a signal), ``kinds`` the events taken
    per event kind, ``biases`` the walks per bias; ``deepest`` is the most events one walk
    took. ``checked`` names the properties the walks checked, ``not_checked`` those of a kind
    walks do not check; ``sometimes_seen`` and ``sometimes_unseen`` split the sometimes
    properties; ``violating_walks`` counts, per property, the counted walks that violated it.
    """

    seed: int
    workers: int = 1
    engine: str = "processes"
    walk_depth: int | None = None
    bias_names: tuple[str, ...] = ()
    walks: int = 0
    partial_walks: int = 0
    transitions: int = 0
    distinct_states: int = 0
    saturated: bool = False
    deepest: int = 0
    ends: dict[str, int] = field(default_factory=dict)
    kinds: dict[str, int] = field(default_factory=dict)
    biases: dict[str, int] = field(default_factory=dict)
    checked: tuple[str, ...] = ()
    not_checked: tuple[str, ...] = ()
    sometimes_seen: tuple[str, ...] = ()
    sometimes_unseen: tuple[str, ...] = ()
    violating_walks: dict[str, int] = field(default_factory=dict)
    #: per property shown, the walk number whose trace is reported
    violating_walk: dict[str, int] = field(default_factory=dict)

    def describe(self) -> str:
        """The report's ``search`` line: ``simulation (N walks, seed S, ...)``."""
        where = ("1 process" if self.workers == 1 and self.engine == "processes" else
                 f"{self.workers} Ray actors" if self.engine == "ray" else f"{self.workers} worker processes")
        depth = "to quiescence or a repeated state" if self.walk_depth is None else f"at most {self.walk_depth:,} events"
        partial = f" + {self.partial_walks:,} cut short" if self.partial_walks else ""
        return (f"simulation ({self.walks:,} walk{'' if self.walks == 1 else 's'}{partial}, seed {self.seed}, biases {', '.join(self.bias_names)}; "
                f"walks {depth}; {where})")

    def as_json(self) -> dict[str, Any]:
        """The coverage as JSON values."""
        return {
            "seed": self.seed, "workers": self.workers, "engine": self.engine, "walk_depth": self.walk_depth,
            "biases_configured": list(self.bias_names), "walks": self.walks, "partial_walks": self.partial_walks,
            "transitions": self.transitions, "distinct_states": self.distinct_states, "saturated": self.saturated,
            "deepest_walk": self.deepest, "ends": dict(self.ends), "event_kinds": dict(self.kinds),
            "biases": dict(self.biases), "properties_checked": list(self.checked),
            "properties_not_checked": list(self.not_checked), "sometimes_seen": list(self.sometimes_seen),
            "sometimes_unseen": list(self.sometimes_unseen), "violating_walks": dict(self.violating_walks),
            "violating_walk": dict(self.violating_walk),
        }


class Tally:
    """The coordinator's count of a simulation: walk results arrive in any order (from any
    worker) and are folded in walk-number order, so what is counted is a prefix of the walk
    numbers and does not depend on which worker ran which walk (see the module docstring).

    ``bound`` is the first walk number not to run: ``walks``, lowered to ``k + 1`` by a
    violation in walk ``k`` (without ``keep_going``) and to the end of the walk during which
    the transitions reached ``max_transitions``, and to ``k + 1`` by a walk ``k`` that met a
    feature the model does not have (:data:`UNSUPPORTED`, also with ``keep_going``: the run
    cannot go on without it; the first such walk's message is :attr:`unsupported`). The run
    is over once every walk below the bound is folded (:attr:`finished`)."""

    def __init__(self, properties: Sequence[Property], metrics: Sequence[Metric], options: WalkOptions, *,
                 walks: int | None, max_transitions: int | None, keep_going: bool,
                 distinct_limit: int = DISTINCT_LIMIT) -> None:
        from nice_attendre.visited import FingerprintTable

        self.properties = tuple(properties)
        self.options = options
        self.keep_going = keep_going
        self.max_transitions = max_transitions
        self.bound: float = math.inf if walks is None else walks
        self.bound_reason = "walks"
        self.unsupported: str | None = None
        self.next = 0
        self._pending: dict[int, WalkResult] = {}
        self._partial: list[WalkResult] = []
        self.distinct = FingerprintTable()
        self.distinct_limit = distinct_limit
        self.saturated = False
        self.transitions = 0
        self.walks = 0
        self.partial_walks = 0
        self.deepest = 0
        self.ends: Counter[str] = Counter()
        self.kinds: Counter[str] = Counter()
        self.biases: Counter[str] = Counter()
        self.sometimes: set[str] = set()
        self.metrics: dict[str, tuple[int, int]] = {}
        self.violating: Counter[str] = Counter()
        #: per property, the first counted walk that violated it (its result and violation)
        self.first: dict[str, tuple[WalkResult, tuple[str, str, str]]] = {}
        self.last_depth = 0
        self.metric_names = tuple(m.name for m in metrics)

    @property
    def finished(self) -> bool:
        """Whether every walk below the bound is counted."""
        return self.next >= self.bound

    def _lower(self, bound: int, reason: str) -> None:
        if bound < self.bound:
            self.bound, self.bound_reason = bound, reason
        elif bound == self.bound and reason in ("violation", UNSUPPORTED_FEATURE):
            self.bound_reason = reason

    def add(self, result: WalkResult) -> None:
        """Take a walk's result (a walk at or above the bound is not counted)."""
        if result.index >= self.bound:
            return
        if result.end == STOPPED:  # cut short: counted only when the run ends where it is
            if result.depth:
                self._partial.append(result)
            return
        if result.violations and not self.keep_going:
            self._lower(result.index + 1, "violation")
        if result.end == UNSUPPORTED:
            self._lower(result.index + 1, UNSUPPORTED_FEATURE)
        self._pending[result.index] = result
        while self.next in self._pending and self.next < self.bound:
            self._fold(self._pending.pop(self.next))
            self.next += 1
            if self.max_transitions is not None and self.transitions >= self.max_transitions:
                self._lower(self.next, "max-transitions")
        if self.finished:
            self._pending.clear()

    def _fold(self, result: WalkResult, partial: bool = False) -> None:
        self.transitions += result.depth
        if partial:
            self.partial_walks += 1
        else:
            self.walks += 1
        self.last_depth = result.depth
        self.deepest = max(self.deepest, result.depth)
        self.ends[result.end] += 1
        self.biases[self.options.biases[result.bias].name] += 1
        for name, number in result.kinds:
            self.kinds[name] += number
        new = array("Q")
        new.frombytes(result.new)
        table = self.distinct
        for fp in new:
            if len(table) >= self.distinct_limit:
                self.saturated = True
                break
            table.add(fp)
        self.saturated = self.saturated or result.saturated
        self.sometimes.update(result.sometimes)
        for name, low, high in result.metrics:
            old = self.metrics.get(name, (low, high))
            self.metrics[name] = (min(old[0], low), max(old[1], high))
        if result.unsupported is not None and self.unsupported is None:
            self.unsupported = result.unsupported
        for violation in result.violations:
            self.violating[violation[0]] += 1
            if violation[0] not in self.first:
                self.first[violation[0]] = (result, violation)

    def close(self) -> None:
        """The run ends where it is (a wall-clock limit, a signal, a lost worker): count the
        walks received beyond the prefix and the walks cut short, in walk-number order."""
        rest = sorted((r for r in self._pending.values() if r.index < self.bound), key=lambda r: r.index)
        self._pending.clear()
        for result in rest:
            self._fold(result)
        for result in sorted((r for r in self._partial if r.index < self.bound), key=lambda r: r.index):
            self._fold(result, partial=True)
        self._partial.clear()

    def reported(self) -> list[tuple[WalkResult, tuple[str, str, str]]]:
        """The violations to report, one per property, in the order of their walks: the
        first counted walk that violated each (without ``keep_going``: the first walk's)."""
        shown = sorted(self.first.values(), key=lambda item: (item[0].index, item[0].violations.index(item[1])))
        if not self.keep_going and shown:
            first = shown[0][0].index
            shown = [item for item in shown if item[0].index == first]
        return shown

    def coverage(self, workers: int, engine: str) -> Coverage:
        """The coverage of the walks counted."""
        checked = tuple(p.name for p in self.properties if p.expectation in CHECKED)
        not_checked = tuple(p.name for p in self.properties if p.expectation not in CHECKED)
        sometimes = [p.name for p in self.properties if p.expectation is Expectation.SOMETIMES]
        return Coverage(
            seed=self.options.seed, workers=workers, engine=engine, walk_depth=self.options.walk_depth,
            bias_names=tuple(b.name for b in self.options.biases), walks=self.walks,
            partial_walks=self.partial_walks, transitions=self.transitions, distinct_states=len(self.distinct),
            saturated=self.saturated, deepest=self.deepest,
            ends={end: self.ends[end] for end in ENDS if self.ends[end]},
            kinds=dict(sorted(self.kinds.items())),
            biases={b.name: self.biases[b.name] for b in self.options.biases},
            checked=checked, not_checked=not_checked,
            sometimes_seen=tuple(n for n in sometimes if n in self.sometimes),
            sometimes_unseen=tuple(n for n in sometimes if n not in self.sometimes),
            violating_walks=dict(self.violating),
            violating_walk={name: result.index for name, (result, _v) in self.first.items()})


def walk_trace(system: Any, initial: Any, events: Sequence[Any], loop_start: int | None = None) -> Trace:
    """The trace of a walk that took ``events`` from ``initial``, its states built again here;
    with ``loop_start`` a lasso (``cycle_start``): the walk came back to the state after
    ``events[:loop_start]``. A walk that does not replay (an event not enabled where the walk
    took it, or a cycle that does not close: the walk ran in another process, whose copy of
    the model behaved otherwise) is :class:`~nice_attendre.errors.NondeterminismError`."""
    state = initial
    steps = []
    for index, event in enumerate(events, start=1):
        if event not in system.enabled(state):
            raise NondeterminismError(index, event, [f"{event} is not enabled where the walk took it"])
        state = system.apply(state, event)
        steps.append(Step(event, state))
    if loop_start is not None:
        back = initial if loop_start == 0 else steps[loop_start - 1].state
        if state != back:
            raise NondeterminismError(len(steps), steps[-1].event,
                                      [f"the walk came back to the state after step {loop_start} here, "
                                       "and does not when it is replayed"])
        return Trace(initial, tuple(steps), cycle_start=loop_start)
    return Trace(initial, tuple(steps))


# ---- running walks ---------------------------------------------------------------------------


#: Seconds of walks a worker runs before it reports (and learns the new bound).
CHUNK_SECONDS = 0.1


class WalkWorker:
    """The walks of worker ``index`` of ``workers``: walk numbers ``index``, ``index +
    workers``, ... in that order (what each worker process or actor runs)."""

    def __init__(self, walker: Walker, index: int, workers: int) -> None:
        self.walker = walker
        self.next = index
        self.step = workers

    def run(self, bound: float, seconds: float = CHUNK_SECONDS) -> tuple[list[WalkResult], bool]:
        """Walks below ``bound`` for about ``seconds``: (their results, whether this worker is
        done: no walk left below the bound, or a stop asked for). A walk cut short by a stop
        ends the batch."""
        results: list[WalkResult] = []
        start = time.monotonic()
        stop_at = self.walker.stop_at
        while self.next < bound and stop_at[0] >= 0:
            result = self.walker.walk(self.next)
            results.append(result)
            self.next += self.step
            if result.end == STOPPED or time.monotonic() - start >= seconds:
                break
        return results, self.next >= bound or stop_at[0] < 0


class WalkCluster(Protocol):
    """Walk workers somewhere (this process, worker processes, Ray actors), driven by
    :func:`simulate`: each runs its :class:`WalkWorker` chunk after chunk, without waiting
    for the coordinator, and sends each chunk's results as it finishes it."""

    workers: int

    def start(self, bound: float) -> None:
        """Every worker starts its walks below ``bound``."""
        ...

    def lower(self, bound: float) -> None:
        """The bound went down: workers need not run walks from ``bound`` on."""
        ...

    def answers(self, timeout: float) -> list[tuple[int, list[WalkResult], bool]]:
        """The chunks finished within ``timeout`` seconds: (worker, results, whether that
        worker is done: no walk left below its bound, or stopped; it sends nothing after)."""
        ...

    def stop(self) -> None:
        """Ask every worker to stop its walk now (called from a signal handler: it only sets a
        flag; a cluster that cannot reach its workers at once does nothing)."""
        ...

    def close(self) -> None:
        """End every worker (also after an error or Ctrl-C)."""
        ...

    def memory(self) -> int:
        """Bytes of memory the workers use outside this process (0 if they run in it)."""
        ...


class InProcessWalks:
    """The walks in this process: one :class:`WalkWorker`, a walk run each time answers are
    asked for."""

    workers = 1

    def __init__(self, walker: Walker) -> None:
        self.worker = WalkWorker(walker, 0, 1)
        self._bound: float | None = None

    def start(self, bound: float) -> None:
        self._bound = bound

    def lower(self, bound: float) -> None:
        if self._bound is not None:
            self._bound = min(self._bound, bound)

    def answers(self, timeout: float) -> list[tuple[int, list[WalkResult], bool]]:
        if self._bound is None:
            return []
        results, done = self.worker.run(self._bound, seconds=0.0)  # one walk: an error loses no other
        if done:
            self._bound = None
        return [(0, results, done)]

    def stop(self) -> None:
        """Nothing: the walker reads the watchdog's ``stop_at`` itself."""

    def close(self) -> None:
        self._bound = None

    def memory(self) -> int:
        return 0


#: Walks of a simulation given no limit at all (no walk count, transitions or seconds).
DEFAULT_WALKS = 1000

#: Seconds the coordinator waits for a worker's chunk before it looks at the clock again.
WAIT_SECONDS = 0.05


def simulate(system: Any, properties: Iterable[Property] = (), *, options: WalkOptions,
             limits: Limits | None = None, walks: int | None = None, keep_going: bool = False,
             metrics: Iterable[Metric] = (), progress: ProgressCallback | None = None,
             progress_interval: float = 0.5, watchdog: Any = None,
             cluster: Callable[[list[float]], WalkCluster] | None = None, engine: str = "processes",
             shrink: bool = True, shrink_budget: int | None = None, on_cycle: CycleCheck | None = None,
             distinct_limit: int = DISTINCT_LIMIT) -> Result:
    """Random walks of ``system`` checking ``properties``; returns a
    :class:`~nice_attendre.result.Result` that is never complete, with ``coverage`` set.

    ``options`` says how walks are drawn (:class:`WalkOptions`). A run stops after ``walks``
    walks, at the first violation (unless ``keep_going``), when ``limits.max_transitions``
    is reached (at the end of that walk), at ``limits.max_seconds`` or ``max_memory``, or on
    Ctrl-C (the partial result); given none of them, it runs :data:`DEFAULT_WALKS` walks.
    What is counted is described in the module docstring; without a wall-clock stop the
    result is the same for any number of workers. ``limits.max_states`` and ``max_depth``
    do not apply to walks (:class:`~nice_attendre.errors.InputError`: use
    ``options.walk_depth``).

    ``cluster(stop_at)`` makes the workers (default: this process, :class:`InProcessWalks`);
    ``engine`` names where they run, for the coverage. With ``shrink`` each violation's
    trace is shrunk (:mod:`nice_attendre.shrink`) before it is returned, its length as
    found in ``unshrunk_length``. ``watchdog`` as for :func:`nice_attendre.dfs`.
    """
    from nice_attendre.watchdog import CallGuard, Watchdog

    limits = Limits() if limits is None else limits
    if limits.max_states is not None:
        raise InputError("max_states does not apply to random walks (they store no states): use walks, "
                         "max_transitions or max_seconds")
    if limits.max_depth is not None:
        raise InputError("max_depth does not apply to random walks: use the walk depth (--walk-depth)")
    if walks is not None and (isinstance(walks, bool) or not isinstance(walks, int) or walks < 1):
        raise InputError(f"walks must be a whole number >= 1, got {walks!r}")
    timed = limits.max_seconds is not None or (watchdog is not None and watchdog.deadline is not None)
    if walks is None and limits.max_transitions is None and not timed:
        walks = DEFAULT_WALKS
    if watchdog is None:
        guard = getattr(system, "guard", None)
        with Watchdog(guard=guard if isinstance(guard, CallGuard) else None, max_seconds=limits.max_seconds,
                      max_memory=limits.max_memory) as own:
            return _simulate(system, tuple(properties), options, limits, walks, keep_going, tuple(metrics),
                             progress, progress_interval, own, cluster, engine, shrink, shrink_budget, on_cycle,
                             distinct_limit)
    return _simulate(system, tuple(properties), options, limits, walks, keep_going, tuple(metrics), progress,
                     progress_interval, watchdog, cluster, engine, shrink, shrink_budget, on_cycle, distinct_limit)


def _simulate(system: Any, properties: tuple[Property, ...], options: WalkOptions, limits: Limits,
              walks: int | None, keep_going: bool, metrics: tuple[Metric, ...], progress: ProgressCallback | None,
              progress_interval: float, watchdog: Any, make_cluster: Callable[[list[float]], WalkCluster] | None,
              engine: str, shrink: bool, shrink_budget: int | None, on_cycle: CycleCheck | None,
              distinct_limit: int) -> Result:
    import signal

    from nice_attendre.parallel import MemoryGauge, WorkerLost

    stop_at: list[float] = [math.inf]
    if make_cluster is None:
        walker = Walker(system, properties, metrics, options, on_cycle=on_cycle, distinct_limit=distinct_limit,
                        stop_at=stop_at)
        cluster: WalkCluster = InProcessWalks(walker)
    else:
        cluster = make_cluster(stop_at)
    start = time.monotonic()  # (the workers are up: the time and rate are the walks')
    tally = Tally(properties, metrics, options, walks=walks, max_transitions=limits.max_transitions,
                  keep_going=keep_going, distinct_limit=distinct_limit)
    stop_reason: str | None = None
    stop_detail: str | None = None
    signum: int | None = None
    next_progress = start + progress_interval
    watchdog.bind(stop_at, on_stop=cluster.stop, memory=MemoryGauge(cluster) if make_cluster else None)
    busy = set(range(cluster.workers))
    try:
        try:
            told = tally.bound
            cluster.start(told)
            while busy:
                if stop_at[0] < 0 and stop_reason is None:
                    stop_reason, signum = watchdog.reason or "interrupted", watchdog.signum
                    told = 0
                    cluster.lower(0)  # no more walks (a cluster that the stop flag reaches has stopped already)
                for worker, results, done in cluster.answers(WAIT_SECONDS):
                    for result in results:
                        tally.add(result)
                    if done:
                        busy.discard(worker)
                if tally.bound < told:
                    told = tally.bound
                    cluster.lower(told)
                if tally.finished and busy and stop_reason is None:
                    cluster.stop()  # what the others run now is beyond the bound
                    stop_reason = tally.bound_reason
                now = time.monotonic()
                if progress is not None and now >= next_progress:
                    next_progress = now + progress_interval
                    progress(Progress(tally.transitions, len(tally.distinct), tally.last_depth, tally.deepest,
                                      now - start))
            if stop_reason is None and stop_at[0] < 0:
                stop_reason, signum = watchdog.reason or "interrupted", watchdog.signum
        finally:
            watchdog.unbind()
            cluster.close()
    except KeyboardInterrupt as exc:  # a second Ctrl-C: at once, with what was received
        stop_reason, signum = "interrupted", getattr(exc, "signum", signal.SIGINT)
    except WorkerLost as exc:
        stop_reason, stop_detail = "worker-lost", str(exc)
    except MemoryError:
        stop_reason = "out-of-memory"
    if tally.finished:
        stop_reason = tally.bound_reason
    else:
        stop_reason = stop_reason or "interrupted"
        tally.close()
    if stop_reason == UNSUPPORTED_FEATURE:
        stop_detail = tally.unsupported
    elapsed = time.monotonic() - start
    discoveries = []
    for result, (name, expectation, reason) in tally.reported():
        assert result.events is not None
        kind = Expectation(expectation)
        trace = walk_trace(system, system.initial_states()[result.initial], result.events,
                           result.loop_start if kind in EXECUTION_EXPECTATIONS else None)
        discoveries.append(Discovery(name, kind, trace, reason))
    if shrink and discoveries:
        from nice_attendre.shrink import SHRINK_TRANSITIONS, shrink_discoveries

        discoveries, _cut = shrink_discoveries(system, properties, discoveries,
                                               budget=SHRINK_TRANSITIONS if shrink_budget is None else shrink_budget)
    else:
        from nice_attendre.walk_cycles import cycle_discovery

        discoveries = [cycle_discovery(system, properties, d) for d in discoveries]
    coverage = tally.coverage(cluster.workers, engine)
    walks_done = tally.walks + tally.partial_walks
    stats = Stats(tally.transitions, len(tally.distinct), max(tally.transitions + walks_done - len(tally.distinct), 0),
                  tally.deepest, elapsed)
    return Result(stats, tuple(discoveries), False, stop_reason, dict(tally.metrics), signal=signum,
                  stop_detail=stop_detail, simulation=coverage)
