"""Logs kept in a subfolder of a campaign folder (``P/old/1n1g/x.log``): the campaign's
``status.json``, however far above, decides whether it ran them, so a stray there is left out
and named (not pooled into the campaign's cases, stored, or compared), so is a whole campaign
kept or written inside it (the outermost status.json decides); a folder named inside a
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


def test_a_campaign_kept_inside_another_is_the_outer_ones_to_account_for(tmp_path):
    """The outermost status.json decides: a whole campaign copied into P/q is strays naming P
    when P is named, and read by its own status when P/q (or a folder inside it) is."""
    camp = _campaign(tmp_path / "P", [B128.format(1)])
    _campaign(camp / "q", [B128.format(2), B128.format(3)])
    result = parse_paths([camp])
    assert result.runs["repeat"].tolist() == [1]
    strays = _strays(result, camp)
    assert [name for name, _ in strays] == [f"q/1n1g/{B128.format(i)}.log" for i in (2, 3)]
    assert all(f"(under campaign folder {camp}, as run q/1n1g/" in why for _, why in strays)
    for inner in (camp / "q", camp / "q" / "1n1g"):
        result = parse_paths([inner])
        assert sorted(result.runs["repeat"]) == [2, 3] and _strays(result, camp) == []


def test_a_nested_campaign_folder_named_is_read_by_its_own_status(tmp_path):
    """Named itself, a campaign folder inside another, its logs beside its status.json (other
    tools' layout), is read by its own status, not by the outer one's above it."""
    camp = _campaign(tmp_path / "P", [B128.format(1)])
    inner = camp / "q"
    _plant(inner, [B128.format(2)])
    shutil.copy(SRC / f"{B128.format(2)}.done", inner)
    (inner / "status.json").write_text(json.dumps({"campaign": "rn50_4gpu", "runs": [
        {"run_id": B128.format(2), "state": "done"}]}))
    result = parse_paths([inner])
    assert result.runs["repeat"].tolist() == [2] and _strays(result, camp) == []
    assert parse_paths([camp]).runs["repeat"].tolist() == [1]


@pytest.fixture(params=["copy", "link"])
def new_holding_older(request, tmp_path) -> Path:
    """NEW, a campaign of b128 runs 3 and 4, holding at NEW/old the whole campaign of b256
    runs 3 and 4 (its own status.json and markers): a copy, or a link to it."""
    new = _campaign(tmp_path / "NEW", [B128.format(3), B128.format(4)])
    older = _campaign(tmp_path / "OLDER", [B256.format(3), B256.format(4)])
    if request.param == "copy":
        shutil.copytree(older, new / "old")
    else:
        (new / "old").symlink_to(older)
    return new


def test_a_whole_campaign_inside_another_is_strays_of_the_outer(new_holding_older):
    result = parse_paths([new_holding_older])
    assert sorted(result.runs["repeat"]) == [3, 4]
    assert set(result.runs["batch_size_per_device"]) == {128}
    assert [n for n, _ in _strays(result, new_holding_older)] == [
        f"old/1n1g/{B256.format(i)}.log" for i in (3, 4)]
    own = parse_paths([new_holding_older / "old"])
    assert set(own.runs["batch_size_per_device"]) == {256} and len(own.runs) == 2


def test_compare_a_case_only_in_a_nested_campaign_is_only_in_base(new_holding_older, tmp_path,
                                                                  monkeypatch):
    base = _campaign(tmp_path / "BASE", [s.format(i) for s in (B128, B256) for i in (1, 2)])
    monkeypatch.setenv(parse_cache.CACHE_DIR_ENV, str(tmp_path / "cache"))
    done = _cli("compare", str(base), str(new_holding_older))
    assert done.returncode == 4, done.stdout + done.stderr
    [row] = [line for line in done.stdout.splitlines() if "/b256/" in line]
    assert "only in base" in row


def test_store_add_stores_the_outer_campaigns_runs(new_holding_older, tmp_path, monkeypatch):
    monkeypatch.setenv(parse_cache.CACHE_DIR_ENV, str(tmp_path / "cache"))
    done = _cli("store", "add", str(new_holding_older), "--store", str(tmp_path / "st"))
    assert done.returncode == 0, done.stderr
    assert "(2 runs, 1 cases)" in done.stdout + done.stderr


@pytest.fixture
def run_into_subfolder(tmp_path) -> tuple[Path, Path]:
    """FRESH, a campaign of b128 runs 1 and 2, and Q, a copy of it into whose config folder
    Q/1n1g a second campaign of runs 3 to 5 of the same case was written (Q/1n1g/status.json,
    Q/1n1g/1n1g/*.log)."""
    fresh = _campaign(tmp_path / "FRESH", [B128.format(1), B128.format(2)])
    q = tmp_path / "Q"
    shutil.copytree(fresh, q)
    _campaign(q / "1n1g", [B128.format(i) for i in (3, 4, 5)])
    return fresh, q


def test_a_campaign_written_into_a_campaigns_subfolder_does_not_take_it_over(
        run_into_subfolder):
    _, q = run_into_subfolder
    result = parse_paths([q])
    assert sorted(result.runs["repeat"]) == [1, 2]
    assert [n for n, _ in _strays(result, q)] == [
        f"1n1g/1n1g/{B128.format(i)}.log" for i in (3, 4, 5)]
    inner = parse_paths([q / "1n1g" / "1n1g"])
    assert sorted(inner.runs["repeat"]) == [3, 4, 5]


def test_compare_and_store_read_the_outer_campaigns_own_runs(run_into_subfolder, tmp_path,
                                                             monkeypatch):
    """Q's own runs are FRESH's copies: not re-measured (rc 4), not the inner campaign's
    figure; store add stores Q's two runs."""
    fresh, q = run_into_subfolder
    monkeypatch.setenv(parse_cache.CACHE_DIR_ENV, str(tmp_path / "cache"))
    done = _cli("compare", str(fresh), str(q))
    assert done.returncode == 4, done.stdout + done.stderr
    assert "not re-measured" in done.stdout + done.stderr
    added = _cli("store", "add", str(q), "--store", str(tmp_path / "st"))
    assert added.returncode == 0, added.stderr
    assert "(2 runs, 1 cases)" in added.stdout + added.stderr


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
