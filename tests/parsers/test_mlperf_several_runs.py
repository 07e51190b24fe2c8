"""An MLPerf log holding more than one run (two runs written to one file, a run started
twice): the rules score one run a log, so it gives no time to train and its case no score;
the same event printed by several ranks is one. Built from the real NVIDIA v1.0 logs."""

from __future__ import annotations

import gzip
import math
import re
from pathlib import Path

import pytest

from analysis import metrics as M
from analysis.collect import parse_paths
from analysis.stats import summarize

REAL = Path(__file__).resolve().parents[1] / "data" / "real"
NVIDIA = REAL / "mlperf_v1_0_nvidia_mxnet_resnet"
GOOGLE = REAL / "mlperf_v1_0_google_tf_resnet"


def _real(i: int) -> bytes:
    return gzip.decompress((NVIDIA / f"result_{i}.txt.gz").read_bytes())


def _lines_of(data: bytes, key: bytes) -> list[bytes]:
    return [ln for ln in data.split(b"\n") if b'"key": "' + key + b'"' in ln]


def _write(folder: Path, logs: dict[int, bytes]) -> None:
    folder.mkdir(exist_ok=True)
    for i in range(5):
        (folder / f"result_{i}.txt").write_bytes(logs.get(i, _real(i)))


def _times(result) -> dict[str, float]:
    o = result.observations
    rows = o[(o["metric"] == M.TIME_TO_TRAIN) & (o["phase"] == M.SUMMARY)]
    return {Path(s).name: v for s, v in zip(rows["source"], rows["value"])}


def test_two_runs_in_one_log_give_no_time_and_no_score(tmp_path):
    """result_0 followed by result_2 in one file: result_0's 28.74 min was taken and
    result_2's run dropped without a word; the case scored 28.77 as if all was well."""
    two = _real(0) + _real(2)
    _write(tmp_path, {0: two})
    result = parse_paths([tmp_path], jobs=1)
    assert "result_0.txt" not in _times(result)
    found = result.problems[result.problems["kind"] == "several_runs"]
    first = len(_real(0).split(b"\n")) - 1  # lines of result_0 before result_2's
    assert len(found) == 1
    assert found["reason"].iloc[0].startswith(
        f"a run_start on line {first + 449} after the run_stop on line 1404 (run_start first "
        "on line 449): more than one run")
    row = summarize(result, "reported").iloc[0]
    assert math.isnan(row["time_to_train_min"])
    assert "1 log(s) of the case hold more than one run" in row["time_to_train_rule"]


def test_a_second_run_start_before_run_stop_gives_no_time(tmp_path):
    """A run_start 10 minutes after the first (a restarted run): the later one was paired
    with run_stop, 18.74 min for a run the log shows took 28.74."""
    data = _real(0)
    start = _lines_of(data, b"run_start")[0]
    again = start.replace(b'"time_ms": 1621118646492', b'"time_ms": 1621119246492')
    stop = _lines_of(data, b"run_stop")[0]
    _write(tmp_path, {0: data.replace(stop, again + b"\n" + stop)})
    result = parse_paths([tmp_path], jobs=1)
    assert "result_0.txt" not in _times(result)
    assert "several_runs" in set(result.problems["kind"])


def test_one_run_start_printed_by_every_rank_is_one_run(tmp_path):
    """The same run_start (one time_ms) on 8 lines, as every rank may print it."""
    data = _real(0)
    start = _lines_of(data, b"run_start")[0]
    _write(tmp_path, {0: data.replace(start, b"\n".join([start] * 8))})
    result = parse_paths([tmp_path], jobs=1)
    assert _times(result)["result_0.txt"] == 28.742366666666666
    assert "several_runs" not in set(result.problems["kind"])
    assert summarize(result, "reported").iloc[0]["time_to_train_min"] == \
        pytest.approx(28.770861111111106)


def test_a_log_appended_to_itself_is_two_runs(tmp_path):
    """Google's result_4 written twice into one file (the same times twice over): read as
    one run, 4.30 min, and the case scored as if nothing was wrong."""
    for i in range(5):
        data = (GOOGLE / f"result_{i}.txt").read_bytes()
        (tmp_path / f"result_{i}.txt").write_bytes(data + data if i == 4 else data)
    result = parse_paths([tmp_path], jobs=1)
    assert "result_4.txt" not in _times(result)
    found = result.problems[result.problems["kind"] == "several_runs"]
    assert [Path(s).name for s in found["source"]] == ["result_4.txt"]
    assert "after the run_stop on line" in found["reason"].iloc[0]
    assert math.isnan(summarize(result, "reported").iloc[0]["time_to_train_min"])


def test_a_run_start_at_0_ms_is_no_time_to_train(tmp_path):
    """Google's result_3 and result_4 with run_start at time_ms 0 (as the same files print
    for their submission keys): 27 million minutes each, a score of 9,002,356.65 min."""
    for i in range(5):
        data = (GOOGLE / f"result_{i}.txt").read_bytes()
        if i in (3, 4):
            start = _lines_of(data, b"run_start")[0]
            data = data.replace(start, re.sub(rb'"time_ms": \d+', b'"time_ms": 0', start))
        (tmp_path / f"result_{i}.txt").write_bytes(data)
    result = parse_paths([tmp_path], jobs=1)
    assert sorted(_times(result)) == ["result_0.txt", "result_1.txt", "result_2.txt"]
    found = result.problems[result.problems["kind"] == "impossible_value"]
    assert sorted(Path(s).name for s in found["source"]) == ["result_3.txt", "result_4.txt"]
    assert "run_start at 0 ms is before 1000000000000 ms (2001)" in found["reason"].iloc[0]
    row = summarize(result, "reported").iloc[0]
    assert math.isnan(row["time_to_train_min"])  # 2 runs without a time: more than k = 1
    assert "2 run(s) without a possible time (impossible_value) counted as aborted" \
        in row["time_to_train_rule"]


def test_a_run_start_before_init_start_is_no_time_to_train(tmp_path):
    data = (GOOGLE / "result_0.txt").read_bytes()
    start = _lines_of(data, b"run_start")[0]
    (tmp_path / "result_0.txt").write_bytes(
        data.replace(start, start.replace(b'"time_ms": 1620425288935', b'"time_ms": 1620420000000')))
    found = parse_paths([tmp_path], jobs=1).problems
    found = found[found["kind"] == "impossible_value"]
    assert len(found) == 1 and "before init_start at 1620425027324 ms" in found["reason"].iloc[0]


def test_results_of_two_systems_in_one_case_are_flagged(tmp_path):
    """Google's five runs (global batch 8,192) with two of them edited to state 4,096, as
    another system's results put beside them: one case, one score, no flag."""
    for i in range(5):
        data = (GOOGLE / f"result_{i}.txt").read_bytes()
        if i >= 3:
            data = data.replace(b'"key": "global_batch_size", "value": 8192',
                                b'"key": "global_batch_size", "value": 4096')
        (tmp_path / f"result_{i}.txt").write_bytes(data)
    result = parse_paths([tmp_path], jobs=1)
    summarize(result, "reported")
    flags = result.problems[result.problems["kind"] == "mixed_configuration"]
    assert len(flags) == 1
    assert "configuration differs in global_batch_size:" in flags["reason"].iloc[0]


def test_the_real_repeats_of_one_system_are_one_configuration():
    for folder in (GOOGLE, NVIDIA):
        result = parse_paths([folder], jobs=1)
        summarize(result, "reported")
        assert "mixed_configuration" not in set(result.problems["kind"]), folder.name
