"""`nice-attendre compare` and `nice-attendre bench`: tables, ratios, load, JSON, CSV, caps,
skipped cells, exit codes and one-line errors; the paper's claims (slow)."""
from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import nice_attendre.frontend.api
from nice_attendre.frontend.cli import main
from nice_attendre.frontend.compare import LOAD_NOTE
from nice_attendre.errors import Interrupted

#: Properties whose monitors keep no history, so the counts are those of the bare state space.
PLAIN_PROPERTIES = ["-p", "no-forwarding-loops", "-p", "no-black-holes", "-p", "no-forgotten-packets"]
LINEAR_3_2 = ["compare", "route-flow", "-t", "linear:3", "-n", "2", *PLAIN_PROPERTIES]
#: protocol -> (transitions, unique states, revisits, max depth) for route-flow, linear:3, 2 packets
COUNTS = {"openflow": (13107, 4934, 8174, 40), "openflow-b": (2131, 864, 1268, 50), "attendre": (430, 185, 246, 26)}
#: protocol -> load counter -> (min, max) per complete execution, same scenario
LOAD = {
    "openflow": {"packet_ins": (2, 12), "flow_mods": (6, 24), "packet_outs": (0, 0), "barriers": (0, 0)},
    "openflow-b": {"packet_ins": (2, 4), "flow_mods": (6, 12), "packet_outs": (0, 0), "barriers": (8, 16)},
    "attendre": {"packet_ins": (2, 2), "flow_mods": (6, 6), "packet_outs": (0, 0), "barriers": (0, 0)},
}
COMPARE_HEADER = ("protocol    transitions  unique states  revisits  max depth  time (s)  openflow/this    search"
                  "  violations")


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def table(output: str) -> tuple[str, dict[str, list[str]]]:
    """The compare table: its header line and protocol -> the row's cells, the time left out."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("protocol "))
    rows = {}
    for line in lines[start + 1:]:
        if not line.strip():
            break
        cells = re.split(r"\s{2,}", line.strip())
        rows[cells[0]] = cells[1:5] + cells[6:]
    return lines[start], rows


def one_line_error(result: Result) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# ---- compare ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, dict]:
    out = tmp_path_factory.mktemp("compare") / "compare.json"
    result = run(*LINEAR_3_2, "--json", str(out))
    return result, json.loads(out.read_text())


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, dict]:
    out = tmp_path_factory.mktemp("compare-load") / "compare.json"
    result = run(*LINEAR_3_2, "--load", "--json", str(out))
    return result, json.loads(out.read_text())


def test_compare_prints_one_row_per_protocol_with_ratios_to_the_first(plain: tuple[Result, dict]) -> None:
    result, _ = plain
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[:6] == [
        "  app          route-flow",
        "  topology     linear:3 (3 switches, hosts h1, h2)",
        "  traffic      h1 sends 2 packets to h2; h2 answers each",
        "  channels     fifo: switches run commands in arrival order; single-threaded controller",
        "  start-up     hosts may send while switches join (the table-miss race is real)",
        "",
    ]
    header, rows = table(result.stdout)
    assert header == COMPARE_HEADER
    assert rows == {
        "openflow": ["13,107", "4,934", "8,174", "40", "1.00x", "complete", "none"],
        "openflow-b": ["2,131", "864", "1,268", "50", "6.15x", "complete", "none"],
        "attendre": ["430", "185", "246", "26", "30.48x", "complete", "none"],
    }
    assert list(rows) == ["openflow", "openflow-b", "attendre"]
    assert "control-plane load" not in result.output
    assert result.stderr == ""


def test_compare_json_has_one_entry_per_protocol(plain: tuple[Result, dict]) -> None:
    _, data = plain
    assert (data["app"], data["topology"], data["packets"]) == ("route-flow", "linear:3", 2)
    entries = data["protocols"]
    assert [e["protocol"] for e in entries] == ["openflow", "openflow-b", "attendre"]
    for entry in entries:
        counts = (entry["transitions"], entry["unique_states"], entry["revisits"], entry["max_depth"])
        assert counts == COUNTS[entry["protocol"]]
        assert (entry["complete"], entry["stop_reason"], entry["ok"], entry["violations"]) == (True, None, True, [])
        assert entry["load"] == {}
    assert [e["ratio_to_first"] for e in entries] == [1.0, 13107 / 2131, 13107 / 430]


def test_compare_protocol_order_sets_the_ratio_base() -> None:
    result = run(*LINEAR_3_2, "--protocols", "attendre,openflow")
    assert result.exit_code == 0, result.output
    header, rows = table(result.stdout)
    assert header == ("protocol  transitions  unique states  revisits  max depth  time (s)  attendre/this    search"
                      "  violations")
    assert rows == {
        "attendre": ["430", "185", "246", "26", "1.00x", "complete", "none"],
        "openflow": ["13,107", "4,934", "8,174", "40", "0.03x", "complete", "none"],
    }
    assert list(rows) == ["attendre", "openflow"]


def test_compare_repeated_protocols_run_once() -> None:
    result = run("compare", "route-flow", "-t", "linear:2", "--protocols", "attendre, attendre,openflow-b,")
    assert result.exit_code == 0, result.output
    _, rows = table(result.stdout)
    assert rows == {"attendre": ["21", "18", "4", "13", "1.00x", "complete", "none"],
                    "openflow-b": ["17", "18", "0", "17", "1.24x", "complete", "none"]}


@pytest.mark.parametrize(("protocols", "message"), [
    ("openflow,attendr", "Error: unknown protocol 'attendr'; did you mean 'attendre'? "
                         "(known: openflow, openflow-b, attendre, pif, buffer, batch)"),
    ("openflow,nox", "Error: unknown protocol 'nox' (known: openflow, openflow-b, attendre, pif, buffer, batch)"),
    (",", "Error: --protocols: give at least one protocol, got ','"),
    ("", "Error: --protocols: give at least one protocol, got ''"),
])
def test_compare_bad_protocol_list_is_a_one_line_error(protocols: str, message: str) -> None:
    result = run(*LINEAR_3_2, "--protocols", protocols)
    assert one_line_error(result) == message
    assert result.stdout == ""  # nothing ran


def test_compare_load_keeps_the_counts_and_adds_load_columns(loaded: tuple[Result, dict],
                                                            plain: tuple[Result, dict]) -> None:
    result, _ = loaded
    assert result.exit_code == 0, result.output
    header, rows = table(result.stdout)
    assert header == COMPARE_HEADER + "  packet-ins  flow-mods  packet-outs  barriers"
    assert rows == {
        "openflow": ["13,107", "4,934", "8,174", "40", "1.00x", "complete", "none", "2..12", "6..24", "0..0", "0..0"],
        "openflow-b": ["2,131", "864", "1,268", "50", "6.15x", "complete", "none", "2..4", "6..12", "0..0",
                       "8..16"],
        "attendre": ["430", "185", "246", "26", "30.48x", "complete", "none", "2..2", "6..6", "0..0", "0..0"],
    }
    # the same counts as without --load
    assert {p: r[:5] for p, r in rows.items()} == {p: r[:5] for p, r in table(plain[0].stdout)[1].items()}


def test_compare_load_json(loaded: tuple[Result, dict]) -> None:
    _, data = loaded
    entries = data["protocols"]
    assert [e["protocol"] for e in entries] == ["openflow", "openflow-b", "attendre"]
    for entry in entries:
        counts = (entry["transitions"], entry["unique_states"], entry["revisits"], entry["max_depth"])
        assert counts == COUNTS[entry["protocol"]]
        assert entry["load"] == {name: {"min": low, "max": high}
                                 for name, (low, high) in LOAD[entry["protocol"]].items()}
    assert [e["ratio_to_first"] for e in entries] == [1.0, 13107 / 2131, 13107 / 430]


def test_compare_load_note_wraps_at_100_characters(loaded: tuple[Result, dict]) -> None:
    lines = loaded[0].stdout.splitlines()
    start = lines.index("") + 1 + lines[lines.index("") + 1:].index("") + 1  # after the table's blank line
    note = lines[start:]
    assert note[0].startswith("  control-plane load: messages per complete execution")
    assert len(note) == 4, note
    assert all(line.startswith("  ") and len(line) <= 100 for line in note), note
    assert " ".join(line.strip() for line in note) == LOAD_NOTE
    assert max(len(line) for line in note) > 90  # wrapped near the width, not in tiny pieces


def test_compare_with_a_cap_marks_cut_load_and_bounds_the_ratios() -> None:
    result = run(*LINEAR_3_2, "--load", "--max-transitions", "1000")
    assert result.exit_code == 3, result.output  # incomplete: no violation in the part explored
    _, rows = table(result.stdout)
    assert rows == {
        "openflow": ["1,000", "429", "572", "40", "1.00x", "INCOMPLETE (max-transitions)", "none",
                     "5..7*", "14..18*", "0..0*", "0..0*"],
        # both cut: the ratio is unknown
        "openflow-b": ["1,000", "440", "561", "50", "-", "INCOMPLETE (max-transitions)", "none",
                       "3..4*", "9..12*", "0..0*", "12..16*"],
        # the first was cut: at least 1000/430
        "attendre": ["430", "185", "246", "26", ">2.32x", "complete", "none", "2..2", "6..6", "0..0", "0..0"],
    }
    note = " ".join(line.strip() for line in result.stdout.split("\n\n")[-1].splitlines())
    assert note == LOAD_NOTE + "; * = that exploration was cut short"


def test_compare_ratio_to_a_cut_search_is_an_upper_bound() -> None:
    result = run(*LINEAR_3_2, "--protocols", "attendre,openflow", "--max-transitions", "1000")
    assert result.exit_code == 3, result.output  # one search was cut: incomplete
    _, rows = table(result.stdout)
    assert [rows["attendre"][4], rows["openflow"][4]] == ["1.00x", "<0.43x"]


def test_compare_violation_exits_1_and_names_the_property(tmp_path: Path) -> None:
    out = tmp_path / "bug.json"
    result = run("compare", "route-flow", "--bug", "forget-last-hop", "-t", "linear:2", "--json", str(out))
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines()[0] == "  app          route-flow (bug: forget-last-hop)"
    _, rows = table(result.stdout)
    assert rows == {
        "openflow": ["6", "7", "0", "6", "1.00x", "INCOMPLETE (violation)", "no-forgotten-packets, delivery"],
        "openflow-b": ["6", "7", "0", "6", "-", "INCOMPLETE (violation)", "no-forgotten-packets, delivery"],
        "attendre": ["6", "7", "0", "6", "-", "INCOMPLETE (violation)", "no-forgotten-packets, delivery"],
    }
    data = json.loads(out.read_text())
    found = ["no-forgotten-packets", "delivery"]
    assert [(e["protocol"], e["ok"], [v["property"] for v in e["violations"]]) for e in data["protocols"]] == [
        ("openflow", False, found), ("openflow-b", False, found), ("attendre", False, found)]


def test_compare_exit_1_when_only_one_protocol_violates() -> None:
    # one-packet-in-per-flow holds under attendre only (with 2 packets on 2 switches)
    result = run("compare", "route-flow", "-t", "linear:2", "-n", "2", "-p", "one-packet-in-per-flow",
                 "--protocols", "attendre,openflow")
    assert result.exit_code == 1, result.output
    _, rows = table(result.stdout)
    assert (rows["attendre"][5:], rows["openflow"][5]) == (["complete", "none"], "INCOMPLETE (violation)")
    assert rows["openflow"][6] == "one-packet-in-per-flow"


def test_compare_json_in_a_missing_folder_fails_before_running(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "c.json"
    result = run(*LINEAR_3_2, "--json", str(target))
    assert one_line_error(result) == (f"Error: cannot write --json {str(target)!r}: folder "
                                      f"{str(target.parent)!r} not found")
    assert result.stdout == ""


@pytest.mark.parametrize("signum, code, name", [(2, 130, "Ctrl-C"), (15, 143, "SIGTERM"), (1, 129, "SIGHUP")])
def test_compare_interrupt_stops_at_that_protocol_and_exits_128_plus_signal(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, signum: int, code: int, name: str) -> None:
    real = nice_attendre.frontend.api.verify
    calls = []

    def verify(app: Any, **options: Any) -> Any:
        calls.append(options["protocol"])
        result = real(app, **options)
        if options["protocol"] == "openflow-b":  # as if the signal came during it: the library raises
            raise Interrupted(signum, dataclasses.replace(result, complete=False, stop_reason="interrupted",
                                                          signal=signum))
        return result

    monkeypatch.setattr(nice_attendre.frontend.api, "verify", verify)
    out = tmp_path / "c.json"
    result = run("compare", "route-flow", "-t", "linear:2", "--load", "--json", str(out))
    assert result.exit_code == code, (result.output, result.exception)
    assert calls == ["openflow", "openflow", "openflow-b"]  # openflow's load run; nothing after the interrupt
    _, rows = table(result.stdout)
    assert list(rows) == ["openflow", "openflow-b"]
    assert rows["openflow-b"][5] == "INCOMPLETE (interrupted)"
    assert result.stderr == f"interrupted ({name}) during openflow-b; not run: attendre\n"
    data = json.loads(out.read_text())  # the partial report is written
    assert data["verdict"] == "interrupted"
    assert [(p["protocol"], p["verdict"], p["ok"]) for p in data["protocols"]] == [
        ("openflow", "ok", True), ("openflow-b", "interrupted", False)]


# ---- bench route-flow ------------------------------------------------------------------------------

BENCH = ["bench", "route-flow", "--switches", "1-3", "--packets", "1-2"]
BENCH_TABLE = [
    "Fig. 8 - route-flow, transitions per protocol (cap 1,000,000 per cell)",
    "switches  packets  openflow  openflow-b  attendre  openflow/attendre  openflow/openflow-b  openflow-b/attendre",
    "--------  -------  --------  ----------  --------  -----------------  -------------------  -------------------",
    "       1        1         9           9         9              1.00x                1.00x                1.00x",
    "       1        2        80          80        58              1.38x                1.00x                1.38x",
    "       2        1        29          17        21              1.38x                1.71x                0.81x",
    "       2        2     1,026         281       158              6.49x                3.65x                1.78x",
    "       3        1       128          61        53              2.42x                2.10x                1.15x",
    "       3        2    13,107       2,131       430             30.48x                6.15x                4.96x",
]
CSV_HEADER = "experiment,protocol,switches,packets,transitions,unique_states,revisits,max_depth,seconds,status"


def csv_rows(path: Path) -> list[list[str]]:
    """The CSV's rows without the (timing) seconds column."""
    rows = list(csv.reader(io.StringIO(path.read_text())))
    seconds = rows[0].index("seconds")
    for row in rows[1:]:
        assert re.fullmatch(r"\d+\.\d{3}", row[seconds]), row
    return [row[:seconds] + row[seconds + 1:] for row in rows]


def test_bench_route_flow_table_and_csv(tmp_path: Path) -> None:
    out = tmp_path / "cells.csv"
    result = run(*BENCH, "-q", "--csv", str(out))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [*BENCH_TABLE, f"wrote {out}"]
    assert result.stderr == ""  # -q: no line per cell
    assert out.read_text().splitlines()[0] == CSV_HEADER
    assert csv_rows(out)[1:] == [
        ["route-flow", "openflow", "1", "1", "9", "10", "0", "9", "complete"],
        ["route-flow", "openflow", "2", "1", "29", "24", "6", "15", "complete"],
        ["route-flow", "openflow", "3", "1", "128", "77", "52", "22", "complete"],
        ["route-flow", "openflow", "1", "2", "80", "50", "31", "18", "complete"],
        ["route-flow", "openflow", "2", "2", "1026", "506", "521", "30", "complete"],
        ["route-flow", "openflow", "3", "2", "13107", "4934", "8174", "40", "complete"],
        ["route-flow", "openflow-b", "1", "1", "9", "10", "0", "9", "complete"],
        ["route-flow", "openflow-b", "2", "1", "17", "18", "0", "17", "complete"],
        ["route-flow", "openflow-b", "3", "1", "61", "44", "18", "25", "complete"],
        ["route-flow", "openflow-b", "1", "2", "80", "50", "31", "18", "complete"],
        ["route-flow", "openflow-b", "2", "2", "281", "161", "121", "34", "complete"],
        ["route-flow", "openflow-b", "3", "2", "2131", "864", "1268", "50", "complete"],
        ["route-flow", "attendre", "1", "1", "9", "10", "0", "9", "complete"],
        ["route-flow", "attendre", "2", "1", "21", "18", "4", "13", "complete"],
        ["route-flow", "attendre", "3", "1", "53", "34", "20", "17", "complete"],
        ["route-flow", "attendre", "1", "2", "58", "37", "22", "14", "complete"],
        ["route-flow", "attendre", "2", "2", "158", "83", "76", "20", "complete"],
        ["route-flow", "attendre", "3", "2", "430", "185", "246", "26", "complete"],
    ]


def test_bench_route_flow_cap_prints_over_cap_cells_and_skips_larger_ones(tmp_path: Path) -> None:
    out = tmp_path / "capped.csv"
    result = run(*BENCH, "--max-transitions", "500", "--csv", str(out))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "Fig. 8 - route-flow, transitions per protocol (cap 500 per cell)",
        BENCH_TABLE[1],
        BENCH_TABLE[2],
        *BENCH_TABLE[3:6],
        "       2        2      >500         281       158             >3.16x               >1.77x                1.78x",
        BENCH_TABLE[7],
        "       3        2         -        >500       430                  -                    -               >1.16x",
        f"wrote {out}",
    ]
    rows = {(r[1], r[2], r[3]): r[4:] for r in csv_rows(out)[1:]}
    assert rows[("openflow", "2", "2")] == ["500", "271", "230", "30", "over-cap"]
    assert rows[("openflow", "3", "2")] == ["", "", "", "", "skipped"]   # dominates (2, 2): not run
    assert rows[("openflow", "3", "1")] == ["128", "77", "52", "22", "complete"]  # fewer packets: still runs
    assert rows[("openflow-b", "3", "2")][-1] == "over-cap"
    assert rows[("attendre", "3", "2")] == ["430", "185", "246", "26", "complete"]
    assert [r[-1] for r in rows.values()].count("complete") == 15
    # without -q, one line per cell on stderr, in the order run
    progress = result.stderr.splitlines()
    assert len(progress) == 18
    assert re.fullmatch(r"  route-flow openflow   switches=3 packets=1: 128 transitions in \d+\.\d s", progress[2])
    assert re.fullmatch(r"  route-flow openflow   switches=2 packets=2: 500 transitions \(cap reached\) in \d+\.\d s",
                        progress[4])
    assert progress[5] == "  route-flow openflow   switches=3 packets=2: skipped (a smaller cell exceeded the cap)"
    assert re.fullmatch(r"  route-flow openflow-b switches=3 packets=2: 500 transitions \(cap reached\) in \d+\.\d s",
                        progress[11])


def test_bench_route_flow_protocols_and_lists() -> None:
    result = run("bench", "route-flow", "--switches", "3,1", "--packets", "2", "--protocols", "attendre,openflow",
                 "-q")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "Fig. 8 - route-flow, transitions per protocol (cap 1,000,000 per cell)",
        "switches  packets  attendre  openflow  openflow/attendre",
        "--------  -------  --------  --------  -----------------",
        "       1        2        58        80              1.38x",
        "       3        2       430    13,107             30.48x",
    ]


@pytest.mark.parametrize(("args", "message"), [
    (["--switches", "3-1"], "Error: --switches: bad range '3-1' (its start is above its end)"),
    (["--packets", "x"], "Error: --packets: bad value 'x' (expected N, N-M or a comma-separated list of them, "
                         "e.g. 1-3,5)"),
    (["--switches", "0"], "Error: --switches: values must be at least 1, got '0'"),
    (["--switches", "0-2"], "Error: --switches: values must be at least 1, got '0-2'"),
    (["--packets", "1-"], "Error: --packets: bad value '1-' (expected N, N-M or a comma-separated list of them, "
                          "e.g. 1-3,5)"),
    (["--packets", "-1"], "Error: --packets: bad value '-1' (expected N, N-M or a comma-separated list of them, "
                          "e.g. 1-3,5)"),
    (["--switches", "1,,2"], "Error: --switches: bad value '' (expected N, N-M or a comma-separated list of them, "
                             "e.g. 1-3,5)"),
    (["--protocols", "openflow,atendre"], "Error: unknown protocol 'atendre'; did you mean 'attendre'? "
                                          "(known: openflow, openflow-b, attendre, pif, buffer, batch)"),
    (["--protocols", " , "], "Error: --protocols: give at least one protocol, got ' , '"),
])
def test_bench_route_flow_bad_options_are_one_line_errors(args: list[str], message: str) -> None:
    result = run("bench", "route-flow", *args)
    assert one_line_error(result) == message
    assert result.stdout == ""


def test_bench_route_flow_csv_in_a_missing_folder_fails_before_running(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "x.csv"
    result = run(*BENCH, "--csv", str(target))
    assert one_line_error(result) == (f"Error: cannot write --csv {str(target)!r}: folder "
                                      f"{str(target.parent)!r} not found")
    assert result.stdout == ""


def test_bench_route_flow_ctrl_c_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    real = nice_attendre.frontend.api.verify

    def verify(app: Any, **options: Any) -> Any:
        return dataclasses.replace(real(app, **options), complete=False, stop_reason="interrupted")

    monkeypatch.setattr(nice_attendre.frontend.api, "verify", verify)
    result = run(*BENCH, "-q")
    assert result.exit_code == 130, (result.output, result.exception)
    assert result.stdout == ""
    assert result.stderr == "interrupted (Ctrl-C)\n"


def test_bench_route_flow_sigterm_exits_143(monkeypatch: pytest.MonkeyPatch) -> None:
    real = nice_attendre.frontend.api.verify

    def verify(app: Any, **options: Any) -> Any:
        raise Interrupted(15, dataclasses.replace(real(app, **options), complete=False, stop_reason="interrupted"))

    monkeypatch.setattr(nice_attendre.frontend.api, "verify", verify)
    result = run(*BENCH, "-q")
    assert result.exit_code == 143, (result.output, result.exception)
    assert result.stderr == "interrupted (SIGTERM)\n"


# ---- bench paper: the directions of the paper's claims (slow) ---------------------------------------

@pytest.mark.slow
def test_bench_paper_reproduces_the_directions_of_the_papers_claims(tmp_path: Path) -> None:
    out = tmp_path / "paper.csv"
    result = run("bench", "paper", "-q", "--csv", str(out))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == f"wrote {out}"
    for title in ("Fig. 8 - route-flow", "Fig. 8 claims", "Table II - MAC learning", "Table III - energy-efficient TE"):
        assert title in result.stdout
    cells: dict[tuple[str, str, tuple[int, ...]], dict[str, str]] = {}
    for row in csv.DictReader(io.StringIO(out.read_text())):
        names = {"route-flow": ("switches", "packets"), "mac-learning": ("switches", "packets"),
                 "energy-te": ("always_on", "on_demand", "flows")}[row["experiment"]]
        cells[(row["experiment"], row["protocol"], tuple(int(row[n]) for n in names))] = row
    assert len(cells) == 3 * (8 * 5 + 2 * 4 + 2 * 2)

    def count(experiment: str, protocol: str, *params: int) -> int:
        row = cells[(experiment, protocol, params)]
        assert row["status"] == "complete", row
        return int(row["transitions"])

    def ratio(experiment: str, *params: int) -> float:
        return count(experiment, "openflow", *params) / count(experiment, "attendre", *params)

    # Table II (MAC learning): one packet, no race: the same counts
    for switches in (1, 2):
        assert count("mac-learning", "openflow", switches, 1) == count("mac-learning", "attendre", switches, 1)
    # the openflow/attendre ratio grows with packets ...
    ratios = [ratio("mac-learning", 1, packets) for packets in (1, 2, 3, 4)]
    assert ratios == sorted(ratios) and ratios[0] < ratios[-1], ratios
    # ... and with switches
    for packets in (2, 3):
        assert ratio("mac-learning", 1, packets) < ratio("mac-learning", 2, packets)
    # Table III (energy TE): attendre fewer everywhere, more so on the longer paths
    for flows in (1, 2):
        for hops in ((2, 3), (3, 4)):
            assert count("energy-te", "attendre", *hops, flows) < count("energy-te", "openflow", *hops, flows)
        assert ratio("energy-te", 3, 4, flows) > ratio("energy-te", 2, 3, flows)
    # Fig. 8 (route-flow): attendre never more, and at least 20 times fewer with 1 switch, 5 packets
    both = [(key[2], int(row["transitions"]), int(cells[("route-flow", "attendre", key[2])]["transitions"]))
            for key, row in cells.items()
            if key[:2] == ("route-flow", "openflow") and row["status"] == "complete"
            and cells[("route-flow", "attendre", key[2])]["status"] == "complete"]
    assert len(both) >= 15
    for params, openflow, attendre in both:
        if params == (1, 1):  # one packet through one switch: nothing to race, the same 9 transitions
            assert attendre == openflow == 9
        else:
            assert attendre < openflow, params
    assert ratio("route-flow", 1, 5) >= 20
    assert "  1 switch, 5 packets: paper: at least 20 times fewer; ours: " in result.stdout
