"""analysis.fsutil: atomic writes that leave nothing half-written and name the target."""

from __future__ import annotations

import os
import stat
import threading

import pytest

from analysis.fsutil import atomic_path, atomic_write_text


def test_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("writer failed")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_new_file_gets_the_usual_permissions_not_0600(tmp_path):
    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "new.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o644


def test_replaced_file_keeps_its_permissions(tmp_path):
    target = tmp_path / "kept.txt"
    target.write_text("a")
    target.chmod(0o640)
    atomic_write_text(target, "b")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640 and target.read_text() == "b"


def test_error_names_the_target_not_the_temporary_file(tmp_path):
    target = tmp_path / "no-such-folder" / "env.json"
    with pytest.raises(FileNotFoundError) as info:
        atomic_write_text(target, "{}")
    assert info.value.filename == str(target)


def test_folder_target_is_refused_by_name(tmp_path):
    with pytest.raises(IsADirectoryError) as info:
        atomic_write_text(tmp_path, "x")
    assert info.value.filename == str(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_symlink_is_refused_and_what_it_points_to_kept(tmp_path):
    # a link in a report folder to a raw log: the report once replaced the log with HTML
    real = tmp_path / "run_1.log"
    real.write_text("old")
    link = tmp_path / "report_en.html"
    link.symlink_to(real)
    with pytest.raises(OSError, match="symbolic link") as info:
        atomic_write_text(link, "new")
    assert info.value.filename == str(link) and info.value.filename2 == str(real)
    assert link.is_symlink() and real.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report_en.html", "run_1.log"]


def test_a_pipe_is_written_in_place_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    atomic_write_text(fifo, "through the pipe")
    reader.join(timeout=10)
    assert got == ["through the pipe"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_display_path_escapes_undecodable_bytes():
    from analysis.fsutil import display_path

    assert display_path(os.fsdecode(b"/tmp/r\xff50.log")) == "/tmp/r\\xff50.log"


def test_a_new_file_is_made_without_setting_the_umask(tmp_path, monkeypatch):
    """Reading the umask by setting it (os.umask(0), then back) left it 0 for a moment in
    which another thread's new files were made world-writable; it is read from
    /proc/self/status now, and atomic writes never touch it."""
    old = os.umask(0o027)
    try:
        def refuse(_mask):
            raise AssertionError("os.umask called: the process umask changed for a moment")

        monkeypatch.setattr(os, "umask", refuse)
        atomic_write_text(tmp_path / "new.txt", "x")
        assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640
    finally:
        monkeypatch.undo()
        os.umask(old)
