"""--engine ray: the partitioned search as Ray actors on a local Ray instance.

Ray is a dependency of the test run (the README's test command installs the 'cluster'
extra): if it cannot be imported or cannot start, these tests fail; they never skip. One
local instance serves the whole module (starting one takes several seconds).
"""
from __future__ import annotations

import sys
from typing import Iterator

import pytest
import ray
from click.testing import CliRunner

from nice_attendre import verify
from nice_attendre.frontend.cli import main
from nice_attendre.errors import InputError


def partitioned(app: str, shards: int, **options: object):
    """The partitioned search with its shards in this process (this module forks no worker
    processes while Ray's threads run)."""
    from nice_attendre.frontend.api import build
    from nice_attendre.parallel import InProcessCluster, search

    run = build(app, **options)  # type: ignore[arg-type]
    built = (run.network, run.properties, run.metrics)
    return search(InProcessCluster(lambda: built, shards), run.network, run.properties)


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.mark.parametrize("app,topology,packets,protocol", [
    ("route-flow", "linear:3", 2, "openflow"),
    ("mac-learning", "linear:1", 2, "attendre"),
])
def test_ray_actors_give_the_sequential_counts(app: str, topology: str, packets: int, protocol: str) -> None:
    sequential = verify(app, topology=topology, packets=packets, protocol=protocol)
    on_ray = verify(app, topology=topology, packets=packets, protocol=protocol, workers=2, engine="ray")
    assert on_ray.complete and on_ray.ok == sequential.ok
    assert on_ray.stats.counts()[:3] == sequential.stats.counts()[:3]
    in_process = partitioned(app, 2, topology=topology, packets=packets, protocol=protocol)
    assert on_ray.stats.counts() == in_process.stats.counts()


def test_ray_actors_own_states_by_a_part_with_the_same_counts() -> None:
    options = dict(topology="linear:2", packets=2, protocol="openflow")
    sequential = verify("mac-learning", **options)
    on_ray = verify("mac-learning", workers=2, engine="ray", partition="app", **options)
    assert on_ray.complete and on_ray.partition == "states owned by their 'app' part"
    assert on_ray.stats.counts()[:3] == sequential.stats.counts()[:3]
    # each actor measured its own work
    assert on_ray.balance is not None and len(on_ray.balance.busy) == 2 and min(on_ray.balance.busy) > 0


def test_a_violation_on_ray_has_the_trace_the_other_engines_find() -> None:
    options = dict(topology="linear:2", packets=1, app_options={"bug": "forget-last-hop"})
    on_ray = verify("route-flow", workers=2, engine="ray", **options)
    three = partitioned("route-flow", 3, **options)
    assert not on_ray.ok and on_ray.stop_reason == "violation"
    assert on_ray.discoveries[0].trace.events == three.discoveries[0].trace.events
    on_ray.discoveries[0].trace.replay(on_ray.system)


def test_a_property_of_transitions_is_checked_by_the_actors() -> None:
    """(It was checked by no engine of the partitioned search: the violation went unseen.)"""
    from pathlib import Path

    step = f"{Path(__file__).resolve().parent / 'data' / 'properties' / 'policies.py'}:ONLY_WEB_STEP"
    options = dict(topology="linear:2", packets=1, properties=[step])
    sequential = verify("route-flow", **options)
    on_ray = verify("route-flow", workers=2, engine="ray", **options)
    three = partitioned("route-flow", 3, **options)
    assert [d.property for d in on_ray.discoveries] == [d.property for d in sequential.discoveries] == [
        "only-web-step"]
    assert on_ray.discoveries[0].trace.events == three.discoveries[0].trace.events
    on_ray.discoveries[0].trace.replay(on_ray.system)


def test_the_command_line_runs_on_ray() -> None:
    out = CliRunner().invoke(main, ["verify", "route-flow", "-t", "linear:2", "-n", "2", "--workers", "2",
                                    "--engine", "ray"])
    assert out.exit_code == 0, out.output
    assert "partitioned over 2 Ray actors" in out.output and "1,026" in out.output


def test_without_ray_installed_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from nice_attendre.ray_engine import RayCluster

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    with pytest.raises(InputError, match=r"pip install 'nice-attendre\[cluster\]'"):
        RayCluster(lambda: None, 2)


def test_a_users_app_file_is_loaded_by_each_actor() -> None:
    from pathlib import Path

    app = f"{Path(__file__).resolve().parents[1] / 'examples' / 'proactive.py'}:ProactiveRouting"
    sequential = verify(app, topology="linear:3", packets=2)
    on_ray = verify(app, topology="linear:3", packets=2, workers=2, engine="ray")
    assert on_ray.ok and on_ray.complete
    assert on_ray.stats.counts()[:3] == sequential.stats.counts()[:3]


def test_an_error_in_an_actor_reaches_the_caller_as_itself() -> None:
    from pathlib import Path

    from nice_attendre.fingerprint import FingerprintError

    app = f"{Path(__file__).resolve().parent / 'data' / 'apps' / 'opaque_state.py'}:CountPacketIns"
    with pytest.raises(FingerprintError, match="cannot fingerprint a value of type Opaque"):
        verify(app, topology="linear:1", workers=2, engine="ray")


def test_a_handler_stuck_in_an_actor_is_an_app_exception() -> None:
    """Each actor bounds its app's handlers as the sequential search does (it used to hang)."""
    from pathlib import Path

    app = f"{Path(__file__).resolve().parent / 'data' / 'apps' / 'careless.py'}:Loops"
    on_ray = verify(app, topology="linear:1", workers=2, engine="ray", max_handler_seconds=0.5)
    assert not on_ray.ok and on_ray.stop_reason == "violation"
    discovery = on_ray.discoveries[0]
    assert discovery.property == "app-exception"
    assert "Loops.on_packet_in did not return within 0.5 s" in discovery.reason
