"""``nice-attendre replay`` runs only code the user names: an app, topology, property or
scenario a trace names by a file or module must be given again on the replay command line
(``--app``, ``--topology``, ``--property``, ``--scenario``; the path may differ, the name
after the colon must match). Otherwise the replay stops with one line naming the file and
the option (exit 2) before it imports or reads anything: a trace sent by someone else never
runs their code."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from nice_attendre.frontend.cli import main
from nice_attendre.frontend.exit_codes import ExitCode
from nice_attendre.frontend.replay_sources import Sources, UntrustedTraceError, trusted_build

DATA = Path(__file__).resolve().parent.parent / "data"

#: Writes a marker file when imported: what a hostile trace's app would do.
HOSTILE = '''from pathlib import Path
Path({marker!r}).write_text("imported")
'''

PROPERTY = '''from nice_attendre.properties.custom import always

NEVER_DELIVERED = always("never-delivered", lambda view: not view.hosts["h2"].received_from("h1"),
                         "h2 never receives anything from h1")
'''

FACTORY = '''import networkx as nx


def line():
    graph = nx.Graph()
    nx.add_path(graph, ["h1", "s1", "s2", "h2"])
    return graph
'''


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def saved(tmp_path: Path, *args: str) -> Path:
    out = tmp_path / "trace.json"
    result = invoke("verify", *args, "--shortest", "--trace-out", str(out), "--trace-format", "json")
    assert result.exit_code == ExitCode.VIOLATION, result.output
    return out


def retarget(trace: Path, **build: Any) -> dict[str, Any]:
    """The trace rewritten so that its build options are ``build`` (what a hostile sender does)."""
    data = json.loads(trace.read_text())
    data["build"].update(build)
    trace.write_text(json.dumps(data))
    return data


def refused(result: Any, message: str) -> None:
    assert result.exit_code == ExitCode.INPUT, result.output
    (line,) = result.output.strip().splitlines()
    assert line == f"Error: {message}", line


@pytest.fixture
def app_trace(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """(trace, the user's copy of the app, a hostile file the trace names instead, its marker)."""
    app = tmp_path / "mine" / "first_hop_only.py"
    app.parent.mkdir()
    shutil.copy(DATA / "apps" / "first_hop_only.py", app)
    trace = saved(tmp_path, f"{app}:FirstHopOnly", "-t", "linear:3")
    marker = tmp_path / "MARKER"
    hostile = tmp_path / "theirs" / "first_hop_only.py"
    hostile.parent.mkdir()
    hostile.write_text(HOSTILE.format(marker=str(marker)) + app.read_text())
    retarget(trace, app=f"{hostile}:FirstHopOnly")
    return trace, app, hostile, marker


def test_a_trace_naming_an_app_file_is_refused_and_never_imports_it(app_trace: tuple[Path, ...]) -> None:
    trace, _app, hostile, marker = app_trace
    result = invoke("replay", str(trace))
    refused(result, f"the trace would import app '{hostile}:FirstHopOnly'; replay runs only code and reads only "
                    "files named on its command line: check it, then give it with --app PATH:FirstHopOnly")
    assert not marker.exists()


def test_the_app_the_user_names_is_the_one_replayed(app_trace: tuple[Path, ...]) -> None:
    trace, app, hostile, marker = app_trace
    result = invoke("replay", "--app", f"{app}:FirstHopOnly", str(trace))
    assert result.exit_code == ExitCode.VIOLATION, result.output
    assert result.output.splitlines()[-1].startswith("trace reproduced: property no-forgotten-packets violated")
    assert f"  using         --app {app}:FirstHopOnly (the trace's: {hostile}:FirstHopOnly)" in result.output
    assert not marker.exists()
    # Named by the user, the file is theirs to run: the rule is about who names it.
    named = invoke("replay", "-q", "--app", f"{hostile}:FirstHopOnly", str(trace))
    assert named.exit_code == ExitCode.VIOLATION, named.output
    assert marker.exists()


@pytest.mark.parametrize("given, message", [
    ("{app}:Other",
     "--app {app}:Other does not match the trace's app '{hostile}:FirstHopOnly': give PATH:FirstHopOnly"),
    ("route-flow", "--app route-flow does not match the trace's app '{hostile}:FirstHopOnly': give PATH:FirstHopOnly"),
])
def test_an_app_that_does_not_match_the_trace_is_refused(app_trace: tuple[Path, ...], given: str, message: str) -> None:
    trace, app, hostile, marker = app_trace
    result = invoke("replay", "--app", given.format(app=app), str(trace))
    refused(result, message.format(app=app, hostile=hostile))
    assert not marker.exists()


def test_a_module_app_must_be_named_too(tmp_path: Path) -> None:
    trace = saved(tmp_path, "mac-learning", "-t", "linear:2", "-n", "2", "--bug", "delayed-direct-path")
    retarget(trace, app="os:FirstHopOnly")
    refused(invoke("replay", str(trace)), "the trace would import app 'os:FirstHopOnly'; replay runs only code and "
                                          "reads only files named on its command line: check it, then give it with "
                                          "--app PATH:FirstHopOnly")


def test_a_registered_app_needs_no_option_and_takes_no_other(tmp_path: Path) -> None:
    trace = saved(tmp_path, "mac-learning", "-t", "linear:2", "-n", "2", "--bug", "delayed-direct-path")
    assert invoke("replay", "-q", str(trace)).exit_code == ExitCode.VIOLATION
    assert invoke("replay", "-q", "--app", "mac-learning", str(trace)).exit_code == ExitCode.VIOLATION
    refused(invoke("replay", "--app", "x.py:MacLearning", str(trace)),
            "--app x.py:MacLearning: the trace's app is 'mac-learning', which replay loads by its name; drop --app")
    refused(invoke("replay", "--topology", "linear:3", str(trace)),
            "--topology linear:3: the trace's topology is 'linear:2', which replay builds itself; drop --topology")
    refused(invoke("replay", "--scenario", "s.toml", str(trace)),
            "--scenario s.toml: the trace has no scenario file; drop --scenario")
    refused(invoke("replay", "--property", "p.py:P", str(trace)),
            "--property p.py:P matches no property the trace imports from a file or module; drop it")


def test_a_topology_factory_must_be_named(tmp_path: Path) -> None:
    factory = tmp_path / "topo.py"
    factory.write_text(FACTORY)
    trace = saved(tmp_path, "route-flow", "--bug", "forget-last-hop", "-t", f"{factory}:line")
    marker = tmp_path / "MARKER"
    hostile = tmp_path / "hostile_topo.py"
    hostile.write_text(HOSTILE.format(marker=str(marker)) + FACTORY)
    retarget(trace, topology=f"{hostile}:line")
    refused(invoke("replay", str(trace)), f"the trace would import topology factory '{hostile}:line'; replay runs "
                                          "only code and reads only files named on its command line: check it, then "
                                          "give it with --topology PATH:line")
    refused(invoke("replay", "--topology", f"{factory}:other", str(trace)),
            f"--topology {factory}:other does not match the trace's topology factory '{hostile}:line': give PATH:line")
    assert not marker.exists()
    result = invoke("replay", "-q", "--topology", f"{factory}:line", str(trace))
    assert result.exit_code == ExitCode.VIOLATION, result.output
    assert not marker.exists()


def test_a_topology_file_must_be_named(tmp_path: Path) -> None:
    edges = tmp_path / "diamond.edges"
    shutil.copy(DATA / "topologies" / "diamond.edges", edges)
    trace = saved(tmp_path, "route-flow", "--bug", "forget-last-hop", "-t", str(edges))
    retarget(trace, topology="/dev/zero")  # would be read until memory ran out
    refused(invoke("replay", str(trace)), "the trace would read topology file '/dev/zero'; replay runs only code and "
                                          "reads only files named on its command line: check it, then give it with "
                                          "--topology PATH")
    refused(invoke("replay", "--topology", "linear:2", str(trace)),
            "--topology linear:2 does not match the trace's topology file '/dev/zero': give a graph file")
    result = invoke("replay", "-q", "--topology", str(edges), str(trace))
    assert result.exit_code == ExitCode.VIOLATION, result.output


def test_a_property_file_must_be_named(tmp_path: Path) -> None:
    props = tmp_path / "props.py"
    props.write_text(PROPERTY)
    trace = saved(tmp_path, "route-flow", "-t", "linear:2", "--property", f"{props}:NEVER_DELIVERED",
                  "--property", "delivery")
    marker = tmp_path / "MARKER"
    hostile = tmp_path / "hostile_props.py"
    hostile.write_text(HOSTILE.format(marker=str(marker)) + PROPERTY)
    data = retarget(trace, properties=[f"{hostile}:NEVER_DELIVERED", "delivery"])
    assert data["property"] == "never-delivered"
    refused(invoke("replay", str(trace)), f"the trace would import property '{hostile}:NEVER_DELIVERED'; replay runs "
                                          "only code and reads only files named on its command line: check it, then "
                                          "give it with --property PATH:NEVER_DELIVERED")
    refused(invoke("replay", "--property", f"{props}:ONLY_WEB", str(trace)),
            f"the trace would import property '{hostile}:NEVER_DELIVERED'; replay runs only code and reads only files "
            "named on its command line: check it, then give it with --property PATH:NEVER_DELIVERED")
    assert not marker.exists()
    result = invoke("replay", "--property", f"{props}:NEVER_DELIVERED", str(trace))
    assert result.exit_code == ExitCode.VIOLATION, result.output
    assert result.output.splitlines()[-1].startswith("trace reproduced: property never-delivered violated")
    assert not marker.exists()


def test_a_scenario_file_must_be_named(tmp_path: Path) -> None:
    scenario = tmp_path / "web.toml"
    shutil.copy(DATA / "scenarios" / "web_and_dns.toml", scenario)
    trace = saved(tmp_path, "route-flow", "--bug", "forget-last-hop", "-t", "linear:2", "--scenario", str(scenario))
    retarget(trace, scenario="/dev/zero")
    refused(invoke("replay", str(trace)), "the trace would read scenario file '/dev/zero'; replay runs only code and "
                                          "reads only files named on its command line: check it, then give it with "
                                          "--scenario PATH")
    result = invoke("replay", "-q", "--scenario", str(scenario), str(trace))
    assert result.exit_code == ExitCode.VIOLATION, result.output


def test_trusted_build_imports_nothing_and_keeps_the_built_in_names() -> None:
    build = {"app": "mac-learning", "topology": "linear:2", "properties": ["delivery"], "scenario": None,
             "flows": ["h1->h2"], "protocol": "attendre"}
    assert trusted_build(build) == build
    assert trusted_build({"app": "route-flow", "properties": None})["properties"] is None
    with pytest.raises(UntrustedTraceError, match="--property PATH:B$"):
        trusted_build({"app": "route-flow", "properties": ["a.py:A", "b.py:B"]}, Sources(properties=("x/a.py:A",)))
    both = trusted_build({"app": "route-flow", "properties": ["a.py:A", "delivery", "b.py:A"]},
                         Sources(properties=("1.py:A", "2.py:A")))
    assert both["properties"] == ["1.py:A", "delivery", "2.py:A"]


def test_help_states_the_rule() -> None:
    text = " ".join(invoke("replay", "--help").output.split())
    assert "Replay runs only code you name." in text
    assert ("--app PATH:CLASS, --topology PATH[:FUNCTION], --property PATH:NAME or --scenario PATH (the path may "
            "differ from the trace's, the name after the colon must be the same)") in text
