"""User apps that keep state outside the checker (wrong: handlers must be functions of their arguments).

``Flaky`` routes by a module-level counter: on every other call it installs a broken path. Its
counts differ from run to run and a replayed trace goes elsewhere. ``Counted`` is correct but
logs every call in a module-level list, so a test can count how often handlers run.
"""
from nice_attendre.models.app import App, Hop, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output

CALLS: list[str] = []


class Flaky(App[None]):
    """Forgets the last hop on every other call (decided by a global counter)."""

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        CALLS.append(str(ev))
        path = out.topology.path(ev.dpid, ev.packet.hdr.eth_dst)
        if len(CALLS) % 2:
            path = path[:-1]
        out.install_path([Hop(d, Match.exact(ev.packet.hdr), (Output(p),)) for d, p in path], packet_in=ev)
        return state


class Counted(App[None]):
    """route-flow that logs its calls (a side effect the checker must not repeat needlessly)."""

    def __init__(self, bug: bool = False) -> None:
        self.bug = bug

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        CALLS.append(str(ev))
        path = out.topology.path(ev.dpid, ev.packet.hdr.eth_dst)
        if self.bug:
            path = path[:-1]
        out.install_path([Hop(d, Match.exact(ev.packet.hdr), (Output(p),)) for d, p in path], packet_in=ev)
        return state
