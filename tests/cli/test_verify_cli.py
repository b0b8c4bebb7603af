"""`nice-attendre verify` and `nice-attendre list`: counts, reports, JSON, limits, exit codes, errors."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from nice_attendre.frontend.cli import main

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DATA = ROOT / "tests" / "data"
APPS = DATA / "apps"
TOPOLOGIES = DATA / "topologies"

PINNED = ["verify", "route-flow", "--topology", "linear:3", "--packets", "2", "--protocol", "openflow"]
#: (transitions, unique states, revisits, max depth) of PINNED.
PINNED_COUNTS = (13107, 4934, 8174, 40)
BUGGY = ["verify", "route-flow", "--topology", "linear:2", "--bug", "forget-last-hop"]


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def console_script() -> str:
    """The installed `nice-attendre` next to this interpreter (the venv's bin)."""
    found = shutil.which("nice-attendre", path=str(Path(sys.executable).parent))
    assert found is not None, f"nice-attendre is not installed next to {sys.executable}"
    return found


def run_script(*args: str, cwd: Path, hashseed: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if hashseed is not None:
        env["PYTHONHASHSEED"] = hashseed
    return subprocess.run([console_script(), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def counts_of(data: dict) -> tuple[int, int, int, int]:
    return (data["transitions"], data["unique_states"], data["revisits"], data["max_depth"])


def stat_rows(output: str) -> dict[str, str]:
    """The counts lines of a report: label -> the whole line."""
    labels = ("transitions", "unique states", "revisits", "max depth", "time", "search")
    return {label: line for line in output.splitlines() for label in labels
            if line.startswith(f"  {label}  ")}


# ---- the pinned route-flow run ----------------------------------------------------------------

@pytest.fixture(scope="module")
def pinned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, dict]:
    out = tmp_path_factory.mktemp("pinned") / "report.json"
    result = run(*PINNED, "--json", str(out))
    return result, json.loads(out.read_text())


def test_pinned_run_prints_its_counts(pinned: tuple[Result, dict]) -> None:
    result, _ = pinned
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[:7] == [
        "  app            route-flow",
        "  protocol       openflow",
        "  channels       fifo: switches run commands in arrival order; single-threaded controller",
        "  start-up       hosts may send while switches join (the table-miss race is real)",
        "  topology       linear:3 (3 switches, hosts h1, h2)",
        "  traffic        h1 sends 2 packets to h2; h2 answers each",
        "  properties     no-forwarding-loops, no-black-holes, no-forgotten-packets, delivery, termination, "
        "app-exception, app-nondeterminism",
    ]
    rows = stat_rows(result.stdout)
    assert rows["transitions"] == "  transitions          13,107"
    assert rows["unique states"] == "  unique states         4,934"
    assert rows["revisits"] == "  revisits              8,174"
    assert rows["max depth"] == "  max depth                40"
    assert rows["search"] == "  search             complete"
    assert rows["time"].endswith(" transitions/s)")
    assert lines[-1] == "OK: no property violated"
    assert "VIOLATION" not in result.stdout and "INCOMPLETE" not in result.stdout
    assert result.stderr == ""


def test_counts_and_search_rows_end_in_one_column(pinned: tuple[Result, dict]) -> None:
    rows = stat_rows(pinned[0].stdout)
    ends = {label: len(rows[label]) for label in ("transitions", "unique states", "revisits", "max depth", "search")}
    assert len(set(ends.values())) == 1, ends
    # the time's number ends there too, its unit and rate follow
    assert rows["time"][ends["search"] - 1].isdigit() and rows["time"][ends["search"]:].startswith(" s  (")


def test_pinned_run_json(pinned: tuple[Result, dict]) -> None:
    _, data = pinned
    assert counts_of(data) == PINNED_COUNTS
    assert data["complete"] is True
    assert data["stop_reason"] is None
    assert data["ok"] is True
    assert data["violations"] == []
    assert data["app"] == "route-flow"
    assert data["protocol"] == "openflow"
    assert data["topology"] == "linear:3"
    assert data["packets"] == 2
    assert data["properties"] == ["no-forwarding-loops", "no-black-holes", "no-forgotten-packets",
                                  "delivery", "termination", "app-exception", "app-nondeterminism"]
    assert data["elapsed_seconds"] > 0
    assert data["transitions_per_second"] > 0


def test_same_counts_under_three_hash_seeds(tmp_path: Path) -> None:
    # Run the console script three times in parallel, each with its own PYTHONHASHSEED.
    script = console_script()
    procs = {}
    for seed in ("0", "1", "12345"):
        out = tmp_path / f"seed{seed}.json"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        procs[seed] = (subprocess.Popen([script, *PINNED, "--json", str(out)], cwd=tmp_path, env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), out)
    counts = {}
    for seed, (proc, out) in procs.items():
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
        assert "  transitions          13,107" in stdout.splitlines()
        counts[seed] = counts_of(json.loads(out.read_text()))
    assert counts == {"0": PINNED_COUNTS, "1": PINNED_COUNTS, "12345": PINNED_COUNTS}


def test_console_script_runs_from_any_folder(tmp_path: Path) -> None:
    proc = run_script(*PINNED, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "  unique states         4,934" in proc.stdout.splitlines()
    assert proc.stdout.rstrip().endswith("OK: no property violated")
    assert proc.stderr == ""


# ---- a violation ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def buggy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, dict]:
    out = tmp_path_factory.mktemp("buggy") / "report.json"
    result = run(*BUGGY, "--json", str(out))
    return result, json.loads(out.read_text())


BUGGY_TRACE = [
    "  trace (6 events):",
    "  1. h1 sends data h1#0 [h1->h2] to s1:1",
    "  2. s1: table miss for data h1#0 [h1->h2] from port 1; buffered, packet-in sent",
    "  3. controller: RouteFlow.on_packet_in handles packet-in(s1, port 1, h1#0)",
    "     controller sends flow-mod/packet-out {exact h1->h2} -> output:2 to s1",
    "  4. s1 installs [prio 32768 {exact h1->h2} -> output:2]",
    "     s1 applies output:2 to buffered data h1#0 [h1->h2]",
    "     s1 sends data h1#0 [h1->h2] out of port 2 to s2:1",
    "  5. s2: table miss for data h1#0 [h1->h2] from port 1; buffered, packet-in sent",
    "  6. controller: RouteFlow.on_packet_in handles packet-in(s2, port 1, h1#0)",
]


def test_buggy_variant_exits_1_with_a_numbered_trace(buggy: tuple[Result, dict]) -> None:
    result, _ = buggy
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert "  app            route-flow (bug: forget-last-hop)" in lines
    rows = stat_rows(result.stdout)
    assert rows["transitions"] == "  transitions               6"
    assert rows["unique states"] == "  unique states             7"
    assert rows["search"] == "  search           INCOMPLETE  (stopped at the first violation)"
    start = lines.index("VIOLATION 1: no-forgotten-packets (at quiescence)")
    assert lines[start + 1] == "  s2 still holds data h1#0 [h1->h2]"
    assert lines[start + 2:start + 2 + len(BUGGY_TRACE)] == BUGGY_TRACE
    assert lines[-1] == "FAILED: no-forgotten-packets, delivery"
    assert "OK" not in result.stdout.split()


def test_buggy_variant_json(buggy: tuple[Result, dict]) -> None:
    _, data = buggy
    assert data["app"] == "route-flow (bug: forget-last-hop)"
    assert counts_of(data) == (6, 7, 0, 6)
    assert data["complete"] is False
    assert data["stop_reason"] == "violation"
    assert data["ok"] is False
    [violation, lost] = data["violations"]
    assert lost["property"] == "delivery" and lost["reason"] == "h1#0 never reached h2"
    assert violation["property"] == "no-forgotten-packets"
    assert violation["expectation"] == "at_quiescence"
    assert violation["reason"] == "s2 still holds data h1#0 [h1->h2]"
    trace = violation["trace"]
    assert [step["step"] for step in trace] == [1, 2, 3, 4, 5, 6]
    assert trace[0] == {"step": 1, "event": "h1 sends", "effects": ["h1 sends data h1#0 [h1->h2] to s1:1"]}
    assert trace[-1]["effects"] == ["controller: RouteFlow.on_packet_in handles packet-in(s2, port 1, h1#0)"]
    assert all(step["event"] and step["effects"] for step in trace)


def test_buggy_variant_as_app_option_is_the_same() -> None:
    result = run("verify", "route-flow", "-t", "linear:2", "-o", "bug=forget-last-hop")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == "FAILED: no-forgotten-packets, delivery"


def test_keep_going_explores_everything() -> None:
    result = run(*BUGGY, "--keep-going")
    assert result.exit_code == 1
    assert stat_rows(result.stdout)["search"] == "  search             complete"
    assert "VIOLATION 1: no-forgotten-packets (at quiescence)" in result.stdout.splitlines()


def test_buggy_variant_from_the_console_script(tmp_path: Path) -> None:
    proc = run_script(*BUGGY, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "VIOLATION 1: no-forgotten-packets (at quiescence)" in proc.stdout.splitlines()
    assert proc.stderr == ""


def test_app_handler_exception_is_a_violation_not_a_crash(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run("verify", f"{APPS / 'lookup_routing.py'}:LookupRouting", "--json", str(out))
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stdout.splitlines()
    reason = "LookupRouting.on_packet_in raised KeyError: 'h2' (handling packet-in(s1, port 1, h1#0))"
    start = lines.index("VIOLATION 1: app-exception (always)")
    assert lines[start + 1:start + 6] == [
        f"  {reason}",
        "  trace (3 events):",
        "  1. h1 sends data h1#0 [h1->h2] to s1:1",
        "  2. s1: table miss for data h1#0 [h1->h2] from port 1; buffered, packet-in sent",
        f"  3. ALERT app-exception: {reason}",
    ]
    assert lines[-1] == "FAILED: app-exception"
    assert "Traceback" not in result.output
    data = json.loads(out.read_text())
    [violation] = data["violations"]
    assert violation["property"] == "app-exception"
    assert violation["reason"] == reason
    assert len(violation["trace"]) == 3


# ---- limits -----------------------------------------------------------------------------------

def test_max_seconds_gives_partial_counts_marked_incomplete(tmp_path: Path) -> None:
    # linear:6 with 2 packets is far beyond one second (millions of transitions).
    out = tmp_path / "report.json"
    result = run("verify", "route-flow", "--topology", "linear:6", "--packets", "2", "--max-seconds", "1",
                 "--json", str(out))
    assert result.exit_code == 3, result.output  # incomplete: never 0, never an OK line
    rows = stat_rows(result.stdout)
    assert rows["search"] == "  search           INCOMPLETE  (stopped by --max-seconds)"
    assert result.stdout.splitlines()[-1] == (
        "INCOMPLETE: no violation in the part explored, but the search was not complete (stopped by --max-seconds)")
    assert "OK" not in result.stdout.split()
    data = json.loads(out.read_text())
    assert data["complete"] is False
    assert data["stop_reason"] == "max-seconds"
    assert (data["verdict"], data["ok"], data["violations"]) == ("incomplete", False, [])
    # The second counts from the start: building the network took part of it.
    assert 0 < data["elapsed_seconds"] < 10
    assert data["transitions"] > 1000
    assert rows["transitions"] == f"  transitions    {data['transitions']:>12,}"
    assert rows["unique states"] == f"  unique states  {data['unique_states']:>12,}"


def test_max_transitions_gives_exactly_that_many(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run(*PINNED, "--max-transitions", "100", "--json", str(out))
    assert result.exit_code == 3, result.output
    rows = stat_rows(result.stdout)
    assert rows["transitions"] == "  transitions             100"
    assert rows["search"] == "  search           INCOMPLETE  (stopped by --max-transitions)"
    data = json.loads(out.read_text())
    assert data["transitions"] == 100
    assert data["complete"] is False and data["stop_reason"] == "max-transitions"
    # every transition found a new state or revisited one; the initial state is stored too
    assert data["unique_states"] == data["transitions"] - data["revisits"] + 1


# ---- other topologies and protocols -----------------------------------------------------------

def test_graphml_topology_with_named_hosts() -> None:
    result = run("verify", "route-flow", "--topology", str(TOPOLOGIES / "diamond_hosts.graphml"))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "  topology       diamond_hosts.graphml (4 switches, hosts alice, bob)" in lines
    assert "  traffic        alice sends 1 packet to bob; bob answers each" in lines
    assert lines[-1] == "OK: no property violated"


def test_factory_topology_matches_the_edge_list(tmp_path: Path) -> None:
    counts = []
    for topology in (str(TOPOLOGIES / "diamond.edges"), f"{TOPOLOGIES / 'topology_factories.py'}:diamond"):
        out = tmp_path / "report.json"
        result = run("verify", "route-flow", "-t", topology, "-n", "2", "--json", str(out))
        assert result.exit_code == 0, result.output
        counts.append(counts_of(json.loads(out.read_text())))
    assert counts[0] == counts[1]


@pytest.mark.parametrize("protocol", ["openflow-b", "attendre"])
def test_other_protocols_are_accepted(protocol: str) -> None:
    result = run("verify", "route-flow", "-t", "linear:2", "-P", protocol)
    assert result.exit_code == 0, result.output
    assert f"  protocol       {protocol}" in result.stdout.splitlines()


# ---- bad input: one line "Error: ...", exit code 2 --------------------------------------------

def input_error(*args: str) -> str:
    """Run verify with bad input; check the clean failure; return the message after 'Error: '."""
    result = run("verify", *args)
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert isinstance(result.exception, SystemExit)  # not a crash
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0].removeprefix("Error: ")


def test_unknown_app_with_did_you_mean() -> None:
    message = input_error("route-flw")
    assert message.startswith("unknown app 'route-flw'; did you mean 'route-flow'? (known: ")
    assert "route-flow" in message.split("(known: ")[1]


def test_unknown_app_without_close_name() -> None:
    assert input_error("zebra").startswith("unknown app 'zebra' (known: ")


def test_missing_app_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert input_error("path/to/missing.py:X") == "app file 'path/to/missing.py' not found"


def test_app_file_without_the_class_suggests_a_close_name() -> None:
    path = APPS / "lookup_routing.py"
    assert input_error(f"{path}:LookupRoute") == f"{str(path)!r} has no class 'LookupRoute'; did you mean 'LookupRouting'?"


def test_app_file_without_the_class_lists_its_apps() -> None:
    path = APPS / "lookup_routing.py"
    assert input_error(f"{path}:Zebra") == f"{str(path)!r} has no class 'Zebra' (app classes there: LookupRouting)"


def test_app_class_that_is_not_an_app() -> None:
    path = APPS / "lookup_routing.py"
    assert input_error(f"{path}:NotAnApp") == f"'{path}:NotAnApp' is not a subclass of nice_attendre.models.app.App"


def test_app_file_without_a_class_name() -> None:
    path = str(APPS / "lookup_routing.py")
    assert input_error(path) == f"app {path!r} names a file but no class: write {path}:ClassName"


def test_app_file_that_raises_on_import() -> None:
    path = APPS / "import_fails.py"
    assert input_error(f"{path}:Broken") == (
        f"importing app file {str(path)!r} failed: RuntimeError: this app file is broken on purpose")


def test_app_module_that_cannot_be_imported() -> None:
    assert input_error("no_such_app_module:App") == (
        "cannot import app module 'no_such_app_module': No module named 'no_such_app_module'")


@pytest.mark.parametrize("spec", ["linear:zero", "linear:0"])
def test_malformed_linear_topology(spec: str) -> None:
    assert input_error("route-flow", "--topology", spec) == f"bad topology {spec!r}: linear:N needs a whole number 1 <= N <= 1000"


def test_missing_topology_file() -> None:
    missing = str(TOPOLOGIES / "no_such.graphml")
    assert input_error("route-flow", "--topology", missing) == f"topology file {missing!r} not found"


def test_topology_file_that_fails_to_parse() -> None:
    path = str(TOPOLOGIES / "broken.graphml")
    assert input_error("route-flow", "-t", path).startswith(f"cannot read topology file {path!r}: ParseError: ")


def test_topology_factory_that_raises() -> None:
    spec = f"{TOPOLOGIES / 'topology_factories.py'}:broken"
    assert input_error("route-flow", "-t", spec) == f"topology factory {spec!r} raised RuntimeError: no graph today"


def test_unknown_property() -> None:
    message = input_error("route-flow", "--property", "no-loops")
    assert message.startswith("unknown property 'no-loops' (known: no-forwarding-loops, no-black-holes, ")


def test_unknown_property_with_did_you_mean() -> None:
    message = input_error("route-flow", "-p", "no-black-hole")
    assert message.startswith("unknown property 'no-black-hole'; did you mean 'no-black-holes'? (known: ")


def test_unknown_protocol() -> None:
    assert input_error("route-flow", "--protocol", "openflw") == (
        "unknown protocol 'openflw'; did you mean 'openflow'? (known: openflow, openflow-b, attendre, pif, buffer, batch)")


@pytest.mark.parametrize("option", ["bug", "=3", "1x=2", "two words=1"])
def test_bad_app_option_syntax(option: str) -> None:
    assert input_error("route-flow", "-o", option) == f"bad app option {option!r}: expected KEY=VALUE"


def test_app_option_the_class_does_not_accept() -> None:
    assert input_error("route-flow", "-o", "colour=red") == (
        "cannot create RouteFlow with options {'colour': 'red'}: RouteFlow.__init__() got an unexpected "
        "keyword argument 'colour' (RouteFlow accepts: bug)")


def test_unknown_bug_variant() -> None:
    assert input_error("route-flow", "--bug", "forget-everything") == (
        "cannot create RouteFlow with options {'bug': 'forget-everything'}: unknown route-flow bug "
        "'forget-everything' (known: forget-last-hop)")


def test_unknown_sender() -> None:
    assert input_error("route-flow", "--sender", "h9") == "unknown host 'h9' (hosts: h1, h2)"


def test_json_into_a_missing_folder(tmp_path: Path) -> None:
    out = tmp_path / "no_such_folder" / "report.json"
    assert input_error("route-flow", "--json", str(out)) == (
        f"cannot write --json {str(out)!r}: folder {str(out.parent)!r} not found")


def test_input_error_from_the_console_script_is_one_line(tmp_path: Path) -> None:
    proc = run_script("verify", "route-flw", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [proc.stderr.strip()]
    assert proc.stderr.startswith("Error: unknown app 'route-flw'; did you mean 'route-flow'?")


def test_import_failure_from_the_console_script_has_no_traceback(tmp_path: Path) -> None:
    proc = run_script("verify", f"{APPS / 'import_fails.py'}:Broken", cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1
    assert proc.stderr.startswith("Error: importing ")


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    proc = run_script("--debug", "verify", "route-flw", cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback (most recent call last)" in proc.stderr
    assert "UnknownNameError: unknown app 'route-flw'" in proc.stderr


def test_debug_keeps_the_exit_code_and_shows_the_traceback() -> None:
    result = run("--debug", "verify", "route-flw")
    assert result.exit_code == 2
    assert "Traceback (most recent call last)" in result.stderr
    assert "UnknownNameError: unknown app 'route-flw'" in result.stderr
    assert result.stderr.splitlines()[-1].startswith("Error: unknown app 'route-flw'")


# ---- list -------------------------------------------------------------------------------------

def test_list_names_apps_protocols_properties_and_topologies() -> None:
    from nice_attendre import properties as registry

    result = run("list")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    sections = [line for line in lines if not line.startswith(" ")]
    assert sections == ["apps:", "protocols:", "properties:", "topologies:"]

    def entries(section: str) -> dict[str, str]:
        """name -> its whole description (continuation lines joined)."""
        start = lines.index(section) + 1
        end = next((i for i in range(start, len(lines)) if not lines[i].startswith(" ")), len(lines))
        found: dict[str, str] = {}
        for line in lines[start:end]:
            if line.startswith("   "):  # a wrapped description goes on
                last = list(found)[-1]
                found[last] += " " + line.strip()
            else:
                name, _, text = line.strip().partition(" ")
                found[name] = text.strip()
        return found

    def names(section: str) -> list[str]:
        return list(entries(section))

    assert "route-flow" in names("apps:")
    assert "  route-flow               Shortest-path routing: one path install per packet-in." in lines
    assert names("protocols:") == ["openflow", "openflow-b", "attendre", "pif", "buffer", "batch"]
    assert names("properties:") == [*registry.property_names(), "app-exception", "app-nondeterminism"]
    for name in ("no-forwarding-loops", "no-black-holes", "no-forgotten-packets", "direct-paths",
                 "strict-direct-paths", "one-packet-in-per-flow", "no-reordering", "app-exception",
                 "app-nondeterminism"):
        assert name in names("properties:")
    properties = entries("properties:")
    assert [name for name, text in properties.items() if text.endswith(" (default)")] == list(registry.DEFAULT_PROPERTIES)
    assert all(len(line) <= 100 for line in lines)
    # Descriptions are whole, never cut.
    assert properties["intended-paths"].endswith("method, e.g. energy-te)")
    assert "  app-exception            no app handler raises an exception (always checked)" in lines
    assert names("topologies:") == ["linear:N", "star:N", "paths:A,D", "FILE.graphml|.gml|other", "FILE.py:FUNCTION"]


# ---- apps that fail before the first event -----------------------------------------------------

def test_exception_in_switch_join_is_reported() -> None:
    result = run("verify", f"{APPS / 'join_raises.py'}:JoinRaises", "--keep-going")
    assert "VIOLATION 1: app-exception (always)" in result.stdout.splitlines()


def test_exception_in_initial_state_is_not_a_crash() -> None:
    result = run("verify", f"{APPS / 'join_raises.py'}:StateRaises")
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 1
    assert "StateRaises.initial_state raised ValueError: no initial state" in result.stdout


def test_the_json_report_narrates_a_bounded_number_of_violations(monkeypatch: pytest.MonkeyPatch) -> None:
    """With --keep-going a run may find tens of thousands of violations; the JSON narrates the
    first NARRATED_VIOLATIONS and the shortest of each property, and lists the others' events."""
    import dataclasses

    from nice_attendre.frontend import report
    from nice_attendre.frontend.api import verify

    monkeypatch.setattr(report, "NARRATED_VIOLATIONS", 2)
    found = verify("route-flow", topology="linear:2", packets=2, app_options={"bug": "forget-last-hop"},
                   keep_going=True)
    first = found.discoveries[0]
    longer = dataclasses.replace(first, trace=dataclasses.replace(first.trace, steps=first.trace.steps + (
        first.trace.steps[-1],)))  # a longer trace of the same property, found first: not the shortest
    many = dataclasses.replace(found, discoveries=(longer, longer, longer, first, longer))
    narrated: list[object] = []

    def narrate(state: object, event: object) -> list[str]:
        narrated.append(event)
        return [f"did {event}"]

    data = report.json_report(many, {}, narrate)
    assert [v["narrated"] for v in data["violations"]] == [True, True, False, True, False]
    assert data["violations_by_property"] == [{"property": first.property, "count": 5, "shortest": 3}]
    assert len(narrated) == 2 * len(longer.trace.steps) + len(first.trace.steps)
    for violation in data["violations"]:
        assert all(step["event"] for step in violation["trace"])
        assert all(bool(step["effects"]) == violation["narrated"] for step in violation["trace"])
