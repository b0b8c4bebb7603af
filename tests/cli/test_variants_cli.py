"""The protocol variants from the command line, as a user runs them: -P with parameters, the
report header (text and JSON), one-line errors, `list`, `compare` and `bench` with
parameters, and `bench variants` on a tiny grid (table, CSV, plot)."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from nice_attendre.frontend.cli import main

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PIF = "pif:clone=in_port,eth_src,eth_dst,action=drop"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def one_line_error(result: Result) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# ---- verify ----------------------------------------------------------------------------------

def test_verify_prints_the_protocol_with_every_parameter(tmp_path: Path) -> None:
    out = tmp_path / "pif.json"
    result = run("verify", "route-flow", "-t", "linear:3", "-n", "2", "-P", PIF, "-p", "no-forgotten-packets",
                 "--json", str(out))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[:2] == [
        "  app            route-flow",
        "  protocol       pif:clone=in_port,eth_src,eth_dst,match=any,action=drop,expire=event,remove=flow-mod,"
        "rules=none,limit=none",
    ]
    data = json.loads(out.read_text())
    assert data["protocol"] == "pif"
    assert data["protocol_params"] == {"clone": ["in_port", "eth_src", "eth_dst"], "match": {}, "action": "drop",
                                       "expire": "event", "remove": "flow-mod", "rules": [], "limit": "none"}
    assert data["protocol_spec"] == ("pif:clone=in_port,eth_src,eth_dst,match=any,action=drop,expire=event,"
                                     "remove=flow-mod,rules=none,limit=none")
    assert (data["transitions"], data["unique_states"]) == (22241, 7829)


def test_verify_header_resolves_auto_clone_fields_for_the_app() -> None:
    result = run("verify", "mac-learning", "-n", "1", "-P", "pif")
    assert "  protocol       pif:clone=in_port,eth_src,eth_dst,match=any,action=rate-limit,expire=event," \
           "remove=flow-mod,rules=none,limit=none" in result.stdout.splitlines()


def test_verify_json_of_a_variant_without_parameters(tmp_path: Path) -> None:
    out = tmp_path / "of.json"
    run("verify", "route-flow", "--json", str(out))
    data = json.loads(out.read_text())
    assert (data["protocol"], data["protocol_params"], data["protocol_spec"]) == ("openflow", {}, "openflow")


def test_verify_finds_the_packet_pif_drops() -> None:
    result = run("verify", "route-flow", "-t", "linear:1", "-n", "2", "-P", "pif:action=drop,expire=never",
                 "-p", "delivery")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert "VIOLATION 1: delivery (at quiescence)" in lines
    assert any("matches pending entry" in line and "dropped (predefined action)" in line for line in lines)


@pytest.mark.parametrize(("protocol", "message"), [
    ("pif:acton=drop",
     "Error: unknown pif parameter 'acton'; did you mean 'action'? "
     "(known: clone, match, action, expire, remove, rules, limit)"),
    ("buffer:capacity=lots",
     "Error: protocol buffer: bad value 'lots' for capacity; allowed: a whole number from 0 to 256"),
    ("batch:timer=sometimes", "Error: protocol batch: bad value 'sometimes' for timer; allowed: one of event, never"),
    ("attendre:size=2", "Error: protocol attendre takes no parameters (got size)"),
    ("pif:drop", "Error: protocol 'pif:drop': expected KEY=VALUE after 'pif:', got 'drop'"),
])
def test_verify_bad_parameters_are_one_line_errors(protocol: str, message: str) -> None:
    result = run("verify", "route-flow", "-P", protocol)
    assert one_line_error(result) == message
    assert result.stdout == ""


def test_verify_refusals_of_a_variant_are_one_line_errors() -> None:
    result = run("verify", "route-flow", "-P", "buffer:timeout=event")
    assert one_line_error(result) == "Error: protocol buffer: timeout=event needs granularity=flow"


# ---- list ------------------------------------------------------------------------------------

def test_list_shows_each_variants_parameters_and_defaults() -> None:
    result = run("list")
    lines = result.stdout.splitlines()
    start = lines.index("  batch                    Batched flow-mods (Cui et al.): flow-mods are stored and "
                        "applied as one")
    assert lines[start + 1:start + 6] == [
        "                           batch.",
        "                             threshold (default 2): stored flow-mods that trigger a batch (quantity",
        "                               condition); allowed: a whole number from 1 to 64",
        "                             timer (default event): the time condition: a nondeterministic event",
        "                               while flow-mods are stored, or never; allowed: one of event, never",
    ]
    text = result.stdout
    for fragment in ("clone (default auto)", "match (default any)", "action (default rate-limit)",
                     "expire (default event)", "remove (default flow-mod)", "granularity (default packet)",
                     "capacity (default 16)", "timeout (default never)"):
        assert fragment in text
    assert all(len(line) <= 100 for line in lines)


# ---- compare and bench route-flow ---------------------------------------------------------------

def test_compare_takes_variants_with_parameters(tmp_path: Path) -> None:
    out = tmp_path / "c.json"
    result = run("compare", "route-flow", "-t", "linear:3", "-n", "2", "-p", "no-forgotten-packets",
                 "--protocols", f"openflow,{PIF},buffer:granularity=flow,batch", "--json", str(out))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[5:9] == [
        "  parameters   pif:clone=in_port,eth_src,eth_dst,match=any,action=drop,expire=event,remove=flow-mod,"
        "rules=none,limit=none",
        "               buffer:granularity=flow,capacity=16,timeout=never",
        "               batch:threshold=2,timer=event",
        "",
    ]
    rows = {line.split()[0]: line.split()[1:3] for line in lines[10:14]}
    assert rows == {"openflow": ["13,107", "4,934"], PIF: ["22,241", "7,829"],
                    "buffer:granularity=flow": ["2,927", "1,189"], "batch": ["59,675", "17,791"]}
    data = json.loads(out.read_text())
    assert [e["protocol"] for e in data["protocols"]] == ["openflow", PIF, "buffer:granularity=flow", "batch"]
    assert [e["protocol_params"] for e in data["protocols"]][2:] == [
        {"granularity": "flow", "capacity": 16, "timeout": "never"}, {"threshold": 2, "timer": "event"}]
    assert data["protocols"][0]["protocol_params"] == {}


def test_compare_bad_parameter_fails_before_running() -> None:
    result = run("compare", "route-flow", "--protocols", "openflow,pif:action=maybe")
    assert one_line_error(result) == ("Error: protocol pif: bad value 'maybe' for action; allowed: one of drop, "
                                      "flood, rate-limit")
    assert result.stdout == ""


def test_bench_route_flow_takes_variants_with_parameters() -> None:
    result = run("bench", "route-flow", "--switches", "1-2", "--packets", "2", "-q",
                 "--protocols", "openflow,buffer:granularity=flow,capacity=1,pif:action=flood,expire=never")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1:5] == [
        "switches  packets  openflow  buffer:granularity=flow,capacity=1  pif:action=flood,expire=never",
        "--------  -------  --------  ----------------------------------  -----------------------------",
        "       1        2        80                                  90                            102",
        "       2        2     1,026                               1,362                            924",
    ]


# ---- bench variants ------------------------------------------------------------------------------

TINY = ["bench", "variants", "--experiments", "route-flow,mac-learning", "--switches", "1-2", "--packets", "1-2",
        "--mac-packets", "1", "--protocols", "openflow,attendre,pif:action=drop,expire=never,buffer:granularity=flow,batch"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, Path, Path]:
    folder = tmp_path_factory.mktemp("variants")
    table, picture = folder / "v.csv", folder / "v.png"
    return run(*TINY, "--csv", str(table), "--plot", str(picture)), table, picture


def test_bench_variants_tables(tiny: tuple[Result, Path, Path]) -> None:
    result, table, picture = tiny
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "route-flow - transitions per variant (cap 1,000,000 per run)",
        "switches  packets  openflow  attendre  pif-drop  flow-buffer  batch",
        "--------  -------  --------  --------  --------  -----------  -----",
        "       1        1         9         9         9            9     11",
        "       1        2        80        58        64           58    111",
        "       2        1        29        21        29           29     57",
        "       2        2     1,026       158       363          337  2,574",
        "openflow/variant at 2/2: openflow 1.00x  attendre 6.49x  pif-drop 2.83x  flow-buffer 3.04x  batch 0.40x",
        "",
        "route-flow: unique states and load (min..max per execution) at switches/packets 2/2; race properties "
        "over the cells within the cap (FAIL switches/packets = first cell violating it)",
        "variant      unique states  packet-ins  flow-mods  packet-outs  barriers  1 pkt-in/flow  no forgotten  "
        "no reorder  delivery  no dups",
        "-----------  -------------  ----------  ---------  -----------  --------  -------------  ------------  "
        "----------  --------  -------",
        "openflow               506        2..8      4..12         0..0      0..0       FAIL 2/1            ok    "
        "FAIL 2/2        ok       ok",
        "attendre                83        2..2       4..4         0..0      0..0             ok            ok    "
        "      ok        ok       ok",
        "pif-drop               204        2..4       4..6         0..0      0..0       FAIL 2/1            ok    "
        "FAIL 2/2  FAIL 1/2       ok",
        "flow-buffer            181        2..4       4..6         0..0      0..0       FAIL 2/1            ok    "
        "FAIL 2/2        ok       ok",
        "batch                1,079        2..8      4..12         0..0      0..0       FAIL 2/1            ok    "
        "FAIL 2/2        ok       ok",
        "",
        "mac-learning - transitions per variant (cap 1,000,000 per run)",
        "switches  packets  openflow  attendre  pif-drop  flow-buffer  batch",
        "--------  -------  --------  --------  --------  -----------  -----",
        "       1        1       201       201       201          201    284",
        "       2        1       728       728       728          728  1,340",
        "openflow/variant at 2/1: openflow 1.00x  attendre 1.00x  pif-drop 1.00x  flow-buffer 1.00x  batch 0.54x",
        "",
        "mac-learning: unique states and load (min..max per execution) at switches/packets 2/1; race properties "
        "over the cells within the cap (FAIL switches/packets = first cell violating it)",
        "variant      unique states  packet-ins  flow-mods  packet-outs  barriers  1 pkt-in/flow  no forgotten  "
        "no reorder  no dups",
        "-----------  -------------  ----------  ---------  -----------  --------  -------------  ------------  "
        "----------  -------",
        "openflow               401        4..6       4..8         2..4      0..0       FAIL 2/1            ok    "
        "      ok       ok",
        "attendre               401        4..6       4..8         2..4      0..0       FAIL 2/1            ok    "
        "      ok       ok",
        "pif-drop               401        4..6       4..8         2..4      0..0       FAIL 2/1            ok    "
        "      ok       ok",
        "flow-buffer            401        4..6       4..8         2..4      0..0       FAIL 2/1            ok    "
        "      ok       ok",
        "batch                  636        4..6       4..8         2..4      0..0       FAIL 2/1            ok    "
        "      ok       ok",
        "",
        "variants:",
        "  pif-drop     pif:clone=auto,match=any,action=drop,expire=never,remove=flow-mod,rules=none,limit=none",
        "  flow-buffer  buffer:granularity=flow,capacity=16,timeout=never",
        "  batch        batch:threshold=2,timer=event",
        "  (clone=auto: in_port,eth_src,eth_dst for mac-learning, the header fields for route-flow and energy-te)",
        f"wrote {table}",
        f"wrote {picture}",
    ]
    # one progress line per cell on stderr
    assert len(result.stderr.splitlines()) == 30
    assert "  route-flow pif:action=drop,expire=never switches=1 packets=2: 64 transitions in " in result.stderr


def test_bench_variants_csv(tiny: tuple[Result, Path, Path]) -> None:
    _, table, _ = tiny
    rows = list(csv.reader(io.StringIO(table.read_text())))
    assert rows[0] == ["experiment", "protocol", "protocol_spec", "switches", "packets", "transitions", "unique_states", "revisits",
                       "max_depth", "seconds", "status", "packet_ins_min", "packet_ins_max", "flow_mods_min",
                       "flow_mods_max", "packet_outs_min", "packet_outs_max", "barriers_min", "barriers_max",
                       "one-packet-in-per-flow", "no-forgotten-packets", "no-reordering", "delivery", "no-duplicates"]
    seconds = rows[0].index("seconds")
    by_cell = {(r[0], r[1], r[3], r[4]): r[:seconds] + r[seconds + 1:] for r in rows[1:]}
    assert len(by_cell) == 30
    assert by_cell[("route-flow", "pif:action=drop,expire=never", "1", "2")][2] == (
        "pif:clone=auto,match=any,action=drop,expire=never,remove=flow-mod,rules=none,limit=none")
    assert by_cell[("route-flow", "pif:action=drop,expire=never", "1", "2")][5:] == [
        "64", "45", "20", "14", "complete", "2", "2", "2", "2", "0", "0", "0", "0", "ok", "ok", "ok", "FAIL", "ok"]
    assert by_cell[("mac-learning", "batch", "2", "1")][5:] == [
        "1340", "636", "705", "30", "complete", "4", "6", "4", "8", "2", "4", "0", "0", "FAIL", "ok", "ok", "-", "ok"]


def test_bench_variants_plot(tiny: tuple[Result, Path, Path]) -> None:
    _, _, picture = tiny
    assert picture.read_bytes()[:8] == PNG_SIGNATURE


def test_bench_variants_cap_skips_larger_cells_and_marks_unknown_verdicts() -> None:
    result = run("bench", "variants", "--experiments", "route-flow", "--switches", "1-3", "--packets", "2",
                 "--protocols", "openflow,attendre", "--max-transitions", "500", "-q")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1:7] == [
        "switches  packets  openflow  attendre",
        "--------  -------  --------  --------",
        "       1        2        80        58",
        "       2        2      >500       158",
        "       3        2         -       430",
        "openflow/variant at 1/2: openflow 1.00x  attendre 1.38x",
    ]
    # verdicts over the cells within the cap (1/2 only for openflow: 2/2 is over it)
    assert lines[11].split() == ["openflow", "50", "2..4", "2..4", "0..0", "0..0", "FAIL", "1/2", "ok", "ok", "ok",
                                 "ok"]
    assert lines[12].split() == ["attendre", "37", "2..2", "2..2", "0..0", "0..0", "ok", "ok", "ok", "ok", "ok"]


def test_bench_variants_default_protocols_use_short_names() -> None:
    result = run("bench", "variants", "--experiments", "energy-te", "--te-flows", "1", "-q")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1].split() == ["always_on", "on_demand", "flows", "openflow", "openflow-b", "attendre", "pif-drop",
                                "pif-flood", "pif-meter", "no-buffer", "buffer-1", "flow-buffer", "batch-2"]
    assert lines[3].split() == ["2", "3", "1", "156", "77", "73", "156", "156", "274", "192", "156", "156", "468"]
    assert lines[-8:] == [
        "  pif-drop     pif:clone=auto,match=any,action=drop,expire=never,remove=flow-mod,rules=none,limit=none",
        "  pif-flood    pif:clone=auto,match=any,action=flood,expire=never,remove=flow-mod,rules=none,limit=none",
        "  pif-meter    pif:clone=auto,match=any,action=rate-limit,expire=event,remove=flow-mod,rules=none,"
        "limit=none",
        "  no-buffer    buffer:granularity=packet,capacity=0,timeout=never",
        "  buffer-1     buffer:granularity=packet,capacity=1,timeout=never",
        "  flow-buffer  buffer:granularity=flow,capacity=16,timeout=never",
        "  batch-2      batch:threshold=2,timer=event",
        "  (clone=auto: in_port,eth_src,eth_dst for mac-learning, the header fields for route-flow and energy-te)",
    ]


@pytest.mark.parametrize(("args", "message"), [
    (["--experiments", "route-flw"],
     "Error: unknown experiment 'route-flw'; did you mean 'route-flow'? (known: route-flow, mac-learning, energy-te)"),
    (["--experiments", ","], "Error: --experiments: give at least one of route-flow, mac-learning, energy-te, got ','"),
    (["--protocols", "openflow,batch:threshold=0"],
     "Error: protocol batch: bad value '0' for threshold; allowed: a whole number from 1 to 64"),
    (["--switches", "0"], "Error: --switches: values must be at least 1, got '0'"),
])
def test_bench_variants_bad_options_are_one_line_errors(args: list[str], message: str) -> None:
    result = run("bench", "variants", *args)
    assert one_line_error(result) == message
    assert result.stdout == ""


def test_bench_variants_csv_in_a_missing_folder_fails_before_running(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "v.csv"
    result = run("bench", "variants", "--experiments", "energy-te", "--csv", str(target))
    assert one_line_error(result) == (f"Error: cannot write --csv {str(target)!r}: folder "
                                      f"{str(target.parent)!r} not found")


def test_bench_variants_ctrl_c_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    import nice_attendre.benchmarks.variants_bench as bench

    def interrupted(*_args: object, **_kwargs: object) -> list[object]:
        raise KeyboardInterrupt

    monkeypatch.setattr(bench, "run_variants", interrupted)
    result = run("bench", "variants", "--experiments", "energy-te")
    assert result.exit_code == 130
    assert result.stderr == "interrupted (Ctrl-C)\n"
    assert result.stdout == ""
