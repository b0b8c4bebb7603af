"""User apps that fail outside on_packet_in: when a switch joins, or building their state.
Both are reported as the violation app-exception in the initial state."""
from nice_attendre.models.app import App, Out


class JoinRaises(App[None]):
    """Raises when a switch joins (before any event)."""

    def on_switch_join(self, state: None, dpid: int, out: Out) -> None:
        raise ValueError(f"cannot configure s{dpid}")


class StateRaises(App[None]):
    """Raises when asked for its initial state."""

    def initial_state(self) -> None:
        raise ValueError("no initial state")
