"""Run the symbolic search in a child process: nothing of it reaches the model.

CrossHair's proxies flow through the app's code and through whatever that code calls (the
topology's lookups, caches such as the address module's): a forked child runs the search
and sends back plain data only (JSON: ints, strs, lists), then exits with everything it
touched. The parent waits at most ``seconds``; a child that does not answer by then is
ended (SIGKILL) and the parent carries on without its result (a fallback, reported).
"""
from __future__ import annotations

import json
import multiprocessing
import os
import signal
import traceback
from typing import Any, Callable


class ChildFailed(Exception):
    """The child gave no result: it failed, died or ran out of time (the message says which)."""


def in_child(work: Callable[[], Any], seconds: float) -> Any:
    """``work()`` (returning JSON data) run in a forked child; its result, or
    :class:`ChildFailed`. Ctrl-C in the parent ends the child and propagates."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(work, send), daemon=True)
    child.start()
    send.close()
    try:
        if not receive.poll(seconds):
            raise ChildFailed(f"the solver gave no answer within {seconds:g} s")
        try:
            message = receive.recv_bytes()
        except EOFError:
            raise ChildFailed(f"the solver's process ended without an answer (exit {child.exitcode})") from None
        status, payload = json.loads(message.decode("utf-8"))
        if status != "ok":
            raise ChildFailed(f"the solver failed: {payload}")
        return payload
    finally:
        receive.close()
        if child.is_alive():
            os.kill(child.pid, signal.SIGKILL)
        child.join()


def _child(work: Callable[[], Any], send: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it ends this process
    quiet = os.open(os.devnull, os.O_WRONLY)  # CrossHair's debugging output, the app's prints
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    try:
        reply: list[Any] = ["ok", work()]
    except BaseException as exc:  # noqa: BLE001 - any failure is reported to the parent as data
        last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
        where = f" at {last[0].filename}:{last[0].lineno}" if last else ""
        reply = ["failed", f"{type(exc).__name__}: {exc}{where}"]
    try:
        send.send_bytes(json.dumps(reply).encode("utf-8"))
    finally:
        send.close()
        os._exit(0)  # nothing of the child's state is flushed or finalised
