"""User apps that fight the checker: states whose dunders exit, handlers that raise what is
not an Exception, swallow the watchdog's stops, never return, or take about the time limit.

Every app routes like route-flow (the path to the destination, one exact entry per hop) so
that a run that survives the hostile part finds nothing else; what each does besides is in
its docstring and options (``-o key=value`` on the command line).
"""
from __future__ import annotations

import os
import signal
import sys
import time

from nice_attendre.models.app import App, Hop, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import Match, Output


def route(ev: PacketIn, out: Out) -> None:
    """route-flow's handler: the whole path at once, the packet released along it."""
    path = out.topology.path(ev.dpid, ev.packet.hdr.eth_dst)
    out.install_path([Hop(d, Match.exact(ev.packet.hdr), (Output(p),)) for d, p in path], packet_in=ev)


class Counter:
    """An app state (a count of packet-ins) whose ``dunder`` calls ``sys.exit(code)`` once
    the count is at least ``after`` (``repr-later``: its ``__repr__`` from its second call on)."""

    def __init__(self, n: int, dunder: str, after: int, code: int) -> None:
        self.n, self.dunder, self.after, self.code = n, dunder, after, code
        self.reprs = 0

    def _exit(self, dunder: str) -> None:
        if dunder == "repr":
            self.reprs += 1
            if self.dunder == "repr-later" and self.reprs > 1 and self.n >= self.after:
                sys.exit(self.code)
        if self.dunder == dunder and self.n >= self.after:
            sys.exit(self.code)

    def __hash__(self) -> int:
        self._exit("hash")
        return hash(self.n)

    def __eq__(self, other: object) -> bool:
        self._exit("eq")
        return isinstance(other, Counter) and other.n == self.n

    def __repr__(self) -> str:
        self._exit("repr")
        return f"Counter({self.n})"


class DunderExits(App[Counter]):
    """Routes (with ``bug``: one hop short, a black hole); its state's ``__hash__``,
    ``__eq__`` or ``__repr__`` (``dunder``) calls ``sys.exit(code)`` from the ``after``-th
    packet-in on (0: already the initial state's)."""

    def __init__(self, dunder: str = "hash", after: int = 1, code: int = 0, bug: bool = False) -> None:
        self.dunder, self.after, self.code, self.bug = dunder, int(after), int(code), bug

    def initial_state(self) -> Counter:
        return Counter(0, self.dunder, self.after, self.code)

    def on_packet_in(self, state: Counter, ev: PacketIn, out: Out) -> Counter:
        path = out.topology.path(ev.dpid, ev.packet.hdr.eth_dst)
        if self.bug:
            path = path[:-1]
        out.install_path([Hop(d, Match.exact(ev.packet.hdr), (Output(p),)) for d, p in path], packet_in=ev)
        return Counter(state.n + 1, self.dunder, self.after, self.code)


class Boom(BaseException):
    """An exception of the app's own that is not an Exception."""


class RaisesBase(App[None]):
    """Routes, then raises ``kind`` in the first packet-in: ``boom`` (a BaseException of its
    own), ``generator-exit`` or ``keyboard-interrupt`` (raised by the app itself: no Ctrl-C)."""

    def __init__(self, kind: str = "boom") -> None:
        self.kind = kind

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        route(ev, out)
        if self.kind == "boom":
            raise Boom("the app's own")
        if self.kind == "generator-exit":
            raise GeneratorExit("closed")
        if self.kind == "keyboard-interrupt":
            raise KeyboardInterrupt
        return state


def _swallow_one() -> str:
    """Wait until something is raised here (the watchdog's stop), catch it and say what it was."""
    try:
        while True:
            time.sleep(0.01)
    except BaseException as exc:  # noqa: BLE001 - the point: a bare except
        return type(exc).__name__


class Swallows(App[None]):
    """Routes; the first packet-in waits until the watchdog raises in it, swallows that (a
    bare ``except``) and returns as if nothing happened."""

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        _swallow_one()
        route(ev, out)
        return state


class Fights(App[None]):
    """The first packet-in never returns on its own: ``how`` is ``catch`` (a loop around a
    bare ``except``), ``nested`` (two of them, one inside the other), ``ignore-alarm`` (it
    ignores SIGALRM, then sleeps for ever, catching everything) or ``cancel-timer`` (it stops
    the interval timer, then spins). With ``ready=FILE`` it first appends a line to FILE."""

    def __init__(self, how: str = "catch", ready: str = "") -> None:
        self.how = how
        self.ready = ready

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        if self.ready:  # say that the call began (a test then signals the process)
            with open(self.ready, "a") as handle:
                handle.write("in on_packet_in\n")
        if self.how == "catch":
            while True:
                try:
                    time.sleep(0.01)
                except BaseException:  # noqa: BLE001
                    pass
        elif self.how == "nested":
            while True:
                try:
                    while True:
                        try:
                            time.sleep(0.01)
                        except BaseException:  # noqa: BLE001
                            pass
                except BaseException:  # noqa: BLE001
                    pass
        elif self.how == "ignore-alarm":
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
            while True:
                try:
                    time.sleep(0.01)
                except BaseException:  # noqa: BLE001
                    pass
        elif self.how == "cancel-timer":
            signal.setitimer(signal.ITIMER_REAL, 0, 0)
            while True:
                try:
                    pass
                except BaseException:  # noqa: BLE001
                    pass
        route(ev, out)
        return state


#: packet-ins handled by :class:`SlowCalls` in this process
CALLS: list[int] = []


class SlowCalls(App[None]):
    """Routes (with ``bug``: one hop short, a black hole). A deterministic handler on a
    machine whose speed varies: the packet-in calls numbered ``slow`` (comma-separated,
    counted from 1 on this app object) sleep ``seconds`` first, as a busy machine would make
    them; the others are fast. ``counts=FILE`` appends each call's number to FILE."""

    def __init__(self, slow: str = "1", seconds: float = 5.0, bug: bool = False, counts: str = "") -> None:
        self.slow = {int(n) for n in str(slow).split(",") if n}
        self.seconds = float(seconds)
        self.bug = bug in (True, "true", "1")
        self.counts = counts
        self.calls = 0  # (the machine's state, not the app's: counted here for the test only)

    def on_packet_in(self, state: None, ev: PacketIn, out: Out) -> None:
        self.calls += 1
        CALLS.append(1)
        if self.counts:
            with open(self.counts, "a") as handle:
                handle.write(f"{self.calls} {os.getpid()}\n")
        if self.calls in self.slow:
            time.sleep(self.seconds)
        path = out.topology.path(ev.dpid, ev.packet.hdr.eth_dst)
        if self.bug:
            path = path[:-1]
        out.install_path([Hop(d, Match.exact(ev.packet.hdr), (Output(p),)) for d, p in path], packet_in=ev)
        return state


class CountsCalls(App[int]):
    """Routes; its state is how many packet-ins this process has handled (a module-level
    count): not a function of its arguments, so a replayed trace leaves the recorded path.
    With ``bug``: one hop short (a black hole), so that there is a trace to replay."""

    def __init__(self, bug: bool = False) -> None:
        self.bug = bug in (True, "true", "1")

    def initial_state(self) -> int:
        return 0

    def on_packet_in(self, state: int, ev: PacketIn, out: Out) -> int:
        CALLS.append(1)
        path = out.topology.path(ev.dpid, ev.packet.hdr.eth_dst)
        if self.bug:
            path = path[:-1]
        out.install_path([Hop(d, Match.exact(ev.packet.hdr), (Output(p),)) for d, p in path], packet_in=ev)
        return len(CALLS)


def _raise(what: str) -> None:
    """Raise what ``what`` names (see :class:`RaisesAnything`)."""
    if what.startswith("exit:"):
        code = what[5:]
        sys.exit(int(code) if code.lstrip("-").isdigit() else code)
    raise {"generator-exit": GeneratorExit, "boom": Boom, "keyboard-interrupt": KeyboardInterrupt,
           "value-error": ValueError, "recursion": RecursionError, "stop-iteration": StopIteration,
           "type-error": TypeError}[what]()


class Touchy:
    """An app state whose ``dunder`` raises ``what`` once it is ``armed``."""

    def __init__(self, armed: bool, dunder: str, what: str) -> None:
        self.armed, self.dunder, self.what = armed, dunder, what

    def _maybe(self, dunder: str) -> None:
        if self.armed and self.dunder == dunder:
            _raise(self.what)

    def __hash__(self) -> int:
        self._maybe("hash")
        return hash(self.armed)

    def __eq__(self, other: object) -> bool:
        self._maybe("eq")
        return isinstance(other, Touchy) and other.armed == self.armed

    def __repr__(self) -> str:
        self._maybe("repr")
        return f"Touchy({self.armed})"


class RaisesAnything(App[Touchy]):
    """Routes; raises ``what`` (``exit:CODE``, ``generator-exit``, ``boom``,
    ``keyboard-interrupt``, ``value-error``, ``recursion``, ``stop-iteration``, ``type-error``)
    ``where``: in ``initial_state``, ``on_switch_join``, ``on_packet_in``, or in the
    ``hash``, ``eq`` or ``repr`` of the state the first packet-in returns."""

    def __init__(self, where: str = "on_packet_in", what: str = "boom") -> None:
        self.where, self.what = where, what

    def initial_state(self) -> Touchy:
        if self.where == "initial_state":
            _raise(self.what)
        return Touchy(False, self.where, self.what)

    def on_switch_join(self, state: Touchy, dpid: int, out: Out) -> Touchy:
        if self.where == "on_switch_join":
            _raise(self.what)
        return state

    def on_packet_in(self, state: Touchy, ev: PacketIn, out: Out) -> Touchy:
        if self.where == "on_packet_in":
            _raise(self.what)
        route(ev, out)
        return Touchy(True, self.where, self.what)
