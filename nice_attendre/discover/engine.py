"""The symbolic search: CrossHair explores the packet-in handler's paths.

CrossHair (``crosshair-tool``, symbolic execution on the z3 solver) runs a probe whose
arguments are symbolic: the switch and in port the packet enters by, the destination
choice, the IPv4 source and destination addresses, the transport ports and the IP
protocol (see :class:`~nice_attendre.discover.domain.Domain`). The probe keeps to what a
host can send (a switch port a host is attached to, ports 0-65535, protocol 0, 6 or 17),
builds the packet and calls the handler on a copy of one app state
(:func:`~nice_attendre.discover.handler.call`). Each path CrossHair completes gives the
concrete values the solver chose (the realised arguments); those are all this module
returns.

CrossHair is imported here only (it is the ``discover`` extra): :func:`require` says how to
install it when it is missing.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from nice_attendre.errors import InputError

#: What discovery says without CrossHair (exit 2).
MISSING = "discovery needs the 'discover' extra: pip install 'nice-attendre[discover]'"
#: Paths CrossHair explores per app state at most (beyond them it stops, as at the time budget).
MAX_PATHS = 150
#: Seconds one path may take in the solver before CrossHair abandons it.
PATH_SECONDS = 2.0


class DiscoveryUnavailable(InputError):
    """CrossHair is not installed (exit 2, with :data:`MISSING`)."""


def require() -> None:
    """Import CrossHair's analysis with its library support, or raise :class:`DiscoveryUnavailable`."""
    try:
        import crosshair.core_and_libs  # noqa: F401 - registers the symbolic stdlib
    except ImportError:
        raise DiscoveryUnavailable(MISSING) from None


@dataclass(frozen=True)
class Exploration:
    """What CrossHair found in one app state: the realised arguments of each completed path
    (dicts of ints and strs), the seconds it took, and why it stopped (``exhausted``: every
    path explored; ``paths``: :data:`MAX_PATHS` reached; ``time``: the budget ran out)."""

    paths: tuple[dict[str, Any], ...]
    seconds: float
    stopped: str


def explore(app: Any, state: Any, domain: Any, seconds: float, max_paths: int = MAX_PATHS) -> Exploration:
    """Explore the packet-in handler of ``app`` in app state ``state`` for at most
    ``seconds`` (see the module docstring)."""
    require()
    from inspect import signature

    from crosshair.core import deep_realize, explore_paths
    from crosshair.options import DEFAULT_OPTIONS, AnalysisOptionSet
    from crosshair.statespace import RootNode

    from nice_attendre.discover.domain import ADDRESS
    from nice_attendre.discover.handler import call
    from nice_attendre.models.flows import BROADCAST_NAME
    from nice_attendre.models.packet import BROADCAST, Header

    topology = domain.topology
    attachments = domain.attachments
    destinations = {host: domain.destinations(host) for host in domain.hosts}

    def probe(dpid: int, in_port: int, dst: int, ip_src: str, ip_dst: str, tp_src: int, tp_dst: int,
              ip_proto: int) -> bool:
        sender = None
        for host, at_dpid, at_port in attachments:
            if dpid == at_dpid and in_port == at_port:
                sender = host
                break
        if sender is None:
            return False
        if not (0 <= tp_src <= 65535 and 0 <= tp_dst <= 65535):
            return False
        if ip_proto != 0 and ip_proto != 6 and ip_proto != 17:
            return False
        eth_dst = None
        for index, target in enumerate(destinations[sender]):
            if dst == index:
                eth_dst = BROADCAST if target == BROADCAST_NAME else ip_dst if target == ADDRESS else target
                break
        if eth_dst is None:
            return False
        call(app, state, topology, Header(sender, eth_dst, ip_src, ip_dst, tp_src, tp_dst, ip_proto), dpid, in_port)
        return True

    found: list[dict[str, Any]] = []

    def completed(space: Any, pre_args: Any, _post: Any, ret: Any, _exc: Any, _stack: Any) -> bool:
        space.detach_path()
        realised = deep_realize(pre_args)
        if deep_realize(ret) is not False:  # False: outside what a host can send
            found.append({name: realised.arguments[name] for name in realised.arguments})
        return False

    options = DEFAULT_OPTIONS.overlay(AnalysisOptionSet(
        max_iterations=max_paths, per_condition_timeout=seconds, per_path_timeout=min(PATH_SECONDS, seconds)))
    started = time.monotonic()
    iterations = 0

    def run(args: Any) -> Any:
        nonlocal iterations
        iterations += 1
        return probe(*args.args, **args.kwargs)

    explore_paths(run, signature(probe, eval_str=True), options, RootNode(), completed, on_nondeterminism=lambda: None)
    elapsed = time.monotonic() - started
    # CrossHair says not why it stopped: at the path limit, near the budget (it stops within a
    # path's time of it), or else because every path was explored
    stopped = "paths" if iterations >= max_paths else "time" if elapsed >= 0.9 * seconds else "exhausted"
    return Exploration(tuple(found), elapsed, stopped)
