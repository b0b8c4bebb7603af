"""Properties a user writes for their own apps (loaded with --property file.py:NAME)."""
from nice_attendre.properties.custom import always, at_quiescence, on_transition, sometimes


def only_web(view):
    """The server h1 gets nothing from the client h2 but port-80 traffic."""
    return all(r.header.tp_dst == 80 for r in view.hosts["h1"].received_from("h2"))


ONLY_WEB = always("only-web", only_web, "h1 gets only port-80 traffic from h2",
                  explain=lambda view: "h1 received " + ", ".join(
                      f"{r.origin}#{r.seq} to port {r.header.tp_dst}" for r in view.hosts["h1"].received_from("h2")))


def no_new_non_web(before, event, after):
    """No step hands h1 a packet from h2 that is not port-80 traffic."""
    new = after.hosts["h1"].received[len(before.hosts["h1"].received):]
    return all(r.header.tp_dst == 80 for r in new if r.origin == "h2")


ONLY_WEB_STEP = on_transition("only-web-step", no_new_non_web, "no step delivers non-web traffic from h2 to h1")

ALL_QUIET = at_quiescence("nothing-left", lambda view: not view.in_flight and not any(
    s.buffered or s.pending for s in view.switches.values()), "at the end nothing is in flight or held")

SOMETIMES_WEB = sometimes("web-reaches-h1", lambda view: bool(view.hosts["h1"].received_from("h2")),
                          "h2's web traffic can reach h1")

BROKEN = always("broken", lambda view: view.hosts["nobody"].received == (), "reads a host that does not exist")

BOTH = [ONLY_WEB, ALL_QUIET]
NOT_A_PROPERTY = 42
