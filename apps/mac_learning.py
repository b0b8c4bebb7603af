"""MAC learning (NOX's pyswitch; paper VI.B): each switch learns where hosts are.

On a packet-in at switch D from in-port P, the app learns "source MAC is behind port P of D".
If the destination MAC is known at D (and not behind P), it installs at D an entry matching
the packet's header towards the learned port, using the packet's buffer id, and the reverse
entry for the answer; otherwise it floods the packet (packet-out) along a spanning tree. The
two entries take two commands, and a packet may pass between them: so the direction that
has not been let through D yet is installed last, and the packet that completes the two
hosts' exchange always finds both entries (the fix of NICE's BUG-II, generalised). When a host is learned on a new port (it moved), the entries towards it at D are
modified to the new port. Entries match header fields, not the in-port, so a moved host's
packets keep their entries. Rules are only ever installed on the packet-in switch, so only
type-1 races occur.

Scenario: the sender pings the replier, which may move once, at any point, to a free port
of its switch, and announces itself there (``mobile=True``, the paper's Table II setting).

Command order. The app relies on each switch executing its commands in the order sent: the
entry installed last must not overtake the one before it, and a modify for a moved host must
not be overtaken by an older add towards its old port. OpenFlow promises that only across a
barrier (``--command-order any`` explores every order it allows). With ``barriers=True`` the
app sends a barrier request after every flow-mod, as a real app must; that variant is correct
under both command orders.

Bug variants (``bug=``), each with the property that finds it:

* ``host-unreachable``: a host's entries are not updated when it moves, so traffic keeps
  going to the port it left (``no-stale-routes``);
* ``delayed-direct-path``: the reverse entry is always installed after the forward packet is
  released, so after an answer, the next packet can reach the switch before its entry is in
  place and go to the controller although the hosts already talk both ways
  (``strict-direct-paths``);
* ``excess-flooding``: floods out of every port instead of a spanning tree, so on a topology
  with a cycle a packet comes back to where it was (``no-forwarding-loops``).
"""
from __future__ import annotations

from typing import NamedTuple

from nice_attendre.models.app import App, Out
from nice_attendre.models.messages import PacketIn
from nice_attendre.models.packet import BROADCAST, Flood, Match, Output
from nice_attendre.models.scenario import HostSpec, Scenario
from nice_attendre.models.topology import Topology

BUGS = ("host-unreachable", "delayed-direct-path", "excess-flooding")

class MacState(NamedTuple):
    """Where each switch learned each MAC (((dpid, mac), port), sorted), and the unicast
    directions (dpid, src, dst) the app has let through each switch."""

    ports: tuple[tuple[tuple[int, str], int], ...] = ()
    passed: frozenset[tuple[int, str, str]] = frozenset()


class MacLearning(App[MacState]):
    """pyswitch: per-switch MAC learning, exact-match entries, flooding when unknown."""

    name = "mac-learning"
    default_topology = "linear:1"
    default_properties = ("no-forwarding-loops", "no-forgotten-packets", "strict-direct-paths",
                          "no-stale-routes")

    def __init__(self, bug: str | None = None, mobile: bool = True, barriers: bool = False) -> None:
        self.bug = self.check_bug(bug, BUGS)
        self.mobile = mobile
        self.barriers = barriers

    def _forward(self, out: Out, ev: PacketIn, forward: tuple) -> None:
        """The entry towards the destination, releasing the packet: buffered at the switch
        (a flow-mod/packet-out), or carried by the packet-in (a flow-mod, then a packet-out)."""
        self._flow_mod(out, *forward, buffer_id=ev.buffer_id)
        if ev.buffer_id is None:
            out.packet_out(ev.dpid, forward[2], in_port=ev.in_port, packet=ev.packet)

    def _flow_mod(self, out: Out, dpid: int, *args: object, **kwargs: object) -> None:
        """A flow-mod, fenced by a barrier when the app orders its commands with barriers."""
        out.flow_mod(dpid, *args, **kwargs)  # type: ignore[arg-type]
        if self.barriers:
            out.barrier(dpid)

    def initial_state(self) -> MacState:
        return MacState()

    def scenario(self, topology: Topology, packets: int, sender: str | None = None,
                 receiver: str | None = None) -> Scenario:
        """The sender pings the receiver; with ``mobile`` the receiver may move once to a new
        free port of its switch."""
        base = Scenario.ping(topology, packets, sender, receiver)
        if not self.mobile:
            return base
        receiver = receiver or topology.hosts[-1]
        dpid = topology.host_port[receiver][0]
        topology = topology.with_spare_port(dpid)
        moved = topology.spare_ports[dpid][-1]
        hosts = tuple(HostSpec(s.name, s.script, s.replies, ((dpid, moved),) if s.name == receiver else s.moves)
                      for s in base.hosts)
        return Scenario(topology, hosts)

    def on_packet_in(self, state: MacState, ev: PacketIn, out: Out) -> MacState:
        hdr = ev.packet.hdr
        dpid = ev.dpid
        table = dict(state.ports)
        previous = table.get((dpid, hdr.eth_src))
        if previous != ev.in_port:
            table[(dpid, hdr.eth_src)] = ev.in_port
            if previous is not None and self.bug != "host-unreachable":
                # The host moved: traffic towards it goes to its new port from now on.
                self._flow_mod(out, dpid, Match.of(eth_dst=hdr.eth_src), [Output(ev.in_port)], command="modify")
        passed = state.passed
        port = table.get((dpid, hdr.eth_dst)) if hdr.eth_dst != BROADCAST else None
        if port is not None and port != ev.in_port:
            forward = (dpid, Match.exact(hdr), [Output(port)])
            reverse = (dpid, Match.exact(hdr.reversed()), [Output(ev.in_port)])
            # Two entries cannot be installed at once. The packet that completes the hosts'
            # exchange must find both: so the direction that has not passed here yet goes last
            # (when answers have passed, that is this packet's own direction: NICE's fix).
            answered = (dpid, hdr.eth_dst, hdr.eth_src) in passed
            if self.bug == "delayed-direct-path" or not answered:
                self._forward(out, ev, forward)
                self._flow_mod(out, *reverse)
            else:
                self._flow_mod(out, *reverse)
                self._forward(out, ev, forward)
        else:
            if self.bug == "excess-flooding":
                actions = [Flood()]
            else:
                actions = [Output(p) for p in out.topology.flood_ports(dpid) if p != ev.in_port]
            out.packet_out(dpid, actions, buffer_id=ev.buffer_id, in_port=ev.in_port,
                           packet=ev.packet if ev.buffer_id is None else None)
        if hdr.eth_dst != BROADCAST:
            passed = passed | {(dpid, hdr.eth_src, hdr.eth_dst)}
        return MacState(tuple(sorted(table.items())), passed)

    def describe(self) -> str:
        options = [f"bug: {self.bug}"] if self.bug else []
        if not self.mobile:
            options.append("replier fixed")
        if self.barriers:
            options.append("barriers")
        return "mac-learning" + (f" ({', '.join(options)})" if options else "")
