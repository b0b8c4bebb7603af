"""Discovery as one call: :func:`discover` builds the model, picks the app states, runs the
symbolic search in a child process and returns a :class:`Discovery`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Mapping

from nice_attendre.discover.canonical import Found
from nice_attendre.discover.domain import Candidate, key

#: Seconds of solver time by default (``--discover-seconds``).
DEFAULT_SECONDS = 30.0
#: Seconds the child may take beyond the solver's budget (replaying and shrinking the packets).
GRACE_SECONDS = 30.0
#: Seconds of solver time an app state needs at least; with less left it is not explored (a fallback).
MIN_SHARE = 0.5

#: What discovery says of statistics inputs (``on_port_stats``).
STATISTICS = ("port statistics are not discovered: the model already gives a handler that reads them every "
              "load class the app distinguishes (low, high) in each reply, so every statistics branch is "
              "explored by the search itself")
#: What discovery says of a Ryu app.
RYU = ("Ryu app: the adapter serialises the packet to bytes for os-ken's parser, which makes the header "
       "fields concrete; what is discovered is the sender (switch, in port, source MAC) and the destination "
       "kind (a host, broadcast, an address); header values the handler tests after parsing (IP addresses, "
       "ports, protocol) are not")


@dataclass(frozen=True)
class Exploring:
    """The search in one app state: how many paths CrossHair completed, its seconds, why it stopped."""

    state: int
    paths: int
    seconds: float
    stopped: str


@dataclass(frozen=True)
class Discovery:
    """What discovery found: the packets (sorted, each with the path it takes), the
    searches per app state, the fallbacks (where the solver gave up or timed out), the
    flows of the scenario (the default traffic's, then the packets'), and notes."""

    packets: tuple[Found, ...]
    explorations: tuple[Exploring, ...]
    fallbacks: tuple[str, ...]
    default_flows: tuple[Any, ...]
    flows: tuple[Any, ...]
    files: tuple[str, ...]
    seconds: float
    notes: tuple[str, ...] = field(default=())
    #: the app's default traffic as built (a :class:`~nice_attendre.models.scenario.Scenario`),
    #: and whether :attr:`default_flows` express all of it
    default_scenario: Any = field(default=None, compare=False, repr=False)
    defaults_complete: bool = True

    @property
    def solver_seconds(self) -> float:
        """Seconds CrossHair ran, over every state."""
        return sum(e.seconds for e in self.explorations)

    def text_lines(self) -> list[str]:
        """The report's discovery block."""
        from nice_attendre.discover.report import text_lines

        return text_lines(self)

    def as_json(self) -> dict[str, Any]:
        """The JSON report's ``discovery`` object."""
        from nice_attendre.discover.report import as_json

        return as_json(self)

    def scenario_toml(self) -> str:
        """The scenario file (``--scenario-out``)."""
        from nice_attendre.discover.report import branch
        from nice_attendre.discover.traffic import toml_text

        count = len(self.default_flows)
        comments: list[str | None] = (["the app's default traffic"] + [None] * (count - 1)) if count else []
        if not self.defaults_complete and comments:
            comments[0] = "the part of the app's default traffic that flows express (see the notes)"
        comments += [f"discovered: {found.packet.describe()}; takes {branch(self, found)}" for found in self.packets]
        text = toml_text(self.flows, comments)
        if not self.defaults_complete:
            text = ("# The app's default traffic is not (all) expressible as flows: `verify --discover` keeps it "
                    "exactly;\n# this file holds what flows can say.\n") + text
        return text


def discover(app: Any, *, topology: Any = None, packets: int = 1, app_options: Mapping[str, Any] | None = None,
             sender: str | None = None, receiver: str | None = None,
             seconds: float = DEFAULT_SECONDS) -> Discovery:
    """Discover representative packets of ``app``'s packet-in handler on ``topology`` within
    ``seconds`` of solver time (see :mod:`nice_attendre.discover`). Raises
    :class:`~nice_attendre.discover.engine.DiscoveryUnavailable` without CrossHair,
    :class:`~nice_attendre.discover.handler.NoPacketInHandler` for an app without one, and
    :class:`~nice_attendre.errors.InputError` for bad input."""
    import math

    from nice_attendre.discover.domain import Domain
    from nice_attendre.discover.engine import require
    from nice_attendre.discover.handler import check_handler
    from nice_attendre.discover.isolate import ChildFailed, in_child
    from nice_attendre.discover.states import app_states
    from nice_attendre.discover.traffic import default_flows
    from nice_attendre.errors import InputError
    from nice_attendre.frontend.api import build
    from nice_attendre.frontend.coverage import app_files

    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) \
            or seconds <= 0:
        raise InputError(f"--discover-seconds must be a number above 0, got {seconds!r}")
    require()
    started = time.monotonic()
    run = build(app, topology=topology, packets=packets, app_options=app_options, sender=sender, receiver=receiver)
    net = run.network
    check_handler(net.app)
    states = app_states(net)
    domain = Domain(net.topology)
    files = app_files(net.app)
    notes = [STATISTICS] + ([RYU] if getattr(type(net.app), "ryu_class", None) is not None else [])
    defaults, lost = default_flows(net.scenario)
    if lost is not None:
        notes.append(f"the app's default traffic: {lost}")
    fallbacks: list[str] = []
    try:
        data = in_child(lambda: _search(net.app, states, domain, files, seconds), seconds + GRACE_SECONDS)
    except ChildFailed as exc:
        data = {"found": [], "explorations": []}
        fallbacks.append(f"{exc}: no packet discovered; the default traffic is verified alone")
    found = tuple(_found(item) for item in data["found"])
    explorations = tuple(Exploring(*item) for item in data["explorations"])
    for exploring in explorations:
        if exploring.stopped == "time":
            fallbacks.append(f"app state {exploring.state}: the solver reached its time budget after "
                             f"{exploring.paths} paths; the packets found so far are kept, and the default "
                             "traffic is verified too")
        elif exploring.stopped.startswith("failed"):
            fallbacks.append(f"app state {exploring.state}: the solver {exploring.stopped}; the default traffic "
                             "is verified")
    if not found and not fallbacks:
        fallbacks.append("no packet a host can send was discovered; the default traffic is verified alone")
    flows = tuple(defaults) + tuple(item.packet.flow() for item in found)
    return Discovery(found, explorations, tuple(fallbacks), tuple(defaults), flows, files,
                     time.monotonic() - started, tuple(notes), net.scenario, lost is None)


def _search(app: Any, states: list[Any], domain: Any, files: tuple[str, ...], seconds: float) -> dict[str, Any]:
    """In the child: explore every state, canonicalise, as JSON data."""
    from nice_attendre.discover.canonical import canonical
    from nice_attendre.discover.engine import explore
    from nice_attendre.discover.handler import LineRecorder, call

    recorder = LineRecorder(files)
    deadline = time.monotonic() + seconds
    every: dict[Any, Found] = {}
    explorations: list[tuple[int, int, float, str]] = []
    for number, state in enumerate(states):
        share = (deadline - time.monotonic()) / (len(states) - number)  # what the states before left
        if share < MIN_SHARE:
            explorations.append((number, 0, 0.0, "time"))
            continue

        def replay(candidate: Candidate, state: Any = state) -> Any:
            return recorder.run(lambda: call(app, state, domain.topology, candidate.header(), candidate.dpid,
                                             candidate.in_port))

        try:
            exploration = explore(app, state, domain, share)
        except Exception as exc:  # noqa: BLE001 - CrossHair failed on this state: a fallback
            explorations.append((number, 0, 0.0, f"failed ({type(exc).__name__}: {exc})"))
            continue
        explorations.append((number, len(exploration.paths), exploration.seconds, exploration.stopped))
        for item in canonical(domain, exploration.paths, replay, number):
            path = (item.lines, item.raised, item.behaviour)
            if path not in every or key(item.packet) < key(every[path].packet):
                every[path] = item
    unique: dict[Candidate, Found] = {}
    for item in sorted(every.values(), key=lambda f: (key(f.packet), f.state)):
        unique.setdefault(item.packet, item)
    return {"found": [{"packet": item.packet.__dict__, "lines": sorted(item.lines), "raised": item.raised,
                       "state": item.state, "behaviour": repr(item.behaviour)} for item in unique.values()],
            "explorations": explorations}


def _found(item: dict[str, Any]) -> Found:
    """A :class:`Found` from the child's data, whose values must be plain ints and strs."""
    fields = item["packet"]
    values = {}
    for name, kind in Candidate.__annotations__.items():
        value = fields[name]
        wanted = int if kind == "int" else str
        if type(value) is not wanted:
            raise TypeError(f"discovery: field {name} is {type(value).__name__}, not {wanted.__name__}")
        values[name] = value
    lines = frozenset((str(path), int(line)) for path, line in item["lines"])
    return Found(Candidate(**values), lines, item["raised"], int(item["state"]), str(item["behaviour"]))


def discovered_traffic(app: Any, *, topology: Any, packets: int, app_options: Mapping[str, Any] | None,
                       sender: str | None, receiver: str | None, flows: Any, scenario: Any,
                       seconds: float) -> tuple[Discovery, dict[str, Any]]:
    """For ``verify --discover``: the discovery, and the traffic keywords of
    :func:`nice_attendre.frontend.api.build` that verify its packets with the app's default
    traffic (or with the user's ``flows``, when given). Refuses a ``scenario`` file
    (:class:`~nice_attendre.errors.InputError`): give ``--flow`` or nothing."""
    from nice_attendre.errors import InputError
    from nice_attendre.models.flows import as_flows

    if scenario is not None:
        raise InputError("--discover adds its packets to the app's default traffic or to --flow: not with "
                         "--scenario (write the discovered scenario with `nice-attendre discover --scenario-out` "
                         "and edit it)")
    own = as_flows([flows] if isinstance(flows, str) else flows) if flows else ()
    found = discover(app, topology=topology, packets=packets, app_options=app_options, sender=sender,
                     receiver=receiver, seconds=seconds)
    chosen = list(own) + [item.packet.flow() for item in found.packets] if own else list(found.flows)
    if own:
        from dataclasses import replace

        found = replace(found, default_flows=tuple(own), flows=tuple(chosen))
    elif not found.defaults_complete:  # the app's own traffic, exactly, then the packets' flows
        merged = merged_scenario(found.default_scenario, [item.packet.flow() for item in found.packets])
        return found, {"packets": packets, "flows": None, "scenario": merged}
    if not chosen:
        raise InputError("--discover found no packet and the default traffic sends none: nothing to verify")
    return found, {"packets": 1, "flows": [str(flow) for flow in chosen], "scenario": None}


def merged_scenario(default: Any, flows: list[Any]) -> Any:
    """``default`` (a Scenario) with each of ``flows`` added to its sender's script as a
    stream of its own."""
    from nice_attendre.models.scenario import HostSpec, Scenario

    specs = []
    for spec in default.hosts:
        own = [flow.script() for flow in flows if flow.src == spec.name]
        lengths = [end - start for start, end in spec.stream_bounds()] + [len(script) for script in own]
        script = spec.script + tuple(packet for extra in own for packet in extra)
        specs.append(HostSpec(spec.name, script, spec.replies, spec.moves, tuple(lengths) if len(lengths) > 1 else ()))
    return Scenario(default.topology, tuple(specs))
