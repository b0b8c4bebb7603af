"""One shard of a partitioned search: the states it owns.

The partitioned search (Stern and Dill's parallel Murphi; PReach) gives every state an
owner, chosen by its fingerprint or by a part of it (:mod:`nice_attendre.partition`). A shard keeps
the fingerprints of the states it owns with each one's parent, expands those states, and
routes every successor to its owner. The search runs in levels, breadth first: in level ``k``
every shard expands its frontier (its states first reached at depth ``k``); the new
successors become the owners' frontiers of level ``k + 1``. A shard is engine-free:
the same class runs in a worker process (:mod:`nice_attendre.parallel`) and in a Ray actor
(:mod:`nice_attendre.ray_engine`).

A level has four steps, each run by every shard: :meth:`expand` (apply the events; offer each
owner the fingerprints and parents of its successors), :meth:`want` (an owner answers which
offered states are new to it), :meth:`ship` (the senders encode just those states: component
hashes plus the components the owner has not been sent yet) and :meth:`take` (the owner
decodes them, stores and checks the level's new states). Most successors are revisits, so
most states never travel: only their 16 bytes of fingerprint and parent do. Owned by
fingerprint, a successor another shard owns is not even built unless that owner asks for it,
so each state is built once in all (on Attendre, linear:7, 4 packets, 97% of the offered
successors were revisits at their owner).

Determinism: a state first reached in a level from several parents keeps the parent with
the smallest fingerprint, so the states of each level, every count of a complete search, and
the parent chain of every state (hence every trace) are the same for any number of shards,
any partition, any engine and any timing. A frontier is expanded in the order its states were first
reached (this shard's own successors in the order it made them, then those from the other
shards in shard order), which depends only on the input and the number of shards; it decides
only where a limit cuts a search short.

Partial-order reduction (``por``): each state's events are those of a stubborn set
(:class:`~nice_attendre.por.Reducer`, which depends on the state only, so every shard
computes the same set for a state), and a state with a reduced successor stored already when
it is expanded (at a level not deeper than its own, or in an earlier round) is expanded fully:
the breadth-first proviso of :func:`~nice_attendre.breadth_first.bfs`. Soundness: any other
edge of the reduced graph leads to a state stored at the end of the level being expanded,
strictly later than its source (levels store states in order, round after round). A cycle
cannot go strictly later at every edge, so one of its edges leads to a state stored already,
and its source is expanded fully: every cycle of the reduced graph holds a fully expanded
state, which keeps the stable violations and the quiescent states (see
:mod:`nice_attendre.por`). A successor stored already is one in ``seen`` of its owner. The shard that made it knows this at once for
the successors it owns; for the others, the owner says so in its answer to the offer
(:meth:`want` names, besides the states it wants, the offered ones it stores). A second round
in the same level, :meth:`widen`, then expands every such state's remaining events and
offers the successors (:meth:`want` again; :meth:`ship` sends what both rounds asked for).
The states of each level are therefore those of the one-process ``bfs(por=True)``, and so are
the counts for a system with one initial state (whose one round is that search), for any
number of shards.
"""
from __future__ import annotations

import pickle
import time
from array import array
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, Sequence

from nice_attendre.codec import PickleCodec
from nice_attendre.errors import StopRequest
from nice_attendre.fingerprint import Computed, peek_functions
from nice_attendre.partition import BY_FINGERPRINT, Partition, owner_function
from nice_attendre.property import EXECUTION_EXPECTATIONS, Expectation, Metric, Property

_CHECK_EVERY = 1024  # transitions between clock reads

#: The CPU time of the calling thread: what each step of a shard reports as its work (a
#: shard runs in a thread of its own process, of a Ray actor, or of the caller).
_cpu = time.thread_time

#: The cyclic garbage collector's first threshold in a process that runs a shard: a shard
#: keeps large, long-lived tables and makes little cyclic garbage, so collecting every 700
#: allocations (Python's default) costs about a tenth of its time for nothing.
GC_THRESHOLD = 50_000


def tune_gc() -> None:
    """Collect garbage less often in this process (call it in a process that runs a shard)."""
    import gc

    first, second, third = gc.get_threshold()
    gc.set_threshold(max(GC_THRESHOLD, first), second, third)


@dataclass
class Found:
    """A state the shard stored that violates properties: ``(property, expectation value,
    reason)`` for each; ``level`` is its breadth-first depth.

    A step that violates properties of transitions has ``step``, the index of its event
    among the enabled events of its state, which ``fingerprint`` names (the state before
    the step, stored; ``level`` is the depth after the step)."""

    fingerprint: int
    level: int
    violations: list[tuple[str, str, str]]
    step: int | None = None


@dataclass
class LevelReport:
    """What a shard did while expanding one level."""

    transitions: int = 0
    depth_cut: bool = False
    #: "max-transitions", "max-seconds" or "stopped" (the coordinator asked, see
    #: :attr:`Shard.stop`): work was left undone
    stop_reason: str | None = None
    seconds: float = 0.0  # CPU time spent expanding
    #: the steps that violated properties of transitions (not followed further, as in the DFS)
    found: list[Found] = field(default_factory=list)


@dataclass
class Intake:
    """The states a shard stored at the end of a level (or from the initial states), each
    checked as the DFS checks a state it stores."""

    new_states: int
    revisits: int
    found: list[Found] = field(default_factory=list)
    sometimes_held: list[str] = field(default_factory=list)
    metrics: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: CPU time of the level's steps after expanding: answering offers (want), shipping,
    #: storing and checking (take or seed)
    seconds: tuple[float, float, float] = (0.0, 0.0, 0.0)


def _interrupted(stop: Any, deadline: float | None) -> str | None:
    """Why a shard's round stops before its work is done, checked every
    :data:`_CHECK_EVERY` transitions: ``stopped`` (the coordinator's flag), ``max-seconds``
    (the round's deadline passed), or None."""
    if stop is not None and stop.value:
        return "stopped"
    if deadline is not None and time.monotonic() >= deadline:
        return "max-seconds"
    return None


class Shard:
    """The part of a partitioned search that owns the states ``partition`` gives shard ``index``.

    ``system`` is any :class:`~nice_attendre.system.System` (with its optional fingerprint
    and codec methods); ``properties`` and ``metrics`` are checked as :func:`~nice_attendre.dfs`
    checks them. The coordinator calls :meth:`seed` once per initial state, then per level
    :meth:`expand`, :meth:`want`, :meth:`ship` and :meth:`take` on every shard, each with what
    the others addressed to it (with ``por``: :meth:`expand`, :meth:`want`, :meth:`widen`,
    :meth:`want`, :meth:`ship`, :meth:`take`), and at the end :meth:`parents` to rebuild traces. States at
    depth ``max_depth`` are not expanded (as in :class:`~nice_attendre.checker.Limits`, with
    depth the breadth-first level).
    """

    def __init__(self, index: int, shards: int, system: Any, properties: Sequence[Property] = (),
                 metrics: Sequence[Metric] = (), *, max_depth: int | None = None,
                 partition: Partition = BY_FINGERPRINT, por: bool = False) -> None:
        self.index = index
        self.shards = shards
        self.system = system
        self.partition = partition
        self._owner = owner_function(system, partition, shards)
        props = tuple(properties)
        self.always = tuple(p for p in props if p.expectation is Expectation.ALWAYS)
        self.at_end = tuple(p for p in props if p.expectation is Expectation.AT_QUIESCENCE)
        self.sometimes = [p for p in props if p.expectation is Expectation.SOMETIMES]
        self.on_step = tuple(p for p in props if p.expectation is Expectation.TRANSITION)
        self.metrics = tuple(metrics)
        self.max_depth = max_depth
        #: with partial-order reduction: each state's events are a stubborn set's (see the module docstring)
        self.por = por
        self._enabled = system.enabled
        if por:
            from nice_attendre.errors import InputError
            from nice_attendre.por import Reducer, refusal, unsupported

            problem = unsupported(system) or refusal(p for p in props if p.expectation not in EXECUTION_EXPECTATIONS)
            if problem is not None:
                raise InputError(problem)
            self._enabled = Reducer(system)
        # The proviso's bookkeeping for the level being expanded (with ``por``): the frontier
        # positions of the states to expand fully; per peer, the successors offered to it (in
        # offer order); per offered successor, the frontier positions of the states that
        # reached it; the round of the level (1: expand, 2: widen); per sender, how many
        # states it offered in round 1 (round 2's indices follow them); per peer, the
        # indices it asked for in round 1.
        self._full: set[int] = set()
        self._offered: list[list[int]] = []
        self._reached: dict[int, list[int]] = {}
        self._round = 1
        self._offset: list[int] = [0] * shards
        self._first_asked: list[bytes] = [b""] * shards
        self.fingerprint_of, self.peek, self.build = peek_functions(system)
        make_codec = getattr(system, "state_codec", None)
        self.codec = make_codec() if make_codec is not None else PickleCodec()
        #: the fingerprints of the states this shard owns and has stored (a successor among
        #: them is a revisit). The successors offered to other shards are not remembered: a
        #: state is almost always reached again only in the level it was first offered in
        #: (route-flow, OpenFlow-B, linear:6, 2 packets, two shards: 358,100 offers against
        #: 357,499 when remembered), and remembering them made this set twice as large.
        self.seen: set[int] = set()
        #: (fingerprint, parent's fingerprint) of every state this shard owns, in the order
        #: stored (an initial state is its own parent); read only to rebuild traces
        self.parent_log = array("Q")
        self._stored = 0
        self._parent_of: dict[int, int] | None = None
        self.level = 0
        # The states of the current level, as three parallel lists (not a tuple per state:
        # every container the search keeps alive is scanned by the garbage collector, which
        # cost a shard about a sixth of its time): fingerprints, states, and their events
        # (None if the state is not to be expanded).
        self._frontier_fps: list[int] = []
        self._frontier_states: list[Any] = []
        self._frontier_events: list[Sequence[Any] | None] = []
        # The states this shard owns that are new in this level: fingerprint -> smallest
        # parent, and fingerprint -> state (None until shipped by the shard that found it).
        self._next_parent: dict[int, int] = {}
        self._next_state: dict[int, Any] = {}
        self._revisits = 0
        #: per peer: the states offered to it this level, in the order offered (owned by
        #: fingerprint: (the state it is made from, the peek's handle); by a part: the state)
        self._outbox: list[list[Any]] = []
        self._awaiting: list[list[int]] = []  # per sender: fingerprints asked of it, in order
        self._want_seconds = self._ship_seconds = 0.0  # this level's, reported by take()
        #: set by the coordinator (an object whose ``value`` turns true: a flag in memory
        #: shared with a worker process) to end the current expansion early, as a limit does
        self.stop: Any = None

    # ---- the search ---------------------------------------------------------------------

    def seed(self, position: int) -> Intake:
        """Start a round from initial state number ``position``: store and check it, as the
        frontier of level 0, if this shard owns it and no earlier round reached it. (Like the
        DFS, which explores everything reachable from one initial state before the next,
        the search runs one round per initial state.)"""
        started = _cpu()
        self.level = 0
        state = self.system.initial_states()[position]
        fp = self.fingerprint_of(state)
        if self._owner(state, fp) == self.index and fp not in self.seen:
            self._next_parent[fp] = fp
            self._next_state[fp] = state
        intake = self._close_level()
        intake.seconds = (0.0, 0.0, _cpu() - started)
        return intake

    def expand(self, budget: int | None = None, seconds: float | None = None) -> tuple[LevelReport, list[bytes]]:
        """Apply every event of every frontier state and route the successors.

        Stops early, with work left undone, rather than exceed ``budget`` transitions or
        ``seconds``, or when :attr:`stop` is set (the report then says why; the search ends
        after this level). Keeps the
        successors this shard owns; returns the report and, per shard, an *offer*: the
        fingerprints and parents of the successors it owns, whose states :meth:`ship` sends
        if the owner asks for them (``b""`` for none, and for this shard itself).
        """
        started = _cpu()
        report = LevelReport()
        deadline = None if seconds is None else time.monotonic() + seconds
        # The new successors, per owner: fingerprint -> its smallest parent from here (in the
        # order first reached); those built here: fingerprint -> state. Owned by fingerprint,
        # another shard's successor is not built unless its owner asks for it in ship() (most
        # are revisits there): what it is made from, (state, the peek's handle), is kept in
        # the order of its owner's table. Owned by a part, every new successor is built here
        # and kept in this shard's table until the owners are known (its state names them).
        tables: list[dict[int, int]] = [{} for _ in range(self.shards)]
        made: list[list[Any]] = [[] for _ in range(self.shards)]
        state_of: dict[int, Any] = {}
        seen, peek, build = self.seen, self.peek, self.build
        on_step = self.on_step
        shards, index = self.shards, self.index
        by_fingerprint = self.partition.name is None
        split = by_fingerprint and shards > 1  # successors owned by other shards are known by their fingerprint
        own_parents = tables[index]
        cut = self.max_depth is not None and self.level >= self.max_depth
        transitions = revisits = 0
        next_check = _CHECK_EVERY
        stop = self.stop
        checking = deadline is not None or stop is not None
        event: Any = None
        events = ()
        por = self.por
        self._round = 1
        full = self._full = set()  # (por) the frontier positions of the states to expand fully
        reached = self._reached = {}  # (por) successor -> the positions of the states that reached it
        # (por) owned by a part, any successor may belong to another shard (whose answer to
        # the offer tells if it stores it); owned by fingerprint, those of other owners
        remote = not by_fingerprint and shards > 1
        try:
            for at, (fp, state, events) in enumerate(zip(self._frontier_fps, self._frontier_states,
                                                         self._frontier_events)):
                if not events:
                    continue
                if cut:
                    report.depth_cut = True
                    break
                if budget is not None and transitions + len(events) > budget:
                    events = events[:budget - transitions]
                    report.stop_reason = "max-transitions"
                for position, event in enumerate(events):
                    sfp, handle = peek(state, fp, event)
                    if on_step:  # the successor is needed now: built once, kept as the handle
                        handle = Computed(build(state, handle))
                        if self._violates(state, fp, position, event, handle.state, report):
                            continue  # a violating step is not followed further (as in the DFS)
                    # Only this shard's own stored states are in ``seen``: another shard's
                    # successor is not looked up there (its owner tells if it is stored).
                    owner = (sfp >> 32) % shards if split else index  # fingerprint.owner, inlined
                    if owner == index:
                        if sfp in seen:
                            revisits += 1
                            if por:  # stored at a level not deeper: the proviso
                                full.add(at)
                            continue
                        parents = own_parents
                    else:
                        parents = tables[owner]
                    if por and (owner != index or remote):
                        reached.setdefault(sfp, []).append(at)
                    known = parents.get(sfp)
                    if known is None:
                        if owner == index:
                            state_of[sfp] = build(state, handle)  # only a successor not seen before
                        else:
                            made[owner].append((state, handle))
                        parents[sfp] = fp
                    else:  # reached again in this level from here
                        revisits += 1
                        if fp < known:
                            parents[sfp] = fp
                transitions += len(events)
                if report.stop_reason:
                    break
                if checking and transitions >= next_check:
                    next_check = transitions + _CHECK_EVERY
                    report.stop_reason = _interrupted(stop, deadline)
                    if report.stop_reason:
                        break
        except StopRequest:  # the worker's watchdog stopped a call into the app: the search ends
            report.stop_reason = "stopped"  # (that transition not made: its event is not counted)
            transitions += next((i for i, done in enumerate(events) if done is event), 0)
        self._revisits += revisits
        report.transitions = transitions
        if not by_fingerprint:  # route by the part the successor's state holds
            part_owner = self._owner
            for sfp, successor in state_of.items():
                owner = part_owner(successor, sfp)
                if owner != index:
                    tables[owner][sfp] = own_parents.pop(sfp)
                    made[owner].append(successor)
            state_of = {sfp: state_of[sfp] for sfp in own_parents}
        # This shard's own successors start the next level's tables (empty until now: the
        # other shards' offers come in want(), after every shard has expanded), in the order
        # they were made. None is stored yet (the loop above skipped the stored ones), and each
        # is in its owner's table once, with its smallest parent from here.
        self._next_parent = own_parents
        self._next_state = state_of
        offers = self._offers(tables)
        if por:
            self._offered = [list(parents) for parents in tables]
        self._outbox = made  # (this shard's own entry stays empty)
        report.seconds = _cpu() - started
        return report, offers

    def _offers(self, tables: Sequence[dict[int, int]]) -> list[bytes]:
        """Per shard, the offer of the successors it owns among ``tables`` (fingerprint ->
        parent, per owner): their fingerprints then their parents, as 64-bit words (``b""``
        for none, and for this shard itself)."""
        offers = [b""] * self.shards
        for peer, parents in enumerate(tables):
            if peer != self.index and parents:
                offers[peer] = array("Q", parents).tobytes() + array("Q", parents.values()).tobytes()
        return offers

    def widen(self, budget: int | None, seconds: float | None,
              answers: Sequence[bytes]) -> tuple[LevelReport, list[bytes]]:
        """With ``por``, the level's second round (see the module docstring): read each
        owner's answer to this shard's offer (one per owner, in shard order: what
        :meth:`want` returned for this shard), expand fully every frontier state with a
        reduced successor already stored (its events not expanded yet), and offer the new
        successors as :meth:`expand` does. ``budget`` and ``seconds`` bound the transitions
        and time of this round as in :meth:`expand`."""
        started = _cpu()
        report = LevelReport()
        self._round = 2
        full, offered, reached = self._full, self._offered, self._reached
        asked = [b""] * self.shards
        for owner, answer in enumerate(answers):
            if not answer:
                continue
            both = array("L")
            both.frombytes(answer)
            wanted = both[0]
            asked[owner] = both[1:1 + wanted].tobytes()
            for i in both[1 + wanted:]:
                full.update(reached[offered[owner][i]])
        self._first_asked = asked
        self._reached, self._offered = {}, []
        shards, index, seen = self.shards, self.index, self.seen
        peek, build, part_owner = self.peek, self.build, self._owner
        split = self.partition.name is None and shards > 1
        by_part = self.partition.name is not None
        own_parents, own_states = self._next_parent, self._next_state
        tables: list[dict[int, int]] = [{} for _ in range(shards)]
        made: list[list[Any]] = [[] for _ in range(shards)]
        deadline = None if seconds is None else time.monotonic() + seconds
        stop = self.stop
        transitions = revisits = 0
        next_check = _CHECK_EVERY
        event: Any = None
        extra: list[Any] = []
        if stop is not None and stop.value:  # the coordinator asked during the first round
            report.stop_reason = "stopped"
            full = set()
        try:
            for at in sorted(full):
                fp, state = self._frontier_fps[at], self._frontier_states[at]
                chosen = set(self._frontier_events[at] or ())
                extra = [event for event in self.system.enabled(state) if event not in chosen]
                if not extra:
                    continue
                if budget is not None and transitions + len(extra) > budget:
                    extra = extra[:budget - transitions]
                    report.stop_reason = "max-transitions"
                for event in extra:
                    sfp, handle = peek(state, fp, event)
                    owner = (sfp >> 32) % shards if split else index
                    if owner == index and sfp in seen:
                        revisits += 1
                        continue
                    successor = None
                    if by_part:  # its owner is named by its state
                        successor = build(state, handle)
                        owner = part_owner(successor, sfp)  # (a state it stores was found above)
                    parents = own_parents if owner == index else tables[owner]
                    known = parents.get(sfp)
                    if known is None:
                        parents[sfp] = fp
                        if successor is None:
                            successor = (build(state, handle) if owner == index or by_part
                                         else None)
                        if owner == index:
                            own_states[sfp] = successor
                        else:
                            made[owner].append(successor if by_part else (state, handle))
                    else:
                        revisits += 1
                        if fp < known:
                            parents[sfp] = fp
                transitions += len(extra)
                if report.stop_reason:
                    break
                if transitions >= next_check:
                    next_check = transitions + _CHECK_EVERY
                    report.stop_reason = _interrupted(stop, deadline)
                    if report.stop_reason:
                        break
        except StopRequest:  # as in expand(): that transition not made
            report.stop_reason = "stopped"
            transitions += next((i for i, done in enumerate(extra) if done is event), 0)
        self._full = set()
        self._revisits += revisits
        report.transitions = transitions
        offers = self._offers(tables)
        for peer, offer in enumerate(offers):
            if offer:
                self._outbox[peer].extend(made[peer])
        report.seconds = _cpu() - started
        return report, offers

    def want(self, offers: Sequence[bytes]) -> list[bytes]:
        """Read the other shards' offers (one per sender, in shard order): count the known
        successors as revisits, keep the smallest parent of each new one, and return, per
        sender, the indices of the new states to fetch from it (the first sender to offer a
        state is asked for it)."""
        started = _cpu()
        requests = [b""] * self.shards
        seen, pending = self.seen, self._next_parent
        # with por, round 1 also names the offered states stored already (the proviso), and
        # round 2's indices follow round 1's (see widen() and ship())
        first = not self.por or self._round == 1
        if first:
            self._awaiting = [[] for _ in range(self.shards)]
            self._offset = [0] * self.shards
        naming = self.por and first
        for sender, offer in enumerate(offers):
            if not offer:
                continue
            both = array("Q")
            both.frombytes(offer)
            half = len(both) // 2
            fps, parents = both[:half], both[half:]
            wanted = array("L")
            stored = array("L")
            offset = 0 if first else self._offset[sender]
            awaiting = self._awaiting[sender]
            for i, sfp in enumerate(fps):
                if sfp in seen:
                    self._revisits += 1
                    if naming:
                        stored.append(i)
                    continue
                known = pending.get(sfp)
                if known is not None:
                    self._revisits += 1
                    if parents[i] < known:
                        pending[sfp] = parents[i]
                    continue
                pending[sfp] = parents[i]
                self._next_state[sfp] = None
                wanted.append(offset + i)
                awaiting.append(sfp)
            if first:
                self._offset[sender] = half
            if naming and (wanted or stored):
                requests[sender] = array("L", [len(wanted)]).tobytes() + wanted.tobytes() + stored.tobytes()
            elif wanted:
                requests[sender] = wanted.tobytes()
        self._want_seconds = _cpu() - started
        return requests

    def ship(self, requests: Sequence[bytes]) -> list[bytes]:
        """Send each shard the states it asked for (one request per shard, in shard order),
        encoded by the codec: component hashes, and the components not sent to it before."""
        started = _cpu()
        payloads = [b""] * self.shards
        if self.por:  # what round 1 asked for (kept by widen()), then round 2
            if self._round == 1:  # no second round: round 1's answers, as want() gave them
                requests = [self._asked(request) for request in requests]
            else:
                requests = [first + request for first, request in zip(self._first_asked, requests)]
            self._first_asked = [b""] * self.shards
        for peer, request in enumerate(requests):
            if request:
                wanted = array("L")
                wanted.frombytes(request)
                states = self._outbox[peer]
                if self.partition.name is None:  # (made from, handle): see expand()
                    build = self.build
                    wanted_states = [build(*states[i]) for i in wanted]
                else:
                    wanted_states = [states[i] for i in wanted]
                payloads[peer] = pickle.dumps(self.codec.encode(wanted_states, peer),
                                              protocol=pickle.HIGHEST_PROTOCOL)
        self._outbox = []
        self._ship_seconds = _cpu() - started
        return payloads

    @staticmethod
    def _asked(answer: bytes) -> bytes:
        """The indices asked for in a round-1 answer of :meth:`want` with ``por``."""
        if not answer:
            return answer
        both = array("L")
        both.frombytes(answer)
        return both[1:1 + both[0]].tobytes()

    def take(self, payloads: Sequence[bytes]) -> Intake:
        """Take in the states fetched from the other shards (one payload per sender, in
        shard order); store and check this level's new states: the next frontier."""
        started = _cpu()
        pending = self._next_state
        for sender, payload in enumerate(payloads):
            if payload:
                decode = self.codec.decode(pickle.loads(payload))
                for i, sfp in enumerate(self._awaiting[sender]):
                    pending[sfp] = decode(i)
        self._awaiting = []
        self.level += 1
        intake = self._close_level()
        intake.seconds = (self._want_seconds, self._ship_seconds, _cpu() - started)
        self._want_seconds = self._ship_seconds = 0.0
        return intake

    def _close_level(self) -> Intake:
        """Store the new states of the level and check them, in the order they were first
        reached (siblings together: their components are warm in the caches, which saves
        about a tenth of the time against fingerprint order)."""
        parents, states = self._next_parent, self._next_state
        intake = Intake(len(parents), self._revisits)
        self.parent_log.extend(chain.from_iterable(parents.items()))
        check = self._check
        try:
            events = [check(fp, states[fp], intake) for fp in parents]
        except StopRequest:  # the watchdog stopped a user's property: the search is ending
            events = [None] * len(parents)  # (the coordinator knows why: it asked)
        self._stored += len(parents)
        self.seen.update(parents)
        self._frontier_fps = list(parents)
        self._frontier_states = [states[fp] for fp in parents]
        self._frontier_events = events
        self._next_parent, self._next_state = {}, {}
        self._revisits = 0
        return intake

    # ---- checking a state ---------------------------------------------------------------

    def _violates(self, state: Any, fp: int, position: int, event: Any, successor: Any,
                  report: LevelReport) -> bool:
        """Check the properties of transitions on the step ``state`` -> ``successor`` by the
        event at ``position`` of ``state``'s events; record a violation in ``report``."""
        bad = [(prop.name, prop.expectation.value, prop.why(successor))
               for prop in self.on_step if not prop.holds(state, event, successor)]
        if bad:
            report.found.append(Found(fp, self.level + 1, bad, position))
        return bool(bad)

    def _check(self, fp: int, state: Any, intake: Intake) -> Sequence[Any] | None:
        """Check a new state's properties (as the DFS checks a state it stores); its events,
        or None if it violates an ``always`` property (it is then not expanded)."""
        bad: list[tuple[str, str, str]] = []
        for prop in self.always:
            if not prop.holds(state):
                bad.append((prop.name, prop.expectation.value, prop.why(state)))
        if self.sometimes:
            for prop in list(self.sometimes):
                if prop.holds(state):
                    self.sometimes.remove(prop)
                    intake.sometimes_held.append(prop.name)
        if bad:
            intake.found.append(Found(fp, self.level, bad))
            return None
        events = self._enabled(state)
        if not events:
            for prop in self.at_end:
                if not prop.holds(state):
                    bad.append((prop.name, prop.expectation.value, prop.why(state)))
            if bad:
                intake.found.append(Found(fp, self.level, bad))
            ranges = intake.metrics
            for metric in self.metrics:
                value = metric.value(state)
                low, high = ranges.get(metric.name, (value, value))
                ranges[metric.name] = (min(low, value), max(high, value))
        return events

    # ---- questions from the coordinator -------------------------------------------------

    def counts(self) -> int:
        """How many states this shard stores."""
        return self._stored

    def parents(self, fingerprints: Sequence[int]) -> list[int | None]:
        """The parent fingerprint of each state (itself for an initial state; None if unknown)."""
        if self._parent_of is None or len(self._parent_of) != self._stored:
            log = self.parent_log
            self._parent_of = dict(zip(log[0::2], log[1::2]))
        get = self._parent_of.get
        return [get(fp) for fp in fingerprints]
