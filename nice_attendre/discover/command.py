"""``nice-attendre discover``: the packets, the branches they take, the scenario file."""
from __future__ import annotations

import json
from pathlib import Path

import click

from nice_attendre.discover.run import DEFAULT_SECONDS
from nice_attendre.frontend.cli_common import FiniteFloat, _app_options, _check_output


@click.command()
@click.argument("app")
@click.option("--topology", "-t", default=None, metavar="SPEC", help="Topology (default: the app's).")
@click.option("--packets", "-n", default=1, show_default=True, type=click.IntRange(min=0, max=1000),
              help="Packets of the app's default traffic (its ping), which the scenario keeps.")
@click.option("--sender", default=None, metavar="HOST", help="Sender of the default traffic.")
@click.option("--receiver", default=None, metavar="HOST", help="Receiver of the default traffic.")
@click.option("--app-option", "-o", "app_options", multiple=True, metavar="KEY=VALUE",
              help="Pass an option to the app's constructor (repeatable).")
@click.option("--bug", default=None, metavar="NAME", help="A buggy variant of the app (its 'bug' option).")
@click.option("--discover-seconds", "seconds", type=FiniteFloat(strict=True), default=DEFAULT_SECONDS,
              show_default=True, metavar="S", help="Seconds of solver time.")
@click.option("--scenario-out", "scenario_out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the scenario (the default traffic, then one flow per packet) to FILE.toml, for "
                   "`verify --scenario`.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the discovery as JSON to FILE.")
def discover(app: str, topology: str | None, packets: int, sender: str | None, receiver: str | None,
             app_options: tuple[str, ...], bug: str | None, seconds: float, scenario_out: Path | None,
             json_path: Path | None) -> None:
    """Discover representative packets of APP's packet-in handler (symbolic execution).

    CrossHair explores the handler with the packet's header fields, the switch and the in
    port symbolic, in app states the model reaches; each distinct path gives one packet a
    host can send. Needs the 'discover' extra (pip install 'nice-attendre[discover]').
    """
    from nice_attendre.discover.run import discover as run_discovery
    from nice_attendre.output import write_atomic

    _check_output(json_path, "--json")
    _check_output(scenario_out, "--scenario-out")
    found = run_discovery(app, topology=topology, packets=packets, app_options=_app_options(app_options, bug),
                          sender=sender, receiver=receiver, seconds=seconds)
    click.echo("\n".join(found.text_lines()))
    if scenario_out is not None:
        write_atomic(scenario_out, found.scenario_toml(), "--scenario-out")
        click.echo(f"  scenario written to {scenario_out}")
    if json_path is not None:
        write_atomic(json_path, json.dumps({"discovery": found.as_json()}, indent=2) + "\n", "--json")
