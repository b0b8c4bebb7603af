"""Data files the CLI reads (a saved trace, a ``--scenario``, a topology file, ``delay
--config``) must be regular files of bounded size: ``/dev/zero``, a FIFO or a directory is
one clear line and exit 2, never a read until memory runs out or a hang; a file above the
limit is refused with the limit named, and never more than the limit is read."""
from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from nice_attendre.errors import InputError
from nice_attendre.frontend.cli import main
from nice_attendre.frontend.exit_codes import ExitCode
from nice_attendre.input_files import MiB, SETTINGS_BYTES, TOPOLOGY_BYTES, TRACE_BYTES, read_bounded, read_text

FLOW = '[[flow]]\nfrom = "h1"\nto = "h2"\n'


def _limited() -> None:
    """In the child: Ctrl-C as usual (pytest may run in the background with SIGINT ignored),
    and at most 1 GiB of data, so that a regression reading /dev/zero fails fast instead of
    taking the machine's memory."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    resource.setrlimit(resource.RLIMIT_DATA, (1 << 30, 1 << 30))


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command line in a new process (a FIFO would block an in-process run for ever)."""
    return subprocess.run([sys.executable, "-c", "from nice_attendre.frontend.cli import main; main()", *args],
                          capture_output=True, text=True, timeout=120, cwd=cwd, stdin=subprocess.DEVNULL,
                          preexec_fn=_limited)


def commands(name: str) -> list[list[str]]:
    """Every command that reads ``name`` as a data file."""
    return [["replay", name], ["verify", "route-flow", "--scenario", name], ["verify", "route-flow", "-t", name],
            ["delay", "--config", name]]


def one_error_line(done: subprocess.CompletedProcess[str] | object) -> str:
    stderr = getattr(done, "stderr")
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize("args", commands("/dev/zero"), ids=lambda a: " ".join(a[:2]))
def test_dev_zero_is_refused_at_once(tmp_path: Path, args: list[str]) -> None:
    if args[0] == "delay":
        (tmp_path / "zero.toml").symlink_to("/dev/zero")
        args = ["delay", "--config", "zero.toml"]
    done = cli(*args, cwd=tmp_path)
    assert done.returncode == ExitCode.INPUT, done.stderr
    assert "is a character device, not a regular file" in one_error_line(done)


@pytest.mark.parametrize("args", commands("pipe.toml"), ids=lambda a: " ".join(a[:2]))
def test_a_fifo_is_refused_without_blocking(tmp_path: Path, args: list[str]) -> None:
    os.mkfifo(tmp_path / "pipe.toml")  # nobody ever writes: opening it to read would block
    done = cli(*args, cwd=tmp_path)
    assert done.returncode == ExitCode.INPUT, done.stderr
    assert "'pipe.toml' is a FIFO (named pipe), not a regular file" in one_error_line(done)


@pytest.mark.parametrize("option", ["--scenario", "-t"])
def test_a_directory_is_refused(tmp_path: Path, option: str) -> None:
    folder = tmp_path / "folder.toml"
    folder.mkdir()
    result = CliRunner().invoke(main, ["verify", "route-flow", option, str(folder)])
    assert result.exit_code == ExitCode.INPUT, result.output
    assert "directory" in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args, limit, what", [
    (["replay", "big.json"], TRACE_BYTES, "trace 'big.json' is larger than 64 MiB"),
    (["verify", "route-flow", "--scenario", "big.toml"], SETTINGS_BYTES,
     "scenario file 'big.toml' is larger than 1 MiB"),
    (["verify", "route-flow", "-t", "big.graphml"], TOPOLOGY_BYTES,
     "topology file 'big.graphml' is larger than 16 MiB"),
    (["delay", "--config", "big.toml"], SETTINGS_BYTES, "parameter file 'big.toml' is larger than 1 MiB"),
], ids=["replay", "scenario", "topology", "delay"])
def test_a_file_above_the_limit_is_refused_naming_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            args: list[str], limit: int, what: str) -> None:
    big = tmp_path / args[-1]
    with open(big, "wb") as handle:  # sparse: nothing is written, the size says it all
        handle.truncate(limit + 1)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == ExitCode.INPUT, result.output
    assert f"{what}, the most nice-attendre reads" in result.output and "Error: " in result.output


def test_a_scenario_file_at_the_limit_is_read(tmp_path: Path) -> None:
    padding = "# padding\n" * ((SETTINGS_BYTES - len(FLOW)) // 10)
    text = padding + FLOW
    text += "#" * (SETTINGS_BYTES - len(text))
    scenario = tmp_path / "full.toml"
    scenario.write_text(text)
    assert scenario.stat().st_size == SETTINGS_BYTES
    result = CliRunner().invoke(main, ["verify", "route-flow", "-t", "linear:1", "--scenario", str(scenario)])
    assert result.exit_code == ExitCode.OK, result.output


def test_read_bounded_reads_exactly_up_to_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    assert read_bounded(path, "file", 10) == b"x" * 10
    with pytest.raises(InputError, match=r"^file '.*f' is larger than 9 bytes, the most nice-attendre reads$"):
        read_bounded(path, "file", 9)
    assert read_bounded(path, "file", 4 * MiB) == b"x" * 10


@pytest.mark.skipif(not Path("/proc/self/maps").is_file(), reason="needs Linux /proc")
def test_a_file_larger_than_its_stated_size_is_cut_at_the_limit() -> None:
    # /proc files say they are empty (st_size 0) and are not: only the bounded read catches them.
    assert os.stat("/proc/self/maps").st_size == 0
    with pytest.raises(InputError, match="larger than 100 bytes"):
        read_bounded("/proc/self/maps", "maps", 100)


def test_read_text_refuses_what_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin.toml"
    path.write_bytes(b"x = '\xe9'\n")
    with pytest.raises(InputError, match=r"is not UTF-8 text \(byte 5\)"):
        read_text(path, "scenario file", 100)


@pytest.mark.parametrize("name", ["missing.toml", "bad\0name.toml"])
def test_missing_and_unnamable_files_are_one_line_errors(tmp_path: Path, name: str) -> None:
    with pytest.raises(InputError, match=r"^cannot read scenario file .*: "):
        read_bounded(str(tmp_path / name), "scenario file", 100)
