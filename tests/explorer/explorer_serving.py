"""``nice-attendre explore`` in a child process, for the explorer's tests: start it, read the
URL it prints, ask its JSON API, stop it."""
from __future__ import annotations

import json
import queue
import shutil
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from conftest import child_preexec

#: Seconds a child may take to build the network and print its URL (a busy 2-core machine).
START_SECONDS = 120


class Served:
    """A running ``explore`` child: ``url`` (with the #path it printed, if any), ``base``
    (the server's root URL), ``proc``."""

    def __init__(self, *args: str, cwd: Path) -> None:
        found = shutil.which("nice-attendre", path=str(Path(sys.executable).parent))
        assert found is not None
        self.proc = subprocess.Popen([found, "explore", *args, "--no-browser"], cwd=cwd, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, preexec_fn=child_preexec())
        lines: queue.Queue[str] = queue.Queue()
        assert self.proc.stdout is not None
        stdout = self.proc.stdout
        threading.Thread(target=lambda: [lines.put(line) for line in stdout], daemon=True).start()
        try:
            first = lines.get(timeout=START_SECONDS)
        except queue.Empty:
            self.stop()
            raise AssertionError("explore printed no URL") from None
        assert first.startswith("explorer: http://127.0.0.1:"), first
        self.url = first.split()[1]
        self.base = self.url.split("#")[0]

    def get(self, path: str, method: str = "GET") -> tuple[int, Any]:
        """(status, the decoded JSON answer) of ``path`` (relative to the root)."""
        request = urllib.request.Request(self.base + path, method=method)
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as error:
            body = error.read().decode("utf-8")
            assert "Traceback" not in body, body
            return error.code, json.loads(body)

    def raw(self, path: str) -> tuple[int, str, bytes]:
        with urllib.request.urlopen(self.base + path, timeout=60) as answer:
            return answer.status, answer.headers.get("Content-Type", ""), answer.read()

    def stop(self, signum: int = signal.SIGINT) -> tuple[int, str]:
        """Send ``signum``; the exit status and stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signum)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        assert self.proc.stderr is not None
        return self.proc.returncode, self.proc.stderr.read()
