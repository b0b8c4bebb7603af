"""Topology files (edge list, GML, GraphML) are an input boundary too: whatever their
content, ``verify -t FILE`` exits 0-4 with no traceback, never "internal error" (exit 70).
A hypothesis fuzz test mutates the test data's graph files (tokens inserted, lines dropped
or repeated, brackets nested thousands deep, text cut short)."""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nice_attendre.frontend.cli import main
from nice_attendre.frontend.exit_codes import ExitCode

TOPOLOGIES = Path(__file__).resolve().parent.parent / "data" / "topologies"
FILES = {name: (TOPOLOGIES / name).read_text() for name in ("diamond.edges", "tree.gml", "diamond_hosts.graphml")}
#: The search is cut short: a graph that is valid is explored only a little.
RUN = ["verify", "route-flow", "--max-transitions", "200", "-t"]

TOKENS = st.sampled_from([
    "h1", "h2", "h3", "s1", "s9", "s1 s1", "h1 h2", "host", "1", "-1", "1e400", "nan", "[", "]", "[ [ [", "\"",
    "'", "#", "\n", "\t", "\x00", "\u00e9", "\x1b[2J", "node [ id 0 label \"h1\" ]", "edge [ source 0 target 9 ]",
    "<", ">", "</graph>", "<node id=\"h1\"/>", "<edge source=\"h1\" target=\"h1\"/>",
    "<data key=\"host\">maybe</data>", "<!DOCTYPE x>", "&amp;", "&x;", "<![CDATA[", "directed 1", "multigraph 1",
    "graph [", "label", "id", "9" * 400])


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, str]:
    name = draw(st.sampled_from(sorted(FILES)))
    text = FILES[name]
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "insert", "delete", "repeat", "nest"]))
        if action == "insert":
            text = text[:at] + draw(TOKENS) + text[at:]
        elif action == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 40)):]
        elif action == "repeat":
            lines = text.splitlines(keepends=True)
            if lines:
                line = lines[draw(st.integers(0, len(lines) - 1))]
                text = text[:at] + line * draw(st.sampled_from([2, 50])) + text[at:]
        else:
            depth = draw(st.sampled_from([10, 3000]))
            opening, closing = ("<a>", "</a>") if name.endswith(".graphml") else ("x [ ", " ]")
            text = text[:at] + opening * depth + closing * depth + text[at:]
    if draw(st.integers(0, 9)) == 0:
        text = text[:draw(st.integers(0, len(text)))]
    return name, text


def verify(folder: Path, name: str, text: str) -> Any:
    path = folder / name
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    return CliRunner().invoke(main, [*RUN, str(path)])


def no_crash(result: Any) -> None:
    assert result.exit_code in (0, 1, 2, 3, 4), (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output


@pytest.mark.parametrize("name", sorted(FILES))
def test_the_test_data_graphs_run(tmp_path: Path, name: str) -> None:
    result = verify(tmp_path, name, FILES[name])
    assert result.exit_code in (ExitCode.OK, ExitCode.VIOLATION, ExitCode.INCOMPLETE), result.output


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=mutated())
def test_fuzzed_topology_files_never_crash(case: tuple[str, str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        no_crash(verify(Path(folder), *case))
