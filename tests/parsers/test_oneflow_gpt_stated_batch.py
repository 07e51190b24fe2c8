"""The suite's own GPT log (the bundled campaign's run, data/raw_logs/gpt_4gpu) whose dump
states a global batch the lines contradict: the samples column settles what ran."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats import summarize

RUN = (Path(__file__).resolve().parents[2] / "data" / "raw_logs" / "gpt_4gpu" / "1n1g"
       / "pretrain_gpt_1n1d_dp1_mp1_pp1_mbz8_gbz8_s2048_l16_h1536_nh16_1.log")
STATED = "  global_batch_size ............................... 8\n"


def _case(tmp_path: Path, stated: str):
    text = RUN.read_text()
    assert STATED in text
    (tmp_path / "1n1g").mkdir(parents=True)
    (tmp_path / "1n1g" / "gpt_run_1.log").write_text(text.replace(STATED, stated))
    result = parse_paths([tmp_path])
    return result, summarize(result).iloc[0]


def test_a_stated_batch_the_samples_contradict_is_not_believed(tmp_path):
    """Dump says 16, `samples` grow 8 a step: dlperf gave 131.33 samples/s and 1,020.4
    TFLOP/s/GPU (above an H200's peak), 0 problems; now the unedited run's figures and a
    meta_contradicted problem naming 16 and 8."""
    _, truth = _case(tmp_path / "a", STATED)
    result, case = _case(tmp_path / "b", STATED.replace("8\n", "16\n"))
    assert case["throughput_median"] == pytest.approx(truth["throughput_median"], rel=1e-12)
    assert case["throughput_median"] == pytest.approx(65.665, abs=1e-3)
    assert case["tflops_per_gpu"] == pytest.approx(truth["tflops_per_gpu"], rel=1e-12)
    assert case["case"] == "DP_1x1x1_8_1536x16"
    said = result.problems[result.problems["kind"] == "meta_contradicted"]["reason"].tolist()
    assert len(said) == 1
    assert "global_batch_size 16" in said[0] and "grows 8 per iteration" in said[0]


def test_a_stated_batch_the_samples_agree_with_is_no_problem(tmp_path):
    result, _ = _case(tmp_path, STATED)
    assert "meta_contradicted" not in set(result.problems["kind"])
