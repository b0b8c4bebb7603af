"""Issue 28, the rest: values Ryu apps commonly send that the model now runs instead of
refusing mid-search (flow cookies, ...), each with an app of our own, correct and buggy,
under the three protocols. Apps: tests/data/apps/ryu_*.py."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from nice_attendre.fingerprint import stable_hash
from nice_attendre.frontend.api import verify
from nice_attendre.frontend.cli import main
from nice_attendre.models import flowtable
from nice_attendre.models.messages import Timeouts
from nice_attendre.models.packet import Match, Output

pytest.importorskip("os_ken")

APPS = Path(__file__).resolve().parents[2] / "data" / "apps"
PROTOCOLS = ("openflow", "openflow-b", "attendre")


def cli(*args: str):
    return CliRunner().invoke(main, list(args))

#: (file, correct class, buggy class, the property the buggy one fails, packets)
PAIRS = [
    ("ryu_cookies.py", "CookieSwitch13", "CookieMaskless13", "no-black-holes", 2),  # cookies, cookie_mask
    ("ryu_prefixes.py", "PrefixRouter13", "WidePrefixRouter13", "no-black-holes", 2),  # masked IPv4 matches
    ("ryu_built_frames.py", "FrameBuilder13", "MirroringFrameBuilder13", "no-black-holes", 2),  # frames it built
    ("ryu_error_data.py", "ErrorReader13", "ErrorMisreader13", "app-exception", 1),  # an error's data
]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("file, correct, buggy, broken, packets", PAIRS)
def test_correct_passes_and_buggy_fails(file: str, correct: str, buggy: str, broken: str, packets: int,
                                        protocol: str) -> None:
    good = verify(f"{APPS / file}:{correct}", protocol=protocol, joins_first=True, packets=packets)
    assert good.ok and good.complete, [(d.property, d.reason) for d in good.discoveries]
    bad = verify(f"{APPS / file}:{buggy}", protocol=protocol, joins_first=True, packets=packets)
    found = bad.discovery(broken)
    assert found is not None and not bad.ok, [(d.property, d.reason) for d in bad.discoveries]
    assert found.trace is not None and len(found.trace.steps) > 0


# ---- flow cookies -------------------------------------------------------------------------------

def test_the_flow_removed_carries_the_entrys_cookie_and_the_delete_its_mask() -> None:
    """The buggy app's trace: the entry is installed with its cookie, its expiry reaches the
    app (whose handler checks the cookie's tag), and the app's delete selects by cookie."""
    result = cli("verify", f"{APPS / 'ryu_cookies.py'}:CookieMaskless13", "--joins-first", "--packets", "2")
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert any(line.endswith(". s2 installs [prio 1 {eth_dst=h1} -> output:1 (idle 5s, notify, cookie 0x5a01)]")
               for line in lines)
    assert any("CookieMaskless13.flow_removed_handler handles flow-removed(s1, {eth_dst=h1}, idle timeout)" in line
               for line in lines)
    assert any(line.endswith(". s1 deletes entries {*}") for line in lines)  # cookie_mask 0: every entry
    result = cli("verify", f"{APPS / 'ryu_cookies.py'}:CookieSwitch13", "--joins-first", "--packets", "2",
                 "--max-transitions", "20000")  # (a prefix of the search: the traces are not shown)
    assert result.exit_code == 3, result.output


def test_a_cookie_mask_selects_the_entries_whose_cookie_agrees_on_its_bits() -> None:
    tagged = flowtable.make_entry(0, 1, Match.of(eth_dst="h1"), (Output(1),), timeouts=Timeouts(cookie=0x5A01))
    other = flowtable.make_entry(0, 1, Match.of(eth_dst="h2"), (Output(2),), timeouts=Timeouts(cookie=0x6B01))
    plain = flowtable.make_entry(0, 0, Match.of(), (Output(3),))
    table = (tagged, other, plain)
    assert flowtable.delete_matching(table, 0, Match.of(), cookie=Timeouts(cookie=0x5A00, cookie_mask=0xFF00)) \
        == (other, plain)
    assert flowtable.delete_matching(table, 0, Match.of(), cookie=Timeouts(cookie=0, cookie_mask=0xFFFF)) == (tagged, other)
    assert flowtable.delete_matching(table, 0, Match.of()) == ()
    modified = flowtable.modify_matching(table, 0, Match.of(), (Output(9),), Timeouts(cookie=0x6B00, cookie_mask=0xFF00))
    assert [entry.actions for entry in modified] == [(Output(1),), (Output(9),), (Output(3),)]
    assert modified[1].timeouts.cookie == 0x6B01  # a modify keeps the entry's cookie


def test_a_cookie_of_0_changes_no_value_nor_fingerprint() -> None:
    """Apps without cookies keep their states' values and fingerprints: timeouts without a
    cookie are the 3-tuple they were."""
    assert Timeouts(5, 0, True) == (5, 0, True) and len(Timeouts(5, 0, True, 0, 0)) == 3
    assert stable_hash(Timeouts(5, 0, True)) == stable_hash((5, 0, True))
    assert Timeouts(5, 0, True, 7) != Timeouts(5, 0, True)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_set_config_of_fragments_and_a_long_miss_send_len_is_accepted(protocol: str) -> None:
    result = verify(f"{APPS / 'ryu_set_config.py'}:ConfiguredSwitch13", protocol=protocol, joins_first=True,
                    packets=2)
    assert result.ok, [(d.property, d.reason) for d in result.discoveries]


# ---- masked matches -----------------------------------------------------------------------------

@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_openflow_10_prefix_match_routes(protocol: str) -> None:
    assert verify(f"{APPS / 'ryu_prefixes.py'}:PrefixRouter10", protocol=protocol, joins_first=True, packets=2).ok


def test_ipv4_masks_are_prefixes_and_ethernet_masks_whole_or_refused() -> None:
    from nice_attendre.errors import UnsupportedFeature
    from nice_attendre.models.ryu.translate import _unmasked

    assert _unmasked("ipv4_dst", "10.0.0.2", "255.255.255.254") == "10.0.0.2/31"
    assert _unmasked("ipv4_dst", "10.0.0.2", "255.255.255.255") == "10.0.0.2"
    assert _unmasked("ipv4_src", "10.0.0.2", "0.0.0.0") is None
    assert _unmasked("eth_dst", "00:00:00:00:00:01", "ff:ff:ff:ff:ff:ff") == "00:00:00:00:00:01"
    assert _unmasked("eth_dst", "00:00:00:00:00:00", "00:00:00:00:00:00") is None
    for name, value, mask in (("ipv4_dst", "10.0.0.0", "255.0.255.0"), ("eth_src", "00:00:00:00:00:00",
                                                                        "ff:ff:ff:00:00:00")):
        with pytest.raises(UnsupportedFeature, match=f"masked match fields \\({name}="):
            _unmasked(name, value, mask)


# ---- packet-outs of frames the app built --------------------------------------------------------

def test_a_built_frame_is_the_packet_in_with_its_headers_and_other_frames_are_refused() -> None:
    from os_ken.lib.packet import arp, ethernet, ipv4, packet, tcp

    from nice_attendre.errors import UnsupportedFeature
    from nice_attendre.models.packet import Header
    from nice_attendre.models.ryu.codec import Codec
    from nice_attendre.models.topology import from_graph, linear_graph

    codec = Codec(from_graph(linear_graph(2)))

    def frame(*protocols: object) -> bytes:
        built = packet.Packet()
        for protocol in protocols:
            built.add_protocol(protocol)
        built.serialize()
        return bytes(built.data)

    eth = ethernet.ethernet(src="00:00:00:00:00:02", dst="00:00:00:00:00:01")
    ip = ipv4.ipv4(src="10.0.0.2", dst="10.0.0.1", proto=6, ttl=7)
    assert codec.header_of(frame(eth, ip, tcp.tcp(src_port=80, dst_port=1234)), 6) == \
        Header("h2", "h1", "10.0.0.2", "10.0.0.1", 80, 1234, 6)
    with pytest.raises(UnsupportedFeature, match="ethernet/arp frame"):
        codec.header_of(frame(ethernet.ethernet(ethertype=0x0806), arp.arp()))
    with pytest.raises(UnsupportedFeature, match="a payload"):
        codec.header_of(frame(ethernet.ethernet(), ipv4.ipv4(proto=6), tcp.tcp(), b"hello"))


# ---- OpenFlow 1.2: a miss is a packet-in, the rest is 1.3's ---------------------------------------

OF12 = APPS / "ryu_openflow12.py"


@pytest.mark.parametrize("protocol", ("openflow", "openflow-b"))
def test_openflow_12_sends_a_flow_mods_buffered_packet_through_the_table(protocol: str) -> None:
    """The buggy app installs its priority-100 quarantine entry (no actions) before the
    flow-mod that releases the buffered packet: a 1.2 switch sends the packet through the
    table, where the quarantine entry drops it (1.0 would apply the flow-mod's output)."""
    good = verify(f"{OF12}:QuarantineAfter12", protocol=protocol, topology="linear:2", properties=["delivery"])
    assert good.ok, [(d.property, d.reason) for d in good.discoveries]
    bad = verify(f"{OF12}:QuarantineFirst12", protocol=protocol, topology="linear:2", properties=["delivery"])
    assert bad.discovery("delivery") is not None


def test_openflow_12_under_attendre_holds_the_packet_until_its_message_set_is_done() -> None:
    """Under Attendre the released packet meets the switch's buffer entry for its message set
    and waits for the set's last message, the quarantine entry, whichever order the app sends
    them in (as Attendre's 1.3 switches do): both apps lose it."""
    for name in ("QuarantineAfter12", "QuarantineFirst12"):
        result = verify(f"{OF12}:{name}", protocol="attendre", topology="linear:2", properties=["delivery"])
        assert result.discovery("delivery") is not None



# ---- EventOFPErrorMsg's data: the refused request's first 64 bytes ---------------------------------

def test_an_errors_data_are_the_refused_flow_mods_first_64_bytes() -> None:
    """The buggy app finds an OpenFlow 1.3 flow-mod header (version 4, type 14) in the data."""
    result = verify(f"{APPS / 'ryu_error_data.py'}:ErrorMisreader13", topology="linear:2", joins_first=True)
    found = result.discovery("app-exception")
    assert found is not None and "AssertionError: (4, 14)" in found.reason, found.reason
