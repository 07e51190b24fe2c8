"""`dlperf compare BASE NEW` where NEW's logs are copies of BASE's (byte-identical, or
stretched with their rates rescaled, in another folder): the copy test of `summarize` run
across the two sides, the copies named and left out, never a change."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from datetime import datetime

import pandas as pd

from analysis.cli import main

from .campaigns import BUNDLED, rerun

CASES = {"PyTorch/resnet50/amp/b256/1n1g", "PyTorch/resnet50/fp32/b128/1n1g"}
_STAMP = re.compile(r"^DLL (\S+ \S+)", re.M)


def _compare(base, new):
    """`dlperf compare BASE NEW --format json` in this process: status, rows, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["compare", str(base), str(new), "--format", "json"])
    return status, pd.DataFrame(json.loads(out.getvalue())).set_index("case_key"), err.getvalue()


def _one_config(dest, config="1n1g"):
    shutil.copytree(BUNDLED / config, dest / config)
    return dest


def _stretch(log, factor):
    """Every stamp `factor` times as far from the first, every printed rate / `factor`: a
    copy made to look `1 / factor` times as fast."""
    text = log.read_text()
    fmt = "%Y-%m-%d %H:%M:%S.%f"
    start = datetime.strptime(_STAMP.search(text).group(1), fmt)
    text = _STAMP.sub(lambda m: "DLL " + (start + (datetime.strptime(m.group(1), fmt) - start)
                                          * factor).strftime(fmt), text)
    log.write_text(re.sub(r"(?<=total_ips : )(\d+\.\d+)",
                          lambda m: f"{float(m.group(1)) / factor:.2f}", text))


def test_a_byte_identical_copy_elsewhere_is_not_re_measured_and_fails_the_gate(tmp_path):
    base, new = _one_config(tmp_path / "base"), _one_config(tmp_path / "new")
    status, df, err = _compare(base, new)  # before: unchanged +0.00 % [-0.27, +0.27], exit 0
    assert status == 4
    assert set(df.index) == CASES and (df["verdict"] == "not re-measured").all()
    assert (df["new_repeats"] == 0).all() and df["new_median"].isna().all()
    logs = sorted((base / "1n1g").glob("*.log"))
    for log in logs:  # one problem per copy, naming both files
        assert f"{new / '1n1g' / log.name}: duplicate_run: the same training stamps" in err
        assert f"as {log} (run 1n1g/{log.stem})" in err
    assert f"{len(logs)} problem(s) in {len(logs)} run(s)" in err
    assert "2 case(s) of" in err and "not re-measured in" in err


def test_a_copy_stretched_with_its_rates_rescaled_is_no_speed_up(tmp_path):
    base, new = _one_config(tmp_path / "base"), _one_config(tmp_path / "new")
    for log in (new / "1n1g").glob("*.log"):
        _stretch(log, 0.97)
    status, df, err = _compare(base, new)  # before: faster +3.09 %, exit 0
    assert status == 4 and (df["verdict"] == "not re-measured").all()
    assert err.count("duplicate_run: the same training values") == 10


def test_the_copies_among_re_measured_runs_are_left_out_and_said(tmp_path):
    base = _one_config(tmp_path / "base")
    new = tmp_path / "new"
    rerun(new)
    shutil.rmtree(new / "1n2g"), shutil.rmtree(new / "1n4g"), shutil.rmtree(new / "2n2g")
    copied = new / "1n1g" / "resnet50_b128_fp32_2.log"
    shutil.copy(base / "1n1g" / copied.name, copied)
    status, df, err = _compare(base, new)
    assert status == 0 and (df["verdict"] == "unchanged").all()
    row = df.loc["PyTorch/resnet50/fp32/b128/1n1g"]
    assert (row["base_repeats"], row["new_repeats"]) == (5, 4)
    assert row["flags"] == "new: 1 of 5 run(s) copies of base runs, left out"
    assert df.loc["PyTorch/resnet50/amp/b256/1n1g", "flags"] == ""
    assert "1 problem(s) in 1 run(s)" in err and f"{copied}: duplicate_run" in err


def test_a_campaign_named_twice_is_compared_with_itself(tmp_path):
    """One path as BASE and NEW: a check of the comparison, every run its own copy."""
    base = _one_config(tmp_path / "base")
    status, df, err = _compare(base, base)
    assert status == 0 and (df["verdict"] == "unchanged").all() and err == ""
    status, df, _ = _compare(base, tmp_path / "base" / ".." / "base")
    assert status == 0 and (df["verdict"] == "unchanged").all()


def _run(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in args])
    return status, out.getvalue(), err.getvalue()


def test_a_stretched_copy_of_a_stored_campaign_is_not_added_to_its_trend(tmp_path):
    base, new = _one_config(tmp_path / "base"), _one_config(tmp_path / "new")
    for log in (new / "1n1g").glob("*.log"):
        _stretch(log, 0.97)
    store = tmp_path / "store"
    assert _run("store", "add", base, "--store", store)[0] == 0
    status, out, err = _run("store", "add", new, "--store", store)
    # before: added, and the trend stepped up 3 % at the same start time
    assert status == 4 and out.startswith("copies of stored runs, nothing added: ")
    assert err.count("duplicate_run: the same training values") == 10
    assert "(run 1n1g/resnet50_b128_fp32_1, stored campaign " in err
    trend = json.loads(_run("store", "trend", "--store", store, "--format", "json")[1])
    assert {r["name"] for r in trend} == {"base"} and len(trend) == 2
    status, out, err = _run("compare", "--store", store, "base", new, "--format", "json")
    assert status == 4 and {r["verdict"] for r in json.loads(out)} == {"not re-measured"}
    again = tmp_path / "again"  # runs of their own: stored beside
    rerun(again)
    assert _run("store", "add", again / "1n1g", "--store", store)[1].startswith("added ")
