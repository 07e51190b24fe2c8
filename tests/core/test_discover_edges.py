"""Paths a careless user or an attacker names: non-UTF-8 file names, pseudo-filesystems and
links to folders above the walk (issue 9, items 4 and 10)."""

from __future__ import annotations

import os
import subprocess

import pytest

from analysis.collect import parse_paths
from analysis.errors import UsageError
from tests.core.test_collect import _case_folder


def test_a_non_utf8_file_name_is_a_row_not_a_lost_campaign(tmp_path):
    d = _case_folder(tmp_path, n_runs=2)
    bad = os.fsdecode(b"resnet50_b4_amp_\xff3.log")
    (d / bad).write_text((d / "resnet50_b4_amp_1.log").read_text().replace("160.0", "360.0"))
    r = parse_paths([tmp_path])
    assert len(r.runs) == 3  # the good runs survive, the odd name is a run of its own
    shown = [s for s in r.runs["source"] if "\\xff" in s]
    assert shown and shown[0].endswith("resnet50_b4_amp_\\xff3.log")
    assert all(s.isprintable() for s in r.observations["source"].cat.categories)


def test_the_cli_prints_non_utf8_names_escaped(tmp_path, dlperf_exe):
    d = _case_folder(tmp_path)
    os.link(d / "resnet50_b4_amp_1.log", os.fsencode(d) + b"/resnet50_b4_amp_\xff2.log")
    done = subprocess.run([dlperf_exe, "summarize", str(tmp_path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "resnet50_b4_amp_\\xff2.log: duplicate_run" in done.stderr


@pytest.mark.parametrize("path", ["/proc/self", "/proc", "/sys/kernel", "/dev"])
def test_pseudo_filesystems_are_not_walked(path):
    with pytest.raises(UsageError, match="hold no logs"):
        parse_paths([path])


def test_links_to_a_folder_above_or_to_proc_are_not_followed(tmp_path):
    _case_folder(tmp_path)
    (tmp_path / "to_root").symlink_to("/")
    (tmp_path / "to_proc").symlink_to("/proc/self")
    (tmp_path / "1n1g" / "up").symlink_to(tmp_path)
    r = parse_paths([tmp_path])  # returns at once: / and /proc are never walked
    assert len(r.runs) == 1
    unread = r.problems[r.problems["kind"] == "unreadable_file"]
    assert sorted(os.path.basename(s) for s in unread["source"]) == ["to_proc", "to_root", "up"]


def test_a_log_linked_to_proc_is_not_read_so_the_readers_environment_never_shows(tmp_path,
                                                                                 monkeypatch):
    monkeypatch.setenv("DLPERF_TEST_SECRET", "hunter2-in-environ")
    d = _case_folder(tmp_path)
    (d / "resnet50_b4_amp_2.log").symlink_to("/proc/self/environ")
    (d / "resnet50_b4_amp_3.log").symlink_to("/proc/self/cmdline")
    r = parse_paths([tmp_path], cache=False)
    assert r.runs["run_id"].tolist() == ["1n1g/resnet50_b4_amp_1"]
    unread = r.problems[r.problems["kind"] == "unreadable_file"]
    assert sorted(os.path.basename(s) for s in unread["source"]) == [
        "resnet50_b4_amp_2.log", "resnet50_b4_amp_3.log"]
    assert (unread["reason"] == "a link to a pseudo-filesystem; not read").all()
    assert "hunter2" not in r.problems.to_csv()
    with pytest.raises(UsageError, match="hold no logs"):
        parse_paths(["/proc/self/environ"])
