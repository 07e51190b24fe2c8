"""`dlperf compare` on cases its repeats cannot decide (verdict 'too few repeats' or
'interval too wide'): each is
named on stderr with its change and why, and one that looks slower beyond its threshold fails
the gate with exit 5 (possibly slower), which 1 (confirmed slower) and 4 (not measured) win
over. Before, such a case passed silently with exit 0: a 20 % drop measured by one NEW run."""

from __future__ import annotations

import contextlib
import io
import json
import shutil

import pandas as pd
import pytest
from cli._helpers import run_cli

from analysis.cli import main

from .campaigns import _IPS, BUNDLED, rerun, stretch_log

CASE = "PyTorch/resnet50/fp32/b128/1n4g"
OTHERS = 7  # the bundled campaign's other cases, unchanged


def _slowed(log, factor: float) -> None:
    """A log whose run took `factor` times longer: its clock stretched and the rates it prints
    divided by `factor` (a stretched clock alone disagrees with its printed rates)."""
    stretch_log(log, factor)
    text = log.read_text(encoding="utf-8")
    log.write_text(_IPS.sub(lambda m: f"{float(m.group(1)) / factor:.2f}", text),
                   encoding="utf-8")


def _new(tmp_path, factors: dict[int, float], name: str = "new"):
    """The bundled campaign run again, its 1n4g fp32 case kept to the repeats `factors`
    names, each `factor` times slower (its clock stretched)."""
    new = rerun(tmp_path / name)
    for path in (new / "1n4g").glob("resnet50_b128_fp32_*"):
        repeat = int(path.name.split(".")[0].rsplit("_", 1)[1])
        if repeat not in factors:
            path.unlink()
        elif path.suffix == ".log":
            _slowed(path, factors[repeat])
    return new


def _compare(*args):
    """`dlperf compare ARGS --format json` in this process: (exit status, rows, stderr lines)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["compare", *map(str, args), "--format", "json"])
    rows = pd.DataFrame(json.loads(out.getvalue())).set_index("case_key")
    return status, rows, err.getvalue().strip().splitlines()


@pytest.fixture(scope="module")
def one_slow(tmp_path_factory):
    """NEW measured the case once, 20 % slower."""
    return _new(tmp_path_factory.mktemp("one_slow"), {1: 1.25})


def test_one_repeat_20_percent_slower_fails_the_gate_as_possibly_slower(one_slow):
    status, rows, err = _compare(BUNDLED, one_slow)
    row = rows.loc[CASE]
    assert (row["base_repeats"], row["new_repeats"], row["verdict"]) == (5, 1, "too few repeats")
    assert row["ratio"] == pytest.approx(0.8, abs=0.01)
    assert (rows.drop(index=CASE)["verdict"] == "unchanged").sum() == OTHERS
    assert status == 5  # was 0: a CI gate passed a 20 % drop
    assert err == [f"dlperf: 1 case(s) possibly slower, not confirmed (more repeats needed): "
                   f"{CASE} ({(row['ratio'] - 1) * 100:+.2f} %, threshold 2 %; repeats 5/1, "
                   "fewer than 2 in new)"]


def test_a_case_threshold_above_the_drop_passes_it_named_as_undecided(one_slow):
    status, rows, err = _compare(BUNDLED, one_slow, "--case-threshold", "*/1n4g=25%")
    assert rows.loc[CASE, "threshold"] == 0.25
    assert status == 0
    assert len(err) == 1 and err[0].startswith(
        "dlperf: 1 case(s) undecided, not looking slower (the repeats cannot decide): "
        f"{CASE} (-")
    assert err[0].endswith(", threshold 25 %; repeats 5/1, fewer than 2 in new)")
    status, _, err = _compare(BUNDLED, one_slow, "--case-threshold", "*/1n4g=15%")
    assert status == 5 and "possibly slower" in err[0] and "threshold 15 %" in err[0]


def test_a_faster_looking_undecided_case_passes_and_is_named(tmp_path):
    status, rows, err = _compare(BUNDLED, _new(tmp_path, {3: 0.8}))
    assert rows.loc[CASE, "verdict"] == "too few repeats"
    assert status == 0
    assert len(err) == 1 and err[0].startswith("dlperf: 1 case(s) undecided, not looking "
                                               f"slower (the repeats cannot decide): {CASE} (+")


def test_an_interval_too_wide_is_the_reason_with_enough_repeats(tmp_path):
    """Five NEW repeats, two of them 30 % slower: the estimate is a drop beyond 2 %, yet the
    interval reaches past no change."""
    new = _new(tmp_path, {1: 1.0, 2: 1.0, 3: 1.3, 4: 1.3, 5: 1.0})
    status, rows, err = _compare(BUNDLED, new)
    row = rows.loc[CASE]
    assert row["new_repeats"] == 5 and row["verdict"] == "interval too wide"
    assert row["ratio_low"] < row["ratio"] <= 0.98 < 1 < row["ratio_high"]
    assert status == 5
    [line] = [ln for ln in err if "possibly slower" in ln]
    assert line.endswith(f"threshold 2 %; interval [{(row['ratio_low'] - 1) * 100:+.2f}, "
                         f"{(row['ratio_high'] - 1) * 100:+.2f}] % too wide to decide)")


def test_not_measured_wins_over_possibly_slower(tmp_path):
    new = _new(tmp_path, {1: 1.25})
    shutil.rmtree(new / "2n2g")
    status, rows, err = _compare(BUNDLED, new)
    assert status == 4
    assert any("possibly slower" in ln and CASE in ln for ln in err)
    assert any("have no throughput in" in ln and "2n2g (only in base)" in ln for ln in err)


def test_confirmed_slower_wins_over_possibly_slower(tmp_path):
    new = _new(tmp_path, {1: 1.25})
    for log in (new / "1n2g").glob("*.log"):
        _slowed(log, 1.05)
    status, _, err = _compare(BUNDLED, new)
    assert status == 1
    assert any("2 case(s) slower beyond the threshold" in ln and "1n2g" in ln for ln in err)
    assert any("possibly slower" in ln and CASE in ln for ln in err)


def test_compare_help_states_exit_5(dlperf_exe):
    done = run_cli(dlperf_exe, "compare", "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "5 possibly slower, more repeats needed" in text
    assert "1 and 4 win over it" in text
