"""--simulate --engine ray: walks on Ray actors give the counts, coverage and trace of the same
seeded run in one process (every walk is drawn from its own seed, whichever worker runs it).

As tests/test_ray_engine.py: Ray is a dependency of the test run; one local instance serves
the module, and nothing here forks worker processes while Ray's threads run (the process
runs are compared in tests/cli/test_simulate_cli.py).
"""
from __future__ import annotations

from typing import Iterator

import pytest
import ray
from click.testing import CliRunner

from nice_attendre import verify
from nice_attendre.frontend.cli import main


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def same(result) -> tuple:  # type: ignore[no-untyped-def]
    coverage = result.simulation.as_json()
    for key in ("workers", "engine"):
        coverage.pop(key)
    return (result.stats.counts(), result.stop_reason, coverage,
            [(d.property, d.reason, d.unshrunk_length, d.trace.events) for d in result.discoveries])


@pytest.mark.parametrize("options", [
    dict(app="mac-learning", topology="linear:2", packets=3, command_order="any", properties=["no-stale-routes"],
         seed=1),
    dict(app="route-flow", topology="linear:3", packets=2, seed=7, walks=150),
    dict(app="mac-learning", topology="linear:2", packets=2, seed=3, walks=80, keep_going=True,
         app_options={"bug": "delayed-direct-path"}),
], ids=["first-violation", "correct-app", "keep-going"])
def test_ray_actors_give_the_counts_and_trace_of_one_process(options: dict) -> None:
    options = dict(options)
    app = options.pop("app")
    alone = verify(app, simulate=True, **options)
    on_ray = verify(app, simulate=True, workers=2, engine="ray", **options)
    assert same(on_ray) == same(alone)
    assert on_ray.simulation.engine == "ray" and on_ray.simulation.workers == 2
    assert not on_ray.ok


def test_the_command_line_on_ray() -> None:
    result = CliRunner().invoke(main, ["verify", "route-flow", "-t", "linear:2", "--simulate", "--seed", "2",
                                       "--walks", "30", "--engine", "ray", "--workers", "2"])
    assert result.exit_code == 3, result.output
    assert "2 Ray actors)" in result.output
    assert result.output.splitlines()[-1] == "INCOMPLETE: no violation in 30 walks (not a proof; ran the walks asked for)"
