"""Issue 32, section 2: the parts of discovery that need no solver (repairing addresses, the
packets' flows, the default traffic kept exactly, the child process)."""
from __future__ import annotations

import pytest

from nice_attendre.discover.domain import Candidate, Domain, repair_address
from nice_attendre.discover.run import merged_scenario
from nice_attendre.discover.traffic import default_flows, toml_text
from nice_attendre.frontend.api import build
from nice_attendre.models.flows import load_file
from nice_attendre.models.topology import load_topology


@pytest.mark.parametrize("text, address", [("10.9.", "10.9.0.0"), ("10.66.1.2", "10.66.1.2"), ("999.1", "255.1.0.0"),
                                           ("1.2.3.4.5", "1.2.3.4"), ("", None), ("\x00.1", None), ("...", None)])
def test_what_the_solver_gives_for_an_address_is_repaired(text: str, address: str | None) -> None:
    assert repair_address(text) == address


def test_a_candidate_is_exactly_what_its_flow_sends() -> None:
    domain = Domain(load_topology("linear:2"))
    raw = {"dpid": 1, "in_port": 1, "dst": 0, "ip_src": "10.66.", "ip_dst": "x", "tp_src": 0, "tp_dst": 8080,
           "ip_proto": 6}
    candidate = domain.candidate(raw)
    assert candidate == Candidate("h1", "h2", 6, 0, 8080, "10.66.0.0", "10.0.0.2", 1, 1)
    assert str(candidate.flow()) == "h1->h2:proto=tcp,dport=8080,ip_src=10.66.0.0,reply=none"
    assert candidate.flow().header() == candidate.header()
    # not a host's port, a port out of range, an unknown protocol, an address that is a host's
    assert domain.candidate({**raw, "in_port": 2}) is None
    assert domain.candidate({**raw, "tp_dst": 70000}) is None
    assert domain.candidate({**raw, "ip_proto": 1}) is None
    address = domain.destinations("h1").index("address")
    assert domain.candidate({**raw, "dst": address, "ip_dst": "10.0.0.2"}) is None
    virtual = domain.candidate({**raw, "dst": address, "ip_dst": "10.0.0.100"})
    assert virtual is not None and virtual.dst == virtual.ip_dst == virtual.eth_dst == "10.0.0.100"


def test_the_scenario_file_reads_back_as_the_same_flows(tmp_path) -> None:
    flows = [Candidate("h1", "broadcast", 17, 5, 53, "10.66.0.0", "255.255.255.255", 1, 1).flow(),
             Candidate("h2", "10.0.0.100", 0, 1, 0, "10.0.0.2", "10.0.0.100", 2, 2).flow()]
    path = tmp_path / "s.toml"
    path.write_text(toml_text(flows, ["first", None]))
    assert load_file(path) == (tuple(flows), ())


def test_a_ping_is_kept_as_a_flow_and_moves_keep_the_apps_own_scenario() -> None:
    ping = build("route-flow").network.scenario
    flows, lost = default_flows(ping)
    assert [str(flow) for flow in flows] == ["h1->h2"] and lost is None

    mobile = build("mac-learning").network.scenario
    flows, lost = default_flows(mobile)
    assert lost == "not expressible as flows: h2's moves"
    extra = Candidate("h2", "broadcast", 0, 0, 0, "10.0.0.2", "255.255.255.255", 1, 2).flow()
    merged = merged_scenario(mobile, [extra])
    h1, h2 = merged.spec("h1"), merged.spec("h2")
    assert h1 == mobile.spec("h1")
    assert h2.moves == mobile.spec("h2").moves and h2.replies
    assert h2.script == mobile.spec("h2").script + extra.script()


def test_the_child_process_returns_data_or_says_why_not() -> None:
    from nice_attendre.discover.isolate import ChildFailed, in_child

    assert in_child(lambda: {"a": [1, "b"]}, 30) == {"a": [1, "b"]}
    with pytest.raises(ChildFailed, match="the solver failed: ValueError: boom"):
        in_child(lambda: (_ for _ in ()).throw(ValueError("boom")), 30)
    with pytest.raises(ChildFailed, match="no answer within 0.5 s"):
        in_child(lambda: __import__("time").sleep(30), 0.5)


def test_the_scenario_file_names_each_flow_even_without_default_traffic() -> None:
    from nice_attendre.discover.canonical import Found
    from nice_attendre.discover.run import Discovery

    packet = Candidate("h1", "h2", 6, 0, 8080, "10.66.0.0", "10.0.0.2", 1, 1)
    found = Found(packet, frozenset({("/x/app.py", 7)}), None, 0)
    discovery = Discovery((found,), (), (), (), (packet.flow(),), (), 1.0, (), None, False)
    text = discovery.scenario_toml()
    assert "# discovered: h1 -> h2 tcp 10.66.0.0:0 -> 10.0.0.2:8080 (s1 port 1)" in text
    assert "default traffic is not (all) expressible" in text
    assert "# the app's default traffic" not in text


def test_the_app_states_share_what_is_left_of_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A state's search that runs over its share leaves less to the states after it; with
    under MIN_SHARE left a state is not explored (a fake clock: no waiting)."""
    import nice_attendre.discover.engine as engine
    import nice_attendre.discover.run as run

    now = [0.0]
    given: list[float] = []

    class Clock:
        @staticmethod
        def monotonic() -> float:
            return now[0]

    def explore(app, state, domain, seconds):
        given.append(seconds)
        now[0] += seconds * 2  # CrossHair runs over: twice its share
        return engine.Exploration((), seconds * 2, "time")

    monkeypatch.setattr(run, "time", Clock)
    monkeypatch.setattr(engine, "explore", explore)
    domain = Domain(load_topology("linear:2"))
    data = run._search(None, ["s0", "s1", "s2"], domain, (), 30.0)
    assert given == [10.0, 5.0]  # 30/3; then (30-20)/2; then nothing is left
    assert data["explorations"][2] == (2, 0, 0.0, "time")
