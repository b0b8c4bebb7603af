"""Issue 34, section 0: user files are loaded as they are at each call, and a report says
which version it checked.

``verify("file.py:Class")`` used to import a file once per process and serve that module
ever after, so a test that rewrote an app (fixed, then buggy) kept checking the first
version and kept passing. Each edit here keeps the file's size and modification time, so
only its content tells the versions apart.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from click.testing import CliRunner

from nice_attendre import verify
from nice_attendre.frontend.cli import main
from nice_attendre.importing import Source, import_target

FIXED = """from nice_attendre.apps.route_flow import RouteFlow


class Edited(RouteFlow):
    def __init__(self) -> None:
        super().__init__(bug=None)  # same length as the buggy line, padded: ########
"""
BUGGY = """from nice_attendre.apps.route_flow import RouteFlow


class Edited(RouteFlow):
    def __init__(self) -> None:
        super().__init__(bug="forget-last-hop")  # the last switch never gets its entry
"""


def rewrite(path: Path, text: str) -> None:
    """Replace ``path``'s content, keeping its modification time (an edit within the
    file system's clock resolution, or a checkout that restores times)."""
    stat = path.stat()
    path.write_text(text)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_verify_checks_the_app_file_as_it_is_now(tmp_path: Path) -> None:
    app = tmp_path / "edited_app.py"
    app.write_text(FIXED)
    spec = f"{app}:Edited"
    first = verify(spec, topology="linear:2")
    assert first.ok, first.discoveries
    assert first.sources == (Source("app file", str(app.resolve()), sha256(FIXED)),)

    rewrite(app, BUGGY)
    second = verify(spec, topology="linear:2")
    assert second.verdict == "violated"  # was "ok": the first version was checked again
    assert second.sources == (Source("app file", str(app.resolve()), sha256(BUGGY)),)

    rewrite(app, FIXED)
    assert verify(spec, topology="linear:2").ok  # and back


def test_the_same_content_is_the_same_module(tmp_path: Path) -> None:
    """An unchanged file is not executed again (module state such as a log of calls survives
    between calls, as tests of nondeterministic apps rely on), and an edited one is."""
    app = tmp_path / "counted.py"
    app.write_text("LOADS = []\nLOADS.append(1)\n")
    module = import_target(str(app), "app", Exception)
    assert import_target(str(app), "app", Exception) is module and module.LOADS == [1]
    rewrite(app, "LOADS = []\nLOADS.append(2)\n")
    edited = import_target(str(app), "app", Exception)
    assert edited is not module and edited.LOADS == [2]


def test_the_cli_reports_the_digest_of_each_user_file(tmp_path: Path) -> None:
    app, prop, factory = tmp_path / "app.py", tmp_path / "props.py", tmp_path / "topo.py"
    app.write_text(FIXED)
    prop.write_text("from nice_attendre.properties.custom import always\n\n"
                    "EDITED = always('edited', lambda view: True, 'holds until edited')\n")
    factory.write_text("import networkx as nx\n\n\ndef line():\n    return nx.path_graph(['h1', 's1', 's2', 'h2'])\n")
    out = tmp_path / "r.json"
    runner = CliRunner()

    def run() -> tuple[int, str, list[dict[str, str]]]:
        result = runner.invoke(main, ["verify", f"{app}:Edited", "-t", f"{factory}:line", "-p",
                                      f"{prop}:EDITED", "--json", str(out)])
        return result.exit_code, result.stdout, json.loads(out.read_text())["sources"]

    code, stdout, sources = run()
    assert code == 0, stdout
    expected = [(str(app.resolve()), "app file", FIXED), (str(factory.resolve()), "topology factory file",
                                                          factory.read_text()),
                (str(prop.resolve()), "property file", prop.read_text())]
    assert sorted((s["path"], s["kind"], s["sha256"]) for s in sources) == sorted(
        (path, kind, sha256(text)) for path, kind, text in expected)
    assert f"  source         app file {app.resolve()} (sha256 {sha256(FIXED)[:16]})" in stdout.splitlines()

    rewrite(prop, prop.read_text().replace("lambda view: True", "lambda view: 1 > 2"))
    rewrite(app, BUGGY)
    rewrite(factory, factory.read_text().replace("'s2', 'h2'", "'s2', 's3', 'h2'"))
    code, stdout, sources = run()
    assert code == 1, stdout  # the three edits are seen in the same process
    lines = stdout.splitlines()
    assert lines[-1] == "FAILED: edited"
    assert "  app            route-flow (bug: forget-last-hop)" in lines
    assert f"  topology       {factory}:line (3 switches, hosts h1, h2)" in lines
    assert {s["kind"]: s["sha256"] for s in sources}["app file"] == sha256(BUGGY)


def test_topology_and_scenario_files_are_named_with_their_digest(tmp_path: Path) -> None:
    edges = tmp_path / "line.edges"
    edges.write_text("h1 s1\ns1 h2\n")
    result = verify("route-flow", topology=str(edges))
    assert result.ok
    assert result.sources == (Source("topology file", str(edges.resolve()), sha256("h1 s1\ns1 h2\n")),)
    assert verify("route-flow", topology="linear:2").sources == ()  # nothing of the user's
