"""Inputs of an eighth attack on what a log states: a Megatron-DeepSpeed log whose global
batch was altered alike wherever Megatron prints it while DeepSpeed's settings and the
micro-batch layout still state the real one, done markers saying failure in words the
campaign's reader skipped, and printed rates timed by another clock than the stamps. Built
in tmp_path from the real Megatron-DeepSpeed log of the test bed and the bundled ResNet-50
campaign (data/raw_logs/rn50_4gpu: 1 node of 4 GPUs, batch 128)."""

from __future__ import annotations

import re
import sys
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from analysis.cli import main
from analysis.collect import parse_paths
from analysis.problems import strict_failures
from analysis.stats.per_run import run_throughputs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from edited_runs import megatron_folder, run_three_marked  # noqa: E402

# --- a Megatron-DeepSpeed global batch held to the log's other statements of it -------------

def _times_ten(match: re.Match) -> str:
    """`match`'s number x 10, right-aligned in the same width plus one."""
    return f"{match.group(1)}{int(match.group(2)) * 10:>{len(match.group(2))}}"


def _batch_ten_times(text: str) -> str:
    """Megatron's every statement of the global batch x 10 (argument dump, each iteration
    line's field, consumed samples and tokens); DeepSpeed's settings left as they are."""
    text, n = re.subn(r"(global_batch_size \.+ )(256)", _times_ten, text)
    assert n == 1
    for field in ("global batch size: +", "consumed samples: +", "consumed tokens: +"):
        text, n = re.subn(f"({field})(\\d+)", _times_ten, text)
        assert n == 12
    return text


def test_a_megatron_global_batch_ten_times_its_deepspeed_settings_fails_strict(tmp_path):
    """The global batch x 10 wherever Megatron prints it gave 4,383.56 samples/s and 1,086
    TFLOP/s per GPU with 0 problems, though DeepSpeed's train_batch_size and micro 4 x DP 8 x
    8 accumulated micro-batches state 256."""
    result = parse_paths([megatron_folder(tmp_path, _batch_ten_times)], cache=False)
    [failed] = strict_failures(result.problem_list())
    assert failed.kind == "metadata_conflict" and failed.line == 1669
    for said in ("global batch of 2,560", "DeepSpeed's train_batch_size 256 (line 1669)",
                 "x Megatron's micro-batches an iteration 8 (line 306) = 256",
                 "x DeepSpeed's gradient_accumulation_steps 8 (line 1641) = 256",
                 "argument dump's global_batch_size 2,560 (line 168)"):
        assert said in failed.reason


def test_a_megatron_global_batch_off_the_micro_batch_layout_fails_strict(tmp_path):
    """Without any accumulation count printed, a global batch that is no whole multiple of
    micro x DP (4 x 8) is the conflict."""
    def edit(text: str) -> str:
        text = _batch_ten_times(text).replace("global_batch_size ............................... 2560",
                                              "global_batch_size ............................... 2564")
        text = re.sub(r"global batch size: +2560", "global batch size:  2564", text)
        return re.sub(r"[^\n]*(?:micro-batches to constant|gradient_accumulation_steps|"
                      r"train_batch_size \.)[^\n]*", "", text)

    result = parse_paths([megatron_folder(tmp_path, edit)], cache=False)
    conflicts = [p for p in strict_failures(result.problem_list())
                 if p.kind == "metadata_conflict"]
    assert len(conflicts) == 1
    assert "= 32, of which 2,564 is no whole multiple" in conflicts[0].reason


def test_a_megatron_log_ending_inside_its_stated_ramp_up_is_no_conflict(tmp_path):
    """A run stopped while a ramp-up its dump states still grows the batch prints 128 last,
    while the dump, DeepSpeed and micro x DP x 8 state the 256 it grows to."""
    def edit(text: str) -> str:
        text = text.replace("rampup_batch_size ............................... None",
                            "rampup_batch_size ............................... ['32', '32', '2000']")
        return re.sub(r"global batch size: +256", "global batch size:   128", text)

    result = parse_paths([megatron_folder(tmp_path, edit)], cache=False)
    assert "metadata_conflict" not in set(result.problems["kind"])


def test_the_real_megatron_deepspeed_log_states_one_global_batch(tmp_path):
    """The unaltered log: every statement says 256, so no problem."""
    result = parse_paths([megatron_folder(tmp_path, lambda text: text)], cache=False)
    assert not strict_failures(result.problem_list())


# --- done markers saying failure in words the reader skipped ----------------------------------

def _node_killed(marker: dict) -> dict:
    """The campaign's own marker, its node 0 killed by the harness on a timeout."""
    marker["nodes"][0].update(rc=137, stopped="timeout after 1200 s")
    return marker


@pytest.mark.parametrize("edit, said", [
    (lambda m: {"success": False}, '"success": false'),
    (lambda m: {"run_id": m["run_id"], "success": "no"}, '"success": "no"'),
    (_node_killed, 'nodes[0].rc 137, stopped "timeout after 1200 s" beside "ok": true'),
])
def test_a_done_marker_saying_failed_in_success_or_its_nodes_leaves_the_run_out(
        tmp_path, edit, said):
    """`{"success": false}`, or the campaign's own marker saying ok while its node 0 exited
    137 having been stopped on a timeout, counted the run (3 repeats, 0 problems)."""
    run_three_marked(tmp_path, edit)
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == 2
    [stray] = result.problems[result.problems["kind"] == "stray_log"]["reason"]
    assert f"its done marker says {said}" in stray


@pytest.mark.parametrize("edit", [
    lambda m: m,
    lambda m: {"success": True, "rc": 0},
    lambda m: {**m, "nodes": [{**m["nodes"][0], "rc": None}]},  # no result from the agent
])
def test_a_done_marker_saying_success_or_nodes_that_finished_counts_the_run(tmp_path, edit):
    run_three_marked(tmp_path, edit)
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == 3 and "stray_log" not in set(result.problems["kind"])


# --- printed rates timed by another clock than the stamps -------------------------------------

def _timed_by_another_clock(folder: Path, every: int, factor) -> Path:
    """A healthy DLLogger ResNet-50 log, 4 GPUs x batch 128, 43.7 ms iterations (lognormal,
    3 %), a line every `every` iterations printing `train.total_ips` = 512 / (the line's own
    iteration x factor(i)): a program timing compute only prints above the stamps' rate."""
    rng, n = np.random.default_rng(7), 130 * every + 170  # the DLPerf rule's 120 lines
    start = datetime(2026, 11, 21, 20, 41, 28, 645390)
    lines = [f"DLL {start:%Y-%m-%d %H:%M:%S.%f} - PARAMETER arch : resnet50  batch_size : 128  "
             f"precision : fp32  amp : False  world_size : 4  iterations : {n}  "
             f"print_freq : {every}  warmup_iterations : 20"]
    t = 2.5
    for i in range(1, n + 1):
        it = 0.0437 * float(rng.lognormal(0, 0.03)) * (3 if i == 1 else 1)
        t += it
        if i == 1 or i % every == 0:
            stamp = start + timedelta(seconds=t)
            lines.append(f"DLL {stamp:%Y-%m-%d %H:%M:%S.%f} - Epoch: 0 Iteration: {i}  "
                         f"train.loss : {3.5 - i * 1e-4:.5f}  "
                         f"train.total_ips : {512 / (it * factor(i)):.2f} img/s")
    (folder / "1n4g").mkdir(parents=True)
    (folder / "1n4g" / "resnet50_b128_fp32_1.log").write_text("\n".join(lines) + "\n")
    return folder


def _window_and_dlperf(folder: Path) -> dict:
    result = parse_paths([folder], cache=False)
    return {m: df.iloc[0] for m, df in run_throughputs(result, ("window", "dlperf")).items()}


@pytest.mark.parametrize("every, factor", [(10, 0.94), (1, 0.90)])
def test_rates_printed_a_steady_ratio_above_the_stamps_name_the_ratio(tmp_path, every, factor):
    """Printed rates a steady 6 % or 11 % above the stamps' rate were figure_mismatch
    "the stated global batch or devices may not be what ran": now rates_other_clock, naming
    the steady ratio and both readings (another clock, or a batch stated that much too
    small, which noisy stamps cannot tell apart, so --strict fails). The compute clock's
    share of each iteration wobbles by +-0.4 % (the wait for data it leaves out varies)."""
    folder = _timed_by_another_clock(tmp_path, every,
                                     lambda i: factor * (1 + 0.004 * np.sin(i)))
    for method, row in _window_and_dlperf(folder).items():
        assert row["problem_kind"] == "rates_other_clock", (method, row["problem"])
        steady = re.search(r"are a steady (\d\.\d+) times the rate their timestamps give",
                           row["problem"])
        assert steady and float(steady.group(1)) == pytest.approx(1 / factor, rel=0.02)
        assert "by another clock than the timestamps" in row["problem"]
        assert row["throughput"] == pytest.approx(11_716, rel=0.01)
    assert main(["summarize", "--method", "window", "--strict", str(folder)]) == 3


@pytest.mark.parametrize("factor", [
    lambda i: 0.75,  # 1.33 x: a batch of 4/3 the stated one as likely as any clock
    lambda i: 0.1,  # 10 x: a global batch stated 10 times too small
    lambda i: 1.0 if i % 2 else 0.88,  # half the intervals 1.14 x: no steady ratio
])
def test_rates_off_the_stamps_otherwise_stay_a_figure_mismatch(tmp_path, factor):
    folder = _timed_by_another_clock(tmp_path, 1, factor)
    for method, row in _window_and_dlperf(folder).items():
        assert row["problem_kind"] == "figure_mismatch", (method, row["problem"])
    assert main(["summarize", "--method", "window", "--strict", str(folder)]) != 0
