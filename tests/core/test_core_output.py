"""Output files: written whole or not at all; checked before a run; no stale file left behind."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from nice_attendre.output import OutputError, check_writable, prepare, write_atomic, write_with


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text("old report")

    def half(temp: Path) -> None:
        temp.write_text("{\"trunc")
        raise OSError(28, "No space left on device")

    with pytest.raises(OutputError, match=r"cannot write --json '.*report.json': No space left on device"):
        write_with(path, half, "--json")
    assert path.read_text() == "old report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_an_interrupted_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "plot.png"

    def interrupted(temp: Path) -> None:
        assert temp.suffix == ".png" and temp.parent == tmp_path  # same folder, same suffix
        temp.write_bytes(b"\x89PNG")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_with(path, interrupted, "--plot")
    assert list(tmp_path.iterdir()) == []


def test_write_atomic_replaces_through_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    target.write_text("old")
    os.chmod(target, 0o640)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_atomic(link, "new", "--json")
    assert link.is_symlink() and target.read_text() == "new"
    assert oct(target.stat().st_mode & 0o777) == "0o640"  # the old file's permissions are kept


def test_prepare_removes_a_stale_file_and_checks_the_folder(tmp_path: Path) -> None:
    stale = tmp_path / "r.json"
    stale.write_text("{}")
    prepare(stale, "--json")
    assert not stale.exists()
    prepare(None, "--json")
    with pytest.raises(OutputError, match="folder '.*missing' not found"):
        prepare(tmp_path / "missing" / "r.json", "--json")
    with pytest.raises(OutputError, match="it is a folder"):
        check_writable(tmp_path, "--csv")


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="needs /dev/null")
def test_special_files_are_written_directly() -> None:
    prepare(Path("/dev/null"), "--json")  # not removed, not renamed over
    write_atomic(Path("/dev/null"), "x", "--json")
    assert Path("/dev/null").exists()
