"""`dlperf compare` states NEW's figures and flags of the runs it counted: copies of BASE's
logs are left out of NEW's spread, median and efficiency, not only of its ratio; and a case
with enough repeats whose interval is too wide to decide is called so, not 'too few
repeats'."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil

import pandas as pd
import pytest

from analysis.changes import verdict
from analysis.cli import main
from analysis.i18n import Translator

from .campaigns import _IPS, BUNDLED, rerun, stretch_log

ONE = "PyTorch/resnet50/fp32/b128/1n1g"
FOUR = "PyTorch/resnet50/fp32/b128/1n4g"


def _compare(base, new):
    """`dlperf compare BASE NEW --format json` in this process: status, rows, stderr lines."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["compare", str(base), str(new), "--format", "json"])
    rows = pd.DataFrame(json.loads(out.getvalue())).set_index("case_key")
    return status, rows, err.getvalue().strip().splitlines()


def _slowed(log, factor: float) -> None:
    """A run `factor` times slower: its clock stretched, its printed rates divided."""
    stretch_log(log, factor)
    log.write_text(_IPS.sub(lambda m: f"{float(m.group(1)) / factor:.2f}", log.read_text()))


def _new(tmp_path, factors: dict[int, float], copied=()):
    """The bundled campaign run again, its 1n1g fp32 repeats kept to `factors` (each that
    many times slower) and `copied` (BASE's own logs copied over)."""
    new = rerun(tmp_path / "new")
    for log in (new / "1n1g").glob("resnet50_b128_fp32_*.log"):
        repeat = int(log.stem.rsplit("_", 1)[1])
        if repeat in copied:
            shutil.copy(BUNDLED / "1n1g" / log.name, log)
        elif repeat in factors:
            _slowed(log, factors[repeat])
        else:
            for part in log.parent.glob(f"{log.stem}.*"):
                part.unlink()
    return new


def test_new_flags_and_figures_are_of_the_runs_counted_not_of_its_copies(tmp_path):
    """Three of NEW's five 1n1g runs are BASE's logs copied, two were measured 25 % and 40 %
    slower: the copies in, their spread is ~33 %; the two counted spread ~11 %."""
    _, rows, _ = _compare(BUNDLED, _new(tmp_path, {4: 1.25, 5: 1.4}, copied=(1, 2, 3)))
    one = rows.loc[ONE]
    assert one["new_repeats"] == 2
    counted = (1 / 1.25, 1 / 1.4)
    assert one["ratio"] == pytest.approx((counted[0] * counted[1]) ** 0.5, abs=0.01)
    assert one["new_median"] / one["base_median"] == pytest.approx(sum(counted) / 2, abs=0.01)
    spread = re.search(r"new: spread (\d+\.\d) % > 5 %", one["flags"])
    expected = (counted[0] - counted[1]) / (sum(counted) / 2) * 100
    assert spread and float(spread.group(1)) == pytest.approx(expected, abs=1.5)  # was 33.2
    assert "new: 3 of 5 run(s) copies of base runs, left out" in one["flags"]
    # NEW's 1n4g efficiency is against its own 1n1g median, that of the runs counted
    four = rows.loc[FOUR]
    assert four["new_efficiency"] == pytest.approx(
        four["new_median"] / (4 * one["new_median"]), rel=1e-3)


def test_copies_among_runs_alike_leave_no_spread_flag(tmp_path):
    """The two counted runs agree (both 25 % slower): no spread flag, though the copies
    among them made one of 25 %."""
    _, rows, err = _compare(BUNDLED, _new(tmp_path, {4: 1.25, 5: 1.25}, copied=(1, 2, 3)))
    assert "spread" not in rows.loc[ONE, "flags"]
    assert f"dlperf: 1 case(s) flagged: {ONE} (new: 3 of 5 run(s) copies of base runs, " \
           "left out)" in err


def test_a_wide_interval_with_enough_repeats_is_not_called_too_few_repeats(tmp_path):
    """Five NEW 1n1g repeats, two 30 % slower: enough repeats, an interval too wide."""
    status, rows, err = _compare(BUNDLED, _new(tmp_path, {1: 1.0, 2: 1.0, 3: 1.3, 4: 1.3,
                                                          5: 1.0}))
    row = rows.loc[ONE]
    assert (row["base_repeats"], row["new_repeats"]) == (5, 5)
    assert row["ratio_low"] < row["ratio"] <= 0.98 < 1 < row["ratio_high"]
    assert row["verdict"] == "interval too wide"
    assert status == 5  # possibly slower, as before
    [line] = [ln for ln in err if "possibly slower" in ln]
    assert line.endswith("% too wide to decide)")


def test_one_repeat_keeps_too_few_repeats(tmp_path):
    status, rows, err = _compare(BUNDLED, _new(tmp_path, {1: 1.25}))
    assert (rows.loc[ONE, "new_repeats"], rows.loc[ONE, "verdict"]) == (1, "too few repeats")
    assert status == 5 and any("fewer than 2 in new" in ln for ln in err)


def test_the_verdict_words_and_their_labels():
    wide = verdict.ratio_interval([100.0, 110.0, 90.0], [101.0, 89.0, 108.0])
    assert verdict.decide(wide) == verdict.TOO_WIDE == "interval too wide"
    assert verdict.decide(verdict.ratio_interval([100.0], [90.0, 90.1])) == verdict.TOO_FEW
    assert set(verdict.UNDECIDED) == {verdict.TOO_FEW, verdict.TOO_WIDE}
    for lang, word in (("en", "interval too wide"), ("zh", "区间过宽")):
        assert Translator(lang)("verdict.interval_too_wide") == word
