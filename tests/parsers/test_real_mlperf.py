"""Whole MLPerf Training v1.0 result logs of three frameworks (tests/data/real/mlperf_*/SOURCE):
each run's time to train, the round's score of the case against the published one, the
aborted run counted as the rules count it, and the MXNet throughput lines."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from analysis import metrics as M
from analysis.collect import parse_paths
from analysis.stats import run_throughput, summarize
from analysis.stats.time_to_train import olympic

REAL = Path(__file__).resolve().parents[1] / "data" / "real"
NVIDIA = REAL / "mlperf_v1_0_nvidia_mxnet_resnet"
GOOGLE = REAL / "mlperf_v1_0_google_tf_resnet"
UNET3D = REAL / "mlperf_v1_0_google_jax_unet3d"

#: Per run (result_0..4) the time to train in minutes, None for the aborted run (SOURCE).
NVIDIA_RUNS = [28.742366666666666, None, 28.828616666666665, 28.512133333333335, 28.7416]
GOOGLE_RUNS = [4.30165, 4.30055, 4.301733333333333, 4.301083333333334, 4.300083333333333]


def _parse(folder: Path):
    return parse_paths([folder], jobs=1)


def _times(result) -> dict[str, float]:
    o = result.observations
    rows = o[(o["metric"] == M.TIME_TO_TRAIN) & (o["phase"] == M.SUMMARY)]
    assert set(rows["unit"]) == {M.MINUTES}
    return {Path(s).name.split(".")[0]: v for s, v in zip(rows["source"], rows["value"])}


@pytest.mark.parametrize(("folder", "runs"), [(NVIDIA, NVIDIA_RUNS), (GOOGLE, GOOGLE_RUNS)],
                         ids=["nvidia_mxnet", "google_tf"])
def test_each_runs_time_to_train(folder, runs):
    result = _parse(folder)
    assert set(result.runs["family"]) == {"mlperf"}
    got = _times(result)
    want = {f"result_{i}": t for i, t in enumerate(runs) if t is not None}
    assert got.keys() == want.keys()
    for name, t in want.items():
        assert got[name] == pytest.approx(t, abs=1e-9), name


@pytest.mark.parametrize(("folder", "published", "decimals"),
                         [(NVIDIA, 28.770861111111106, 9), (GOOGLE, 4.30, 2)],
                         ids=["nvidia_mxnet", "google_tf"])
def test_case_score_is_the_published_one(folder, published, decimals):
    """NVIDIA: the mlperf-logging summarizer's figure (SOURCE); Google: its published
    summarizer output, 2 decimals."""
    table = summarize(_parse(folder), "reported")
    assert len(table) == 1
    row = table.iloc[0]
    assert round(row["time_to_train_min"], decimals) == pytest.approx(published, abs=10**-decimals)
    assert row["time_to_train_rule"].startswith("MLPerf rule: mean of 3 of 5 runs")


def test_the_aborted_run_is_a_problem_and_counts_as_the_slowest():
    result = _parse(NVIDIA)
    aborted = result.problems[result.problems["kind"] == "run_aborted"]
    assert [Path(s).name for s in aborted["source"]] == ["result_1.txt.gz"]
    assert aborted["line"].tolist() == [1453]
    assert "status 'aborted' after 30.3474 min" in aborted["reason"].iloc[0]
    rule = summarize(result, "reported")["time_to_train_rule"].iloc[0]
    assert "(1 aborted run counted as the slowest)" in rule


def test_an_aborted_run_faster_than_the_rest_still_counts_as_the_slowest(tmp_path):
    """The real aborted log with its run_stop moved 3 minutes after run_start: by time it
    would be the fastest, yet the rules drop it as a slowest run and drop the fastest
    finished one (28.512), so the score is that of the real logs."""
    for i in range(5):
        data = gzip.decompress((NVIDIA / f"result_{i}.txt.gz").read_bytes())
        if i == 1:
            data = data.replace(b'"time_ms": 1621120462402, "event_type": "INTERVAL_END", '
                                b'"key": "run_stop"', b'"time_ms": 1621118826492, '
                                b'"event_type": "INTERVAL_END", "key": "run_stop"')
        (tmp_path / f"result_{i}.txt").write_bytes(data)
    table = summarize(_parse(tmp_path), "reported")
    assert table["time_to_train_min"].iloc[0] == pytest.approx(28.770861111111106, abs=1e-9)


def test_the_score_rule():
    assert olympic([3.0, 1.0, 2.0, 5.0, 4.0], 0, "resnet") == (3.0, pytest.approx(
        "MLPerf rule: mean of 3 of 5 runs' times to train after dropping the 1 fastest and "
        "the 1 slowest"))
    score, rule = olympic([1.0, 2.0, 3.0], 2, "resnet")
    assert score != score and "2 of 5 runs aborted" in rule
    score, rule = olympic([1.0, 2.0, 3.0, 4.0], 0, "bert")
    assert score == 2.5 and "the round asks for 10 runs of bert, these are 4" in rule


def test_mxnet_speed_lines_are_the_training_throughput():
    """`Speed: … samples/sec` every 20 batches on rank 0, with the global batch; the batch
    count restarts each epoch and is put after the batches of the epochs before it."""
    result = parse_paths([NVIDIA / "result_0.txt.gz"], jobs=1)
    o = result.observations
    speed = o[(o["phase"] == M.TRAIN) & (o["metric"] == M.THROUGHPUT)].sort_values("line")
    assert len(speed) == 665
    assert speed["value"].iloc[0] == 15680.13 and speed["line"].iloc[0] == 458
    steps = speed["step"].to_numpy()
    assert (steps[1:] > steps[:-1]).all()
    assert result.runs["framework"].iloc[0] == "MXNet"
    assert result.runs["global_batch_size"].iloc[0] == 3264
    per_epoch = o[(o["phase"] == M.EPOCH) & (o["metric"] == M.THROUGHPUT)]
    assert per_epoch["value"].iloc[0] == pytest.approx(15982.398913364215)
    assert not {"timestamps_backwards", "steps_backwards", "bad_line"} & set(result.problems["kind"])


def test_a_log_without_throughput_says_so():
    result = _parse(GOOGLE)
    for method in ("reported", "dlperf"):
        runs = run_throughput(result, method)
        assert runs["throughput"].isna().all()
        assert runs["problem"].str.contains("time to train").all(), method
    assert "no_training_lines" not in set(result.problems["kind"])


def test_an_unreadable_line_is_a_bad_line_naming_it(tmp_path):
    data = (GOOGLE / "result_0.txt").read_bytes().replace(b'"key": "block_start", "value": null',
                                                         b'"key": "block_start", "value": nul', 1)
    path = tmp_path / "result_0.txt"
    path.write_bytes(data)
    result = parse_paths([path], jobs=1)
    bad = result.problems[result.problems["kind"] == "bad_line"]
    assert bad["line"].tolist() == [24]
    assert "its JSON does not parse" in bad["reason"].iloc[0]
    assert _times(result)["result_0"] == pytest.approx(GOOGLE_RUNS[0], abs=1e-9)


def test_unet3d_drops_four_and_counts_four_aborted_runs_as_the_slowest():
    """Google's 40 JAX 3D U-Net runs, 4 aborted (status "abort"): the published 6.17."""
    result = _parse(UNET3D)
    aborted = result.problems[result.problems["kind"] == "run_aborted"]
    assert sorted(Path(s).name for s in aborted["source"]) == [
        "result_1.txt.gz", "result_10.txt.gz", "result_35.txt.gz", "result_7.txt.gz"]
    assert len(_times(result)) == 36
    row = summarize(result, "reported").iloc[0]
    assert row["model"] == "unet3d" and row["framework"] == "MLPerf"
    assert row["time_to_train_min"] == pytest.approx(6.165925, abs=1e-9)
    assert round(row["time_to_train_min"], 2) == 6.17
    assert row["time_to_train_rule"] == (
        "MLPerf rule: mean of 32 of 40 runs' times to train after dropping the 4 fastest and "
        "the 4 slowest (4 aborted runs counted as the slowest)")


@pytest.mark.parametrize("line", [
    b':::MLLOG {"key": "run_start", "time_ms": 1' + b"0" * 400 + b"}",
    b':::MLLOG {"key": "run_stop", "time_ms": NaN, "metadata": {"status": "success"}}',
    b':::MLLOG [1, 2]', b':::MLLOG {"key": 5, "time_ms": 1}', b":::MLLOG {",
    b':::MLLOG {"key": ' + b"[" * 100_000 + b"}", b':::MLLOG {"key": "\xff\xfe"}',
    b':::MLLOG {"key": "block_start", "time_ms": 1, "metadata": {"first_epoch_num": 1e300}}',
    b':::MLLOG {"key": "eval_accuracy", "time_ms": 1, "value": 0.5, "metadata": {"epoch_num": -1e30}}',
    b'2021-19-45 15:44:11,611 Node[0] Epoch[0] Batch [0-20]\tSpeed: None samples/sec',
    b'Node[0] Epoch[999999999] Batch [999999999]\tSpeed: 1e400 samples/sec',
])
def test_garbled_lines_never_raise(tmp_path, line):
    path = tmp_path / "result_0.txt"
    path.write_bytes((GOOGLE / "result_0.txt").read_bytes() + line + b"\n")
    result = parse_paths([path], jobs=1)
    assert "parser_error" not in set(result.problems["kind"])
    assert _times(result)["result_0"] == pytest.approx(GOOGLE_RUNS[0], abs=1e-9)


def test_reported_is_the_median_of_the_printed_speeds():
    """Per run, the median of the Speedometer figures after iteration 20 (SOURCE)."""
    result = _parse(NVIDIA)
    runs = run_throughput(result, "reported").sort_values("source")
    assert runs["throughput"].tolist() == pytest.approx(
        [26761.565, 26674.525, 26686.925, 26728.135, 26670.295], abs=1e-9)
    o = result.observations
    speed = o[(o["phase"] == M.TRAIN) & (o["metric"] == M.THROUGHPUT)
              & o["source"].astype(str).str.endswith("result_0.txt.gz") & (o["step"] > 20)]
    assert runs["throughput"].iloc[0] == pytest.approx(float(speed["value"].median()), abs=1e-9)
