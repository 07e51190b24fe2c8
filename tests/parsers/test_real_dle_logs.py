"""Whole NVIDIA DeepLearningExamples DLLogger logs published by real runs (PaddlePaddle/Perf):
the figure our parser reads versus the authors' figure, no false problems, and validation
figures kept apart from training ones. Each folder's SOURCE says where a log comes from, the
published figure and how it was computed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import metrics as M
from analysis.collect import parse_paths
from analysis.logtext import LogText
from analysis.parsers import detect
from analysis.stats import run_throughput, summarize

REAL = Path(__file__).resolve().parents[1] / "data" / "real"
BERT = REAL / "paddle_perf_pytorch_bert"
RESNET = REAL / "paddle_perf_pytorch_resnet"
TF_BERT = REAL / "paddle_perf_tensorflow_bert"

#: (file, family, run fields as the log states them (None: it does not), the published
#: figure or — where the SOURCE says the README's figure is not this log's — the log's own
#: closing figure, relative tolerance: the README's rounding)
_FIELDS = ("num_nodes", "gpus_per_node", "num_devices", "batch_size_per_device",
           "global_batch_size", "precision", "model")
CASES = [
    # BERT: launch command --nproc_per_node (no --nnodes: 1), PARAMETER batch_size_per_gpu,
    # Config fp16 and gradient_accumulation_steps (128 x 528 x 1 = 128 x 66 x 8 = 67584)
    (BERT / "bert_base_lamb_pretraining.pyt_bert_pretraining_phase1_fp32_bs128_gpu1.log",
     "dll_pytorch", dict(zip(_FIELDS, (1, 1, 1, 128, 67584, "fp32", None))), 873.714, 1e-6),
    (BERT / "bert_base_lamb_pretraining.pyt_bert_pretraining_phase1_fp16_bs128_gpu8.log",
     "dll_pytorch", dict(zip(_FIELDS, (1, 8, 8, 128, 67584, "amp", None))), 12075.6292, 1e-7),
    # ResNet: PARAMETER world_size, batch_size, amp, arch; no line says how many nodes
    (RESNET / "pytorch_gpu32_amp_bs256.txt", "dll_pytorch",
     dict(zip(_FIELDS, (None, None, 32, 256, 8192, "amp", "resnet50"))), 21259.81, 0.0),
    (RESNET / "pytorch_gpu8_amp_bs256.txt", "dll_pytorch",
     dict(zip(_FIELDS, (None, None, 8, 256, 2048, "amp", "resnet50"))), 10515.76, 0.0),
    # TF BERT: no PARAMETER line, no launch command (only a wrapper's shell variables)
    (TF_BERT / "tf_bert_pretraining_lamb_base_fp32_bs128_gpu1.log", "dll_tensorflow",
     dict.fromkeys(_FIELDS), 704.708, 0.0),
]
#: What SOURCE says of the runs that their logs do not state (nodes of the ResNet runs).
NOT_IN_THE_LOG = {2: dict(num_nodes=4), 3: dict(num_nodes=1)}
IDS = [c[0].name[-32:] for c in CASES]
#: Where the README's published figure is not this log's (SOURCE): the README figure and how
#: far the log's own closing figure, which `summarize` gives, is from it (relative).
PUBLISHED_APART = {
    RESNET / "pytorch_gpu8_amp_bs256.txt": (10744.6, -0.0213),  # 10515.76: 2.13 % below
    TF_BERT / "tf_bert_pretraining_lamb_base_fp32_bs128_gpu1.log": (698.768, 0.0085),  # 704.708
}


def _parse(path: Path, meta: dict | None = None, strict: bool = False):
    return parse_paths([path], meta=meta, strict=strict, jobs=1)


def _rows(result, phase: str, metric: str):
    o = result.observations
    return o[(o["phase"] == phase) & (o["metric"] == metric)].sort_values("line")


@pytest.mark.parametrize(("path", "family", "fields", "figure", "rel"), CASES, ids=IDS)
def test_closing_figure_is_the_authors(path, family, fields, figure, rel):
    result = _parse(path)
    assert result.runs["family"].tolist() == [family]
    closing = _rows(result, M.SUMMARY, M.THROUGHPUT)["value"]
    assert len(closing) == 1
    assert closing.iloc[0] == pytest.approx(figure, rel=rel, abs=0 if rel else 5e-3)


@pytest.mark.parametrize("path", [c[0] for c in CASES], ids=IDS)
def test_sniffed_as_its_family(path):
    family = next(c[1] for c in CASES if c[0] == path)
    text = LogText.from_bytes(path.read_bytes(), str(path)).data  # rank prefixes stripped
    assert detect(text[:65536]).name == family


def test_pytorch_bert_training_lines_are_read():
    """`Training Epoch: E Training Iteration: I` lines are training lines, not bad lines."""
    path = CASES[0][0]
    result = _parse(path)
    kinds = set(result.problems["kind"])
    assert not kinds & {"bad_line", "no_training_lines"}
    loss = _rows(result, M.TRAIN, "average_loss")
    assert loss["step"].tolist() == list(range(1, 20))
    assert _rows(result, M.TRAIN, M.LR)["epoch"].eq(0).all()
    assert _rows(result, M.SUMMARY, "e2e_train_time")["value"].iloc[0] == pytest.approx(1569.0976169109344)


@pytest.mark.parametrize("case", [0, 1, 2, 3], ids=IDS[:4])
def test_strict_passes_on_healthy_runs(case):
    """No meta for what the log states; the ResNet logs do not say how many nodes."""
    result = _parse(CASES[case][0], NOT_IN_THE_LOG.get(case), strict=True)  # raises on a problem
    assert result.problems.empty


def test_none_values_are_not_measured_not_problems():
    """A training-only ResNet run prints 20 `val.* : None` per log: no rows, no problems."""
    path = CASES[3][0]
    assert path.read_bytes().count(b"val.") == 20
    result = _parse(path)
    assert "non_finite_value" not in set(result.problems["kind"])
    o = result.observations
    assert o[o["phase"] == M.VAL].empty
    assert o["value"].notna().all()


@pytest.mark.parametrize("case", [2, 3], ids=[IDS[2], IDS[3]])
def test_val_and_train_do_not_collide(case):
    result = _parse(CASES[case][0])
    for phase in (M.EPOCH, M.SUMMARY):
        for metric in (M.THROUGHPUT, M.COMPUTE_THROUGHPUT, M.LOSS):
            assert len(_rows(result, phase, metric)) == 1, (phase, metric)


def test_val_figures_on_a_summary_line_go_to_the_val_phase(tmp_path):
    """The real A100 log with the `None` values of its Summary line replaced by numbers:
    val.total_ips is a validation figure, never the run's closing throughput."""
    path = CASES[3][0]
    text = path.read_bytes().replace(b"Summary: train.loss", b"Summary: train.loss", 1)
    head, sep, tail = text.partition(b"- Summary: train.loss")
    tail = tail.replace(b"val.total_ips : None", b"val.total_ips : 3000.5", 1) \
               .replace(b"val.loss : None", b"val.loss : 1.25", 1)
    edited = tmp_path / path.name
    edited.write_bytes(head + sep + tail)
    result = _parse(edited)
    assert _rows(result, M.SUMMARY, M.THROUGHPUT)["value"].tolist() == [10515.76]
    assert _rows(result, M.VAL, M.THROUGHPUT)["value"].tolist() == [3000.5]
    assert _rows(result, M.SUMMARY, M.LOSS)["value"].tolist() == [6.22588]
    assert _rows(result, M.VAL, M.LOSS)["value"].tolist() == [1.25]


def test_tensorflow_bert_closing_lines():
    """Closing lines with an empty step are summaries; throughput_val stays apart; the one
    line where TensorFlow's INFO text was printed onto a DLL line keeps the DLL record's
    fields before it (the INFO record is another stream's); the log states no run field
    (missing_metadata, true)."""
    result = _parse(CASES[4][0])
    problems = result.problems.sort_values("kind")
    assert problems["kind"].tolist() == ["missing_metadata"]
    line_250 = _rows(result, M.TRAIN, M.THROUGHPUT)
    assert line_250[line_250["line"] == 250]["value"].tolist() == [pytest.approx(712.461)]
    assert _rows(result, M.SUMMARY, "throughput_val")["value"].iloc[0] == pytest.approx(713.3073570819813)
    assert len(_rows(result, M.TRAIN, M.THROUGHPUT)) > 40


@pytest.mark.parametrize(("path", "family", "fields", "figure", "rel"), CASES, ids=IDS)
def test_summarize_gives_the_authors_figure(path, family, fields, figure, rel):
    """`summarize` gives the log's own closing figure — the authors' published one within the
    README's rounding, or the log's where SOURCE says the README's is another run's — by
    `reported` (what the program reports) and by the default `dlperf`, whose rule needs 120
    lines these runs do not have: its fallback, flagged method_fallback with the rule's
    reason."""
    result = _parse(path)  # no meta: what the log states
    for method in ("reported", "dlperf"):
        table = summarize(result, method)
        assert len(table) == 1 and table["repeats"].iloc[0] == 1, method
        got = table["throughput_median"].iloc[0]
        assert got == pytest.approx(figure, rel=rel, abs=0 if rel else 5e-3), method
        if path in PUBLISHED_APART:
            published, apart = PUBLISHED_APART[path]
            assert got / published - 1 == pytest.approx(apart, abs=5e-5), method
    row = run_throughput(result, "dlperf").iloc[0]
    assert row["problem_kind"] == "method_fallback"
    assert row["problem"].startswith("the DLPerf rule does not apply (")
    assert "the rule needs" in row["problem"] and "closing figure" in row["method"]
    assert run_throughput(result, "reported").iloc[0]["problem_kind"] == ""


def test_the_cli_summarize_prints_the_authors_figure():
    """`python -m analysis summarize LOG` (the lean lane steps aside: a short log) prints
    the closing figure and says why the DLPerf rule did not give it."""
    import subprocess
    import sys

    path = CASES[1][0]
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-m", "analysis", "summarize", str(path),
                          "--format", "csv", "--no-cache"], capture_output=True, text=True,
                         cwd=root, timeout=120)
    assert out.returncode == 0, out.stderr
    header, row = out.stdout.strip().splitlines()[:2]
    assert float(dict(zip(header.split(","), row.split(",")))["throughput_median"]) \
        == pytest.approx(12075.6292, rel=1e-7)
    assert "method_fallback: the DLPerf rule does not apply" in out.stderr
    assert "steps_backwards" not in out.stderr


@pytest.mark.parametrize(("path", "family", "fields", "figure", "rel"), CASES, ids=IDS)
def test_case_fields_are_read_from_the_log(path, family, fields, figure, rel):
    """Batch size, nodes and GPUs as the log states them (no meta, no layout path), and
    unknown where it does not; the summary's case carries them."""
    result = _parse(path)
    run = result.runs.iloc[0]
    assert {k: _plain(run[k]) for k in fields} == fields
    table = summarize(result, "dlperf")
    for k in ("num_nodes", "gpus_per_node", "num_devices", "batch_size_per_device"):
        assert _plain(table[k].iloc[0]) == fields[k], k


def _plain(value):
    """A frame's value as Python: None for any missing value, int for a whole number."""
    if pd.isna(value):
        return None
    return int(value) if isinstance(value, (int, np.integer)) else value
