"""`dlperf parse -o` refuses to write inside a results store, directly or through a link:
every file in a store is read as a part of it, so a parse output there made every later
read of the store fail as damaged."""

from __future__ import annotations

import shutil

import pytest

from ._helpers import ONE_RUN_DIR, assert_one_clean_line, run_cli

STEM = "resnet50_b256_amp_1"


@pytest.fixture(scope="module")
def logs_and_store(dlperf_exe, tmp_path_factory):
    """One run's DLPerf log folder, and a store it was added to."""
    root = tmp_path_factory.mktemp("parse_store")
    d = root / "logs" / "1n1g"
    d.mkdir(parents=True)
    for suffix in (".log", ".gpu.csv"):
        shutil.copy(ONE_RUN_DIR / f"{STEM}{suffix}", d)
    r = run_cli(dlperf_exe, "store", "add", root / "logs", "--store", root / "st", "--name", "a")
    assert r.returncode == 0, r.stderr
    (root / "link").symlink_to(root / "st")
    return root


def _files(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("where", ["st/runs/x.parquet", "st/x.csv", "link/new/x.csv"])
def test_parse_refuses_an_output_inside_a_store(dlperf_exe, logs_and_store, where):
    root = logs_and_store
    before = _files(root / "st")
    r = run_cli(dlperf_exe, "parse", root / "logs", "-o", root / where)
    assert r.returncode == 2
    assert_one_clean_line(r.stderr, "inside the results store", str(root / "st"))
    assert _files(root / "st") == before
    listed = run_cli(dlperf_exe, "store", "list", "--store", root / "st")
    assert listed.returncode == 0, listed.stderr


def test_parse_writes_beside_a_store(dlperf_exe, logs_and_store):
    root = logs_and_store
    r = run_cli(dlperf_exe, "parse", root / "logs", "-o", root / "out" / "x.csv")
    assert r.returncode == 0, r.stderr
    assert (root / "out" / "x.runs.csv").is_file()
