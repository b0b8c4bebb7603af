"""Issue 28: no refusal in the middle of a search. What the model does not run is refused
when the app is loaded, from the constant arguments of the os-ken messages its code builds
(:mod:`nice_attendre.models.ryu.literals`), naming the feature and ``Class.method
(file:line)``. Apps: tests/data/apps/ryu_literals.py, ryu_set_config.py."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from nice_attendre.errors import UnsupportedFeature
from nice_attendre.frontend.api import build, verify
from nice_attendre.frontend.cli import main

pytest.importorskip("os_ken")

APPS = Path(__file__).resolve().parents[2] / "data" / "apps"
LITERALS = APPS / "ryu_literals.py"


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize("name,feature,line", [
    ("Truncating13", r"output to CONTROLLER with max_len=0 \(truncated packet-ins", 34),
    ("EthernetMask13", r"masked match fields \(eth_dst=00:00:00:00:00:01/ff:ff:ff:00:00:00", 39),
    ("ArpMatch13", r"matching eth_type=2054 \(every packet of the model has eth_type=2048: IPv4\)", 45),
    ("UdpMatch13", r"matching ip_proto=17", 50),
    ("DeleteByPort13", r"deleting only entries that output to a port \(out_port=0x2", 55),
    ("DeleteEveryTable13", r"flow-mods for every table \(OFPTT_ALL\)", 61),
    ("OnePortStats13", r"port statistics of one port \(port_no=1\)", 67),
    ("PacketOutMatch15", r"packet-out match fields other than in_port", 74),
    ("VlanMatch13", r"matching vlan_vid=4106 \(every packet of the model has vlan_vid=0: no VLAN tag\)", 80),
])
def test_constant_arguments_the_model_refuses_are_refused_at_load(name: str, feature: str, line: int) -> None:
    with pytest.raises(UnsupportedFeature, match=rf"^Ryu apps: {feature}.* \(in {name}\.send, ryu_literals\.py:{line}\)"):
        build(f"{LITERALS}:{name}", properties=[], topology="linear:1")


def test_what_the_model_runs_is_not_refused() -> None:
    assert verify(f"{LITERALS}:Plain13", topology="linear:2", joins_first=True).complete


def test_code_for_several_versions_is_read_by_keywords_only() -> None:
    """Read by 1.3's positions, TwoVersions' 1.0 flow-mod would be a delete (its idle
    timeout, 3, in 1.3's command position) restricted to port 0, and refused."""
    assert verify(f"{LITERALS}:TwoVersions", topology="linear:2", joins_first=True).complete


def test_a_literal_miss_send_len_below_the_frame_length_is_refused_in_one_line_before_the_search() -> None:
    result = cli("verify", f"{APPS / 'ryu_set_config.py'}:ShortMissSwitch13", "--topology", "linear:2")
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "Error: Ryu apps: OFPSetConfig with miss_send_len=40 (truncated packet-ins; accepted: miss_send_len >= 60, "
        "the model's frame length) (in ShortMissSwitch13.configure, ryu_set_config.py:63) is not supported by the "
        "checker's model"]


# ---- values computed at run time: met mid-search, the explored part reported ---------------------

COMPUTED = APPS / "ryu_computed.py"
MASK = ("Ryu apps: masked match fields (eth_dst=00:00:00:00:00:00/ff:ff:ff:00:00:00: the model matches it whole) is "
        "not supported by the checker's model (sent at ryu_computed.py:56 in packet_in_handler)")


@pytest.mark.parametrize("engine", [(), ("--shortest",)])
def test_a_refusal_mid_search_reports_what_was_explored_and_exits_2(engine: tuple[str, ...], tmp_path: Path) -> None:
    import json

    report = tmp_path / "report.json"
    result = cli("verify", f"{COMPUTED}:ComputedMask13", "--topology", "linear:2", "--joins-first", *engine,
                 "--json", str(report))
    assert result.exit_code == 2, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "  app            ComputedMask13 (Ryu app, OpenFlow 1.3)"
    assert any(line.split()[:1] == ["transitions"] and int(line.split()[1]) > 0 for line in lines)
    assert lines[-1] == ("INCOMPLETE: no violation in the part explored, but the search stopped at a feature the "
                         f"model does not have: {MASK}")
    data = json.loads(report.read_text())
    assert (data["verdict"], data["stop_reason"], data["stop_detail"]) == ("incomplete", "unsupported-feature", MASK)


def test_the_library_result_is_incomplete_never_ok() -> None:
    result = verify(f"{COMPUTED}:ComputedMask13", topology="linear:2", joins_first=True)
    assert not result.ok and not result.complete and result.verdict == "incomplete"
    assert (result.stop_reason, result.stop_detail) == ("unsupported-feature", MASK)
    assert result.stats.transitions > 0


def test_a_violation_found_before_the_refusal_is_reported_with_it() -> None:
    result = cli("verify", f"{COMPUTED}:CountingComputedMask13", "--topology", "linear:2", "--joins-first",
                 "--packets", "2", "--keep-going")
    assert result.exit_code == 1, result.output  # (a violation found is never hidden: exit 1)
    lines = result.stdout.splitlines()
    assert any(line.startswith("VIOLATION 1: app-exception") for line in lines)
    assert lines[-1] == f"FAILED: app-exception; then stopped at a feature the model does not have: {MASK}"
