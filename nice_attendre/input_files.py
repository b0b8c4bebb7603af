"""Reading a data file the user names (a saved trace, a scenario, a topology or parameter
file): a regular file only, and never more than a bound.

``/dev/zero``, ``/dev/stdin``, a FIFO or a directory given where a file is expected would
otherwise be read until memory runs out, or block for ever; a huge file would be read whole
before anything looked at it. :func:`read_bounded` refuses anything but a regular file
before opening it (opening a device may itself do something), opens without blocking,
checks the file again on the open descriptor, and reads at most ``limit + 1`` bytes: a file
larger than ``limit`` is one clear error naming the limit, never a partial read.

Domain-free (the core's stdlib-only rule holds): each caller passes what the file is called
in messages and its own error class (a subclass of
:class:`~nice_attendre.errors.InputError`, CLI exit code 2).
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from nice_attendre.errors import InputError

MiB = 1 << 20

#: The most bytes of a saved trace (``replay``) read: a trace's events take about 300 bytes
#: each with their narration, so some 200,000 events, far beyond any real counterexample.
TRACE_BYTES = 64 * MiB
#: The most bytes of a TOML or JSON file of settings read (a ``--scenario`` file, the
#: ``delay`` parameter file): a flow takes about 50 bytes, so some 20,000 flows.
SETTINGS_BYTES = 1 * MiB
#: The most bytes of a topology file (GraphML, GML, edge list) read: the largest graphs of
#: the Internet Topology Zoo take a few hundred kB.
TOPOLOGY_BYTES = 16 * MiB


def _kind(mode: int) -> str:
    """What a file that is not a regular one is, for messages."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _size(limit: int) -> str:
    """``limit`` bytes, said the way people say file sizes."""
    if limit >= MiB and limit % MiB == 0:
        return f"{limit // MiB} MiB"
    return f"{limit} bytes"


def read_bounded(path: str | Path, what: str, limit: int, error: type[InputError] = InputError) -> bytes:
    """The bytes of the regular file ``path`` (symbolic links followed), at most ``limit``.

    Raises ``error`` with one line naming ``what`` ("scenario file") and the path when the
    file is missing or unreadable, is not a regular file (a directory, FIFO, device or
    socket: it is refused before it is opened), or holds more than ``limit`` bytes (the
    message names the limit; at most ``limit + 1`` bytes are ever read)."""
    name = str(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise error(f"cannot read {what} {name!r}: not found") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the name
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise error(f"cannot read {what} {name!r}: {why}") from None
    if not stat.S_ISREG(info.st_mode):
        raise error(f"{what} {name!r} is {_kind(info.st_mode)}, not a regular file")
    too_large = f"{what} {name!r} is larger than {_size(limit)}, the most nice-attendre reads"
    if info.st_size > limit:
        raise error(too_large)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as exc:
        raise error(f"cannot read {what} {name!r}: {exc.strerror or exc}") from None
    try:
        opened = os.fstat(descriptor)
        if not stat.S_ISREG(opened.st_mode):  # replaced between the two looks
            raise error(f"{what} {name!r} is {_kind(opened.st_mode)}, not a regular file")
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(descriptor, min(left, MiB))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise error(f"cannot read {what} {name!r}: {exc.strerror or exc}") from None
    finally:
        os.close(descriptor)
    if left <= 0:
        raise error(too_large)
    return b"".join(chunks)


def read_text(path: str | Path, what: str, limit: int, error: type[InputError] = InputError) -> str:
    """:func:`read_bounded`, decoded as UTF-8 (else ``error``: "is not UTF-8 text")."""
    data = read_bounded(path, what, limit, error)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{what} {str(path)!r} is not UTF-8 text (byte {exc.start})") from None
