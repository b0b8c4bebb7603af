"""A state graph kept by a search that does not see cycles as it goes (the breadth-first one),
and the questions ``termination`` and ``eventually`` ask of it afterwards (domain-free).

Nodes are the ints ``0..n-1`` (in the order the search stored the states); edges are kept in
two flat ``array('q')`` columns, 16 bytes per transition followed; each node has a kind
(:data:`UNEXPANDED`, :data:`EXPANDED`, :data:`END`). :meth:`StoredGraph.freeze` builds the
successor lists (compressed rows, in the order the edges were added), after which:

* :meth:`~StoredGraph.cycle` finds a cycle among the nodes allowed, reachable from the roots;
* :meth:`~StoredGraph.end` finds an :data:`END` node reachable through allowed nodes;
* :meth:`~StoredGraph.path` finds a shortest path to a node through allowed nodes.

Every walk is iterative (no recursion, whatever the depth) and visits nodes and edges in a
fixed order, so the answers are deterministic. ``stop()`` is called every
:data:`CHECK_EVERY` steps; a true answer abandons the walk with :class:`Abandoned`.
"""
from __future__ import annotations

from array import array
from collections import deque
from typing import Callable, Sequence

#: Node kinds: not expanded (cut by a violation or a limit), expanded with successors, quiescent.
UNEXPANDED, EXPANDED, END = 0, 1, 2

#: Steps of a walk between two calls of ``stop``.
CHECK_EVERY = 4096


class Abandoned(Exception):
    """A walk stopped because ``stop()`` answered true."""


class StoredGraph:
    """Nodes, their kinds, and the edges between them (see the module docstring)."""

    def __init__(self) -> None:
        self.kinds = bytearray()
        self._from = array("q")
        self._to = array("q")
        self._first: array | None = None  # node -> index of its first successor in _succ
        self._succ: array | None = None

    def __len__(self) -> int:
        return len(self.kinds)

    def add_node(self) -> int:
        """A new node (kind :data:`UNEXPANDED`); its number."""
        self.kinds.append(UNEXPANDED)
        return len(self.kinds) - 1

    def add_edge(self, source: int, target: int) -> None:
        self._from.append(source)
        self._to.append(target)

    @property
    def edges(self) -> int:
        return len(self._from)

    def freeze(self) -> None:
        """Build the successor lists (after the last edge); the edge columns are released."""
        n = len(self.kinds)
        counts = array("q", bytes(8 * (n + 1)))
        for source in self._from:
            counts[source + 1] += 1
        for node in range(n):
            counts[node + 1] += counts[node]
        succ = array("q", bytes(8 * len(self._from)))
        place = array("q", counts)
        for source, target in zip(self._from, self._to):
            succ[place[source]] = target
            place[source] += 1
        self._first, self._succ = counts, succ
        self._from, self._to = array("q"), array("q")

    def successors(self, node: int) -> Sequence[int]:
        assert self._first is not None and self._succ is not None, "freeze() the graph first"
        return self._succ[self._first[node]:self._first[node + 1]]

    def cycle(self, roots: Sequence[int], allowed: Callable[[int], bool] | None = None,
              stop: Callable[[], bool] | None = None, ignore: Callable[[int], bool] | None = None
              ) -> list[int] | None:
        """A cycle ``[c0, c1, ..., ck]`` (edges ``c0 -> c1 -> ... -> ck -> c0``) among the
        nodes ``allowed`` reachable from ``roots`` through them, or None: a depth-first walk
        from each root in turn, successors in edge order; the first edge to a node on the
        walk's path closes the cycle (the graph has a cycle iff the walk meets such an edge).
        An edge to a node that ``ignore`` names closes none: when ``ignore`` names whole
        strongly connected components, the cycles in the others are still found (each has
        an edge back to a node of its own component on the walk's path)."""
        assert self._first is not None and self._succ is not None, "freeze() the graph first"
        first, succ = self._first, self._succ
        colour = bytearray(len(self.kinds))  # 0 white, 1 on the path, 2 done
        steps = 0
        for root in roots:
            if colour[root] or (allowed is not None and not allowed(root)):
                continue
            path = [root]
            at = [first[root]]
            colour[root] = 1
            while path:
                node = path[-1]
                index = at[-1]
                if index >= first[node + 1]:
                    colour[node] = 2
                    path.pop()
                    at.pop()
                    continue
                at[-1] = index + 1
                target = succ[index]
                steps += 1
                if stop is not None and not steps % CHECK_EVERY and stop():
                    raise Abandoned
                if allowed is not None and not allowed(target):
                    continue
                if colour[target] == 1:
                    if ignore is not None and ignore(target):
                        continue
                    return path[path.index(target):]
                if not colour[target]:
                    colour[target] = 1
                    path.append(target)
                    at.append(first[target])
        return None

    def path(self, roots: Sequence[int], goal: Callable[[int], bool], allowed: Callable[[int], bool] | None = None,
             stop: Callable[[], bool] | None = None) -> list[int] | None:
        """A shortest path ``[root, ..., node]`` through ``allowed`` nodes from one of ``roots``
        to a node where ``goal`` holds (breadth-first, roots in order), or None."""
        assert self._first is not None and self._succ is not None, "freeze() the graph first"
        first, succ = self._first, self._succ
        parent: dict[int, int] = {}
        queue: deque[int] = deque()
        for root in roots:
            if root not in parent and (allowed is None or allowed(root)):
                parent[root] = -1
                queue.append(root)
        steps = 0
        while queue:
            node = queue.popleft()
            if goal(node):
                found = [node]
                while parent[found[-1]] >= 0:
                    found.append(parent[found[-1]])
                return found[::-1]
            for index in range(first[node], first[node + 1]):
                target = succ[index]
                steps += 1
                if stop is not None and not steps % CHECK_EVERY and stop():
                    raise Abandoned
                if target not in parent and (allowed is None or allowed(target)):
                    parent[target] = node
                    queue.append(target)
        return None

    def end(self, roots: Sequence[int], allowed: Callable[[int], bool] | None = None,
            stop: Callable[[], bool] | None = None) -> list[int] | None:
        """A shortest path through ``allowed`` nodes from ``roots`` to an :data:`END` node."""
        kinds = self.kinds
        return self.path(roots, lambda node: kinds[node] == END, allowed, stop)
