"""``nice-attendre delay --config FILE`` is an input boundary: whatever the JSON or TOML
holds, the exit code is 0-4 and no traceback is printed, never "internal error" (exit 70).
A path of more switches than numpy has array dimensions (65 with one tau value) and a
number of switches too large for an index were internal errors; a billion switches with
one tau value ran out of memory."""
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
from nice_attendre.models.delay import DelayParams

KEYS = DelayParams.keys()


def delay(folder: Path, config: dict[str, Any], suffix: str = ".json") -> Any:
    path = folder / f"config{suffix}"
    path.write_text(json.dumps(config) if suffix == ".json" else toml_document(config))
    return CliRunner().invoke(main, ["delay", "--config", str(path)])


def no_crash(result: Any) -> None:
    assert result.exit_code in (0, 1, 2, 3, 4), (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output


@pytest.mark.parametrize("n", [64, 65, 1000])
def test_a_long_path_with_one_tau_value_is_computed(tmp_path: Path, n: int) -> None:
    result = delay(tmp_path, {"n_switches": n, "tau": "50us", "p_c": "1ms"})
    assert result.exit_code == ExitCode.OK, result.output
    assert f"(1 values ^ {n} switches) = 1 cases" in result.output


@pytest.mark.parametrize("n", [1001, 10**9, 185598214983207780352])
def test_more_switches_than_a_path_may_have_are_refused(tmp_path: Path, n: int) -> None:
    result = delay(tmp_path, {"n_switches": n, "tau": "50us"})
    no_crash(result)
    assert result.exit_code == ExitCode.INPUT, result.output
    assert f"Error: Invalid value for --n-switches: {n:,} switches on the path is more than 1,000" in result.output


# ---- fuzzing ---------------------------------------------------------------------------

def toml_value(value: Any) -> str:
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


def toml_document(config: dict[str, Any]) -> str:
    return "".join(f"{json.dumps(key)} = {toml_value(value)}\n" for key, value in config.items())


PLAUSIBLE = (st.integers(0, 3) | st.sampled_from(["50us", "1ms", "0.2ms:1ms:2", "-1ms", "0", "1e400us", "x", ""])
             | st.lists(st.sampled_from(["50us", "250us", "1ms", 0.001, 0]), max_size=3))
ANY_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10**30) | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
    max_leaves=4)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=st.dictionaries(st.sampled_from([*KEYS, "x"]), st.one_of(PLAUSIBLE, ANY_VALUE), max_size=4),
       suffix=st.sampled_from([".json", ".toml"]))
def test_fuzzed_delay_configs_never_crash(config: dict[str, Any], suffix: str) -> None:
    if suffix == ".toml" and "null" in json.dumps(config):
        suffix = ".json"  # TOML has no null
    with tempfile.TemporaryDirectory() as folder:
        no_crash(delay(Path(folder), config, suffix))
