"""Writing output files so that nothing is lost and nothing stale looks valid.

Every file the tool writes (``--json``, ``--csv``, ``--plot``, checkpoints) goes through
:func:`write_atomic`: the data goes to a temporary file in the same folder, is flushed to
disk, and then renamed over the target (``os.replace``, atomic on POSIX and Windows), so a
failed or interrupted write never leaves a truncated file. Before a long run,
:func:`prepare` checks that each output can be written (so a write error never comes after
the search and hides its verdict) and removes an earlier run's file, so a run killed before
it writes leaves no stale file that looks like its own.

Special files (``/dev/stdout``, a named pipe) are written directly: they cannot be renamed
over, and are never stale.
"""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Callable

from nice_attendre.errors import InputError


class OutputError(InputError):
    """An output file cannot be written (its folder is missing or read-only, the disk is full)."""


def _target(path: Path) -> Path:
    """``path`` with symbolic links resolved: the file that is really written."""
    return Path(os.path.realpath(path))


def _is_special(path: Path) -> bool:
    """Whether ``path`` exists and is not a regular file (a device, a pipe)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def check_writable(path: Path, option: str) -> None:
    """Raise :class:`OutputError` unless ``path`` can be written: its folder exists and
    accepts new files (tried by creating and removing one), and it is not a folder."""
    target = _target(path)
    if _is_special(target):
        if not os.access(target, os.W_OK):
            raise OutputError(f"cannot write {option} {str(path)!r}: permission denied")
        return
    if target.is_dir():
        raise OutputError(f"cannot write {option} {str(path)!r}: it is a folder")
    folder = target.parent
    if not folder.is_dir():
        raise OutputError(f"cannot write {option} {str(path)!r}: folder {str(path.parent)!r} not found")
    try:
        handle, probe = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".probe")
    except OSError as exc:
        raise OutputError(f"cannot write {option} {str(path)!r}: {_why(exc)}") from exc
    os.close(handle)
    os.unlink(probe)


def prepare(path: Path | None, option: str) -> None:
    """Before a run: check that ``path`` can be written and remove an earlier file there
    (a run that is killed before it writes must not leave an older run's output behind)."""
    if path is None:
        return
    check_writable(path, option)
    target = _target(path)
    if target.is_file():
        try:
            target.unlink()
        except OSError as exc:
            raise OutputError(f"cannot replace {option} {str(path)!r}: {_why(exc)}") from exc


def _mode_for(target: Path) -> int:
    """The permissions a new file gets here: the old file's, or 0o666 less the umask."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def write_with(path: Path, writer: Callable[[Path], None], option: str) -> None:
    """Let ``writer`` write a temporary file in ``path``'s folder (named with ``path``'s
    suffix, for writers that infer the format from it), then rename it to ``path``.

    On any failure the temporary file is removed and ``path`` is left as it was; an
    ``OSError`` becomes :class:`OutputError`.
    """
    target = _target(path)
    if _is_special(target):
        try:
            writer(target)
        except OSError as exc:
            raise OutputError(f"cannot write {option} {str(path)!r}: {_why(exc)}") from exc
        return
    try:
        handle, temp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}.tmp-", suffix=target.suffix)
    except OSError as exc:
        raise OutputError(f"cannot write {option} {str(path)!r}: {_why(exc)}") from exc
    os.close(handle)
    temp = Path(temp_name)
    try:
        writer(temp)
        with open(temp, "rb") as flushed:
            os.fsync(flushed.fileno())
        os.chmod(temp, _mode_for(target))
        os.replace(temp, target)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise OutputError(f"cannot write {option} {str(path)!r}: {_why(exc)}") from exc
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def write_atomic(path: Path, data: str | bytes, option: str) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` atomically (see :func:`write_with`)."""
    payload = data.encode("utf-8") if isinstance(data, str) else data

    def write(temp: Path) -> None:
        with open(temp, "wb") as handle:
            handle.write(payload)

    write_with(path, write, option)
