"""A ``--scenario`` TOML file is validated as it is read: a value of the wrong TOML type
(``ip_src`` as a table or an array, a host name as a number), arrays or tables nested
thousands deep, a number of thousands of digits are one line and exit 2, never "internal
error" (exit 70). A hypothesis fuzz test mutates a real scenario file and checks the exit
code is 0-4 and no traceback is printed."""
from __future__ import annotations

import datetime
import json
import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nice_attendre.frontend.cli import main
from nice_attendre.frontend.exit_codes import ExitCode

SCENARIO = Path(__file__).resolve().parent.parent / "data" / "scenarios" / "web_and_dns.toml"
FLOW = '[[flow]]\nfrom = "h1"\nto = "h2"\n'
#: The search is cut short: a scenario that is valid is run, but need not be explored.
RUN = ["verify", "route-flow", "-t", "linear:2", "--max-transitions", "300", "--scenario"]


def verify(folder: Path, text: str) -> Any:
    path = folder / "scenario.toml"
    path.write_text(text, encoding="utf-8")
    return CliRunner().invoke(main, [*RUN, str(path)])


def no_crash(result: Any) -> None:
    assert result.exit_code in (0, 1, 2, 3, 4), (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output


@pytest.mark.parametrize("text, message", [
    (FLOW + "ip_src = {a = 1}\n", "ip_src must be a string, got a table"),
    (FLOW + "ip_dst = ['10.0.0.9']\n", "ip_dst must be a string, got an array"),
    (FLOW + "ip_dst = 'h2'\n", "ip_dst must be an IPv4 address such as 10.0.0.9, got 'h2'"),
    (FLOW + "proto = ['tcp']\n", "proto must be a string, got an array"),
    (FLOW + "reply = {x = 1}\n", "reply must be a string, got a table"),
    (FLOW + "target = 2\n", "target must be a string, got int 2"),
    ('[[flow]]\nfrom = 1\nto = "h2"\n', "flow 1: 'from' must be a host name (a string), got int 1"),
    ('[[flow]]\nfrom = "h1"\nto = {h = 2}\n', "flow 1: 'to' must be a host name (a string), got a table"),
    (FLOW + '[[move]]\nhost = ["h2"]\nto = "s2"\n', "move 1: 'host' must be a name (a string), got an array"),
    (FLOW + "packets = " + "9" * 5000 + "\n", "is not valid TOML"),
    ("x = " + "[" * 5000 + "]" * 5000 + "\n", "nests arrays or tables too deeply"),
    ("x = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n", "nests arrays or tables too deeply"),
    (FLOW + "sport = " + "[" * 5000 + "]" * 5000 + "\n", "nests arrays or tables too deeply"),
    ("[" + ".".join(["a"] * 5000) + "]\n", "unknown section 'a'"),
])
def test_bad_scenario_values_are_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    result = verify(tmp_path, text)
    no_crash(result)
    assert result.exit_code == ExitCode.INPUT, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("Error: ") and message in line, line


def test_the_real_scenario_runs(tmp_path: Path) -> None:
    result = verify(tmp_path, SCENARIO.read_text())
    assert result.exit_code in (ExitCode.OK, ExitCode.VIOLATION, ExitCode.INCOMPLETE), result.output


# ---- fuzzing ---------------------------------------------------------------------------

def toml_value(value: Any) -> str:
    """``value`` as an inline TOML value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, str)):
        return json.dumps(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(map(toml_value, value)) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


def toml_document(data: dict[str, list[dict[str, Any]]]) -> str:
    """A scenario file: arrays of tables ``[[flow]]`` and ``[[move]]`` (other top-level
    values inline)."""
    lines = []
    for section, tables in data.items():
        if isinstance(tables, list) and all(isinstance(t, dict) for t in tables):
            for table in tables:
                lines.append(f"[[{json.dumps(section)}]]")
                lines += [f"{json.dumps(k)} = {toml_value(v)}" for k, v in table.items()]
        else:
            lines.insert(0, f"{json.dumps(section)} = {toml_value(tables)}")
    return "\n".join(lines) + "\n"


PLAUSIBLE = st.sampled_from(["h1", "h2", "s2", "tcp", "udp", "echo", "none", "broadcast"]) | st.integers(0, 3)
ANY_VALUE = st.recursive(
    st.booleans() | st.integers(-5, 2000) | st.floats() | st.text(max_size=6)
    | st.sampled_from(["h1", "h2", "h3", "s1", "s2", "tcp", "udp", "echo", "none", "10.0.0.9", "broadcast"])
    | st.dates() | st.times(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=2),
    max_leaves=4)
#: Mostly values a scenario could have (so that some files get past the checks into a search).
TOML_VALUES = st.one_of(PLAUSIBLE, PLAUSIBLE, ANY_VALUE)
KEYS = st.sampled_from(["from", "to", "packets", "proto", "sport", "dport", "reply", "target", "ip_src", "ip_dst",
                        "host", "colour"])


@st.composite
def mutated_scenarios(draw: st.DrawFn) -> str:
    import tomllib

    data = tomllib.loads(SCENARIO.read_text())
    for _ in range(draw(st.integers(1, 3))):
        section = draw(st.sampled_from(["flow", "move"]))
        tables = data.setdefault(section, [])
        action = draw(st.sampled_from(["replace", "replace", "replace", "add", "drop", "table", "section"]))
        if action == "section":
            data[section] = draw(TOML_VALUES)
            continue
        if not isinstance(tables, list) or not tables:
            continue
        table = tables[draw(st.integers(0, len(tables) - 1))]
        if not isinstance(table, dict):
            continue
        if action == "table":
            tables.append({})
        elif action == "drop" and table:
            del table[draw(st.sampled_from(sorted(table)))]
        else:
            key = draw(KEYS) if action == "add" or not table else draw(st.sampled_from(sorted(table)))
            table[key] = draw(TOML_VALUES)
    text = toml_document(data)
    if draw(st.integers(0, 5)) == 0:  # nest a value thousands deep
        depth = draw(st.sampled_from([50, 3000]))
        text = text.replace('"h1"', "[" * depth + '"h1"' + "]" * depth, 1)
    if draw(st.integers(0, 9)) == 0:  # cut the text short
        text = text[:draw(st.integers(0, len(text)))]
    return text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=mutated_scenarios())
def test_fuzzed_scenarios_never_crash(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        no_crash(verify(Path(folder), text))
