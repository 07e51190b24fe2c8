"""An MLPerf case with fewer runs than its round asks for (the real Google TPU v4 ResNet
results, tests/data/real/mlperf_v1_0_google_tf_resnet, 3 of their 5) is flagged, and
``summarize --strict`` fails on that flag as on every other; the 5 runs pass."""

from __future__ import annotations

import shutil
from pathlib import Path

from analysis.cli import main

ROOT = Path(__file__).resolve().parents[2]
GOOGLE = ROOT / "tests" / "data" / "real" / "mlperf_v1_0_google_tf_resnet"
META = "num_nodes=16,gpus_per_node=4"


def _runs(folder: Path, n: int) -> Path:
    folder.mkdir()
    for i in range(n):
        shutil.copy(GOOGLE / f"result_{i}.txt", folder / f"result_{i}.txt")
    return folder


def test_three_of_five_resnet_runs_fail_strict_naming_the_flag(tmp_path, capsys):
    short = _runs(tmp_path / "short", 3)
    assert main(["summarize", "--no-cache", "--meta", META, "--format", "csv",
                 "--all-columns", str(short)]) == 0
    assert "3 of the 5 runs the round asks for (resnet)" in capsys.readouterr().out
    assert main(["summarize", "--no-cache", "--meta", META, "--strict", str(short)]) == 3
    err = capsys.readouterr().err
    assert f"{short}: case MLPerf/resnet/?/b?/16n4g flagged: 3 of the 5 runs the round " \
           "asks for (resnet) in the time to train" in err


def test_the_five_runs_the_round_asks_for_pass_strict(tmp_path):
    full = _runs(tmp_path / "full", 5)
    assert main(["summarize", "--no-cache", "--meta", META, "--strict", str(full)]) == 0
