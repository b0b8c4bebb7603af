"""The app states discovery explores the handler in: states the model reaches.

The first is the state after every switch joined (the initial state of the network). Then
a short breadth-first walk of the network with the app's default traffic finds the next
distinct app states, in breadth-first order (at most :data:`MAX_STATES` in all, within
:data:`MAX_TRANSITIONS` transitions): a learning switch that has learned an address takes
branches the empty table never does.
"""
from __future__ import annotations

from collections import deque
from typing import Any

#: App states explored at most.
MAX_STATES = 3
#: Transitions of the network walked at most to find them.
MAX_TRANSITIONS = 2000


def app_states(net: Any, max_states: int = MAX_STATES, max_transitions: int = MAX_TRANSITIONS) -> list[Any]:
    """Distinct app states of ``net`` reachable from its initial state, breadth-first
    (the initial one first)."""
    start = net.initial_states()[0]
    found = [net.value(start, "app")]
    seen = {start}
    queue = deque([start])
    transitions = 0
    while queue and len(found) < max_states and transitions < max_transitions:
        state = queue.popleft()
        for event in net.enabled(state):
            transitions += 1
            following = net.apply(state, event)
            if following in seen:
                continue
            seen.add(following)
            queue.append(following)
            value = net.value(following, "app")
            if value not in found:
                found.append(value)
                if len(found) >= max_states:
                    break
    return found
