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

The standard streams are guarded too (:func:`guard_streams`): a write to stdout that fails
(a full disk, an I/O error) raises :class:`StreamError` once, naming the stream, and the
stream is silenced afterwards (so that nothing fails again at exit); a write to stderr that
fails is only noted, so that lost progress lines or warnings never stop a search. Either way
the command exits with its own code (see ``nice_attendre.frontend.exit_codes``).
"""
from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator

from nice_attendre.errors import InputError


class OutputError(InputError):
    """An output file cannot be written (its folder is missing or read-only, the disk is full)."""


class OutputWriteError(OutputError):
    """Writing an output file failed after its checks passed (the disk filled up, an I/O
    error): not bad input, but lost output."""


class StreamError(OSError):
    """Writing to a standard stream failed for another reason than a closed pipe (which stays
    :class:`BrokenPipeError`): ``stream`` is ``stdout`` or ``stderr``, ``cause`` the error.
    Its ``errno`` is None, so that code looking for ``EPIPE`` does not take it for one."""

    def __init__(self, stream: str, cause: OSError) -> None:
        super().__init__(f"cannot write to {stream}: {_why(cause)}")
        self.stream = stream
        self.cause = cause


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
    if exc.strerror:
        return exc.strerror
    if exc.errno is not None:
        return os.strerror(exc.errno)
    return str(exc) or type(exc).__name__


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
    ``OSError`` becomes :class:`OutputWriteError`.
    """
    target = _target(path)
    if _is_special(target):
        try:
            writer(target)
        except OSError as exc:
            raise OutputWriteError(f"cannot write {option} {str(path)!r}: {_why(exc)}") from exc
        return
    try:
        handle, temp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}.tmp-", suffix=target.suffix)
    except OSError as exc:
        raise OutputWriteError(f"cannot write {option} {str(path)!r}: {_why(exc)}") from exc
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
        raise OutputWriteError(f"cannot write {option} {str(path)!r}: {_why(exc)}") from exc
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


class StreamGuard:
    """What :func:`guard_streams` saw: ``failures`` maps a stream's name (``stdout``,
    ``stderr``) to the first error writing it."""

    def __init__(self) -> None:
        self.failures: dict[str, OSError] = {}

    @property
    def lost_output(self) -> bool:
        """Whether output was lost for another reason than a closed pipe on stdout."""
        return any(not (name == "stdout" and isinstance(exc, BrokenPipeError))
                   for name, exc in self.failures.items())

    def message(self) -> str | None:
        """One line naming the first stream that failed (``None`` when none did)."""
        for name, exc in self.failures.items():
            if not isinstance(exc, BrokenPipeError):
                return f"cannot write to {name}: {_why(exc)}"
        return None


def silence(stream: Any) -> None:
    """Point ``stream``'s file descriptor at the null device, so that the interpreter's last
    flush of what it still buffers cannot fail again at exit (nothing for a stream without a
    real descriptor, such as a test's captured output)."""
    try:
        fd = stream.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
    except (OSError, ValueError, AttributeError):
        return
    try:
        os.dup2(devnull, fd)
    except OSError:
        pass
    finally:
        os.close(devnull)


class GuardedStream:
    """A standard stream whose write errors are handled once (see the module docstring):
    everything else is the wrapped stream's. ``raises``: whether a failure raises (stdout)
    or is only noted (stderr)."""

    def __init__(self, stream: Any, name: str, guard: StreamGuard, raises: bool, binary: bool = False) -> None:
        self._stream = stream
        self._name = name
        self._guard = guard
        self._raises = raises
        self._is_binary = binary
        self._binary: GuardedStream | None = None

    def _failed(self, exc: OSError) -> None:
        if self._name not in self._guard.failures:
            self._guard.failures[self._name] = exc
            silence(self._stream)
            if self._raises:
                if isinstance(exc, BrokenPipeError):
                    raise exc
                raise StreamError(self._name, exc) from exc

    def write(self, data: Any) -> int:
        """Write ``data``; after a failure, drop it. An empty write only checks the type:
        Click probes whether a stream is binary with ``write(b"")``, and swallows what it
        raises, so the stream is not touched then (a failure there would go unreported)."""
        if not data:
            if isinstance(data, (bytes, bytearray, memoryview)) != self._is_binary:
                raise TypeError(f"write() argument must be {'bytes' if self._is_binary else 'str'}, "
                                f"not {type(data).__name__}")
            return 0
        if self._name in self._guard.failures:
            return len(data)
        try:
            return self._stream.write(data)
        except OSError as exc:
            self._failed(exc)
            return len(data)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._name in self._guard.failures:
            return
        try:
            self._stream.flush()
        except OSError as exc:
            self._failed(exc)
        except ValueError:  # flushing a closed stream
            pass

    @property
    def failed(self) -> bool:
        """Whether writing to this stream has failed (later writes are dropped)."""
        return self._name in self._guard.failures

    @property
    def buffer(self) -> Any:
        """The binary stream under a text stream, guarded alike."""
        if self._binary is None:
            self._binary = GuardedStream(self._stream.buffer, self._name, self._guard, self._raises, binary=True)
        return self._binary

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def guard_streams() -> Iterator[StreamGuard]:
    """Guard ``sys.stdout`` and ``sys.stderr`` inside the block (see :class:`GuardedStream`);
    the streams are put back after it."""
    guard = StreamGuard()
    saved = sys.stdout, sys.stderr
    if saved[0] is not None:
        sys.stdout = GuardedStream(saved[0], "stdout", guard, raises=True)  # type: ignore[assignment]
    if saved[1] is not None:
        sys.stderr = GuardedStream(saved[1], "stderr", guard, raises=False)  # type: ignore[assignment]
    try:
        yield guard
    finally:
        sys.stdout, sys.stderr = saved

