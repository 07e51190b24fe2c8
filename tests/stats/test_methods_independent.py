"""A run's figure and flag by one method do not depend on which other methods were computed
with it, nor, for ``dlperf``, on whether only the lines its rule reads were parsed (what
``summarize --method dlperf`` does): healthy DLE lines printing a running mean since the
start over 800 iterations were flagged figure_mismatch by ``dlperf`` from the whole log
(checked against the lagging means read as interval rates) and passed from its first lines.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_rounded_running_means import rounded_means  # noqa: E402
from test_whole_second_restarting_counters import whole_second_log  # noqa: E402

METHODS = ["dlperf", "window", "reported"]
REAL = Path(__file__).resolve().parents[1] / "data" / "real"


def figures(folder: Path, names, dlperf_only: bool = False) -> dict:
    """{(method, run_id): (figure, problem kind)} of `names` computed in one call (no
    figure: None)."""
    done = run_throughputs(parse_paths([folder], jobs=1, dlperf_only=dlperf_only), names)
    return {(name, rid): (round(float(t), 6) if t == t else None, str(k)) for name, frame in done.items()
            for rid, t, k in zip(frame["run_id"], frame["throughput"], frame["problem_kind"],
                                 strict=True)}


def assert_independent(folder: Path) -> None:
    together = figures(folder, METHODS)
    assert together == figures(folder, METHODS[::-1])
    for name in METHODS:
        alone = figures(folder, [name])
        assert alone == {k: v for k, v in together.items() if k[0] == name}, name
    assert figures(folder, ["dlperf"], dlperf_only=True) == figures(folder, ["dlperf"])


@pytest.mark.parametrize("source", sorted(p.name for p in REAL.iterdir() if p.is_dir()))
def test_real_logs_methods_independent(source):
    assert_independent(REAL / source)


@pytest.mark.parametrize("shape", [
    {"digit": 1, "n": 800}, {"digit": 0.01, "n": 1500}, {"digit": 10, "n": 300, "epoch_len": 50}])
def test_running_means_methods_independent(tmp_path, shape):
    rounded_means(tmp_path, **shape)
    assert_independent(tmp_path)


@pytest.mark.parametrize("epoch_len", [20, 100])
def test_whole_second_epochs_methods_independent(tmp_path, epoch_len):
    whole_second_log(tmp_path, 1, every=10, epoch_len=epoch_len, n=1200, seed=3)
    assert_independent(tmp_path)
