"""What a search returns: counts, discoveries and whether the search was complete."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nice_attendre.property import Expectation
from nice_attendre.trace import Trace

if TYPE_CHECKING:
    from nice_attendre.importing import Source
    from nice_attendre.simulate import Coverage


@dataclass(frozen=True, slots=True)
class Stats:
    """The search's counts (the paper's metric; see docs/model.md).

    * ``transitions``: every ``apply`` performed, including those into known states;
    * ``unique_states``: distinct states stored (initial states included);
    * ``revisits``: transitions that led to an already-visited state;
    * ``max_depth``: the longest path from an initial state on the search stack;
    * ``elapsed``: wall-clock seconds of the search.
    """

    transitions: int
    unique_states: int
    revisits: int
    max_depth: int
    elapsed: float

    @property
    def transitions_per_second(self) -> float:
        """Throughput of the search; 0 when no time elapsed."""
        return self.transitions / self.elapsed if self.elapsed > 0 else 0.0

    def counts(self) -> tuple[int, int, int, int]:
        """The deterministic part: (transitions, unique_states, revisits, max_depth)."""
        return (self.transitions, self.unique_states, self.revisits, self.max_depth)


@dataclass(frozen=True, slots=True)
class Discovery:
    """A property that failed its expectation.

    ``trace`` leads from an initial state to the failing state (``None`` for a
    ``sometimes`` property that never held: there is no single state to show).
    ``reason`` is the property's explanation of the failing state. ``unshrunk_length`` is
    the length of the trace as found, when it was shrunk (:mod:`nice_attendre.shrink`);
    None when it was not.
    """

    property: str
    expectation: Expectation
    trace: Trace | None
    reason: str = ""
    unshrunk_length: int | None = None


@dataclass(frozen=True, slots=True)
class Balance:
    """How evenly a partitioned search's shards shared the work (CPU seconds, measured in
    each shard while it worked; not deterministic, like ``elapsed``).

    ``busy`` is each shard's time; ``busiest`` the sum, over the levels and each level's
    steps (expanding; answering offers, shipping, storing), of the busiest shard's time
    in that step: as the shards wait for each other after every step, the search takes at
    least that long, and with no waiting at all it would take ``even``, the mean of
    ``busy``. ``efficiency`` is ``even / busiest`` (1.0: every step evenly shared).
    """

    busy: tuple[float, ...]
    busiest: float

    @property
    def even(self) -> float:
        """The busiest time an even split of the same work would give."""
        return sum(self.busy) / len(self.busy) if self.busy else 0.0

    @property
    def efficiency(self) -> float:
        """``even / busiest`` (1.0 when nothing was measured)."""
        return self.even / self.busiest if self.busiest > 0 else 1.0


#: What a search's outcome means, for people and for CI (see :attr:`Result.verdict`).
VERDICTS = ("ok", "violated", "incomplete", "interrupted")


@dataclass(frozen=True, slots=True)
class Result:
    """The outcome of a search.

    ``complete`` is False when a limit, Ctrl-C or the first violation cut the search short;
    ``stop_reason`` then names what stopped it (``violation``, ``max-transitions``,
    ``max-states``, ``max-depth``, ``max-seconds``, ``max-memory``, ``out-of-memory``,
    ``interrupted``, for a simulation ``walks`` (it ran the walks asked for), and for a
    partitioned search or a simulation on workers ``worker-lost``: a worker process or actor
    died or stopped answering, see ``stop_detail``); ``signal`` is the number of the signal that interrupted it.
    ``metrics`` maps a metric's name to its (min, max) over the quiescent states reached
    (absent when none was reached). ``system`` is the explored system when the front end
    sets it (to replay and describe the traces); the checker itself leaves it ``None``. ``collision_probability`` is set
    when states were stored as 64-bit fingerprints: the estimated probability that two
    distinct states had the same fingerprint, so that one was never explored (TLC's
    estimate, :func:`nice_attendre.visited.collision_probability`). ``partition`` says how a
    partitioned search shared the states among its shards (:mod:`nice_attendre.partition`),
    and ``balance`` how evenly they shared the work (:class:`Balance`). ``sources`` are the
    user files the front end loaded for the run (:class:`nice_attendre.importing.Source`:
    each one's path and the SHA-256 of the content checked). ``simulation`` is set for a
    simulation (random walks, :mod:`nice_attendre.simulate`): what its walks covered; a
    simulation is never complete.
    """

    stats: Stats
    discoveries: tuple[Discovery, ...]
    complete: bool
    stop_reason: str | None = None
    metrics: dict[str, tuple[int, int]] = field(default_factory=dict)
    system: Any = field(default=None, compare=False, repr=False)
    signal: int | None = None
    collision_probability: float | None = None
    partition: str | None = None
    balance: Balance | None = None
    #: more about ``stop_reason``, in words, when there is more to say (``worker-lost``: which
    #: worker, its process id, and what happened to it)
    stop_detail: str | None = None
    sources: tuple[Source, ...] = ()
    simulation: Coverage | None = None
    #: properties the search was given but did not check, as (name, why) pairs: a partitioned
    #: search cannot see cycles, so it leaves out the default ``termination`` (and says so in
    #: every report); the verdict is about the properties checked
    unchecked: tuple[tuple[str, str], ...] = ()
    #: what the search ran of the app's code, when asked (``verify --coverage``): an object of the
    #: front end with ``text_lines()`` and ``as_json()`` (see :mod:`nice_attendre.frontend.coverage`)
    coverage: Any = field(default=None, compare=False, repr=False)
    #: the packets discovered for the search (``verify --discover``): an object of the front
    #: end with ``text_lines()`` and ``as_json()`` (see :mod:`nice_attendre.discover`)
    packets_discovered: Any = field(default=None, compare=False, repr=False)
    #: the reduction the search applied (``"partial-order"``: :mod:`nice_attendre.por`; its
    #: counts are the reduced graph's), or None
    reduction: str | None = None

    @property
    def verdict(self) -> str:
        """``violated`` when a property failed (whatever else happened); otherwise ``ok`` for
        a complete search, ``interrupted`` for one a signal (Ctrl-C) ended, and
        ``incomplete`` for one a limit or exhausted memory ended."""
        if self.discoveries:
            return "violated"
        if self.complete:
            return "ok"
        return "interrupted" if self.stop_reason == "interrupted" else "incomplete"

    @property
    def ok(self) -> bool:
        """True only when the search was complete and no property was violated: an
        incomplete or interrupted search is never ok."""
        return self.verdict == "ok"

    def discovery(self, name: str) -> Discovery | None:
        """The discovery for property ``name``, if it was violated."""
        for found in self.discoveries:
            if found.property == name:
                return found
        return None
