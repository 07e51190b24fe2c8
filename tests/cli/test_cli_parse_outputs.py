"""Item 11: `dlperf parse -o` never writes over an input file, and over an existing file
only with --force."""

from __future__ import annotations

import shutil

import pytest

from ._helpers import ONE_RUN_DIR, assert_one_clean_line, run_cli

STEM = "resnet50_b256_amp_1"


@pytest.fixture()
def run_dir(tmp_path):
    """One run (log + .gpu.csv sidecar) in a DLPerf layout folder of its own."""
    d = tmp_path / "logs" / "1n1g"
    d.mkdir(parents=True)
    for suffix in (".log", ".gpu.csv"):
        shutil.copy(ONE_RUN_DIR / f"{STEM}{suffix}", d)
    return d


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("force", [False, True])
def test_refuses_to_write_over_an_input_sidecar(dlperf_exe, run_dir, force):
    before = _snapshot(run_dir)
    target = run_dir / f"{STEM}.gpu.csv"
    r = run_cli(dlperf_exe, "parse", run_dir.parent, "-o", target, *(["--force"] * force))
    assert r.returncode == 2
    assert_one_clean_line(r.stderr, str(target), "input")
    assert _snapshot(run_dir) == before


def test_refuses_when_a_sibling_output_is_an_input(dlperf_exe, run_dir, tmp_path):
    """`-o obs.csv` also writes obs.runs.csv: that one is read here, through a link."""
    named = tmp_path / "obs.runs.csv"
    named.write_text("framework\nx\n")
    link = tmp_path / "alias.runs.csv"
    link.symlink_to(named)
    r = run_cli(dlperf_exe, "parse", run_dir / f"{STEM}.log", link, "-o", tmp_path / "obs.csv",
                "--force")
    assert r.returncode == 2
    assert_one_clean_line(r.stderr, "obs.runs.csv", "input")
    assert named.read_text() == "framework\nx\n" and not (tmp_path / "obs.csv").exists()


def test_existing_output_needs_force(dlperf_exe, run_dir, tmp_path):
    out = tmp_path / "obs.csv"
    out.write_text("precious\n")
    r = run_cli(dlperf_exe, "parse", run_dir, "-o", out)
    assert r.returncode == 2
    assert_one_clean_line(r.stderr, str(out), "--force")
    assert out.read_text() == "precious\n" and not (tmp_path / "obs.runs.csv").exists()

    forced = run_cli(dlperf_exe, "parse", run_dir, "-o", out, "--force")
    assert forced.returncode == 0, forced.stderr
    assert out.read_text().startswith("run_id,") and (tmp_path / "obs.runs.csv").exists()


def test_existing_sibling_output_needs_force(dlperf_exe, run_dir, tmp_path):
    (tmp_path / "obs.problems.parquet").write_text("old")
    r = run_cli(dlperf_exe, "parse", run_dir, "-o", tmp_path / "obs.parquet")
    assert r.returncode == 2
    assert_one_clean_line(r.stderr, "obs.problems.parquet", "--force")
    assert not (tmp_path / "obs.parquet").exists()


def test_output_on_a_folder_is_a_usage_error(dlperf_exe, run_dir, tmp_path):
    (tmp_path / "out.csv").mkdir()
    r = run_cli(dlperf_exe, "parse", run_dir, "-o", tmp_path / "out.csv", "--force")
    assert r.returncode == 2
    assert_one_clean_line(r.stderr, "out.csv", "folder")
