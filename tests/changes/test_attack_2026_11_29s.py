"""Gates and trends that dropped a number (attack of 2026-11-29): `check` of logs without
env records, `store trend` and `compare` of MLPerf campaigns (scored by time to train)."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis.changes import store as results_store
from analysis.changes import trend
from analysis.changes.compare import compare
from analysis.changes.sources import load
from analysis.cli import main
from analysis.plots.trend import trend_chart

from .campaigns import BUNDLED, ROOT

MLPERF = ROOT / "tests" / "data" / "real" / "mlperf_v1_0_google_tf_resnet"
FP32_1N4G = "PyTorch/resnet50/fp32/b128/1n4g"  # median 11,661.87 samples/s on 4x H200


def _cli(*args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in args])
    return status, out.getvalue(), err.getvalue()


def _without_env(tmp_path: Path) -> Path:
    """The bundled 1n4g runs without their env records (logs of another harness)."""
    camp = tmp_path / "camp"
    (camp / "1n4g").mkdir(parents=True)
    for src in (BUNDLED / "1n4g").glob("resnet50_b128_fp32_*"):
        if not src.name.endswith(".env.json"):
            shutil.copy(src, camp / "1n4g")
    return camp


def test_check_without_env_records_fails_a_case_below_its_one_machine_reference(tmp_path):
    """A case 10 % below its reference: 'hardware unknown', exit 0 even with --require-all
    and nothing on stderr, before; now 'slower', exit 1, the row and a stderr line saying
    the hardware was not checked. References of two machines for the case stay without a
    verdict, named on stderr; --require-all fails on them."""
    camp = _without_env(tmp_path)
    refs = tmp_path / "refs.yaml"
    refs.write_text("source: agreed target\ntolerance: 2%\nreferences:\n"
                    f"  - {{key: '{FP32_1N4G}', value: 13000, hardware: 4x H200}}\n")
    for extra in ([], ["--require-all"]):
        status, out, err = _cli("check", camp, "--references", refs, "--format", "csv", *extra)
        [row] = pd.read_csv(io.StringIO(out), keep_default_na=False).to_dict("records")
        assert (status, row["verdict"]) == (1, "slower")
        assert row["ratio"] == pytest.approx(11661.87 / 13000, abs=1e-4)
        assert row["excluded"].startswith("hardware not checked: reference measured on 4x H200")
        assert f"1 case(s) checked without the hardware check: {FP32_1N4G} (reference " \
            "measured on 4x H200; the runs have no environment record of their GPUs)" in err
    refs.write_text(refs.read_text()
                    + f"  - {{key: '{FP32_1N4G}', value: 1400, hardware: 8x V100-SXM2-16GB}}\n")
    status, out, err = _cli("check", camp, "--references", refs, "--format", "csv")
    table = pd.read_csv(io.StringIO(out), keep_default_na=False)
    assert status == 0 and set(table["verdict"]) == {"hardware unknown"}
    assert table["excluded"].str.contains("references of several machines").all()
    assert "2 reference(s) give no verdict: " in err
    status, _out, err = _cli("check", camp, "--references", refs, "--require-all")
    assert status == 4 and "2 reference(s) give no verdict (--require-all)" in err


def _mlperf_copy(dest: Path, factor: float, runs: int = 5) -> Path:
    """The real MLPerf resnet result set (or its first `runs` results) with every time_ms
    after run_start `factor` times farther from it: each run `factor` times slower."""
    dest.mkdir(parents=True)
    for i in range(runs):
        src = MLPERF / f"result_{i}.txt"
        text = src.read_text()
        start = int(re.search(r'"time_ms": (\d+), "key": "run_start"', text)[1])

        def moved(m: re.Match, start: int = start) -> str:
            t = int(m[1])
            return m[0] if t <= start else f'"time_ms": {start + round((t - start) * factor)}'

        (dest / src.name).write_text(re.sub(r'"time_ms": (\d+)', moved, text))
    return dest


def test_store_trend_follows_an_mlperf_case_by_its_time_to_train(tmp_path):
    """Four MLPerf campaigns, the last two 10 % slower to train: trend showed no figure and
    no change point (its throughput is none) while compare called them slower; now both
    read the time to train, and the step is flagged where it happens."""
    store = tmp_path / "store"
    sides = []
    for i, factor in enumerate((1.0, 1.0001, 1.10, 1.1001)):
        sides.append(load(str(_mlperf_copy(tmp_path / f"camp{i}", factor))))
        results_store.add(store, sides[-1], "mlp")
    frame = trend.trend(store)
    assert list(frame["change"]) == ["", "", "step up", ""]
    assert list(frame["time_to_train_min"]) == pytest.approx([4.3011, 4.3015, 4.7312, 4.7316],
                                                             abs=1e-3)
    assert frame["step"].iloc[2] == pytest.approx(0.0999, abs=1e-3)
    assert compare(sides[0], sides[2]).table["verdict"].tolist() == ["slower"]
    status, out, _err = _cli("store", "trend", "--store", store)
    assert status == 0 and "time to train min" in out and "a step up is slower" in out
    [ax] = trend_chart(frame).axes  # the notebook's chart draws the same figure
    assert ax.get_ylabel() == "time to train (min)"
    assert list(ax.lines[0].get_ydata()) == pytest.approx(list(frame["time_to_train_min"]))


def test_compare_flags_an_mlperf_side_with_fewer_runs_than_the_round_asks(tmp_path):
    """3 of the 5 resnet results against the 5: 'unchanged' with empty flags and no word,
    before; now the new side is flagged (the round asks for 5 runs) and named on stderr.
    The full set against itself is not flagged."""
    base = _mlperf_copy(tmp_path / "base", 1.0)
    new = _mlperf_copy(tmp_path / "new", 1.0, runs=3)
    status, out, err = _cli("compare", base, new, "--format", "csv")
    [row] = pd.read_csv(io.StringIO(out), keep_default_na=False).to_dict("records")
    assert row["time_to_train_verdict"] == "unchanged" and status == 0
    assert row["flags"] == "new: 3 of the 5 runs the round asks for (resnet) in the time to train"
    assert "1 case(s) flagged: MLPerf/resnet" in err
    status, out, err = _cli("compare", base, base, "--format", "csv")
    [row] = pd.read_csv(io.StringIO(out), keep_default_na=False).to_dict("records")
    assert (status, row["flags"]) == (0, "") and "flagged" not in err
