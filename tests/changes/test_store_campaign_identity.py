"""What a stored campaign is: its time is that of the runs it stores (not of copies of
stored runs left out), a campaign folder grown since it was stored (a resume with more
repeats) is stored again whole, replacing the stored one, and a reference that is one
campaign's name and the start of another's key is refused as ambiguous."""

from __future__ import annotations

import json
import re
import shutil
from datetime import datetime, timedelta

import pandas as pd
import pytest

from analysis.changes import store as results_store

from .campaigns import BUNDLED, JITTER, failed_case_campaign, stretch_log
from .test_compare_copies import _stretch
from .test_compare_stored_copies import _run

FP32 = "PyTorch/resnet50/fp32/b128/1n1g"
LOG = "resnet50_b128_fp32_{}.log"
_STAMP = re.compile(r"^(DLL )(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+)", re.M)


def _later(log, days: int) -> None:
    """Every stamp of `log` `days` later: the same run, made on another day."""
    def moved(m):
        when = datetime.strptime(m.group(2), "%Y-%m-%d %H:%M:%S.%f") + timedelta(days=days)
        return m.group(1) + when.strftime("%Y-%m-%d %H:%M:%S.%f")

    log.write_text(_STAMP.sub(moved, log.read_text()))


def _own(folder, runs, days: int, slower: float = 1.0, seed: int = 0) -> None:
    """The bundled fp32 runs `runs` measured again into `folder`, `days` later, each
    interval its own jitter, `slower` times slower."""
    (folder / "1n1g").mkdir(parents=True, exist_ok=True)
    for run in runs:
        log = folder / "1n1g" / LOG.format(run)
        shutil.copy(BUNDLED / "1n1g" / LOG.format(run), log)
        stretch_log(log, 1.0, JITTER, seed=seed)
        if slower != 1.0:
            _stretch(log, slower)
        _later(log, days)


def _listed(store) -> list[dict]:
    status, out, err = _run("store", "list", "--store", store, "--format", "json")
    assert status == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def copies_beside(tmp_path_factory):
    """A (the bundled runs), D (a day later, as fast) and B (two days later, its 3 own
    runs 20 % slower, beside byte copies of 3 of A's logs)."""
    tmp = tmp_path_factory.mktemp("identity")
    a, d, b = tmp / "A", tmp / "D", tmp / "B"
    (a / "1n1g").mkdir(parents=True)
    for run in range(1, 6):
        shutil.copy(BUNDLED / "1n1g" / LOG.format(run), a / "1n1g")
    _own(d, range(1, 6), days=1, seed=3)
    _own(b, range(1, 4), days=2, slower=1.25, seed=5)
    for run in range(1, 4):
        shutil.copy(a / "1n1g" / LOG.format(run), b / "1n1g" / LOG.format(run + 3))
    return a, d, b


def test_a_campaign_s_time_is_that_of_its_own_runs_not_of_copies_left_out(
        copies_beside, tmp_path):
    a, d, b = copies_beside
    store = tmp_path / "store"
    for folder in (a, d, b):
        status, out, err = _run("store", "add", folder, "--store", store)
        assert status == 0 and out.startswith("added "), err
    assert "3 run(s) copies of stored runs, left out" in out
    rows = _listed(store)
    # before: B's start was A's (its copies'), so it was listed second, before D
    assert [r["name"] for r in rows] == ["A", "D", "B"]
    assert rows[2]["started"] > rows[1]["started"] > rows[0]["started"]
    status, out, _ = _run("store", "trend", "--store", store, "--format", "json")
    last = json.loads(out)[-1]
    assert status == 0 and last["name"] == "B" and last["change"] == "step down?"
    assert last["step"] == pytest.approx(-0.2, abs=0.01)


def test_the_latest_of_a_name_is_the_campaign_measured_last(copies_beside, tmp_path):
    a, d, b = copies_beside
    store = tmp_path / "store"
    _run("store", "add", a, "--store", store)
    for folder in (d, b):
        assert _run("store", "add", folder, "--store", store, "--name", "nightly")[0] == 0
    status, out, err = _run("compare", "A", "nightly", "--store", store, "--format", "json")
    (row,) = json.loads(out)
    # before: D taken as the latest nightly, "unchanged", exit 0
    assert status == 1, err
    assert row["verdict"] == "slower" and row["new_repeats"] == 3


def _status(folder, done: int, planned: int) -> None:
    rows = [{"run_id": f"1n1g/{LOG.format(r)[:-4]}", "state": "done" if r <= done else "pending"}
            for r in range(1, planned + 1)]
    (folder / "status.json").write_text(json.dumps({"campaign": "nightly", "runs": rows}))


def test_a_campaign_grown_since_it_was_stored_is_stored_whole_once(tmp_path):
    folder, store = tmp_path / "C", tmp_path / "store"
    _own(folder, range(1, 4), days=0, seed=1)
    _status(folder, done=3, planned=5)
    status, out, err = _run("store", "add", folder, "--store", store, "--name", "nightly")
    assert status == 0 and out.startswith("added ")
    first = out.split()[1]
    assert ("status.json lists 2 run(s) pending that left no log (e.g. "
            "1n1g/resnet50_b128_fp32_4)") in err
    assert "stored: the 3 run(s) it finished" in err
    _own(folder, range(4, 6), days=0, slower=1.1, seed=1)  # resumed: 2 more repeats
    _status(folder, done=5, planned=5)
    status, out, err = _run("store", "add", folder, "--store", store, "--name", "nightly")
    assert status == 0 and out.startswith("added ")
    # before: "3 run(s) copies of stored runs, left out", a second nightly of runs 4-5
    assert "copies of stored runs" not in out and "pending" not in err
    assert f"replaced stored campaign {first} nightly" in err
    rows = _listed(store)
    assert [(r["name"], r["runs"]) for r in rows] == [("nightly", 5)]
    key = rows[0]["campaign"]
    summary = pd.read_parquet(store / "summary" / f"campaign={key}" / results_store.PART)
    assert summary["repeats"].tolist() == [5]
    status, out, _ = _run("summarize", folder, "--no-cache", "--format", "json")
    assert summary["throughput_median"].iloc[0] == pytest.approx(
        json.loads(out)[0]["throughput_median"], rel=1e-12)
    assert not (store / "runs" / f"campaign={first}").exists()
    manifest = json.loads((store / results_store.MANIFEST).read_text())["campaigns"]
    assert manifest[first]["dropped"] is True
    assert _run("store", "add", folder, "--store", store)[1].startswith("already stored")


def test_another_folder_holding_a_stored_campaign_s_logs_is_another_campaign(tmp_path):
    """B holds byte copies of all of A's logs under the same names beside 2 runs of its own,
    20 % slower: not A grown (another folder), so A stays and B is its own 2 runs. Taken
    for A grown, A was dropped and B stored with 5 runs (spread 22 %) under A's name."""
    a, b, store = tmp_path / "A", tmp_path / "B", tmp_path / "store"
    (a / "1n1g").mkdir(parents=True)
    for run in range(1, 4):
        shutil.copy(BUNDLED / "1n1g" / LOG.format(run), a / "1n1g")
    _own(b, range(4, 6), days=2, slower=1.25, seed=5)
    shutil.copytree(a, b, dirs_exist_ok=True)
    assert _run("store", "add", a, "--store", store)[0] == 0
    status, out, err = _run("store", "add", b, "--store", store)
    assert status == 0 and "replaced" not in err, err
    assert "3 run(s) copies of stored runs, left out" in out
    assert [(r["name"], r["runs"]) for r in _listed(store)] == [("A", 3), ("B", 2)]
    status, out, err = _run("compare", "A", "B", "--store", store, "--format", "json")
    (row,) = json.loads(out)
    assert status == 1 and row["verdict"] == "slower", err


def test_a_name_that_starts_another_campaign_s_key_is_refused_as_ambiguous(
        copies_beside, tmp_path):
    a, d, b = copies_beside
    store = tmp_path / "store"
    _run("store", "add", a, "--store", store)
    d_key = _run("store", "add", d, "--store", store)[1].split()[1]
    status, out, _ = _run("store", "add", b, "--store", store, "--name", d_key[:4])
    b_key = out.split()[1]
    status, out, err = _run("compare", "A", d_key[:4], "--store", store)
    # before: B (named so) taken silently, "slower", exit 1
    assert status == 2 and "ambiguous" in err
    assert b_key in err and d_key in err
    status, out, err = _run("compare", "A", d_key[:8], "--store", store, "--format", "json")
    assert status == 0 and json.loads(out)[0]["verdict"] == "unchanged"


def test_a_name_that_is_another_campaign_s_key_is_refused(copies_beside, tmp_path):
    """Stored with A's key as its name, D was unreachable by it: the key wins, silently."""
    a, d, _ = copies_beside
    store = tmp_path / "store"
    a_key = _run("store", "add", a, "--store", store)[1].split()[1]
    full = next(r["campaign"] for r in _listed(store) if r["campaign"].startswith(a_key))
    status, _, err = _run("store", "add", d, "--store", store, "--name", full)
    assert status == 2 and f"is the key of stored campaign {full}" in err
    assert [r["name"] for r in _listed(store)] == ["A"]


def test_where_a_campaign_came_from_is_its_real_path(tmp_path, monkeypatch):
    """Added as `A` from x/ and again as `A` from y/ (another folder: copies of x/A's logs
    beside runs of its own), it is another campaign; the same folder added by another
    spelling from elsewhere, grown since, is that campaign grown. Stored as typed, the
    relative source was resolved against the working folder of the next add."""
    store = tmp_path / "store"
    x, y = tmp_path / "x" / "A", tmp_path / "y" / "A"
    (x / "1n1g").mkdir(parents=True)
    for run in range(1, 4):
        shutil.copy(BUNDLED / "1n1g" / LOG.format(run), x / "1n1g")
    _own(y, range(4, 6), days=2, slower=1.25, seed=5)
    shutil.copytree(x, y, dirs_exist_ok=True)
    monkeypatch.chdir(x.parent)
    assert _run("store", "add", "A", "--store", store)[0] == 0
    monkeypatch.chdir(y.parent)
    status, out, err = _run("store", "add", "A", "--store", store, "--name", "B")
    assert status == 0 and "replaced" not in err and "left out" in out, err
    rows = _listed(store)
    assert [(r["name"], r["runs"], r["source"]) for r in rows] == [("A", 3, str(x)),
                                                                    ("B", 2, str(y))]
    _own(x, range(4, 6), days=1, seed=2)  # x/A resumed: 2 more repeats
    monkeypatch.chdir(tmp_path)
    status, out, err = _run("store", "add", "x/../x/A", "--store", store)
    assert status == 0 and "replaced stored campaign" in err, err
    assert sorted((r["name"], r["runs"]) for r in _listed(store)) == [("A", 5), ("B", 2)]


def test_a_campaign_whose_every_run_failed_stores_nothing(tmp_path):
    """No run to store: exit 4, nothing written. It was stored under an empty key, and the
    next such campaign was "already stored"."""
    folder, store = failed_case_campaign(tmp_path / "N", repeats=2), tmp_path / "store"
    for f in (folder / "1n1g").glob("resnet50_b128_fp32_*"):
        f.unlink()
    status, out, err = _run("store", "add", folder, "--store", store)
    assert status == 4 and out.startswith("nothing added: ") and "every run failed" in out, err
    assert not store.exists()


def test_a_key_that_is_a_stored_name_is_said(copies_beside, tmp_path):
    """D stored under the name A's key would have, then A stored: a reference by that string
    now means A (the key wins), and store add says so, naming D's own key."""
    a, d, _ = copies_beside
    store, probe = tmp_path / "store", tmp_path / "probe"
    a_key = _run("store", "add", a, "--store", probe)[1].split()[1]
    d_key = _run("store", "add", d, "--store", store, "--name", a_key)[1].split()[1]
    status, _, err = _run("store", "add", a, "--store", store)
    assert status == 0
    assert (f"stored campaign {d_key} is named {a_key}, this campaign's key: that name now "
            f"means this campaign; reach the other by its key {d_key}") in err
