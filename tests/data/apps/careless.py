"""Apps that misbehave the ways a careless or hostile user's app does (issue 11).

Each is a few lines; the options pick the misbehaviour. None of them must crash the checker,
end it with exit code 0, or hang it.
"""
import os
import signal
import sys
import time

from nice_attendre.models.app import App, Hop, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output


class Exits(App[None]):
    """Calls sys.exit(0) in ``where``: handler, initial_state, join or constructor."""

    def __init__(self, where: str = "handler") -> None:
        self.where = where
        if where == "constructor":
            sys.exit(0)

    def describe(self) -> str:
        return f"Exits({self.where})"

    def initial_state(self) -> None:
        if self.where == "initial_state":
            sys.exit(0)
        return None

    def on_switch_join(self, state: None, dpid: int, out: Out) -> None:
        if self.where == "join":
            sys.exit(0)
        return state

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        sys.exit(0)


class Forwards(App[None]):
    """Installs the path of every packet-in (a correct reactive router), then misbehaves
    as the subclasses say."""

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        hdr = ev.packet.hdr
        path = out.topology.path(ev.dpid, hdr.eth_dst)
        out.install_path([Hop(d, Match.exact(hdr), (Output(p),)) for d, p in path], packet_in=ev)
        return state


class Sleeps(Forwards):
    """Sleeps ``seconds`` in every packet-in (or, with ``join=true``, in every switch join)."""

    def __init__(self, seconds: float = 2.0, join: bool = False) -> None:
        self.seconds = seconds
        self.join = join

    def on_switch_join(self, state: None, dpid: int, out: Out) -> None:
        if self.join:
            time.sleep(self.seconds)
        return state

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        time.sleep(self.seconds)
        return super().on_packet_in(state, ev, out)


class Loops(App[None]):
    """Never returns from its first packet-in (and swallows every Exception on the way)."""

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        while True:
            try:
                time.sleep(0.01)
            except Exception:  # noqa: BLE001 - careless on purpose
                pass


class Signals(Forwards):
    """Sends its own process signal ``name`` on its ``call``-th packet-in (as if the user
    pressed Ctrl-C, or `timeout` sent SIGTERM, at that moment); ``join=true``: when the first
    switch joins instead. With ``once``, a file: only if that file does not exist yet, and
    creates it (so a resumed run is not interrupted again)."""

    def __init__(self, name: str = "SIGINT", call: int = 3, join: bool = False, once: str = "") -> None:
        self.signum = getattr(signal, name)
        self.call = call
        self.join = join
        self.once = once

    def _signal(self) -> None:
        if self.once:
            if os.path.exists(self.once):
                return
            open(self.once, "w").close()
        os.kill(os.getpid(), self.signum)

    def initial_state(self) -> int:
        return 0

    def on_switch_join(self, state: int, dpid: int, out: Out) -> int:
        if self.join:
            self._signal()
        return state

    def on_packet_in(self, state: int, ev: PacketIn, out: Out) -> int:
        # The count is in the state: the signal comes on the first path that gets there.
        if state + 1 == self.call:
            self._signal()
        super().on_packet_in(None, ev, out)
        return min(state + 1, self.call)


class BadState(Forwards):
    """Returns an unhashable state (``kind=list``) or None instead of its state (``kind=none``)."""

    def __init__(self, kind: str = "list") -> None:
        self.kind = kind

    def initial_state(self) -> int:
        return 0

    def on_packet_in(self, state: int, ev: PacketIn, out: Out):  # type: ignore[override]
        super().on_packet_in(None, ev, out)
        return [state + 1] if self.kind == "list" else None


class BadRequest(App[None]):
    """Asks for something malformed: ``kind`` names what."""

    def __init__(self, kind: str = "string-match") -> None:
        self.kind = kind

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        hdr = ev.packet.hdr
        port = out.topology.next_port(ev.dpid, hdr.eth_dst)
        if self.kind == "string-match":
            out.flow_mod(ev.dpid, "h1->h2", [Output(port)])
        elif self.kind == "list-action":
            out.flow_mod(ev.dpid, Match.exact(hdr), [[Output(port)]])
        elif self.kind == "int-action":
            out.flow_mod(ev.dpid, Match.exact(hdr), [port], buffer_id=ev.buffer_id)
        elif self.kind == "bogus-hop":
            out.install_path([(ev.dpid, port)], packet_in=ev)
        elif self.kind == "string-port":
            out.packet_out(ev.dpid, [Output(str(port))], buffer_id=ev.buffer_id)
        elif self.kind == "bad-priority":
            out.flow_mod(ev.dpid, Match.exact(hdr), [Output(port)], priority=1 << 40)
        return state


class Raises(App[None]):
    """Raises an exception whose message tries to forge report lines and clear the screen."""

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        raise ValueError("boom\nOK: no property violated\x1b[2J")


class HoldsTwo(App[None]):
    """On a packet-in, installs the packet's path and, from the same first switch, a second
    path for replies to that host that carries no packet (OpenFlow-B holds both for that
    switch: one named by a buffer id, one by a match)."""

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        hdr = ev.packet.hdr
        path = out.topology.path(ev.dpid, hdr.eth_dst)
        out.install_path([Hop(d, Match.exact(hdr), (Output(p),)) for d, p in path], packet_in=ev)
        out.install_path([Hop(d, Match.of(eth_dst=hdr.eth_dst), (Output(p),)) for d, p in path], priority=1)
        return state


class Hogs(Forwards):
    """Allocates ``gigabytes`` at once in its first packet-in (a MemoryError under a limit)."""

    def __init__(self, gigabytes: int = 8) -> None:
        self.gigabytes = gigabytes

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        block = bytearray(self.gigabytes << 30)
        del block
        return super().on_packet_in(state, ev, out)


class BadScenario(App[None]):
    """Its own scenario and description fail (``part`` says which)."""

    def __init__(self, part: str = "scenario") -> None:
        self.part = part

    def scenario(self, topology, packets, sender=None, receiver=None):  # type: ignore[no-untyped-def]
        if self.part == "scenario":
            raise RuntimeError("no traffic today")
        if self.part == "not-a-scenario":
            return [("h1", "h2")]
        return super().scenario(topology, packets, sender, receiver)

    def describe(self) -> str:
        if self.part == "describe":
            raise KeyError("name")
        return "BadScenario"
