"""An app with no packet-in handler (discovery refuses it: there is nothing to explore)."""
from nice_attendre.models.app import App, Out


class JoinOnly(App[None]):
    """Only answers switch joins."""

    def on_switch_join(self, state: None, dpid: int, out: Out) -> None:
        return state
