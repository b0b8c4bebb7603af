"""Command line: each command is one library call (skeleton; grows with the checker)."""
from __future__ import annotations

import click


@click.group()
def main() -> None:
    """nice-attendre: model-check OpenFlow controller apps under OpenFlow, OpenFlow-B and Attendre."""


def _register_delay() -> None:
    from nice_attendre.delay_cmd import delay

    main.add_command(delay)


try:
    _register_delay()
except ImportError:  # the delay command is being written
    pass
