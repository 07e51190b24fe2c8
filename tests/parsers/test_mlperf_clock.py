"""An MLPerf run whose clock steps forward mid-run (NTP): its time to train counts the step,
which the log's own block cadence shows; the run is flagged, its time kept (a stall would
count in the wall-clock score). Built from the real Google v1.0 ResNet logs."""

from __future__ import annotations

import json
import re
from pathlib import Path

from analysis.collect import parse_paths

GOOGLE = Path(__file__).resolve().parents[1] / "data" / "real" / "mlperf_v1_0_google_tf_resnet"


def _stepped(data: bytes, at_block: int, ms: int) -> bytes:
    """`data` with every event from its `at_block`-th block_start on `ms` later."""
    out, seen = [], 0
    for line in data.split(b"\n"):
        if b'"key": "block_start"' in line:
            seen += 1
        if seen >= at_block and b":::MLLOG " in line:
            t = json.loads(line.split(b":::MLLOG ", 1)[1])["time_ms"]
            line = re.sub(rb'"time_ms": \d+', f'"time_ms": {t + ms}'.encode(), line, count=1)
        out.append(line)
    return b"\n".join(out)


def test_a_clock_step_between_blocks_is_flagged(tmp_path):
    """+60 s at the 5th block of a run whose blocks come every 23.2 s: 5.30 min taken as
    its time to train (4.30 ran), no flag."""
    (tmp_path / "result_0.txt").write_bytes(_stepped((GOOGLE / "result_0.txt").read_bytes(), 5, 60_000))
    result = parse_paths([tmp_path], jobs=1)
    found = result.problems[result.problems["kind"] == "timestamps_jump"]
    assert len(found) == 1
    assert re.search(r"a block of the run takes 5\.8\d* s an epoch \(median of the 10 after the "
                     r"first\), but 83\.\d s pass for its 4 epoch\(s\) from one block_start to "
                     r"the next", found["reason"].iloc[0])


def test_the_real_runs_blocks_are_not_flagged():
    result = parse_paths([GOOGLE], jobs=1)
    assert "timestamps_jump" not in set(result.problems["kind"])


def test_a_run_short_of_its_quality_target_is_no_time_to_train(tmp_path):
    """Google's result_4 with every eval_accuracy 0.70 (ResNet's target is 0.759) and its
    run_stop still saying success: 4.30 min counted as a time to train, no problem."""
    for i in range(5):
        data = (GOOGLE / f"result_{i}.txt").read_bytes()
        if i == 4:
            data = re.sub(rb'("key": "eval_accuracy", "value": )[0-9.]+', rb"\g<1>0.70", data)
        (tmp_path / f"result_{i}.txt").write_bytes(data)
    from analysis.stats import summarize

    result = parse_paths([tmp_path], jobs=1)
    found = result.problems[result.problems["kind"] == "run_aborted"]
    assert [Path(s).name for s in found["source"]] == ["result_4.txt"]
    assert "no eval_accuracy reaches resnet's target 0.759 (the highest, 0.7, on line" \
        in found["reason"].iloc[0]
    assert "(1 aborted run counted as the slowest)" in \
        summarize(result, "reported").iloc[0]["time_to_train_rule"]
