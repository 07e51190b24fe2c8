"""`dlperf store add` of a campaign some of whose runs are copies of stored runs' logs (attack
c21: 3 of 5 runs copied from the stored campaign, 2 measured anew, 20 % slower). Before, all
were stored and the trend showed the campaign near the stored one's median, flagged only for
its spread. Now the copies the logs prove are left out of what is stored (the runs, and the
summary made again from the runs kept, as `compare` counts them), each named on stderr; a
run alike to a stored one that is no proven copy (here: one stating another setting) is
stored and counted, and its case flagged in the trend, as `compare` flags it."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from analysis.changes import store as results_store

from .campaigns import BUNDLED, JITTER, stretch_log
from .test_compare_copies import _run, _stretch

FP32, AMP = "PyTorch/resnet50/fp32/b128/1n1g", "PyTorch/resnet50/amp/b256/1n1g"
FP32_RUN, AMP_RUN = "resnet50_b128_fp32_{}.log", "resnet50_b256_amp_{}.log"
COPIED, RESTATED = (1, 2), 3  # runs of NEW taken from BASE's logs: fp32, amp


def _campaigns(tmp_path):
    """BASE: the bundled 1n1g runs. NEW: the same run again 25 % slower (each interval its
    own jitter, the rates printed to match), but fp32 runs 1-2 BASE's logs copied over, and
    amp run 3 BASE's log with its device name restated."""
    base, new = tmp_path / "base", tmp_path / "new"
    shutil.copytree(BUNDLED / "1n1g", base / "1n1g")
    shutil.copytree(BUNDLED / "1n1g", new / "1n1g")
    for log in sorted((new / "1n1g").glob("*.log")):
        stretch_log(log, 1.0, JITTER, seed=7)
        _stretch(log, 1.25)
    for run in COPIED:
        shutil.copy(base / "1n1g" / FP32_RUN.format(run), new / "1n1g")
    text = (base / "1n1g" / AMP_RUN.format(RESTATED)).read_text()
    (new / "1n1g" / AMP_RUN.format(RESTATED)).write_text(
        text.replace("device_name : NVIDIA H200 ", "device_name : NVIDIA H200 141GB "))
    return base, new


def _stored(store, table: str, key: str) -> pd.DataFrame:
    return pd.read_parquet(store / table / f"campaign={key}" / results_store.PART)


@pytest.fixture(scope="module")
def added(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("partial")
    base, new = _campaigns(tmp_path)
    store = tmp_path / "store"
    assert _run("store", "add", base, "--store", store)[0] == 0
    status, out, err = _run("store", "add", new, "--store", store)
    compared = json.loads(_run("compare", base, new, "--format", "json")[1])
    return store, new, status, out, err, {r["case_key"]: r for r in compared}


def test_proven_copies_are_left_out_of_the_stored_runs_and_named(added):
    store, new, status, out, err, _ = added
    assert status == 0 and out.startswith("added ")
    assert "(10 runs, 2 cases; 2 run(s) copies of stored runs, left out)" in out
    for run in COPIED:
        assert f"{new / '1n1g' / FP32_RUN.format(run)}: duplicate_run: " in err
    assert f"{new / '1n1g' / AMP_RUN.format(RESTATED)}: duplicate_run: " in err
    key = out.split()[1]
    ids = set(_stored(store, "runs", key)["run_id"])
    assert ids.isdisjoint({f"1n1g/{FP32_RUN.format(run)[:-4]}" for run in COPIED})
    assert len(ids) == 8
    assert int(pd.read_parquet(store / "campaigns").set_index("campaign").loc[key, "runs"]) == 8


def test_the_stored_summary_is_that_of_the_runs_kept_as_compare_counts_them(added):
    store, _, _, out, _, compared = added
    summary = _stored(store, "summary", out.split()[1])
    summary = summary.set_index(summary["framework"] + "/" + summary["model"] + "/"
                                + summary["precision"] + "/b"
                                + summary["batch_size_per_device"].astype(str) + "/1n1g")
    fp32 = summary.loc[FP32]
    # before: 5 repeats, its median BASE's (the copies outnumber the runs measured anew)
    assert fp32["repeats"] == 3 == compared[FP32]["new_repeats"]
    assert fp32["throughput_median"] == pytest.approx(compared[FP32]["new_median"], rel=1e-12)
    assert fp32["throughput_median"] < 0.85 * compared[FP32]["base_median"]
    assert fp32["outliers"] == 0 and summary.loc[AMP, "repeats"] == 5
    assert _run("store", "list", "--store", store)[0] == 0  # its summary checks against its runs


def test_the_trend_shows_the_runs_kept_and_flags_the_run_alike(added):
    store, _, _, _, _, compared = added
    status, out, _ = _run("store", "trend", "--store", store, "--format", "json")
    assert status == 0
    trend = {(r["case_key"], r["name"]): r for r in json.loads(out)}
    fp32 = trend[FP32, "new"]
    assert fp32["repeats"] == 3 and fp32["change"] == "step down?"
    assert fp32["throughput_median"] == pytest.approx(compared[FP32]["new_median"], rel=1e-12)
    assert fp32["flags"] == ""  # before: spread 20 %, the only sign
    amp = trend[AMP, "new"]
    assert amp["repeats"] == 5 == compared[AMP]["new_repeats"]
    assert ("1 of 5 run(s) alike to stored runs' logs (copies stating another setting, or the "
            "logs cannot tell them from reruns made deterministic), counted") in amp["flags"]
    assert "alike" not in trend[AMP, "base"]["flags"]


def test_a_repair_leaves_the_same_copies_out(added, tmp_path):
    store, new, _, out, _, _ = added
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    key = out.split()[1]
    before = _stored(copy, "runs", key)
    (copy / "summary" / f"campaign={key}" / results_store.PART).unlink()  # its runs left
    status, again, _ = _run("store", "add", new, "--store", copy)
    assert status == 0 and again.startswith(f"repaired (written again) {key}")
    after = _stored(copy, "runs", key)
    assert sorted(after["run_id"]) == sorted(before["run_id"]) and len(after) == 8
    assert _run("store", "list", "--store", copy)[0] == 0
