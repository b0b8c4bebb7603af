"""A user app whose state is a hashable value of a class the fingerprints cannot encode.

The exact search accepts it; --fingerprint and --workers must fail with one clear line.
"""
from nice_attendre.models.app import App, Out
from nice_attendre.models.messages import PacketIn


class Opaque:
    """Hashable, with its own equality: no canonical encoding is known for it."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Opaque) and other.n == self.n

    def __hash__(self) -> int:
        return hash(self.n)


class CountPacketIns(App[Opaque]):
    """Counts packet-ins and does nothing else."""

    def initial_state(self) -> Opaque:
        return Opaque(0)

    def on_packet_in(self, state: Opaque, ev: PacketIn, out: Out) -> Opaque:
        return Opaque(state.n + 1)
