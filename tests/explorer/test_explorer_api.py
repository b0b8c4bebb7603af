"""The explorer's JSON API through a real ``nice-attendre explore`` server on an ephemeral
port (no browser): what it shows is what ``verify`` reports, bad requests get 4xx JSON
errors, a saved trace opens at its last step, Ctrl-C stops it cleanly."""
from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer_serving import Served
from conftest import child_preexec

BUGGY = ("route-flow", "-t", "linear:2", "--bug", "forget-last-hop")
#: The buggy route-flow's violating trace on linear:2: one event enabled at each step.
VIOLATING = "0.0.0.0.0.0"


def _verify(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    found = shutil.which("nice-attendre", path=str(Path(sys.executable).parent))
    assert found is not None
    return subprocess.run([found, *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300, preexec_fn=child_preexec())


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server = Served(*BUGGY, cwd=tmp_path_factory.mktemp("explore"))
    try:
        yield server
    finally:
        server.stop()


def test_info_names_the_run_its_properties_and_layout(served: Served) -> None:
    status, info = served.get("api/info")
    assert status == 200
    assert info["app"] == "route-flow (bug: forget-last-hop)"
    assert info["topology"].startswith("linear:2")
    assert [p["name"] for p in info["properties"]][:4] == ["no-forwarding-loops", "no-black-holes",
                                                          "no-forgotten-packets", "delivery"]
    nodes = {node["id"]: node for node in info["layout"]["nodes"]}
    assert set(nodes) == {"s1", "s2", "h1", "h2"}
    assert nodes["s1"]["x"] < nodes["s2"]["x"]  # a chain on a line, in order
    assert info["trace"] is None


def test_the_initial_state_and_its_events_narrated_as_traces(served: Served) -> None:
    status, state = served.get("api/state")
    assert status == 200 and state["path"] == "" and state["depth"] == 0 and not state["quiescent"]
    assert [e["summary"] for e in state["enabled"]] == ["h1 sends data h1#0 [h1->h2] to s1:1"]
    assert state["enabled"][0]["code"]["event"] == "HostSend"
    assert all(s["table"] == [] and s["buffered"] == [] for s in state["state"]["switches"])
    statuses = {p["name"]: p["status"] for p in state["properties"]}
    assert statuses["no-forgotten-packets"] == "pending" and statuses["termination"] == "execution"
    assert statuses["no-black-holes"] == "holds"


def test_what_is_in_flight_pending_and_held_along_the_trace(served: Served) -> None:
    _, after3 = served.get("api/state?path=0.0.0")
    s1 = after3["state"]["switches"][0]
    assert s1["pending"] == ["flow-mod/packet-out {exact h1->h2} -> output:2"]
    assert s1["buffered"] == ["data h1#0 [h1->h2]"]
    assert after3["enabled"][0]["summary"] == "s1 installs [prio 32768 {exact h1->h2} -> output:2]"
    _, after4 = served.get("api/state?path=0.0.0.0")
    link = next(link for link in after4["state"]["links"] if (link["a"], link["b"]) == ("s1:2", "s2:1"))
    assert link["up"] and link["to_b"] == ["data h1#0 [h1->h2]"] and link["to_a"] == []
    assert after4["state"]["switches"][0]["table"] == ["prio 32768 {exact h1->h2} -> output:2"]
    assert [step["lines"][0] for step in after4["steps"]][-1] == "s1 installs [prio 32768 {exact h1->h2} -> output:2]"
    assert after4["changed"] == ["s1", "s1:2-s2:1"]  # its table, its buffer, the packet it sent
    assert served.get("api/state")[1]["changed"] == []


def test_the_violation_as_verify_reports_it(served: Served, tmp_path: Path) -> None:
    status, state = served.get(f"api/state?path={VIOLATING}")
    assert status == 200 and state["quiescent"] and state["enabled"] == []
    props = {p["name"]: p for p in state["properties"]}
    assert props["no-forgotten-packets"]["status"] == "violated"
    assert props["no-forgotten-packets"]["explanation"] == "s2 still holds data h1#0 [h1->h2]"
    assert props["delivery"]["status"] == "violated"
    assert props["no-forwarding-loops"]["status"] == "holds"
    s2 = state["state"]["switches"][1]
    assert s2["id"] == "s2" and s2["buffered"] == ["data h1#0 [h1->h2]"]
    # the same trace, text and Mermaid, as verify writes
    mermaid = tmp_path / "t.mmd"
    report = _verify("verify", *BUGGY, "--trace-format", "mermaid", "--trace-out", str(mermaid), cwd=tmp_path)
    assert report.returncode == 1, report.stderr
    lines = report.stdout.splitlines()
    start = lines.index("  trace (6 events):") + 1
    assert state["trace_text"] == lines[start:start + len(state["trace_text"])]
    assert lines[start + len(state["trace_text"])] == ""
    assert state["mermaid"] + "\n" == mermaid.read_text()


@pytest.mark.parametrize(("query", "status", "words"), [
    ("api/state?path=0.1", 404, "step 2: no event 1"),
    ("api/state?path=0.0.0.0.0.0.0", 404, "quiescent"),
    ("api/state?path=a", 400, "malformed path"),
    ("api/state?path=0..1", 400, "malformed path"),
    ("api/state?path=-1", 400, "malformed path"),
    ("api/state?path=1e3", 400, "malformed path"),
    ("api/state?path=%C2%B2", 400, "malformed path"),  # a superscript two: a digit, not a decimal one
    ("api/state?path=9999999", 400, "malformed path"),
    ("api/state?path=" + ".".join(["0"] * 5001), 400, "too long"),
    ("api/state?path=0&path=0", 400, "one path"),
    ("api/state?state=0", 400, "unknown parameter"),
    ("api/nothing", 404, "no such page"),
    ("../../etc/passwd", 404, "no such page"),
])
def test_bad_requests_get_a_4xx_json_error(served: Served, query: str, status: int, words: str) -> None:
    got, answer = served.get(query)
    assert got == status and words in answer["error"], answer


def test_only_get(served: Served) -> None:
    status, answer = served.get("api/info", method="POST")
    assert status == 405 and "only answers GET" in answer["error"]


def test_the_page_and_its_files(served: Served) -> None:
    status, kind, body = served.raw("")
    assert status == 200 and kind.startswith("text/html") and b'src="app.js"' in body
    for name, wanted in (("app.js", "text/javascript"), ("style.css", "text/css")):
        status, kind, body = served.raw(name)
        assert status == 200 and kind.startswith(wanted) and body


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet="0123456789.-x%/?&=", max_size=30))
def test_any_path_is_an_answer_never_a_traceback(served: Served, text: str) -> None:
    from urllib.parse import quote

    status, answer = served.get("api/state?path=" + quote(text, safe=""))
    assert status in (200, 400, 404), (text, status, answer)
    assert (status == 200) == ("error" not in answer)


def test_a_link_down_is_shown(tmp_path: Path) -> None:
    server = Served("route-flow", "-t", "linear:2", "--fault", "link=1", cwd=tmp_path)
    try:
        _, state = server.get("api/state")
        downs = [e for e in state["enabled"] if "down" in e["summary"]]
        assert downs, [e["summary"] for e in state["enabled"]]
        _, after = server.get(f"api/state?path={downs[0]['index']}")
        assert [link["up"] for link in after["state"]["links"]].count(False) == 1
        assert after["state"]["faults_left"]["link"] == 0
    finally:
        server.stop()


def test_a_saved_trace_opens_at_its_last_step(tmp_path: Path) -> None:
    trace = tmp_path / "t.json"
    report = _verify("verify", *BUGGY, "--trace-format", "json", "--trace-out", str(trace), cwd=tmp_path)
    assert report.returncode == 1, report.stderr
    server = Served("--trace", str(trace), cwd=tmp_path)
    try:
        assert server.url.endswith(f"#path={VIOLATING}")
        _, info = server.get("api/info")
        assert info["trace"] == {"path": VIOLATING, "property": "no-forgotten-packets"}
        assert info["trace_file"] == str(trace)
        _, state = server.get(f"api/state?path={info['trace']['path']}")
        recorded = json.loads(trace.read_text())["narration"]
        assert [step["lines"] for step in state["steps"]] == recorded
        assert {p["name"]: p["status"] for p in state["properties"]}["no-forgotten-packets"] == "violated"
    finally:
        server.stop()


def test_a_trace_that_no_longer_replays_exits_4(tmp_path: Path) -> None:
    trace = tmp_path / "t.json"
    assert _verify("verify", *BUGGY, "--trace-format", "json", "--trace-out", str(trace), cwd=tmp_path).returncode == 1
    data = json.loads(trace.read_text())
    data["fingerprints"][3] = "0" * 16
    trace.write_text(json.dumps(data))
    proc = _verify("explore", "--trace", str(trace), "--no-browser", cwd=tmp_path)
    assert proc.returncode == 4 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "Error: the trace does not replay: step 3 (`controller handles a message from s1`) leads to a different "
        "state than recorded; the app or the model changed (see `nice-attendre replay`)"]


@pytest.mark.parametrize(("args", "words"), [
    ((), "give APP, or --trace FILE"),
    (("--trace", "missing.json"), "missing.json"),
    (("--trace", "t.json"), "t.json"),  # {}: not a saved trace
    (("--trace", "t.json", "--bug", "forget-last-hop"), "--bug cannot change it"),
    (("--trace", "t.json", "-n", "2"), "--packets cannot change it"),
    (("no-such-app",), "no-such-app"),
])
def test_bad_input_exits_2_before_serving(tmp_path: Path, args: tuple[str, ...], words: str) -> None:
    (tmp_path / "t.json").write_text("{}")
    proc = _verify("explore", *args, "--no-browser", cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == "" and "Traceback" not in proc.stderr and words in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_trace_naming_an_app_file_is_refused_unless_named(tmp_path: Path) -> None:
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps({
        "format": "nice-attendre-trace", "version": 1, "app": "x", "protocol": "openflow",
        "build": {"app": "evil.py:App", "topology": "linear:2", "packets": 1},
        "property": "delivery", "expectation": "at_quiescence", "reason": "", "events": [],
        "fingerprints": ["0" * 16], "narration": []}))
    (tmp_path / "evil.py").write_text("open('ran', 'w').close()\n")
    proc = _verify("explore", "--trace", str(trace), "--no-browser", cwd=tmp_path)
    assert proc.returncode == 2 and "evil.py" in proc.stderr, proc.stderr
    assert not (tmp_path / "ran").exists()


def test_a_port_in_use_exits_2(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = _verify("explore", *BUGGY, "--port", str(port), "--no-browser", cwd=tmp_path)
    assert proc.returncode == 2 and f"cannot serve on 127.0.0.1 port {port}" in proc.stderr, proc.stderr


@pytest.mark.parametrize(("signum", "code", "line"), [(signal.SIGINT, 130, "interrupted (Ctrl-C)"),
                                                      (signal.SIGTERM, 143, "interrupted (SIGTERM)")])
def test_a_signal_stops_the_server_cleanly(tmp_path: Path, signum: int, code: int, line: str) -> None:
    server = Served(*BUGGY, cwd=tmp_path)
    assert server.get("api/state?path=0")[0] == 200
    status, err = server.stop(signum)
    assert status == code and err.strip().splitlines() == [line], err
    with pytest.raises(OSError):
        server.raw("")


def test_a_host_that_moved_is_drawn_at_its_new_port(tmp_path: Path) -> None:
    server = Served("mac-learning", "-t", "linear:3", cwd=tmp_path)
    try:
        _, state = server.get("api/state")
        moves = [e for e in state["enabled"] if e["summary"].startswith("h2 moves from s3:2 to s3:3")]
        assert len(moves) == 1, [e["summary"] for e in state["enabled"]]
        _, after = server.get(f"api/state?path={moves[0]['index']}")
        links = {(link["a"], link["b"]): link for link in after["state"]["links"]}
        assert links[("s3:2", "h2")]["vacant"] and not links[("s3:3", "h2")]["vacant"]
        assert links[("s3:3", "h2")]["to_a"] == ["announce h2#0 [h2->ff:ff:ff:ff:ff:ff]"]
        assert after["state"]["in_flight_elsewhere"] == []
        assert next(h for h in after["state"]["hosts"] if h["id"] == "h2")["sent"] == [
            "announce h2#0 [h2->ff:ff:ff:ff:ff:ff]"]
    finally:
        server.stop()


def test_the_app_state_its_fields_and_what_the_last_step_changed(tmp_path: Path) -> None:
    server = Served("mac-learning", "-t", "linear:2", cwd=tmp_path)
    try:
        path: list[str] = []
        _, state = server.get("api/state")
        assert state["state"]["app"]["fields"] == [["ports", "()"], ["passed", "frozenset()"]]
        while not any(e["summary"].startswith("controller:") for e in state["enabled"]):
            path.append("0")
            _, state = server.get("api/state?path=" + ".".join(path))
        handle = next(e for e in state["enabled"] if e["summary"].startswith("controller:"))
        _, after = server.get("api/state?path=" + ".".join([*path, str(handle["index"])]))
        said = [line.removeprefix("app state: ") for line in handle["lines"] if line.startswith("app state: ")]
        assert said and after["state"]["app"]["changes"] == said
        assert after["state"]["app"]["fields"][0][0] == "ports" and after["state"]["app"]["fields"][0][1] != "()"
    finally:
        server.stop()


def test_a_handler_that_never_returns_is_an_app_exception_not_a_hung_page(tmp_path: Path) -> None:
    """Calls into the app run in the main thread, under verify's per-call time limit."""
    app = Path(__file__).resolve().parents[1] / "data" / "apps" / "hostile.py"
    server = Served(f"{app}:Swallows", "-t", "linear:2", "--max-handler-seconds", "0.5", cwd=tmp_path)
    try:
        status, state = server.get("api/state?path=0.0")
        assert status == 200
        assert state["enabled"][0]["summary"].startswith("ALERT app-exception: Swallows.on_packet_in did not "
                                                         "return within 0.5 s")
        _, after = server.get("api/state?path=0.0.0")
        props = {p["name"]: p for p in after["properties"]}
        assert props["app-exception"]["status"] == "violated" and props["app-exception"]["step"] == 3
    finally:
        server.stop()
