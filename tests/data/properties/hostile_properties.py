"""Properties whose predicates raise what is not an Exception (see tests/cli/test_hostile_handlers_cli.py)."""
from nice_attendre.properties.custom import always


class Boom(BaseException):
    """An exception of the user's own that is not an Exception."""


def _boom(view) -> bool:
    if any(host.received for host in view.hosts.values()):
        raise Boom("from a property")
    return True


def _generator_exit(view) -> bool:
    if any(host.received for host in view.hosts.values()):
        raise GeneratorExit
    return True


RAISES_BOOM = always("raises-boom", _boom, "raises a BaseException of its own once a packet arrived")
RAISES_GENERATOR_EXIT = always("raises-generator-exit", _generator_exit, "raises GeneratorExit once a packet arrived")
