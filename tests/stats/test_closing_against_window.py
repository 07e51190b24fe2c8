"""A figure made from the stated global batch and the timestamps (dlperf, window) is held to
the run's own closing figure: DLE PyTorch BERT prints no rate on its lines, so where its
accumulation count is stated wrongly or not at all only the closing
``training_sequences_per_second`` tells (dlperf 6,089.75 or 184.54 unflagged, against a
closing 12,237). Its launch script's trace states the count too."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput

REAL = Path(__file__).resolve().parents[1] / "data" / "real"
BERT = (REAL / "paddle_perf_pytorch_bert"
        / "bert_base_lamb_pretraining.pyt_bert_pretraining_phase1_fp16_bs128_gpu8.log")
TF_BERT = (REAL / "paddle_perf_tensorflow_bert"
           / "tf_bert_pretraining_lamb_base_fp32_bs128_gpu1.log")
NAME = "1n8g/bert_base_lamb_pretraining.pyt_bert_pretraining_phase1_fp16_bs128_gpu8_1.log"
SECONDS = 5.55  # an iteration of 128 x 66 x 8 samples: 12,177.3 samples/s


def _bert(tmp_path: Path, namespace: str | None = "66", trace: str | None = "66",
          steps: int = 200, warm: float = 0.0) -> Path:
    """The real DLE PyTorch BERT log's head (its Namespace, trace and launch command stating
    the accumulation `namespace` / `trace`, None: not at all) over `steps` iterations of
    128 x 66 x 8 samples, closing with the figure they ran; a first step `warm` seconds
    slower (printed after it, counted in the closing average as DLE counts it)."""
    head = BERT.read_text().splitlines()[:64]  # to its last PARAMETER line before training
    key = "gradient_accumulation_steps"
    out = []
    for line in head:
        if "expr 67584 / 128" in line or (line.startswith(f"+ {key}=") and trace is None):
            continue
        line = line.replace(f", {key}=66", "" if namespace is None else f", {key}={namespace}")
        line = re.sub(rf"(\+ |--){key}=66", "" if trace is None else rf"\g<1>{key}={trace}",
                      line)
        out.append(line)
    t = datetime(2023, 8, 2, 2, 37, 30) + timedelta(seconds=warm)
    for it in range(steps + 1):
        t += timedelta(seconds=SECONDS * (1 + 0.004 * ((it * 7) % 5 - 2)))
        out.append(f"DLL {t:%Y-%m-%d %H:%M:%S.%f} - Training Epoch: 0 Training Iteration: {it}"
                   "  average_loss : 9.5  learning_rate : 0.004  skipped_steps : 0 ")
    raw = SECONDS * steps + warm
    closing = 128 * 66 * 8 * steps / raw
    out.append(f"DLL {t + timedelta(seconds=2):%Y-%m-%d %H:%M:%S.%f} -  e2e_train_time : "
               f"{raw + 30:.1f} s training_sequences_per_second : {closing} "
               f"sequences/s final_loss : 8.56 None raw_train_time : {raw:.1f} s")
    path = tmp_path / NAME
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(out) + "\n")
    return tmp_path


def _rows(folder: Path, methods=("dlperf", "window")):
    result = parse_paths([folder])
    return {m: run_throughput(result, m).iloc[0] for m in methods}


@pytest.mark.parametrize("namespace, trace, times", [("33", "33", 2), (None, None, 66)])
def test_a_window_figure_its_closing_figure_contradicts_is_flagged(tmp_path, namespace, trace,
                                                                   times):
    """The accumulation stated as 33 (Namespace and trace) or nowhere, while the stamps and
    the closing figure are of 66: the figure is kept, flagged, naming both."""
    for method, row in _rows(_bert(tmp_path, namespace, trace)).items():
        assert row["problem_kind"] == "figure_mismatch", method
        assert row["throughput"] == pytest.approx(12177.3 / times, rel=0.01), method
        assert "the run's own closing figure 12,177.30 samples/s" in row["problem"], method
        assert f"(the closing figure is {times} times it)" in row["problem"], method
        assert "stated global batch" in row["problem"], method


def test_the_launch_scripts_trace_states_the_accumulation(tmp_path):
    """The Namespace without ``gradient_accumulation_steps``, the trace and the launch
    command with ``66``: the global batch is 67,584 (was 1,024: 184.5 samples/s)."""
    result = parse_paths([_bert(tmp_path, namespace=None)])
    assert result.runs["global_batch_size"].tolist() == [67584]
    for method in ("dlperf", "window", "reported"):
        row = run_throughput(result, method).iloc[0]
        assert row["problem_kind"] == "", method
        assert row["throughput"] == pytest.approx(12177.3, rel=0.01), method


def test_the_healthy_twin_is_clean(tmp_path):
    for method, row in _rows(_bert(tmp_path), ("dlperf", "window", "reported")).items():
        assert row["problem_kind"] == "", method
        assert row["throughput"] == pytest.approx(12177.3, rel=0.01), method


def test_a_stated_count_the_rates_contradict_is_named(tmp_path):
    """The real DLE TF BERT log, its trace stating 264 where its rates are of 528: the
    reason names the count the log states, not one it does not."""
    text = TF_BERT.read_text().replace("num_accumulation_steps_phase1=528",
                                       "num_accumulation_steps_phase1=264")
    (tmp_path / "1n1g").mkdir()
    (tmp_path / "1n1g" / "bert_base_b128_fp32_1.log").write_text(text)  # global batch 128
    row = _rows(tmp_path, ("reported",))["reported"]
    assert row["problem_kind"] == "figure_mismatch"
    assert "529 accumulated batches where the log states 264?" in row["problem"]


@pytest.mark.parametrize("warm", [90.0, 120.0])
def test_a_slow_first_step_in_the_closing_figure_is_no_mismatch(tmp_path, warm):
    """A healthy run whose first step is `warm` s slow (compilation, the first data shard):
    it runs from the last PARAMETER line's stamp to the first training line, and the closing
    average counts it (11,264 or 10,989 samples/s against 12,177 steady). The closing figure
    meets the statement timed from that stamp: no method flags it."""
    rows = _rows(_bert(tmp_path, warm=warm), ("dlperf", "window", "reported"))
    for method, row in rows.items():
        assert row["problem_kind"] == "", (method, row["problem"])
    assert rows["window"]["throughput"] == pytest.approx(12177.3, rel=0.01)
    assert rows["reported"]["throughput"] == pytest.approx(67584 * 200 / (1110 + warm))


def test_a_short_run_with_a_slow_first_step_keeps_its_closing_figure(tmp_path):
    """100 iterations (too few for the DLPerf rule, which falls back to the closing figure)
    with a first step 45 s slow: the closing figure is the run's average, not flagged."""
    for method, row in _rows(_bert(tmp_path, steps=100, warm=45.0),
                             ("dlperf", "reported")).items():
        assert row["problem_kind"] in ("", "method_fallback"), (method, row["problem"])
        assert row["throughput"] == pytest.approx(67584 * 100 / 600.0), method
