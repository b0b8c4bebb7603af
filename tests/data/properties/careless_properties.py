"""Properties with bugs of their own, for the reliability tests: the checker must bound them
as it bounds app handlers (a predicate is user code)."""
from __future__ import annotations

import time

from nice_attendre.properties.custom import always


def _delivered(view) -> bool:
    return bool(view.hosts["h2"].received_from("h1"))


def _spins(view) -> bool:
    """Loops for ever once h2 has received a packet."""
    while _delivered(view):
        pass
    return True


def _sleeps(view) -> bool:
    """Sleeps for a minute once h2 has received a packet."""
    if _delivered(view):
        time.sleep(60)
    return True


def _explains_slowly(view) -> str:
    while True:
        pass


SPINS = always("spins", _spins, "loops for ever after the first delivery")
SLEEPS = always("sleeps", _sleeps, "sleeps for a minute after the first delivery")
NEVER_DONE_EXPLAINING = always("never-done-explaining", lambda view: not _delivered(view),
                               "fails after the first delivery, and its explanation never returns",
                               explain=_explains_slowly)
