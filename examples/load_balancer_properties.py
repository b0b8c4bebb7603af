"""Properties for examples/load_balancer.py, written against the readable view of a state."""
from nice_attendre.properties.custom import always, on_transition


def one_replica_per_connection(view):
    """Packets of one connection (client, source port) all reach the same replica."""
    reached = {}
    for replica in ("h2", "h3"):
        for packet in view.hosts[replica].received:
            reached.setdefault((packet.origin, packet.header.tp_src), set()).add(replica)
    return all(len(replicas) == 1 for replicas in reached.values())


def which_replicas(view):
    return "; ".join(f"{replica} got " + ", ".join(f"{p.origin}#{p.seq} (port {p.header.tp_src})"
                                                 for p in view.hosts[replica].received)
                     for replica in ("h2", "h3"))


AFFINITY = always("flow-affinity", one_replica_per_connection,
                  "packets of one connection all reach the same replica", explain=which_replicas)


def answers_come_from_the_vip(before, event, after):
    """Every answer a client receives in one step comes from the virtual IP, never a replica's own."""
    new = after.hosts["h1"].received[len(before.hosts["h1"].received):]
    return all(packet.header.ip_src == "10.0.0.100" for packet in new)


VIP_ANSWERS = on_transition("vip-answers", answers_come_from_the_vip,
                            "clients only ever see the virtual IP answer")
