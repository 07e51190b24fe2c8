"""The checks every parsed log passes (analysis.checks): non-finite values, timestamps and
steps that go back — in every family, and in the throughput methods' windows (issue 9, 2-3)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
PT = "dll_pytorch/current_version/1n1g/r50_b256_amp_1.log"
ORDER_KINDS = {"timestamps_backwards", "steps_backwards"}


def edited(tmp_path: Path, fixture: str, line: int, old: str, new: str) -> Path:
    """A copy of a fixture (its layout folders kept) with `old` replaced on one line."""
    src = DATA / fixture
    dst = tmp_path / Path(fixture).relative_to(Path(fixture).parts[0])
    dst.parent.mkdir(parents=True, exist_ok=True)
    for sibling in src.parent.glob(src.name.split(".")[0] + ".*"):  # sidecars of the run
        shutil.copy(sibling, dst.parent / sibling.name)
    text = src.read_text().split("\n")
    assert old in text[line - 1], (fixture, line, text[line - 1][:120])
    text[line - 1] = text[line - 1].replace(old, new, 1)
    dst.write_text("\n".join(text))
    return dst


def problems_of(result, kind):
    p = result.problems
    return p[p["kind"] == kind]


# --- non-finite values (issue 9, item 3) -------------------------------------------------------

NON_FINITE = [  # fixture, line, printed, replaced by, metric
    (PT, 40, "train.total_ips : 800.00", "train.total_ips : inf", "throughput"),
    (PT, 41, "train.loss : 6.96200", "train.loss : -inf", "loss"),
    ("dll_pytorch/json_backend/1n1g/r50_b256_amp_1.json", 20, '"train.total_ips": 800.0',
     '"train.total_ips": Infinity', "throughput"),
    ("dll_tensorflow/horovod_mpi_prefixes/1n8g/r50_b128_fp32_1.log", 20,
     "imgs_per_sec : 1009.00000", "imgs_per_sec : inf", "throughput"),
    ("dll_tensorflow/tf_bert/1n1g/bert_base_b32_fp16_1.log", 22, "throughput_train : 128.000",
     "throughput_train : -inf", "throughput"),
    ("oneflow_cnn/with_timestamps/1n8g/resnet50_b128_fp32_1.log", 39, "samples/s: 2958.200",
     "samples/s: inf", "throughput"),
    ("oneflow_bert/with_timestamps/1n1g/bert_base_b24_fp32_1.log", 22, "throughput: 54.982",
     "throughput: -inf", "throughput"),
    ("oneflow_gpt/key_value/pretrain_gpt_4n8d_dp8_mp1_pp4_mbz2_gbz512_s2048_l16_h1536_nh16.log",
     23, "latency=14.26962", "latency=inf", "latency"),
    ("megatron/dated_torchrun/1n4g/gpt_b2_bf16_1.log", 20, "(ms): 141.2", "(ms): inf", "latency"),
    ("gpu_memory/mem_sidecar/1n1g/r50_b256_amp_1.mem", 1, "12958302208", "inf", "memory_used"),
]


@pytest.mark.parametrize(("fixture", "line", "old", "new", "metric"), NON_FINITE,
                         ids=[f"{c[0].split('/')[0]}-{c[4]}-{c[3].split()[-1]}" for c in NON_FINITE])
def test_non_finite_values_are_problems_not_data(tmp_path, fixture, line, old, new, metric):
    path = edited(tmp_path, fixture, line, old, new)
    result = parse_paths([tmp_path])
    assert np.isfinite(result.observations["value"]).all()
    found = problems_of(result, "non_finite_value")
    found = found[found["line"] == line]  # (some fixtures print a `nan` loss elsewhere)
    assert found["source"].tolist() == [str(path)]
    assert f" {metric} is not a finite number" in found["reason"].iloc[0]
    assert new.split()[-1] in found["text"].iloc[0]  # the line as printed


def test_reported_and_rule_a_never_see_inf(tmp_path):
    """`--method reported` and the TF rule (a) average printed values: inf is not one of them."""
    path = edited(tmp_path, "dll_tensorflow/horovod_mpi_prefixes/1n8g/r50_b128_fp32_1.log", 20,
                  "imgs_per_sec : 1009.00000", "imgs_per_sec : inf")
    # without its closing `() train_throughput` line, which `reported` would take instead
    path.write_text("\n".join(t for t in path.read_text().split("\n") if "()" not in t))
    result = parse_paths([tmp_path])
    for method in ("reported", "dlperf"):
        row = run_throughput(result, method).iloc[0]
        assert np.isfinite(row["throughput"]) and 1000 < row["throughput"] < 1200, method
    assert result.runs["problems"].iloc[0] == "non_finite_value"


def test_minus_inf_is_one_problem_not_two(tmp_path):
    edited(tmp_path, PT, 46, "train.total_ips : 800.00", "train.total_ips : -inf")
    found = parse_paths([tmp_path]).problems
    assert found[["line", "kind"]].values.tolist() == [[46, "non_finite_value"]]
    assert "train throughput is not a finite number (-inf) on line 46;" in found["reason"].iloc[0]


def test_printed_none_is_not_measured_not_a_problem(tmp_path):
    """DLLogger prints `None` for what it did not measure (val.* of a training-only run):
    no value and no problem, unlike a printed nan."""
    edited(tmp_path, PT, 40, "train.lr : 0.009472", "train.lr : None")
    result = parse_paths([tmp_path])
    assert problems_of(result, "non_finite_value").empty
    o = result.observations
    assert 40 not in o[o["metric"] == "lr"]["line"].tolist()
    assert np.isfinite(o["value"]).all()


# --- timestamps that go back (issue 9, item 2) ---------------------------------------------------

def test_issue_reproduction_hour_back_gives_no_figure(tmp_path):
    """Iteration 25 (the DLPerf window's first line) one hour back gave 7.05 img/s."""
    path = edited(tmp_path, PT, 28, "2021-03-23 11:45:19.680000", "2021-03-23 10:45:19.680000")
    result = parse_paths([tmp_path])
    found = problems_of(result, "timestamps_backwards")
    assert found[["source", "line"]].values.tolist() == [[str(path), 28]]
    assert "goes back 3599.68 s from line 27 to line 28" in found["reason"].iloc[0]
    for method in ("dlperf", "window"):
        row = run_throughput(result, method).iloc[0]
        assert np.isnan(row["throughput"]), (method, row["throughput"])
        assert row["problem_kind"] == "timestamps_backwards"
        assert "line 28" in row["problem"]
    # the printed values do not depend on the clock
    assert run_throughput(result, "reported").iloc[0]["throughput"] == 800.0


def test_hour_forward_at_window_edge_gives_no_figure(tmp_path):
    """A window edge moved forward: its successor steps back, so the window is refused too."""
    edited(tmp_path, PT, 129, "2021-03-23 11:45:", "2021-03-23 12:45:")  # Iteration 125
    result = parse_paths([tmp_path])
    assert problems_of(result, "timestamps_backwards")["line"].tolist() == [130]
    assert run_throughput(result, "dlperf").iloc[0]["problem_kind"] == "timestamps_backwards"


TIMESTAMPS_BACK = [  # fixture, line, timestamp, earlier timestamp
    (PT, 60, "2021-03-23 11:45:", "2021-03-23 10:45:"),
    ("dll_pytorch/no_fraction/1n1g/r50_b256_amp_1.log", 60, "2021-03-23 11:", "2021-03-23 10:"),
    ("dll_pytorch/json_backend/1n1g/r50_b256_amp_1.json", 60, '"timestamp": "16164999',
     '"timestamp": "16164969'),
    ("dll_tensorflow/horovod_mpi_prefixes/1n8g/r50_b128_fp32_1.log", 60,
     "2020-06-20 10:00:", "2020-06-20 09:00:"),
    ("dll_tensorflow/tf_bert/1n1g/bert_base_b32_fp16_1.log", 60, "2021-03-23 11:", "2021-03-23 10:"),
    ("oneflow_cnn/with_timestamps/1n8g/resnet50_b128_fp32_1.log", 41, " 15979339", " 15979309"),
    ("oneflow_bert/with_timestamps/1n1g/bert_base_b24_fp32_1.log", 26, " 15980565", " 15980535"),
    ("megatron/dated_torchrun/1n4g/gpt_b2_bf16_1.log", 21, "[2024-05-01 10:", "[2024-05-01 09:"),
    ("gpu_memory/nvml_csv/1n1g/r50_b256_amp_1.gpu.csv", 3, "2026-11-21 10:", "2026-11-21 09:"),
]


@pytest.mark.parametrize(("fixture", "line", "old", "new"), TIMESTAMPS_BACK,
                         ids=[c[0].split("/")[1] for c in TIMESTAMPS_BACK])
def test_timestamps_backwards_in_every_family(tmp_path, fixture, line, old, new):
    path = edited(tmp_path, fixture, line, old, new)
    result = parse_paths([tmp_path])
    found = problems_of(result, "timestamps_backwards")
    assert found[["source", "line"]].values.tolist() == [[str(path), line]]


@pytest.mark.parametrize(("fixture", "line", "old", "new", "kind"), [
    ("dll_pytorch/json_backend/1n1g/r50_b256_amp_1.json", 60, '"timestamp": "16164999',
     '"timestamp": "16164969', "timestamps_backwards"),
    ("dll_tensorflow/tf_bert/1n1g/bert_base_b32_fp16_1.log", 60, "2021-03-23 11:",
     "2021-03-23 10:", "timestamps_backwards"),
    ("oneflow_cnn/with_timestamps/1n8g/resnet50_b128_fp32_1.log", 41, " 15979339", " 15979309",
     "timestamps_backwards"),
    ("oneflow_bert/with_timestamps/1n1g/bert_base_b24_fp32_1.log", 26, " 15980565", " 15980535",
     "timestamps_backwards"),
    ("oneflow_cnn/with_timestamps/1n8g/resnet50_b128_fp32_1.log", 40, "iter 60,", "iter 20,",
     "steps_backwards"),
    ("oneflow_gpt/key_value/pretrain_gpt_4n8d_dp8_mp1_pp4_mbz2_gbz512_s2048_l16_h1536_nh16.log",
     36, "step=50,", "step=20,", "steps_backwards"),
], ids=["dll_json", "tf_bert", "oneflow_cnn", "oneflow_bert", "oneflow_cnn-steps", "oneflow_gpt-steps"])
def test_family_rules_refuse_a_window_that_goes_back(tmp_path, fixture, line, old, new, kind):
    edited(tmp_path, fixture, line, old, new)
    result = parse_paths([tmp_path])
    assert list(problems_of(result, kind)["line"]) == [line]
    row = run_throughput(result, "dlperf").iloc[0]
    assert np.isnan(row["throughput"]) and row["problem_kind"] == kind, row["problem"]


# --- a log appended twice -------------------------------------------------------------------------

def test_log_appended_twice(tmp_path):
    src = (DATA / PT).read_bytes()
    dst = tmp_path / "1n1g" / "r50_b256_amp_1.log"
    dst.parent.mkdir()
    dst.write_bytes(src + src)
    seam = src.count(b"\n") + 2  # the second copy's first training line (after its PARAMETERs)
    result = parse_paths([tmp_path])
    steps = problems_of(result, "steps_backwards")
    assert len(steps) == 1 and "e.g. a log appended twice" in steps["reason"].iloc[0]
    first_train = [i for i, t in enumerate(src.split(b"\n"), 1) if b"Iteration: 1 " in t][0]
    assert steps["line"].iloc[0] == src.count(b"\n") + first_train
    assert problems_of(result, "timestamps_backwards")["line"].iloc[0] >= seam
    # the median of printed values would mix both copies: refused
    row = run_throughput(result, "reported").iloc[0]
    assert np.isnan(row["throughput"]) and row["problem_kind"] == "steps_backwards"
    # the DLPerf window (lines 20..120 of the first copy) is in order: its figure stands
    assert run_throughput(result, "dlperf").iloc[0]["throughput"] == 800.0


# --- genuine logs: nothing new ------------------------------------------------------------------

def test_genuine_logs_have_no_order_problems():
    """Every fixture and the bundled campaign: no timestamps/steps problem (figures are pinned
    by the family tests and the bundled campaign test)."""
    # real/: the fp16 PyTorch BERT log repeats an iteration number on each step AMP skipped,
    # with a larger skipped_steps count each time: explained, so not a problem
    roots = [p for p in DATA.iterdir() if p.is_dir() and p.name != "topology"]
    result = parse_paths(roots + [ROOT / "data" / "raw_logs" / "rn50_4gpu"])
    assert len(result.runs) > 30
    assert not set(result.problems["kind"]) & ORDER_KINDS


def _bert_lines(steps_and_skipped) -> str:
    """DLE PyTorch BERT training lines (run_pretraining.py) with these (iteration, skipped)
    pairs, one second apart, and its closing line."""
    out = []
    for i, (step, skipped) in enumerate(steps_and_skipped):
        out.append(f"DLL 2023-08-02 02:37:{i:02d}.000000 - Training Epoch: 0 Training Iteration: "
                   f"{step}  average_loss : 11.1  learning_rate : 0.001  skipped_steps : {skipped} ")
    out.append("DLL 2023-08-02 02:38:00.000000 -  e2e_train_time : 60.0 s "
               "training_sequences_per_second : 1234.5 sequences/s final_loss : 8.5 None "
               "raw_train_time : 50.0 s ")
    return "\n".join(out) + "\n"


def _bert_run(tmp_path, text: str):
    path = tmp_path / "bert.log"
    path.write_text(text)
    return parse_paths([path], jobs=1)


def test_a_step_amp_skipped_repeats_its_number_without_a_problem(tmp_path):
    """run_pretraining.py prints the optimizer steps taken less those skipped: a step the
    loss scaler skipped repeats the iteration number, with skipped_steps one larger."""
    result = _bert_run(tmp_path, _bert_lines([(0, 1), (1, 1), (1, 2), (1, 3), (2, 3), (3, 3)]))
    assert not set(result.problems["kind"]) & ORDER_KINDS
    row = run_throughput(result, "reported").iloc[0]
    assert row["throughput"] == 1234.5 and row["problem_kind"] == ""


@pytest.mark.parametrize(("pairs", "line"), [
    ([(0, 0), (1, 0), (1, 0), (2, 0)], 3),  # the same count: a repeated line, not a skip
    ([(0, 0), (1, 0), (2, 0), (1, 1)], 4),  # back a step, even with a larger count
    ([(0, 1), (1, 1), (1, 2), (0, 3)], 4),  # back after an explained repeat
    ([(0, 0), (1, 2), (1, 1), (2, 2)], 3),  # the count goes down
], ids=["same-count", "back-with-larger-count", "back-after-skip", "count-down"])
def test_repeats_the_skipped_count_does_not_explain_are_flagged(tmp_path, pairs, line):
    result = _bert_run(tmp_path, _bert_lines(pairs))
    found = problems_of(result, "steps_backwards")
    assert found["line"].tolist() == [line]
    row = run_throughput(result, "reported").iloc[0]  # its closing figure is refused
    assert np.isnan(row["throughput"]) and row["problem_kind"] == "steps_backwards"


def test_the_real_amp_log_appended_twice_is_flagged(tmp_path):
    """The real fp16 BERT log (8 explained repeats) twice in one file: the second copy's
    Iteration 0 after Iteration 20 is flagged, its closing figure refused by every method."""
    src = (DATA / "real" / "paddle_perf_pytorch_bert"
           / "bert_base_lamb_pretraining.pyt_bert_pretraining_phase1_fp16_bs128_gpu8.log").read_bytes()
    dst = tmp_path / "bert.log"
    dst.write_bytes(src + src)
    result = parse_paths([dst], jobs=1)
    found = problems_of(result, "steps_backwards")
    assert found["line"].tolist() == [src.count(b"\n") + 66]  # the copy's Iteration 0
    assert "1 such" not in found["reason"].iloc[0]  # one fault, the explained repeats not
    for method in ("reported", "dlperf"):
        row = run_throughput(result, method).iloc[0]
        assert np.isnan(row["throughput"]), method


def test_window_fault_takes_the_skipped_counts():
    from analysis.checks import backwards_steps, window_fault

    epoch = np.zeros(4)
    step = np.array([1.0, 2.0, 2.0, 3.0])
    assert backwards_steps(epoch, step).tolist() == [2]
    assert backwards_steps(epoch, step, np.array([0.0, 0.0, 1.0, 1.0])).tolist() == []
    assert backwards_steps(epoch, step, np.array([0.0, 0.0, np.nan, 1.0])).tolist() == [2]
    lines, ts = np.arange(4), np.arange(4.0)
    assert window_fault(lines, epoch, step, ts, skipped=np.array([0.0, 0.0, 1.0, 1.0])) is None
    assert window_fault(lines, epoch, step, ts)[0] == "steps_backwards"


# --- values that cannot be measurements -----------------------------------------------------------

def test_zero_or_negative_latency_and_throughput_are_problems(tmp_path):
    """A zero latency made `summarize` die with ZeroDivisionError; a negative throughput
    became a negative median."""
    gpt = tmp_path / "gpt" / "pretrain_gpt_1n1d_dp1_mp1_pp1_mbz2_gbz2_s2048_l16_h1536_nh16.log"
    gpt.parent.mkdir()
    gpt.write_text("".join(f"step={i * 10},micro_batches=320,samples=5120,throughput=-35.9,"
                           f"latency=0,loss=11.2,\n" for i in range(1, 20)))
    result = parse_paths([gpt])
    found = problems_of(result, "impossible_value").sort_values("reason")
    assert found["line"].tolist() == [1, 1]
    assert "train latency is zero or below zero on 19 lines: 1, 2, 3" in found["reason"].iloc[0]
    assert "train throughput is below zero" in found["reason"].iloc[1]
    obs = result.observations
    assert obs[obs["metric"].isin(["latency", "throughput"])].empty
    for method in ("dlperf", "window", "reported"):
        assert np.isnan(run_throughput(result, method).iloc[0]["throughput"]), method


def test_dlperf_says_why_it_has_no_fallback_figure(tmp_path):
    """A run too short for the DLPerf rule whose lines go back: no figure, and the kind
    is the fault (steps_backwards), not a fallback without a number."""
    result = _bert_run(tmp_path, _bert_lines([(0, 0), (1, 0), (2, 0), (1, 0)]))
    row = run_throughput(result, "dlperf").iloc[0]
    assert np.isnan(row["throughput"]) and row["problem_kind"] == "steps_backwards"
