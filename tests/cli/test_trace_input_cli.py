"""``nice-attendre replay`` validates the whole trace before it builds anything: a trace
nested thousands deep, an event type that is not a string, app options given as a string,
a build option, fingerprint or narration of the wrong type is one line and exit 2, never
"internal error" (exit 70). A hypothesis fuzz test mutates a real saved trace (values of
other JSON types, deep nesting, dropped keys, cut text) and checks the exit code is 0-4 and
no traceback is printed."""
from __future__ import annotations

import copy
import functools
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nice_attendre.frontend.cli import main
from nice_attendre.frontend.exit_codes import ExitCode

MAC_BUG = ["verify", "mac-learning", "-t", "linear:2", "-n", "2", "--bug", "delayed-direct-path", "--shortest"]


@functools.lru_cache(maxsize=1)
def saved_text() -> str:
    """The JSON text of a real saved trace (18 events), made once."""
    out = Path(tempfile.mkdtemp()) / "trace.json"
    result = CliRunner().invoke(main, [*MAC_BUG, "--trace-out", str(out), "--trace-format", "json"])
    assert result.exit_code == ExitCode.VIOLATION, result.output
    return out.read_text()


def replay(tmp: Path, text: str, *args: str) -> Any:
    path = tmp / "trace.json"
    path.write_text(text)
    return CliRunner().invoke(main, ["replay", "-q", *args, str(path)])


def no_crash(result: Any) -> None:
    """Exit 0-4, and no traceback or internal error on either stream."""
    assert result.exit_code in (0, 1, 2, 3, 4), (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output


def edited(**changes: Any) -> str:
    """The saved trace with ``changes`` applied (``build__app_options=...`` for a build option)."""
    data = json.loads(saved_text())
    for key, value in changes.items():
        place = data
        *parents, last = key.split("__")
        for parent in parents:
            place = place[int(parent)] if isinstance(place, list) else place[parent]
        place[int(last) if isinstance(place, list) else last] = value
    return json.dumps(data)


def test_the_saved_trace_reproduces(tmp_path: Path) -> None:
    result = replay(tmp_path, saved_text())
    assert result.exit_code == ExitCode.VIOLATION, result.output


@pytest.mark.parametrize("text, message", [
    ("[" * 100_000 + "]" * 100_000, "is nested too deeply (a trace has at most 16 levels)"),
    (edited(events__0=[[[[[[[[[[[[[[[[[["deep"]]]]]]]]]]]]]]]]]]), "is nested too deeply"),
    ('{"format": "nice-attendre-trace", "version": ' + "9" * 5000 + "}", "is not a JSON trace nice-attendre can read"),
    (edited(events__0__event=5), "event 1 must be an object with an \"event\" name (a string), not an object whose "
                                 "\"event\" is a number"),
    (edited(events__0=["HostSend"]), "event 1 must be an object with an \"event\" name (a string), not an array"),
    (edited(events__2__dpid={"a": 1}), "event 3 field 'dpid' must be null, a string, a whole number, a boolean or an "
                                       "array of them, not an object"),
    (edited(events__2__dpid=1.5), "event 3 field 'dpid' must be null"),
    (edited(build__app_options="bug=delayed-direct-path"), "build.app_options must be an object, not a string"),
    (edited(build__app_options={"not a name": 1}), "build.app_options: 'not a name' is not an option name"),
    (edited(build__packets="2"), "build.packets must be a whole number, not a string"),
    (edited(build__packets=True), "build.packets must be a whole number, not a boolean"),
    (edited(build__properties=[1]), "build.properties must be a string or an array of strings, not an array"),
    (edited(build__flows={"h1": "h2"}), "build.flows must be a string or an array of strings, not an object"),
    (edited(build__faults={"loss": "1"}), "build.faults must be an object of whole numbers, not an object"),
    (edited(build__threaded_controller="yes"),
     'build.threaded_controller must be a boolean, "per-switch" or "any", not a string'),
    (edited(build__topology=["linear:2"]), "build.topology must be a string, not an array"),
    (edited(build__app=["mac-learning"]), "build.app is missing or not a string"),
    (edited(version=True), "trace format version True is not supported"),
    (edited(version=1.0), "trace format version 1.0 is not supported"),
    (edited(property=["strict-direct-paths"]), "field 'property' is missing or not a string"),
    (edited(app={"name": "x"}), "field 'app' must be a string, not an object"),
    (edited(fingerprints__3=12), "fingerprint 3 must be 16 hex digits, not a number"),
    (edited(fingerprints__3="xyz"), "fingerprint 3 must be 16 hex digits, not 'xyz'"),
    (edited(narration="h1 sends"), "field 'narration' must be an array of arrays of strings"),
    (edited(narration=[[1]]), "field 'narration' must be an array of arrays of strings"),
], ids=lambda v: None if v.startswith(("{", "[")) else v[:40])
def test_malformed_traces_are_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    result = replay(tmp_path, text)
    no_crash(result)
    assert result.exit_code == ExitCode.INPUT, result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith("Error: trace ") and message in line, line


@pytest.mark.parametrize("change, message", [
    ({"events__0__stream": ["s1", True, None]}, "event 1: HostSend.stream must be int, got ('s1', True, None)"),
    ({"events__1__dpid": "1"}, "event 2: SwitchProcessPacket.dpid must be int, got '1'"),
    ({"events__1__port": True}, "event 2: SwitchProcessPacket.port must be int, got True"),
    ({"events__0__host": None}, "event 1: HostSend.host must be str, got None"),
])
def test_event_fields_of_another_type_than_the_class_says_are_one_line_errors(
        tmp_path: Path, change: dict[str, Any], message: str) -> None:
    result = replay(tmp_path, edited(**change))
    no_crash(result)
    assert result.exit_code == ExitCode.INPUT, result.output
    assert result.output.strip().splitlines() == [f"Error: {message}"]


def test_build_options_of_the_right_type_but_bad_value_are_input_errors(tmp_path: Path) -> None:
    for change in ({"build__packets": -1}, {"build__command_order": "random"}, {"build__faults": {"loss": -1}},
                   {"build__protocol": "no-such-protocol"}, {"build__sender": "h9"}, {"build__flows": ["h1->h9"]},
                   {"build__app_options": {"bug": 7}}, {"build__properties": "no-such-property"},
                   {"property": "no-such-property"}, {"events__1__event": "NoSuchEvent"},
                   {"events__1__colour": 1}):
        result = replay(tmp_path, edited(**change))
        no_crash(result)
        assert result.exit_code == ExitCode.INPUT, (change, result.output)


# ---- fuzzing ---------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 2**70) | st.floats(allow_nan=True) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=5)


def paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in ``data`` (keys and indices from the top)."""
    found = [prefix]
    if isinstance(data, dict):
        for key, value in data.items():
            found += paths(value, (*prefix, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found += paths(value, (*prefix, index))
    return found


def mutate(data: Any, where: tuple[Any, ...], action: str, value: Any, depth: int) -> Any:
    """``data`` with the value at ``where`` replaced by ``value``, dropped, or nested
    ``depth`` arrays deep (the whole document: replaced, or put in an array)."""
    if not where:
        return value if action == "replace" else [data]
    data = copy.deepcopy(data)
    *parents, last = where
    place = data
    for key in parents:
        place = place[key]
    if action == "replace":
        place[last] = value
    elif action == "drop":
        del place[last]
    else:
        wrapped = place[last]
        for _ in range(depth):
            wrapped = [wrapped]
        place[last] = wrapped
    return data


@st.composite
def mutated_traces(draw: st.DrawFn) -> str:
    data = json.loads(saved_text())
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(paths(data)))
        action = draw(st.sampled_from(["replace", "replace", "drop", "nest"]))
        data = mutate(data, where, action, draw(JSON_VALUES), draw(st.sampled_from([1, 2, 20])))
    text = json.dumps(data)
    if draw(st.integers(0, 4)) == 0:  # nest one value thousands deep (as text: Python would recurse)
        depth = draw(st.sampled_from([100, 3000, 100_000]))
        text = text.replace('"h1"', "[" * depth + '"h1"' + "]" * depth, 1)
    if draw(st.integers(0, 9)) == 0:  # sometimes cut the text short
        text = text[:draw(st.integers(0, len(text)))]
    return text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=mutated_traces())
def test_fuzzed_traces_never_crash(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        no_crash(replay(Path(folder), text))


SCALARS = st.none() | st.booleans() | st.integers(-2, 70) | st.sampled_from(["", "h1", "h2", "h9", "s1", "x"])
FIELD_VALUES = SCALARS | st.lists(SCALARS, max_size=3) | st.lists(st.lists(SCALARS, max_size=2), max_size=2)
#: Values of the right JSON type for each build option (so that the replay goes past the schema).
BUILD_VALUES = {
    "app": st.sampled_from(["mac-learning", "route-flow", "energy-te", "", "x"]),
    "app_options": st.dictionaries(st.sampled_from(["bug", "threshold", "x"]), SCALARS, max_size=2),
    "topology": st.sampled_from(["linear:1", "linear:2", "star:3", "paths:2,3", "linear:0", "", "linear:x"]),
    "packets": st.integers(-1, 3),
    "flows": st.lists(st.sampled_from(["h1->h2", "h2->h1:packets=2", "h1->broadcast:target=h2", "h1->h1", "x"]),
                      max_size=2),
    "protocol": st.sampled_from(["openflow", "openflow-b", "attendre", "pif:action=drop", "buffer:capacity=x", "x"]),
    "properties": st.lists(st.sampled_from(["delivery", "no-forgotten-packets", "strict-direct-paths", "x"]),
                           max_size=2),
    "sender": st.sampled_from(["h1", "h2", "h9"]),
    "receiver": st.sampled_from(["h1", "h2", "h9"]),
    "command_order": st.sampled_from(["fifo", "any", "x"]),
    "threaded_controller": st.one_of(st.booleans(), st.sampled_from(["per-switch", "any"])),
    "faults": st.dictionaries(st.sampled_from(["loss", "link", "x"]), st.integers(-1, 2), max_size=2)
    | st.fixed_dictionaries({"link": st.sampled_from(["1:switches", "1:hosts", "2:all", "1:x", "x:hosts"])}),
    "count_load": st.booleans(),
}


@st.composite
def well_typed_traces(draw: st.DrawFn) -> str:
    """The saved trace with build options and event fields replaced by values of the right
    JSON type (so that the replay gets past the schema and into the build and the events)."""
    data = json.loads(saved_text())
    for key in draw(st.lists(st.sampled_from(sorted(BUILD_VALUES)), max_size=3, unique=True)):
        data["build"][key] = draw(BUILD_VALUES[key])
    for _ in range(draw(st.integers(0, 3))):
        event = data["events"][draw(st.integers(0, len(data["events"]) - 1))]
        field = draw(st.sampled_from(sorted(event)))
        event[field] = draw(st.sampled_from(["HostSend", "SwitchProcessPacket", "ControllerHandle", "HostReceive",
                                             "SwitchProcessCommand"])) if field == "event" else draw(FIELD_VALUES)
    return json.dumps(data)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=well_typed_traces())
def test_fuzzed_well_typed_traces_never_crash(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        no_crash(replay(Path(folder), text))
