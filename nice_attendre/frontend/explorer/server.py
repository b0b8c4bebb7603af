"""The explorer's HTTP server: the page (plain HTML, JavaScript and CSS, no build step) and
a JSON API over one :class:`~nice_attendre.frontend.explorer.session.Session`.

The standard library's :class:`http.server.ThreadingHTTPServer`: one user on the loopback
address needs no framework, and threads because a browser opens speculative connections it
may never use (a single-threaded server would wait on one and stall the page). The network
is not thread-safe and the per-call time limit of app handlers works only in the main
thread (:mod:`nice_attendre.watchdog`), so request threads never touch it: they hand each
API call to the main thread (:class:`MainThread`) and wait for its answer.

API (every answer JSON; errors ``{"error": "one line"}`` with a 4xx status, never a
traceback):

* ``GET /api/info``: the app, protocol, topology (its layout), the properties, the saved
  trace's path (``explore --trace``) and the longest path accepted;
* ``GET /api/state?path=0.3.1``: the state at that path (see :func:`state_answer`).

400: a malformed path or one longer than :data:`~nice_attendre.frontend.explorer.session.MAX_PATH`;
404: an unknown URL or an event index beyond those enabled; 405: another method than GET.
"""
from __future__ import annotations

import json
import queue
import sys
import threading
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit

from nice_attendre.frontend.explorer.session import MAX_PATH, PathError, Session, format_path, parse_path
from nice_attendre.frontend.report import printable

#: The page's files (package data) and their content types.
STATIC = {"/": ("index.html", "text/html; charset=utf-8"), "/index.html": ("index.html", "text/html; charset=utf-8"),
          "/app.js": ("app.js", "text/javascript; charset=utf-8"), "/style.css": ("style.css", "text/css; charset=utf-8")}


class RequestError(Exception):
    """A request the API refuses: ``status`` and one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class MainThread:
    """Runs the calls request threads hand it in the thread that calls :meth:`serve` (the
    main one), one at a time."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[Callable[[], Any], Future[Any]]] = queue.Queue()
        self._closed = threading.Event()

    def call(self, function: Callable[[], Any]) -> Any:
        """``function()`` run in the serving thread; its exception is raised here."""
        if self._closed.is_set():
            raise RequestError(503, "the explorer is stopping")
        future: Future[Any] = Future()
        self._jobs.put((function, future))
        while True:
            try:
                return future.result(timeout=0.5)
            except FutureTimeout:
                if self._closed.is_set():
                    raise RequestError(503, "the explorer is stopping") from None

    def serve(self) -> None:
        """Run calls until interrupted (Ctrl-C raises out of here) or :meth:`close`."""
        try:
            while not self._closed.is_set():
                try:
                    function, future = self._jobs.get(timeout=0.2)
                except queue.Empty:
                    continue
                if not future.set_running_or_notify_cancel():
                    continue
                try:
                    future.set_result(function())
                except Exception as exc:  # noqa: BLE001 - handed to the request's thread
                    future.set_exception(exc)
        finally:
            self._closed.set()

    def close(self) -> None:
        self._closed.set()


def info_answer(session: Session, describe: dict[str, Any]) -> dict[str, Any]:
    """``/api/info``: ``describe`` (app, protocol, topology, traffic as the command line
    says them), the layout, the properties and the saved trace, if any."""
    from nice_attendre.frontend.explorer.state_json import layout

    trace = session.trace
    return {**describe, "layout": layout(session.net), "max_path": MAX_PATH,
            "properties": [{"name": p.name, "expectation": p.expectation.value, "description": p.description}
                           for p in session.run.properties],
            "initial_lines": [printable(line) for line in session.initial_lines],
            "trace": None if trace is None else {"path": format_path(trace[0]), "property": trace[1]}}


def state_answer(session: Session, path: tuple[int, ...]) -> dict[str, Any]:
    """``/api/state``: the state at ``path`` (:func:`~nice_attendre.frontend.explorer.state_json.state_json`),
    the events enabled there (narrated), the path's steps (each event with its narration), the
    properties (:meth:`Session.properties`) and the path as a text trace and a Mermaid diagram."""
    from nice_attendre.frontend.explorer.state_json import state_json

    walk = session.walk(path)
    before = walk.states[-2] if len(walk.states) > 1 else None
    properties = session.properties(walk)
    violated = next((p for p in properties if p["status"] == "violated"), None)
    text, mermaid = session.trace_text(walk, violated)
    steps = [{"number": number, "index": index, "event": printable(str(event)),
              "lines": [printable(line) for line in lines]}
             for number, (index, event, lines) in enumerate(zip(walk.path, walk.events, walk.lines), start=1)]
    enabled = session.enabled(walk.state)
    for item in enabled:
        item["summary"] = printable(item["summary"])
        item["lines"] = [printable(line) for line in item["lines"]]
        item["event"] = printable(item["event"])
    state = state_json(session.net, walk.state, before)
    changed = [] if before is None else changed_parts(state_json(session.net, before), state)
    return {"path": format_path(path), "depth": len(path), "quiescent": not enabled, "state": state,
            "changed": changed, "enabled": enabled, "steps": steps, "properties": properties,
            "trace_text": text, "mermaid": "\n".join(mermaid)}


def changed_parts(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What the last step changed, by the ids the page draws: switches (``s1``), hosts
    (``h1``), links (``s1:2-s2:1``: what is in flight on them, or up/down) and ``app``."""
    found = []
    for kind in ("switches", "hosts"):
        was = {item["id"]: item for item in before[kind]}
        found += [item["id"] for item in after[kind] if was.get(item["id"]) != item]
    was_links = {(link["a"], link["b"]): link for link in before["links"]}
    found += [f"{link['a']}-{link['b']}" for link in after["links"] if was_links.get((link["a"], link["b"])) != link]
    if before["app"]["text"] != after["app"]["text"]:
        found.append("app")
    return found


def make_handler(session: Session, main: MainThread, describe: dict[str, Any]) -> type[BaseHTTPRequestHandler]:
    """The request handler class serving ``session`` (its calls run by ``main``)."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "nice-attendre-explore"
        error_content_type = "application/json"
        error_message_format = '{"error": "%(code)d %(message)s"}'

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet: one user
            pass

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _json(self, status: int, data: Any) -> None:
            self._send(status, json.dumps(data).encode("utf-8"), "application/json")

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            try:
                url = urlsplit(self.path)
                if url.path in STATIC:
                    name, kind = STATIC[url.path]
                    body = resources.files("nice_attendre.frontend.explorer").joinpath("static", name).read_bytes()
                    self._send(200, body, kind)
                elif url.path == "/api/info":
                    self._json(200, main.call(lambda: info_answer(session, describe)))
                elif url.path == "/api/state":
                    path = _path_of(url.query)
                    self._json(200, main.call(lambda: state_answer(session, path)))
                else:
                    raise RequestError(404, f"no such page: {printable(url.path[:100])}")
            except (RequestError, PathError) as exc:
                self._json(exc.status, {"error": exc.message})
            except (BrokenPipeError, ConnectionResetError):
                pass  # the browser went away
            except Exception as exc:  # noqa: BLE001 - a bad app or a bug of ours: one line, no traceback
                from nice_attendre.errors import NiceAttendreError

                status = 409 if isinstance(exc, NiceAttendreError) else 500
                line = printable(" ".join(f"{type(exc).__name__}: {exc}".split()))
                if status == 500:
                    print(f"explorer: internal error: {line}", file=sys.stderr, flush=True)
                try:
                    self._json(status, {"error": line})
                except OSError:
                    pass

        def do_HEAD(self) -> None:  # noqa: N802
            self.do_GET()

        def _refuse(self) -> None:
            self._json(HTTPStatus.METHOD_NOT_ALLOWED, {"error": f"{self.command} not allowed: the explorer only "
                                                                 "answers GET"})

        do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse  # noqa: N815

    return Handler


def _path_of(query: str) -> tuple[int, ...]:
    """The ``path`` parameter of ``query`` (absent: the initial state)."""
    try:
        values = parse_qs(query, keep_blank_values=True, strict_parsing=bool(query), max_num_fields=4)
    except ValueError as exc:
        raise RequestError(400, f"malformed query: {printable(str(exc))[:200]}") from None
    unknown = sorted(set(values) - {"path"})
    if unknown:
        raise RequestError(400, f"unknown parameter {printable(unknown[0][:40])!r} (only: path)")
    found = values.get("path", [""])
    if len(found) != 1:
        raise RequestError(400, "give one path")
    return parse_path(found[0])


class Explorer:
    """The server bound to ``host``:``port`` (0: an unused port) for ``session``; the model's
    calls run in the thread that calls :meth:`serve_forever`."""

    def __init__(self, session: Session, describe: dict[str, Any], host: str = "127.0.0.1", port: int = 0) -> None:
        import socket

        self.main = MainThread()
        server = ThreadingHTTPServer
        if ":" in host:  # an IPv6 address (::1)
            server = type("ThreadingHTTPServer6", (ThreadingHTTPServer,), {"address_family": socket.AF_INET6})
        self.httpd = server((host, port), make_handler(session, self.main, describe))
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="explorer-http", daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        shown = f"[{host}]" if ":" in str(host) else str(host)
        return f"http://{shown}:{port}/"

    def serve_forever(self) -> None:
        """Serve until Ctrl-C (the KeyboardInterrupt goes on up) or :meth:`stop`; the socket is
        closed on the way out."""
        self._thread.start()
        try:
            self.main.serve()
        finally:
            self.main.close()
            self.httpd.shutdown()
            self.httpd.server_close()

    def stop(self) -> None:
        self.main.close()
