"""`nice-attendre delay`: printed report, claims, CSV, PNG, Monte Carlo determinism, errors."""
from __future__ import annotations

import csv
import json
import sys

import pytest
from click.testing import CliRunner

from nice_attendre.frontend.delay_cmd import delay

SMALL = ["--n-switches", "2", "--tau", "50us,250us", "--p-c", "1ms"]


def run(*args: str):
    return CliRunner().invoke(delay, list(args))


@pytest.fixture(scope="module")
def default_output() -> str:
    result = run()
    assert result.exit_code == 0, result.output
    return result.output


def test_registered_on_the_cli_group() -> None:
    from nice_attendre.frontend.cli import main

    result = CliRunner().invoke(main, ["delay", *SMALL])
    assert result.exit_code == 0, result.output
    assert "over N = 2 switches" in result.output


def test_default_report_header_and_summary_table(default_output: str) -> None:
    lines = default_output.splitlines()
    assert "grid: 4 controller delays x 46656 RTT combinations (6 values ^ 6 switches) = 186624 cases" in lines
    assert " p_c (ms)  mechanism       min   median     max     p80" in lines
    # pinned rows (ms): p_c = 0.1 ms and p_c = 1 ms
    assert "    0.100  OpenFlow      1.238    2.513   2.753   2.633" in lines
    assert "    0.100  OpenFlow-B    2.288    2.568   2.688   2.648" in lines
    assert "    0.100  Attendre      1.250    1.370   1.450   1.410" in lines
    assert "    1.000  Attendre      2.150    2.270   2.350   2.310" in lines
    assert "  p_c 0.100 ms: 57.8% of cases (26952 of 46656)" in lines


def test_default_claims_all_true_with_their_numbers(default_output: str) -> None:
    lines = default_output.splitlines()
    assert "  1. true  OpenFlow-B slower than Attendre by about 1 ms in every case" in lines
    assert any("gap T_b - T_a from 1.038 to 1.238 ms over 186624 cases" in line for line in lines)
    assert "  2. true  within each controller delay, worst Attendre faster than best OpenFlow-B" in lines
    assert "           p_c 0.100 ms: worst Attendre 1.450 ms < best OpenFlow-B 2.288 ms" in lines
    assert "  3. true  worst Attendre faster than roughly 60% of OpenFlow cases" in lines
    assert "           p_c 1.000 ms: 57.8% of OpenFlow cases slower than worst Attendre 2.350 ms" in lines
    assert "false" not in default_output


def test_csv_columns_rows_and_a_hand_computed_row(tmp_path) -> None:
    out = tmp_path / "d.csv"
    result = run(*SMALL, "--csv", str(out))
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(out.open()))
    assert list(rows[0]) == [
        "p_c_us", "case", "tau_1_us", "tau_2_us",
        "openflow_us", "openflow_b_us", "attendre_us", "redundant_packet_ins",
    ]
    assert len(rows) == 4
    # tau = (50, 50) us, p_c = 1 ms; L = 7.543 us plain, 10.007 us with the AC (link 1, Attendre).
    # S = 7.543 + 5 + 25 + 1000 = 1037.543; T^1 = S + 1000 + 25 + 5 + 7.543 = 2075.086
    # OpenFlow: 1037.543 < 25 + 1000 is false -> 2075.086 + 5 + 7.543 = 2087.629
    # OpenFlow-B: 3 * 7.543 + 10 + 5 + 50 + 1000 + 1000 + (50 + 1000) = 3137.629
    # Attendre: 5 + 7.543 + 1037.543 + max(25 + 1000 + 5 + 10.007, 25 + 1000) = 2090.093
    first = rows[0]
    assert (first["p_c_us"], first["tau_1_us"], first["tau_2_us"]) == ("1000.0000", "50.0000", "50.0000")
    assert float(first["openflow_us"]) == pytest.approx(2087.629, abs=1e-4)
    assert float(first["openflow_b_us"]) == pytest.approx(3137.629, abs=1e-4)
    assert float(first["attendre_us"]) == pytest.approx(2090.093, abs=1e-4)
    assert first["redundant_packet_ins"] == "0"
    # tau = (50, 250): 1037.543 < 125 + 1000, a redundant packet-in costing 250 + 1000 + 1000 + 5
    second = rows[1]
    assert second["redundant_packet_ins"] == "1"
    assert float(second["openflow_us"]) == pytest.approx(2087.629 + 2255, abs=1e-4)


def test_monte_carlo_same_seed_same_output(tmp_path) -> None:
    args = ["--monte-carlo", "300", "--n-switches", "4"]
    a, b = run(*args, "--seed", "5"), run(*args, "--seed", "5")
    c = run(*args, "--seed", "6")
    assert a.exit_code == b.exit_code == c.exit_code == 0, a.output
    assert a.output == b.output
    assert a.output != c.output
    assert "monte-carlo: 4 controller delays x 300 samples = 1200 cases, seed 5" in a.output
    assert "(checked on the Monte Carlo samples" in a.output


def test_config_file_then_options_override(tmp_path) -> None:
    cfg = tmp_path / "p.toml"
    cfg.write_text('n_switches = 3\ntau = ["50us", "250us"]\np_c = "0.2ms:1ms:2"\n')
    result = run("--config", str(cfg), "--p-c", "0.5ms")
    assert result.exit_code == 0, result.output
    assert "grid: 1 controller delays x 8 RTT combinations (2 values ^ 3 switches) = 8 cases" in result.output
    assert "varied (us): p_c = 500; tau per switch = 50, 250" in result.output


@pytest.mark.parametrize(
    ("content", "suffix", "message"),
    [
        ({"p_cc": "1ms"}, ".json", "unknown key 'p_cc'; did you mean 'p_c'?"),
        ({"p_sc": "-1ms"}, ".json", "p_sc: delay must not be negative"),
        ({"n_switches": "six"}, ".json", "n_switches: expected a positive integer"),
        ({"tau": True}, ".json", "tau: expected a duration"),
        ('p_sc = [1', ".toml", "is not valid TOML"),
    ],
)
def test_bad_config_is_a_one_line_usage_error(tmp_path, content, suffix: str, message: str) -> None:
    cfg = tmp_path / f"bad{suffix}"
    cfg.write_text(content if isinstance(content, str) else json.dumps(content))
    result = run("--config", str(cfg))
    assert result.exit_code == 2
    assert isinstance(result.exception, SystemExit)  # no traceback
    error = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and message in error[0] and "--config" in error[0]


def test_bad_option_value_names_the_option() -> None:
    result = run("--p-sc", "-3ms")
    assert result.exit_code == 2
    assert "Invalid value for --p-sc: p_sc: delay must not be negative" in result.output
    result = run("--g", "fast")
    assert result.exit_code == 2 and "--g" in result.output and "cannot read 'fast'" in result.output


def test_oversized_grid_is_a_usage_error() -> None:
    result = run("--n-switches", "12")
    assert result.exit_code == 2
    assert "6^12 = 2176782336 RTT combinations" in result.output


def test_plot_without_matplotlib_is_a_clean_error(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
    result = run(*SMALL, "--plot", str(tmp_path / "d.png"))
    assert result.exit_code == 2
    assert isinstance(result.exception, SystemExit)
    assert "Error: --plot needs matplotlib" in result.output
    assert not (tmp_path / "d.png").exists()


def test_plot_writes_a_png(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "d.png"
    result = run(*SMALL, "--p-c", "0.1ms,1ms", "--plot", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote delay CDFs to {out}" in result.output
