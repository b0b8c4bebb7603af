"""Hosts: sending their script, receiving, answering, moving (host mobility).

A host is a sequential process. Its events:

* **send** the next packet of its script (seq = the packet's index in the script);
* **receive** the head frame of its link. A frame addressed to another host is ignored
  (switches that flood deliver such copies; a misaddressed unicast frame is the
  ``delivery`` monitor's business, at the switch that sent it). A replier answers every
  packet that asks it for an answer (see :data:`REPLY_KIND`), never an answer;
* **answer** (only for hosts that also send or move): send the oldest answer due;
* **move** to its next attachment point and announce itself there (a broadcast frame).

Answers. A host that neither sends its own packets nor moves answers in the same event as
it receives: nothing else it does could come between the two, and the answer enters the
link to its switch, whose events interleave with everything else either way, so no
interleaving is lost. A host that sends or moves answers in an event of its own, because
there the order matters: its own next packet may leave before the answer, and a mobile
host may move between receiving and answering (the answer then leaves from its new place).

Sequence numbers. A packet's identity is (origin host, seq): a host's scripted packets have
seqs 0..len(script)-1 (its index in the script, whichever stream it belongs to), its answers
and announcements the following ones, in the order it creates them (so a host that sends and
answers never skips a scripted packet). A host's script may be split into streams (flows)
that it sends at once: each stream in order, the streams interleaved in every way.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, NamedTuple

from nice_attendre.models.addresses import IP_BROADCAST, default_ip
from nice_attendre.models.events import HostAnswer, HostMove, HostReceive, HostSend
from nice_attendre.models.packet import BROADCAST, Header, Packet

if TYPE_CHECKING:
    from nice_attendre.models.network import Network, Tx

Delivery = tuple[Header, str, int]  # (header, origin host, seq) of a received packet


class HostState(NamedTuple):
    """A host's state.

    * ``sent``: how many packets of each of its streams (flows) it has sent;
    * ``received``: what it received, in order, as (header, origin, seq);
    * ``location``: where it is attached (dpid, port);
    * ``extra``: how many packets it created beyond its script (answers, announcements);
    * ``answers``: answers due and not sent yet (hosts that answer in events of their own);
    * ``sent_log``: (seq, header, kind) of every packet it sent, by seq (what properties
      read: ``delivery``, users' own; a function of the rest of its history, so it never
      makes otherwise equal states differ);
    * ``answer_to``: (seq, requester, request seq) of every answer it created: the packet it
      answers, whose origin is the host the answer is meant for, whatever address it carries
      (behind a NAT it is addressed to the public address). A function of ``received`` too.
    """

    sent: tuple[int, ...]
    received: tuple[Delivery, ...]
    location: tuple[int, int]
    extra: int = 0
    answers: tuple[Packet, ...] = ()
    sent_log: tuple[tuple[int, Header, str], ...] = ()
    answer_to: tuple[tuple[int, str, int], ...] = ()

    def addressee(self, seq: int, hdr: Header, host_of_mac: Mapping[str, str]) -> str | None:
        """The host its packet ``seq`` (sent with header ``hdr``) is meant for: an answer's
        requester, else the host it is addressed to (None for a broadcast, an announcement
        or an address no host has, such as a virtual IP)."""
        for answer, requester, _request in self.answer_to:
            if answer == seq:
                return requester
        return host_of_mac.get(hdr.eth_dst)


#: The kind of packet that answers each kind a host answers (a TCP handshake: SYN, SYN-ACK,
#: ACK; an ARP-like broadcast request, answered by its target). Other kinds (replies, ACKs,
#: one-way packets, announcements) are not answered.
REPLY_KIND = {"syn": "syn-ack", "syn-ack": "ack", "data": "reply", "arp": "arp-reply"}


def reply_to(packet: Packet, host: str, seq: int) -> Packet:
    """The packet ``host`` sends in answer to ``packet`` (with sequence number ``seq``): the
    header reversed (for a broadcast request: from this host to the requester)."""
    hdr = packet.hdr
    if hdr.eth_dst == BROADCAST:
        hdr = Header(host, hdr.eth_src, hdr.ip_dst, hdr.ip_src, hdr.tp_dst, hdr.tp_src, hdr.ip_proto)
    else:
        hdr = hdr.reversed()
    return Packet(hdr, host, seq, REPLY_KIND[packet.kind])


def asks(packet: Packet, host: str) -> bool:
    """Whether ``packet``, received by ``host``, asks it for an answer."""
    if packet.kind not in REPLY_KIND:
        return False
    if packet.hdr.eth_dst == BROADCAST:
        return packet.kind == "arp" and packet.hdr.ip_dst == default_ip(host)
    return packet.hdr.eth_dst == host


class Hosts:
    """The hosts of one network: their event sources and transitions."""

    def __init__(self, net: "Network") -> None:
        self.net = net
        topo = net.topology
        specs = net.specs
        self.mobile = tuple(h for h in topo.hosts if h in specs and specs[h].moves)
        #: Hosts that answer in the event that receives (see the module docstring).
        self.atomic_answers = frozenset(h for h in topo.hosts
                                        if h in specs and not specs[h].script and not specs[h].moves)
        self.host_of_mac = {h: h for h in topo.hosts}
        self._script_length = {h: len(specs[h].script) if h in specs else 0 for h in topo.hosts}
        #: host -> ((start, end) of each stream in its script)
        self._streams = {h: specs[h].stream_bounds() if h in specs else () for h in topo.hosts}
        self._move_cache: dict[tuple[str, int], tuple[HostMove, ...]] = {}

    def layout(self) -> None:
        """Build the event sources once the network's slots exist."""
        net = self.net
        topo = net.topology
        values = net.interned(net.slot_host[topo.hosts[0]])
        self.values = values
        self.senders = tuple((net.slot_host[h], HostSend(h, index), index, end - start)
                             for h in topo.hosts for index, (start, end) in enumerate(self._streams[h]))
        self.receivers = tuple((net.slot_inbox[h], HostReceive(h)) for h in topo.hosts)
        self.answerers = tuple((net.slot_host[h], HostAnswer(h)) for h in topo.hosts
                               if h in net.specs and net.specs[h].replies and h not in self.atomic_answers)
        self.movers = tuple((net.slot_host[h], h) for h in self.mobile)

    def initial(self, host: str) -> HostState:
        """A host before any event: nothing sent or received, at its place in the topology."""
        return HostState((0,) * len(self._streams[host]), (), self.net.topology.host_port[host])

    def events(self, state: tuple[int, ...], events: list[Any]) -> None:
        """Append the hosts' enabled events to ``events``: sends, receives, answers, moves."""
        values = self.values
        for slot, event, stream, length in self.senders:
            if values[state[slot]].sent[stream] < length:
                events.append(event)
        for slot, event in self.receivers:
            if state[slot]:
                events.append(event)
        for slot, event in self.answerers:
            if values[state[slot]].answers:
                events.append(event)
        slot_port = self.net.slot_port
        for slot, host in self.movers:
            moves = self._moves(host, state[slot])
            # A host unplugs only once its frames on the wire have reached the switch.
            if moves and not state[slot_port[values[state[slot]].location]]:
                events.extend(moves)

    def _moves(self, host: str, value: int) -> tuple[HostMove, ...]:
        """The move ``host`` can make next: it walks its list of moves in order, once each.

        (``events`` also waits until the switch has taken every frame the host sent from
        where it is: a host does not unplug with frames still on its cable. Without that, an
        old frame could reach the switch after the host announced its new place, and no
        controller could tell which place is current.)"""
        key = (host, value)
        cached = self._move_cache.get(key)
        if cached is None:
            location = self.values[value].location
            moves = self.net.specs[host].moves
            index = moves.index(location) + 1 if location in moves else 0
            cached = self._move_cache[key] = tuple(HostMove(host, d, p) for d, p in moves[index:index + 1])
        return cached

    # ---- transitions ------------------------------------------------------------------

    def _emit(self, tx: "Tx", host: str, hs: HostState, packet: Packet) -> HostState:
        """``host`` puts ``packet`` on its link; return its state with the packet logged."""
        hs = hs._replace(sent_log=tuple(sorted(hs.sent_log + ((packet.seq, packet.hdr, packet.kind),))))
        faults = self.net.faults
        if faults is not None and faults.down(tx, *hs.location):
            tx.note(lambda: f"{host}'s link to s{hs.location[0]}:{hs.location[1]} is down: {packet} is lost")
            return hs
        tx.push(self.net.slot_port[hs.location], packet)
        return hs

    def send(self, tx: "Tx", ev: HostSend) -> None:
        """``ev.host`` sends the next packet of its stream ``ev.stream`` (seq = its index in
        the host's script)."""
        host = ev.host
        slot = self.net.slot_host[host]
        hs: HostState = tx.get(slot)
        stream = ev.stream
        seq = self._streams[host][stream][0] + hs.sent[stream]
        hdr, kind = self.net.specs[host].script[seq]
        packet = self.marked(tx, Packet(hdr, host, seq, kind))
        sent = hs.sent[:stream] + (hs.sent[stream] + 1,) + hs.sent[stream + 1:]
        dpid, port = hs.location
        tx.note(lambda: f"{host} sends {packet} to s{dpid}:{port}")
        tx.put(slot, self._emit(tx, host, hs._replace(sent=sent), packet))

    def receive(self, tx: "Tx", ev: HostReceive) -> None:
        """``ev.host`` takes the head frame of its link (and answers or queues an answer)."""
        host = ev.host
        net = self.net
        packet: Packet = tx.pop(net.slot_inbox[host])
        if packet.hdr.eth_dst not in (host, BROADCAST):
            tx.note(lambda: f"{host} ignores {packet} (not addressed to it)")
            return
        slot = net.slot_host[host]
        hs: HostState = tx.get(slot)
        hs = hs._replace(received=hs.received + ((packet.hdr, packet.origin, packet.seq),))
        if net.slot_expired >= 0 and packet.hdr.eth_dst == host:
            self._arrived(tx, packet)
        spec = net.specs.get(host)
        if spec is None or not spec.replies or not asks(packet, host):
            tx.put(slot, hs)
            tx.note(lambda: f"{host} receives {packet}")
            return
        answer = reply_to(packet, host, self._script_length[host] + hs.extra)
        hs = hs._replace(extra=hs.extra + 1, answer_to=hs.answer_to + ((answer.seq, packet.origin, packet.seq),))
        if host in self.atomic_answers:
            tx.put(slot, hs)  # marking the answer reads this host's deliveries
            answer = self.marked(tx, answer)
            dpid, port = hs.location
            tx.note(lambda: f"{host} receives {packet} and answers with {answer} to s{dpid}:{port}")
            tx.put(slot, self._emit(tx, host, hs, answer))
        else:
            tx.note(lambda: f"{host} receives {packet}; its answer {answer.label()} is due")
            tx.put(slot, hs._replace(answers=hs.answers + (answer,)))

    def answer(self, tx: "Tx", ev: HostAnswer) -> None:
        """``ev.host`` sends the oldest answer due, from where it is now."""
        host = ev.host
        slot = self.net.slot_host[host]
        hs: HostState = tx.get(slot)
        answer = self.marked(tx, hs.answers[0])
        hs = hs._replace(answers=hs.answers[1:])
        dpid, port = hs.location
        tx.note(lambda: f"{host} answers with {answer} to s{dpid}:{port}")
        tx.put(slot, self._emit(tx, host, hs, answer))

    def move(self, tx: "Tx", ev: HostMove) -> None:
        """The host moves and announces itself from its new port (a broadcast frame, like a
        gratuitous ARP), so that the network can learn where it is now."""
        host = ev.host
        slot = self.net.slot_host[host]
        hs: HostState = tx.get(slot)
        seq = self._script_length[host] + hs.extra
        announce = Packet(Header(host, BROADCAST, default_ip(host), IP_BROADCAST), host, seq, "announce")
        old = hs.location
        hs = hs._replace(extra=hs.extra + 1, location=(ev.dpid, ev.port))
        tx.put(self.net.slot_where[host], hs.location)
        tx.note(lambda: f"{host} moves from s{old[0]}:{old[1]} to s{ev.dpid}:{ev.port} "
                f"and announces itself ({announce})")
        tx.put(slot, self._emit(tx, host, hs, announce))

    # ---- history for the monitors -----------------------------------------------------

    def marked(self, tx: "Tx", packet: Packet) -> Packet:
        """``packet`` with the history bits the running monitors read, set at the moment it is
        sent: ``followup`` (direct-paths: a packet of its flow already reached the
        destination) and ``late`` (strict-direct-paths: its two hosts had exchanged unicast
        packets both ways). Both stay False when their monitor is off, so packets carry no
        history then, and while the flow starts over after an entry of it timed out (see
        :meth:`entry_expires`)."""
        monitors = self.net.options.monitors
        if "direct-paths" not in monitors and "strict-direct-paths" not in monitors:
            return packet
        hdr = packet.hdr
        src, dst = self.host_of_mac.get(hdr.eth_src), self.host_of_mac.get(hdr.eth_dst)
        if src is None or dst is None or self.starting_over(tx, hdr):
            return packet
        net = self.net
        at_dst = tx.get(net.slot_host[dst]).received
        followup = "direct-paths" in monitors and any(d[0] == hdr for d in at_dst)
        late = ("strict-direct-paths" in monitors
                and any(d[0].eth_src == src and d[0].eth_dst == dst for d in at_dst)
                and any(d[0].eth_src == dst and d[0].eth_dst == src for d in tx.get(net.slot_host[src]).received))
        if followup or late:
            return packet._replace(followup=followup, late=late)
        return packet

    # An entry with a timeout may expire between any two packets of its flow (time is not
    # modelled), and then a packet of the flow misses again through no fault of the app. So,
    # while a direct-paths property is checked, an expiry starts its flows over. The
    # ``expired`` slot holds (matches, excused): the matches of entries that timed out whose
    # flows have not been established again, and the packets (origin, seq) of those flows that
    # were on their way at an expiry. An excused packet is never judged (the path it was sent
    # along broke under it); a packet sent while its flow starts over is not marked (it is
    # part of the new first exchange); the flow is established again, and its match dropped,
    # when a packet of it sent after the expiry reaches the host it is addressed to. Apps
    # without timeouts never change the slot, so their state spaces are the same as without it.

    def entry_expires(self, tx: "Tx", match: Any) -> None:
        """An entry with ``match`` timed out: the flows it matches start over, and their
        packets on their way are excused."""
        net = self.net
        slot = net.slot_expired
        matches, excused = tx.get(slot)
        key = match._replace(in_port=None)  # the flows it carried, wherever they came in
        found = set(excused)
        for host in self.net.topology.hosts:
            hs: HostState = tx.get(net.slot_host[host])
            for seq, hdr, _kind in hs.sent_log:
                dst = self.host_of_mac.get(hdr.eth_dst)
                if dst is not None and key.matches(hdr, 0) and \
                        not any(d[1] == host and d[2] == seq for d in tx.get(net.slot_host[dst]).received):
                    found.add((host, seq))
        if key not in matches:
            matches = tuple(sorted(matches + (key,), key=repr))
        tx.put(slot, (matches, tuple(sorted(found))))

    def starting_over(self, tx: "Tx", hdr: Header) -> bool:
        """Whether packets with ``hdr`` belong to a flow that starts over (an entry of it timed
        out, and no packet of it sent since reached its destination): their packets are not
        marked when sent. Always False while no direct-paths property is checked."""
        slot = self.net.slot_expired
        return slot >= 0 and any(match.matches(hdr, 0) for match in tx.get(slot)[0])

    def excused(self, tx: "Tx", packet: Packet) -> bool:
        """Whether ``packet`` was on its way when an entry of its flow timed out (direct
        paths do not judge it)."""
        slot = self.net.slot_expired
        return slot >= 0 and (packet.origin, packet.seq) in tx.get(slot)[1]

    def _arrived(self, tx: "Tx", packet: Packet) -> None:
        """``packet`` reached the host it is addressed to: no longer excused, or if it was
        sent after its flow started over, the flow is established again."""
        slot = self.net.slot_expired
        matches, excused = tx.get(slot)
        uid = (packet.origin, packet.seq)
        if uid in excused:
            tx.put(slot, (matches, tuple(e for e in excused if e != uid)))
            return
        kept = tuple(match for match in matches if not match.matches(packet.hdr, 0))
        if len(kept) != len(matches):
            tx.put(slot, (kept, excused))
