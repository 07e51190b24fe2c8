"""Formats read across a boundary the log itself states: a TF2 Keras run across New Year's
midnight (absl prefixes print no year), MXNet Speedometer windows across an epoch's end,
the MLPerf review committee's ``scaling.json``, and the OneFlow models-repo's rank text."""

from __future__ import annotations

import datetime as dt
import gzip
import math
import re
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput, summarize

REAL = Path(__file__).resolve().parents[1] / "data" / "real"
TF2 = REAL / "dlperf_tf2" / "1n1g" / "rn50_b128_fp32_2.log"
#: the log's own figures (tests/parsers/test_tf_keras_timehistory.py pins them unshifted)
TF2_FIGURES = {"dlperf": 321.80, "window": 325.10, "reported": 321.30}


def _shifted(text: str, to: dt.datetime) -> str:
    """`text` with every stamp, dated TF C++ lines and year-less absl prefixes alike, moved by
    one offset so that the first dated line is at `to`."""
    first = dt.datetime.fromisoformat(re.search(r"(?m)^(\d{4}-\S+ \S+):", text)[1])
    off = to - first

    def iso(m):
        return f"{dt.datetime.fromisoformat(m[1]) + off:%Y-%m-%d %H:%M:%S.%f}"

    def absl(m):
        t = dt.datetime(first.year, int(m[2]), int(m[3]), int(m[4]), int(m[5]), int(m[6]),
                        int(m[7])) + off
        return f"{m[1]}{t:%m%d %H:%M:%S.%f}"
    text = re.sub(r"(?m)^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6})", iso, text)
    return re.sub(r"(?m)^([IWEF])(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})", absl, text)


@pytest.mark.parametrize("to", [dt.datetime(2020, 12, 31, 23, 57, 20),  # before step 200
                                dt.datetime(2020, 12, 31, 23, 55, 0),  # before step 500
                                dt.datetime(2023, 2, 28, 23, 55, 0),  # Feb 28 -> Mar 1
                                dt.datetime(2024, 2, 28, 23, 55, 0)],
                         ids=["newyear_early", "newyear_late", "feb28_common", "feb28_leap"])
def test_a_tf2_run_across_midnight_keeps_its_figures(tmp_path, to):
    """The absl prefix `I0101 00:00:28` follows `I1231 23:59:48`: a new year, 40 s later."""
    text = _shifted(TF2.read_text(), to)
    prefixes = re.findall(r"(?m)^I(\d\d)\d\d \S+ \d+ keras_utils\.py:\d+\] TimeHistory", text)
    assert to.month != 12 or prefixes[0] == "12" and prefixes[-1] == "01"
    out = tmp_path / "1n1g" / TF2.name
    out.parent.mkdir()
    out.write_text(text)
    result = parse_paths([tmp_path])
    assert "timestamps_backwards" not in set(result.problems["kind"])
    for method, figure in TF2_FIGURES.items():
        row = run_throughput(result, method).iloc[0]
        assert (row["throughput"], row["problem_kind"]) == (pytest.approx(figure, abs=0.005),
                                                             ""), method


# --- MXNet Speedometer windows across an epoch's end --------------------------------------

MXNET = REAL / "mlperf_v1_0_nvidia_mxnet_resnet" / "result_0.txt.gz"
MXNET_META = {"num_nodes": 1, "gpus_per_node": 8, "batch_size_per_device": 408}


def _speedometer_truth(warmup: int, measure: int) -> float:
    """Read independently of the parser: the global batch x every batch run between the
    Speedometer lines the window spans (an epoch runs ceil(train_samples / global batch),
    its last partial, whatever its lines print) / the seconds between those lines."""
    text = gzip.decompress(MXNET.read_bytes()).decode()
    stated = {k: int(v) for k, v in re.findall(
        r'"key": "(global_batch_size|train_samples)", "value": (\d+)', text)}
    per_epoch = math.ceil(stated["train_samples"] / stated["global_batch_size"])
    rows = [(int(e) * per_epoch + int(b), dt.datetime.fromisoformat(f"{t}.{ms}").timestamp())
            for t, ms, e, b in re.findall(r"(?m)^(\S+ \S+),(\d{3}) Node\[0\] Epoch\[(\d+)\] "
                                          r"Batch \[\d+-(\d+)\]\tSpeed: ", text)]
    a = next(r for r in rows if r[0] >= warmup)
    b = next(r for r in rows if r[0] >= a[0] + measure)
    return stated["global_batch_size"] * (b[0] - a[0]) / (b[1] - a[1])


@pytest.mark.parametrize("warmup, measure", [(1200, 400), (700, 200), (20, 100)])
def test_a_speedometer_window_counts_the_batches_after_an_epochs_last_line(warmup, measure):
    """1200..1600 spans the ends of epochs 3 and 4: 413 batches ran in its 50.3 s, the
    Speedometer lines' numbers differ by 400 (each epoch's last 12-13 batches unprinted)."""
    row = run_throughput(parse_paths([MXNET], meta=MXNET_META), "window", warmup,
                         measure).iloc[0]
    assert row["throughput"] == pytest.approx(_speedometer_truth(warmup, measure), rel=1e-9)
    assert row["problem_kind"] == ""
    if warmup == 1200:  # the printed Speed of those lines: median 26,778.38
        assert row["throughput"] == pytest.approx(26773.76, abs=0.01)


# --- the MLPerf review committee's scaling.json ---------------------------------------------

#: mlperf-logging's summarizer on the five NVIDIA v1.0 MXNet ResNet logs (their SOURCE)
RESNET_SCORE = 28.770861111111106


def _resnet_folder(root: Path, scaling: str | None) -> Path:
    folder = root / "resnet"
    folder.mkdir(parents=True)
    for log in sorted(MXNET.parent.glob("result_*.txt.gz")):
        (folder / log.name).write_bytes(log.read_bytes())
    if scaling is not None:
        (folder / "scaling.json").write_text(scaling)
    return folder


def _score(root: Path) -> tuple[float, str]:
    row = summarize(parse_paths([root]), "reported").iloc[0]
    return row["time_to_train_min"], row["time_to_train_rule"]


def test_scaling_json_beside_the_result_logs_scales_the_score(tmp_path):
    """The summarizer multiplies the folder's olympic mean by the committee's factor."""
    _resnet_folder(tmp_path, '{"scaling_factor": 1.1}')
    score, rule = _score(tmp_path)
    assert score == pytest.approx(RESNET_SCORE * 1.1, rel=1e-12)
    assert rule.endswith("; x 1.1 (scaling.json)")


@pytest.mark.parametrize("text, said", [
    ('{"scaling_factor": 1.1\n', "scaling.json:2: unreadable (Expecting ',' delimiter"),
    ('{"scaling_factor": "x"}', "states no positive scaling_factor ({'scaling_factor': 'x'})"),
    ('[1.1]', "states no positive scaling_factor ([1.1])"),
    ('{"scaling_factor": -1}', "states no positive scaling_factor")])
def test_a_scaling_json_that_states_no_factor_gives_no_score(tmp_path, text, said):
    _resnet_folder(tmp_path, text)
    score, rule = _score(tmp_path)
    assert math.isnan(score) and said in rule and rule.endswith("no score")


def test_a_case_across_folders_of_different_scaling_has_no_score(tmp_path):
    folder = _resnet_folder(tmp_path / "a", '{"scaling_factor": 1.1}')
    other = tmp_path / "b" / "resnet"
    other.mkdir(parents=True)
    for log in ("result_3.txt.gz", "result_4.txt.gz"):
        (folder / log).rename(other / log)
    score, rule = _score(tmp_path)
    assert math.isnan(score) and "scaled differently" in rule
    assert "x 1 (" in rule and "x 1.1 (" in rule
    (other / "scaling.json").write_text('{"scaling_factor": 1.1}')
    score, rule = _score(tmp_path)
    assert score == pytest.approx(RESNET_SCORE * 1.1, rel=1e-12)
    assert rule.endswith("; x 1.1 (scaling.json)")


# --- OneFlow models-repo: why a run has no printed run throughput ---------------------------

OFM = REAL.parent / "oneflow_models" / "graph_dated" / "1n2g" / "resnet50_b192_amp_1.log"


def _ofm(tmp_path: Path, keep, dump: str | None = None) -> dict:
    """The 2-GPU log (argument dump, both ranks' lines) with only the lines of ranks `keep`,
    its dump's devices per node set to `dump`: `reported`'s row."""
    lines = OFM.read_text().splitlines(keepends=True)
    text = "".join(ln for ln in lines
                   if not (m := re.match(r"\[rank:(\d+)\] ", ln)) or int(m[1]) in keep)
    if dump is not None:
        text = re.sub(r"(num_devices_per_node \.+ )\d+", rf"\g<1>{dump}", text)
    out = tmp_path / "logs" / "train.log"  # a path that states no world size
    out.parent.mkdir()
    out.write_text(text)
    return run_throughput(parse_paths([out.parent]), "reported").iloc[0]


def test_a_models_log_without_rank_0_says_so_not_that_its_dump_is_missing(tmp_path):
    """Its dump states 2 devices; only rank 1 printed: rank 0's lines are what is missing."""
    row = _ofm(tmp_path, {1})
    assert math.isnan(row["throughput"]) and row["problem_kind"] == "method_fallback"
    assert "prints the lines of rank 1 only of the 2 of the world, not rank 0's" in row["problem"]
    assert "argument dump" not in row["problem"] and "--method window" in row["problem"]


def test_a_models_log_short_of_its_world_names_the_ranks_it_prints(tmp_path):
    row = _ofm(tmp_path, {0, 1}, dump="4")
    assert row["problem_kind"] == "method_fallback"
    assert "prints the lines of ranks 0, 1 only of the 4 of the world" in row["problem"]
