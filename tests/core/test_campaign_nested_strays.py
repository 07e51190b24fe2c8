"""Logs kept in a subfolder of a campaign folder (``P/old/1n1g/x.log``): the campaign's
``status.json``, however far above, decides whether it ran them, so a stray there is left out
and named (not pooled into the campaign's cases, stored, or compared); a folder named inside a
campaign folder is read for itself, and the bundled campaigns read as before."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analysis import parse_cache
from analysis.collect import parse_paths
from tests.conftest import ROOT

RAW = ROOT / "data" / "raw_logs"
SRC = RAW / "rn50_4gpu" / "1n1g"
B128, B256 = "resnet50_b128_fp32_{}", "resnet50_b256_amp_{}"


def _campaign(camp: Path, stems: list[str]) -> Path:
    """camp/1n1g holding runs `stems` of the bundled campaign (log, done marker, sidecars) and
    camp/status.json listing them done, as ``dlperf run`` leaves them."""
    (camp / "1n1g").mkdir(parents=True)
    for stem in stems:
        for f in SRC.glob(f"{stem}.*"):
            shutil.copy(f, camp / "1n1g")
    runs = [{"run_id": f"1n1g/{s}", "state": "done", "log": f"1n1g/{s}.log"} for s in stems]
    (camp / "status.json").write_text(json.dumps({"campaign": "rn50_4gpu", "runs": runs}))
    return camp


def _plant(folder: Path, stems: list[str]) -> None:
    """Another campaign's logs of `stems`, without markers, in `folder`."""
    folder.mkdir(parents=True)
    for stem in stems:
        shutil.copy(SRC / f"{stem}.log", folder)


def _strays(result, camp: Path) -> list[tuple[str, str]]:
    """(log relative to `camp`, reason) of each stray_log problem."""
    p = result.problems[result.problems["kind"] == "stray_log"]
    return [(Path(s).relative_to(camp).as_posix(), r)
            for s, r in zip(p["source"], p["reason"], strict=True)]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "analysis", *args], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.fixture
def nested(tmp_path) -> Path:
    """A campaign of runs 1 and 2 of one case, and another campaign's run 3 of the same case
    kept two levels below it, at old/1n1g/."""
    camp = _campaign(tmp_path / "P", [B128.format(1), B128.format(2)])
    _plant(camp / "old" / "1n1g", [B128.format(3)])
    return camp


def test_a_log_two_levels_below_a_campaign_folder_is_a_stray(nested):
    result = parse_paths([nested])
    assert sorted(result.runs["repeat"]) == [1, 2]
    [(name, reason)] = _strays(result, nested)
    assert name == f"old/1n1g/{B128.format(3)}.log"
    assert reason.startswith("no done marker, not in status.json (under campaign folder ")
    assert f"as run old/1n1g/{B128.format(3)})" in reason


def test_summarize_strict_fails_naming_the_nested_stray(nested):
    done = _cli("summarize", "--no-cache", "--strict", str(nested))
    assert done.returncode == 3
    assert f"old/1n1g/{B128.format(3)}.log: stray_log" in done.stderr


def test_store_add_stores_only_the_campaigns_runs(nested, tmp_path, monkeypatch):
    monkeypatch.setenv(parse_cache.CACHE_DIR_ENV, str(tmp_path / "cache"))
    done = _cli("store", "add", str(nested), "--store", str(tmp_path / "st"))
    assert done.returncode == 0, done.stderr
    assert "(2 runs, 1 cases)" in done.stdout + done.stderr


def test_compare_a_case_only_nested_in_new_is_only_in_base(tmp_path, monkeypatch):
    """NEW measured b128 only; an older campaign's b256 logs kept in NEW/old/1n1g are not
    NEW's: b256 is only in base (rc 4), not compared as NEW's runs."""
    base = _campaign(tmp_path / "BASE", [s.format(i) for s in (B128, B256) for i in (1, 2)])
    new = _campaign(tmp_path / "NEW", [B128.format(3), B128.format(4)])
    _plant(new / "old" / "1n1g", [B256.format(3), B256.format(4)])
    monkeypatch.setenv(parse_cache.CACHE_DIR_ENV, str(tmp_path / "cache"))
    done = _cli("compare", str(base), str(new))
    assert done.returncode == 4, done.stdout + done.stderr
    [row] = [line for line in done.stdout.splitlines() if "/b256/" in line]
    assert "only in base" in row


def test_a_campaign_run_into_a_folder_of_published_logs(tmp_path):
    """``dlperf run -o P`` where P holds published/1n1g/*.log: summarizing P counts the
    campaign's run alone; naming P/published reads the published logs for themselves."""
    camp = _campaign(tmp_path / "P", [B128.format(1)])
    _plant(camp / "published" / "1n1g", [B128.format(i) for i in (3, 4, 5)])
    result = parse_paths([camp])
    assert result.runs["repeat"].tolist() == [1]
    assert len(_strays(result, camp)) == 3
    published = parse_paths([camp / "published"])
    assert sorted(published.runs["repeat"]) == [3, 4, 5] and _strays(published, camp) == []


def test_a_campaign_kept_inside_another_is_read_by_its_own_status(tmp_path):
    """The nearest status.json decides: a whole campaign copied into P/q counts as q's."""
    camp = _campaign(tmp_path / "P", [B128.format(1)])
    _campaign(camp / "q", [B128.format(2), B128.format(3)])
    result = parse_paths([camp])
    assert sorted(result.runs["repeat"]) == [1, 2, 3] and _strays(result, camp) == []


@pytest.mark.parametrize("path", [RAW, RAW / "rn50_4gpu" / "1n1g",
                                  ROOT / "tests" / "data" / "energy_h200"])
def test_bundled_campaigns_read_as_before(path):
    """Every run of the bundled campaigns counts, named whole, from above, or by config."""
    result = parse_paths([path])
    statuses = [path / "status.json"] if (path / "status.json").exists() else \
        list(path.glob("*/status.json")) or [path.parent / "status.json"]
    listed = sum(len([r for r in json.loads(s.read_text())["runs"] if r["state"] == "done"
                      and (path.name != "1n1g" or r["run_id"].startswith("1n1g/"))])
                 for s in statuses)
    assert _strays(result, ROOT) == [] and len(result.runs) == listed
