"""What a saved trace may make ``nice-attendre replay`` import or read: only what the user
names (front end).

A trace file comes from someone else as often as not, and its ``build`` options name the
app, topology, properties and scenario its network was built from. Importing a file a trace
names would run that file's code: a trace sent by someone else would run their code. So:

* **built-in names are taken from the trace**: a registered app (``mac-learning``), a
  generated topology (``linear:N``, ``star:N``, ``paths:A,D``), property names without a
  colon (registered, or the app's own), flows, protocol, faults and the other options, none
  of which imports or reads anything;
* **everything the trace names by a file or module must be named again on the replay
  command line**: an app ``file.py:Class`` or ``package.module:Class`` (``--app``), a
  topology graph file or factory ``file.py:function`` (``--topology``), a property
  ``file.py:NAME`` (``--property``, once per such property) and a scenario file
  (``--scenario``). The path given may differ from the trace's (a trace travels between
  machines, and its paths are relative to the folder ``verify`` ran in); the name after
  the colon must be the trace's (the same class, function or property), and a graph file
  must be replaced by a graph file.

:func:`trusted_build` applies the rule to a trace's ``build`` options before anything is
imported or read: the options to build with (the user's paths in place of the trace's),
or :class:`UntrustedTraceError`, one line naming what the trace would import or read and
the option that names it (CLI exit code 2). Giving an option the trace has no use for is
an error too (it would be ignored).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from nice_attendre.errors import InputError

#: Topologies built from their name alone (see :func:`nice_attendre.models.topology.load_topology`).
_GENERATED = re.compile(r"(linear|star|paths):.*", re.DOTALL)


class UntrustedTraceError(InputError):
    """A saved trace names code or a file the user did not name on the replay command line
    (or the user named one that does not match the trace's)."""


@dataclass(frozen=True)
class Sources:
    """What the user named on the replay command line: ``--app``, ``--topology``,
    ``--property`` (each one) and ``--scenario``; ``None`` or empty when not given."""

    app: str | None = None
    topology: str | None = None
    properties: tuple[str, ...] = ()
    scenario: str | None = None


def _attr(spec: str) -> str:
    """The name after the last colon of ``file.py:NAME`` / ``module:NAME``."""
    return spec.rpartition(":")[2]


def _is_factory(spec: str) -> bool:
    """Whether a topology spec names a factory function (as :func:`load_topology` reads it)."""
    target, sep, attr = spec.strip().rpartition(":")
    return bool(sep) and attr.isidentifier() and (target.endswith(".py") or re.fullmatch(r"[\w.]+", target) is not None)


def _refuse(would: str, option: str) -> UntrustedTraceError:
    return UntrustedTraceError(f"the trace would {would}; replay runs only code and reads only files named on its "
                               f"command line: check it, then give it with {option}")


def _app(spec: str, given: str | None) -> str:
    """The app to build: the trace's registered name, or the user's ``--app``."""
    if ":" not in spec:  # a registered name (or an unknown one: an error, nothing imported)
        if given is not None and given != spec:
            raise UntrustedTraceError(f"--app {given}: the trace's app is {spec!r}, which replay loads by its "
                                      "name; drop --app")
        return spec
    name = _attr(spec)
    if given is None:
        raise _refuse(f"import app {spec!r}", f"--app PATH:{name}")
    if ":" not in given or _attr(given) != name:
        raise UntrustedTraceError(f"--app {given} does not match the trace's app {spec!r}: give PATH:{name}")
    return given


def _topology(spec: str | None, given: str | None) -> str | None:
    """The topology to build: the trace's generated one (or the app's default), or the user's."""
    if spec is None or _GENERATED.fullmatch(spec.strip()):
        if given is not None and given != spec:
            shown = "the app's default" if spec is None else repr(spec)
            raise UntrustedTraceError(f"--topology {given}: the trace's topology is {shown}, which replay builds "
                                      "itself; drop --topology")
        return spec
    if _is_factory(spec):
        name = _attr(spec)
        if given is None:
            raise _refuse(f"import topology factory {spec!r}", f"--topology PATH:{name}")
        if not _is_factory(given) or _attr(given) != name:
            raise UntrustedTraceError(f"--topology {given} does not match the trace's topology factory {spec!r}: "
                                      f"give PATH:{name}")
        return given
    if given is None:
        raise _refuse(f"read topology file {spec!r}", "--topology PATH")
    if _is_factory(given) or _GENERATED.fullmatch(given.strip()):
        raise UntrustedTraceError(f"--topology {given} does not match the trace's topology file {spec!r}: "
                                  "give a graph file")
    return given


def _properties(spec: str | list[str] | None, given: tuple[str, ...]) -> str | list[str] | None:
    """The properties to check: the trace's names, each ``file.py:NAME`` replaced by the
    user's ``--property PATH:NAME`` (in order, for properties of the same name)."""
    if spec is None and not given:
        return None
    items = [spec] if isinstance(spec, str) else list(spec or ())
    offered = list(given)
    for index, item in enumerate(items):
        if ":" not in item:
            continue
        name = _attr(item)
        match = next((g for g in offered if ":" in g and _attr(g) == name), None)
        if match is None:
            raise _refuse(f"import property {item!r}", f"--property PATH:{name}")
        offered.remove(match)
        items[index] = match
    if offered:
        raise UntrustedTraceError(f"--property {offered[0]} matches no property the trace imports from a file "
                                  "or module; drop it")
    return items if not isinstance(spec, str) else items[0]


def trusted_build(build: Mapping[str, Any], given: Sources = Sources()) -> dict[str, Any]:
    """The build options of a trace's ``build`` (checked by
    :func:`nice_attendre.frontend.trace_input.check_document`) with every file or module
    it names replaced by the one the user gave in ``given``; raises
    :class:`UntrustedTraceError` when one is not given or does not match (see the module
    docstring). Imports and reads nothing."""
    options = dict(build)
    options["app"] = _app(build["app"], given.app)
    options["topology"] = _topology(build.get("topology"), given.topology)
    options["properties"] = _properties(build.get("properties"), given.properties)
    scenario = build.get("scenario")
    if scenario is None and given.scenario is not None:
        raise UntrustedTraceError(f"--scenario {given.scenario}: the trace has no scenario file; drop --scenario")
    if scenario is not None:
        if given.scenario is None:
            raise _refuse(f"read scenario file {scenario!r}", "--scenario PATH")
        options["scenario"] = given.scenario
    return options


def substitutions(build: Mapping[str, Any], used: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(option, the trace's value, the user's) for each build option :func:`trusted_build`
    replaced, for the report."""
    found = []
    for key, option in (("app", "--app"), ("topology", "--topology"), ("scenario", "--scenario")):
        if build.get(key) != used.get(key):
            found.append((option, str(build.get(key)), str(used.get(key))))
    traced, chosen = build.get("properties"), used.get("properties")
    for was, now in zip([traced] if isinstance(traced, str) else traced or [],
                        [chosen] if isinstance(chosen, str) else chosen or []):
        if was != now:
            found.append(("--property", was, now))
    return found
