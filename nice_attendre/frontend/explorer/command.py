"""``nice-attendre explore``: serve the state-space explorer for one app, or for a saved trace
(registered lazily on the main group in :mod:`nice_attendre.frontend.cli`).

The options that say what is explored are verify's own (the same objects
:func:`~nice_attendre.frontend.cli_common.scenario_options` makes), without those of a
search (limits, workers, reports). With ``--trace FILE`` the network is rebuilt from the
trace, as ``replay`` does, running only code named on the command line: APP, ``--topology``,
``--property`` and ``--scenario`` then name the trace's files as found here.

Exit status: 130 on Ctrl-C (143 SIGTERM) after the server closed, 2 bad input (a port in
use, a malformed trace, untrusted code), 4 a saved trace that no longer replays.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from nice_attendre.frontend.exit_codes import EXIT_CODES_HELP, ExitCode

#: verify's options that say what is explored (the rest are about a search).
SCENARIO = ("app", "topology", "packets", "flows", "scenario_file", "sender", "receiver", "properties",
            "app_options", "bug", "max_handler_seconds", "threaded_controller", "faults", "command_order")
#: The options that may come with --trace (they name the trace's code and files as found here).
WITH_TRACE = {"app", "topology", "properties", "scenario_file", "max_handler_seconds"}


def _verify_params() -> list[click.Parameter]:
    """verify's scenario parameters :data:`SCENARIO` (APP made optional: --trace names it)."""
    from nice_attendre.frontend.cli_common import scenario_options

    def holder() -> None:
        pass

    scenario_options(holder)
    params = {param.name: param for param in holder.__click_params__}  # type: ignore[attr-defined]
    chosen = [params[name] for name in SCENARIO]
    chosen[0] = click.Argument(["app"], required=False)
    return chosen


def _options(func: Any) -> Any:
    func.__click_params__ = getattr(func, "__click_params__", []) + list(reversed(_verify_params()))
    return func


@click.command(epilog=EXIT_CODES_HELP)
@_options
@click.option("--protocol", "-P", default="openflow", show_default=True, metavar="NAME[:KEY=VALUE,...]",
              help="openflow, openflow-b, attendre, pif, buffer or batch, with the variant's parameters.")
@click.option("--count-load", is_flag=True, help="Count control-plane messages (adds counters to the state).")
@click.option("--trace", "trace_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Open a saved trace (verify --trace-format json --trace-out FILE) at its last step.")
@click.option("--port", type=click.IntRange(min=0, max=65535), default=0, show_default="an unused port",
              help="The port to serve on.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to serve on (anything but the loopback lets others run your app's handlers).")
@click.option("--no-browser", is_flag=True, help="Do not open a browser; only print the URL.")
@click.pass_context
def explore(ctx: click.Context, app: str | None, trace_file: Path | None, port: int, host: str, no_browser: bool,
            protocol: str, count_load: bool, **given: Any) -> None:
    """Explore APP's states in a browser: step through events, open a saved trace.

    Serves a page on the loopback address (the URL is printed) that shows the topology,
    what is in flight, each switch's flow table, buffer and pending commands, the app's
    state, the events enabled (choose one to apply it), the properties, and the path as a
    trace and as a Mermaid sequence diagram. The URL (#path=0.3.1: the indices of the events
    chosen) reproduces the state. Stop it with Ctrl-C.

    APP and the options are verify's. With --trace FILE the network is rebuilt from the
    trace and the page opens at its last step; as with replay, an app, topology, property or
    scenario the trace names by a file must be named again (APP, --topology, --property,
    --scenario).
    """
    from nice_attendre.errors import InputError
    from nice_attendre.watchdog import Watchdog

    if trace_file is None and app is None:
        raise InputError("give APP, or --trace FILE (a trace saved by verify --trace-format json --trace-out)")
    if trace_file is not None:
        extra = [name for name in [*SCENARIO, "protocol", "count_load"]
                 if name not in WITH_TRACE and name != "app"
                 and ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT]
        if extra:
            shown = {"flows": "flow", "scenario_file": "scenario", "app_options": "app-option",
                     "faults": "fault", "properties": "property"}
            raise InputError(f"--trace: the network is rebuilt as the trace says; --"
                             f"{shown.get(extra[0], extra[0]).replace('_', '-')} cannot change it")
    with Watchdog(call_seconds=given["max_handler_seconds"], signals=False) as watchdog:
        if trace_file is not None:
            session, describe, path = _from_trace(trace_file, app, given, watchdog)
        else:
            session, describe = _from_options(app, protocol, count_load, given, watchdog)  # type: ignore[arg-type]
            path = ()
        _serve(session, describe, path, host, port, no_browser)


def _from_options(app: str, protocol: str, count_load: bool, given: dict[str, Any], watchdog: Any) -> Any:
    from nice_attendre.frontend.explorer.session import Session
    from nice_attendre.frontend.api import build
    from nice_attendre.frontend.cli_common import _app_options, _traffic
    from nice_attendre.models.faults import parse_budgets

    traffic = _traffic(given["packets"], given["flows"], given["scenario_file"])
    options = dict(topology=given["topology"], protocol=protocol, **traffic,
                   properties=list(given["properties"]) or None,
                   app_options=_app_options(given["app_options"], given["bug"]), sender=given["sender"],
                   receiver=given["receiver"], count_load=count_load,
                   threaded_controller=given["threaded_controller"], command_order=given["command_order"],
                   faults=parse_budgets(given["faults"]) or None)
    run = build(app, **options, guard=watchdog.guard)
    return Session(run), _describe(run)


def _from_trace(trace_file: Path, app: str | None, given: dict[str, Any], watchdog: Any) -> Any:
    """The session of a saved trace and the path of its events (exit 4 when it no longer replays)."""
    from nice_attendre.frontend.explorer.session import Session
    from nice_attendre.frontend.api import build
    from nice_attendre.frontend.replay import Sources, load_document
    from nice_attendre.frontend.replay_sources import trusted_build
    from nice_attendre.models.event_codec import decode_event

    data = load_document(trace_file)
    sources = Sources(app, given["topology"], tuple(given["properties"]), given["scenario_file"])
    trusted = trusted_build(data["build"], sources)  # before anything is imported or read
    options = {key: value for key, value in trusted.items() if value is not None}
    name = options.pop("app")
    run = build(name, **options, guard=watchdog.guard)
    net = run.network
    types = net.event_types()
    events = [decode_event(item, types, f"event {index}") for index, item in enumerate(data["events"], start=1)]
    session = Session(run)
    state = session.initial
    path = []
    recorded = data["fingerprints"]
    for number, event in enumerate(events, start=1):
        enabled = net.enabled(state)
        if event not in enabled:
            _diverged(f"step {number}: event `{event}` is not enabled here; the app or the model changed")
        path.append(enabled.index(event))
        state, _lines = session.step(state, event)
        if f"{net.fingerprint(state):016x}" != recorded[number]:
            _diverged(f"step {number} (`{event}`) leads to a different state than recorded; the app or the "
                      "model changed")
    session.trace = (tuple(path), str(data["property"]))
    return session, {**_describe(run), "trace_file": str(trace_file)}, tuple(path)


def _diverged(message: str) -> None:
    from nice_attendre.frontend.report import printable

    click.echo(printable(f"Error: the trace does not replay: {message} (see `nice-attendre replay`)"), err=True)
    sys.exit(int(ExitCode.NONDETERMINISTIC))


def _describe(run: Any) -> dict[str, Any]:
    from nice_attendre.frontend.report import printable

    net = run.network
    return {"app": printable(net.app.describe()), "protocol": printable(net.protocol.label()),
            "topology": printable(net.topology.describe()), "traffic": printable(str(net.scenario.describe())),
            "sources": [printable(source.describe()) for source in run.sources]}


def _serve(session: Any, describe: dict[str, Any], path: tuple[int, ...], host: str, port: int,
           no_browser: bool) -> None:
    from nice_attendre.errors import InputError
    from nice_attendre.frontend.explorer.server import Explorer
    from nice_attendre.frontend.explorer.session import format_path

    try:
        server = Explorer(session, describe, host, port)
    except OSError as exc:
        raise InputError(f"cannot serve on {host} port {port}: {exc.strerror or exc}") from None
    url = server.url + (f"#path={format_path(path)}" if path else "")
    if host not in ("127.0.0.1", "localhost", "::1"):
        click.echo(f"explorer: serving on {host}: whoever reaches it can run the app's handlers", err=True)
    click.echo(f"explorer: {url}  (Ctrl-C to stop)")
    if not no_browser and _can_open_browser():
        import webbrowser

        webbrowser.open(url)
    server.serve_forever()


def _can_open_browser() -> bool:
    """Whether a graphical browser can be opened (never a text one in this terminal)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
