"""MLPerf's time to train through `summarize` (CLI), `compare` (lower is better) and the
results store, on the real Google TPU v4 ResNet logs (tests/data/real/
mlperf_v1_0_google_tf_resnet) and a copy of them whose runs each took 10 % longer."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from analysis.changes import compare, sources, store

ROOT = Path(__file__).resolve().parents[2]
GOOGLE = ROOT / "tests" / "data" / "real" / "mlperf_v1_0_google_tf_resnet"
SCORE = 4.301094444444445
_START = re.compile(rb'"time_ms": (\d+), "key": "run_start"')
_STOP = re.compile(rb'"time_ms": (\d+)(, "key": "run_stop")')


def _slower_copy(dest: Path, factor: float) -> Path:
    """The logs with each run_stop moved so that the run takes `factor` times as long."""
    dest.mkdir()
    for log in sorted(GOOGLE.glob("result_*.txt")):
        data = log.read_bytes()
        start = int(_START.search(data).group(1))
        stop = _STOP.search(data)
        moved = start + round((int(stop.group(1)) - start) * factor)
        data = data[:stop.start()] + b'"time_ms": %d' % moved + data[stop.start(2):]
        (dest / log.name).write_bytes(data)
    return dest


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory):
    base = tmp_path_factory.mktemp("base") / "mlperf"
    shutil.copytree(GOOGLE, base)
    new = _slower_copy(tmp_path_factory.mktemp("new") / "mlperf", 1.10)
    return sources.from_folder(base, "reported"), sources.from_folder(new, "reported")


def test_compare_says_a_longer_time_to_train_is_slower(campaigns):
    base, new = campaigns
    result = compare.compare(base, new)
    row = result.table.iloc[0]
    assert row["base_time_to_train_min"] == pytest.approx(SCORE, abs=1e-9)
    assert row["new_time_to_train_min"] == pytest.approx(SCORE * 1.10, rel=1e-6)
    assert row["time_to_train_change"] == pytest.approx(0.10, rel=1e-5)
    assert row["time_to_train_verdict"] == "slower"
    assert row["verdict"] == "slower"  # no throughput on either side: the time decides
    assert result.slower["case_key"].tolist() == [row["case_key"]]
    back = compare.compare(new, base)
    assert back.table["time_to_train_verdict"].tolist() == ["faster"] and back.slower.empty
    same = compare.compare(base, base)
    assert same.table["time_to_train_verdict"].tolist() == ["unchanged"]


def test_the_store_keeps_the_time_to_train(campaigns, tmp_path):
    base, _ = campaigns
    store.add(tmp_path, base)
    summary = pd.read_parquet(tmp_path / "summary")
    assert summary["time_to_train_min"].tolist() == pytest.approx([SCORE], abs=1e-9)
    assert summary["time_to_train_rule"].str.startswith("MLPerf rule").all()


def test_the_cli_prints_the_score_and_its_rule():
    out = subprocess.run([sys.executable, "-m", "analysis", "summarize", str(GOOGLE),
                          "--format", "json", "--no-cache"], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    rows = rows if isinstance(rows, list) else rows["rows"]
    assert rows[0]["time_to_train_min"] == pytest.approx(SCORE, abs=1e-9)
    assert "dropping the 1 fastest and the 1 slowest" in rows[0]["time_to_train_rule"]
    table = subprocess.run([sys.executable, "-m", "analysis", "summarize", str(GOOGLE),
                            "--no-cache"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert "time to train min" in table.stdout and " 4.30 " in table.stdout
