"""Inputs of a fourth attack that got a wrong number (or a false flag) out of the checks of a
run's figure: MLPerf clock steps back that keep every stamp in order, clock steps under the
per-interval bound, layout paths a statement overrides, a Megatron batch ramp-up inside the
DLPerf window, whole-second stamps and a copied run with a newline added. Real logs
(tests/data/real) edited as the attack edited them, or DLLogger logs of batch 128 on 1 GPU at
50 ms an iteration (2,560 img/s) unless said."""

from __future__ import annotations

import gzip
import re
import sys
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"
REAL = DATA / "real"
GOOGLE = REAL / "mlperf_v1_0_google_tf_resnet"
MLPERF_META = {"num_nodes": 16, "gpus_per_node": 4}


def _kinds(result, run_id: str | None = None) -> set[str]:
    p = result.problems
    if run_id is not None:
        p = p[p["run_id"] == run_id]
    return set(p["kind"])


# --- 1. MLPerf: a clock step back that shrinks one block -----------------------------------

def _stepped(text: str, line: int, ms: int) -> str:
    """`text` (an MLPerf result file) with `ms` added to every non-zero MLLOG time_ms from its
    1-based `line` on."""
    out = text.split("\n")
    for i in range(line - 1, len(out)):
        if ":::MLLOG " in out[i]:
            out[i] = re.sub(r'"time_ms": ([1-9]\d*)',
                            lambda m: f'"time_ms": {int(m.group(1)) + ms}', out[i], count=1)
    return "\n".join(out)


@pytest.mark.parametrize("line, ms", [(38, -20_000), (38, -14_000), (56, -14_000),
                                      (38, -10_000)])
def test_a_clock_step_back_inside_a_block_is_flagged(tmp_path, line, ms):
    """-20 / -14 / -10 s inside a block of ~23 s (every stamp still in order), in each of
    the 5 runs: time to train 3.97 / 4.07 / 4.13 min for 4.30, no flag."""
    for k in range(5):
        text = (GOOGLE / f"result_{k}.txt").read_text()
        (tmp_path / f"result_{k}.txt").write_text(_stepped(text, line, ms))
    result = parse_paths([tmp_path], meta=MLPERF_META, jobs=1)
    jumps = result.problems[result.problems["kind"] == "timestamps_jump"]
    assert sorted(jumps["run_id"]) == [f"result_{k}" for k in range(5)]
    assert "a clock step back inside the run" in jumps["reason"].iloc[0]


def test_the_real_mlperf_blocks_are_not_flagged_short():
    for folder in ("mlperf_v1_0_google_tf_resnet", "mlperf_v1_0_google_jax_unet3d",
                   "mlperf_v1_0_nvidia_mxnet_resnet"):
        result = parse_paths([REAL / folder], meta=MLPERF_META, jobs=1)
        assert "timestamps_jump" not in _kinds(result), folder


# --- 2. clock steps under STALL_FACTOR in a window of lines printing no rate ---------------

def _unprinted(text: list[str]) -> list[str]:
    return [re.sub(r" train\.total_ips : [0-9.]+ \S+", "", ln) for ln in text]


@pytest.mark.parametrize("every, n, jumps, methods", [
    (10, 1500, {60: 0.9}, ("window",)),
    (10, 1500, {60: 0.45}, ("window",)),
    (10, 1500, {k: 0.23 for k in range(30, 120, 20)}, ("window",)),
    (10, 1500, {60: -0.28}, ("window",)),
    (1, 300, {k: -0.023 for k in range(25, 120, 5)}, ("dlperf", "window"))])
def test_steps_under_the_stall_factor_give_no_figure(tmp_path, every, n, jumps, methods):
    """A line every 10 iterations of 50 ms: one step of +0.9 s (2.8x the interval) gave
    -15 %, +0.45 s -8 %, five of +0.23 s -19 %, one of -0.28 s (0.44x) +6 %; a line every
    iteration, nineteen steps of -23 ms (0.54x): +9 %; 0 problems."""
    S.write(tmp_path, _unprinted(S.lines(n, every=every, jumps=jumps)))
    result = parse_paths([tmp_path])
    for method in methods:
        row = run_throughput(result, method).iloc[0]
        assert np.isnan(row["throughput"]) and row["problem_kind"] == "timestamps_jump", method


@pytest.mark.parametrize("every, n, jumps", [
    (1, 300, {k: 0.05 for k in range(5, 301, 5)}),
    (1, 300, {k: 0.5 for k in range(2, 12)}),
    (10, 1500, {}),
    (10, 1500, {60: 0.1})])
def test_recurring_slow_iterations_and_small_hiccups_keep_their_figure(tmp_path, every, n,
                                                                       jumps):
    """Every 5th iteration twice as long all through the run (a data loader), a slow
    warm-up before the window, no step, and one hiccup of 0.1 s (2 % of the window)."""
    S.write(tmp_path, _unprinted(S.lines(n, every=every, jumps=jumps)))
    result = parse_paths([tmp_path])
    for method in ("dlperf", "window"):
        row = run_throughput(result, method).iloc[0]
        assert np.isfinite(row["throughput"]) and row["problem_kind"] == "", method


# --- 3. a statement contradicting the counts the layout path states ----------------------

def _unstated(text: list[str]) -> list[str]:
    """The lines with no batch_size or world_size PARAMETER: the path states them alone."""
    return [re.sub(r"(batch_size|world_size) : \d+\s+", "", ln) for ln in text]


@pytest.mark.parametrize("where, key, value", [
    ("dlperf-meta.yaml", "batch_size_per_device", 256),
    ("resnet50_b128_amp_1.meta.yaml", "batch_size_per_device", 256),
    ("--meta", "batch_size_per_device", 256), ("--meta", "gpus_per_node", 8)])
def test_a_statement_contradicting_the_path_is_flagged(tmp_path, where, key, value):
    """1n4g/resnet50_b128_*: a folder's or a run's meta file or --meta stating batch 256 (8
    GPUs) doubled the figure with 0 problems."""
    log = S.write(tmp_path, _unstated(S.lines(300)), "1n4g/resnet50_b128_amp_1.log")
    meta = None
    if where == "--meta":
        meta = {key: value}
    else:
        (log.parent / where).write_text(f"{key}: {value}\n")
    result = parse_paths([tmp_path], meta=meta)
    conflict = result.problems[result.problems["kind"] == "metadata_conflict"]
    assert len(conflict) == 1
    assert f"the path says {key}=" in conflict["reason"].iloc[0]
    assert where in conflict["reason"].iloc[0]


def test_a_statement_the_path_agrees_with_is_not_flagged(tmp_path):
    log = S.write(tmp_path, _unstated(S.lines(300)), "1n4g/resnet50_b128_amp_1.log")
    (log.parent / "dlperf-meta.yaml").write_text("batch_size_per_device: 128\n")
    result = parse_paths([tmp_path], meta={"num_nodes": 1, "gpus_per_node": 4})
    assert "metadata_conflict" not in _kinds(result)


# --- 5. a copied run with whitespace added at its end --------------------------------------

@pytest.mark.parametrize("added", ["\n", "\n\n  \n", "\r\n"])
def test_a_copy_with_a_newline_added_is_one_run(tmp_path, added):
    """A repeat copied under another number with `echo "" >>` counted as a second repeat."""
    log = S.write(tmp_path, S.lines(300), "1n1g/r50_b128_amp_1.log")
    text = log.read_text()
    if added == "\r\n":
        text = text.replace("\n", "\r\n")
    (log.parent / "r50_b128_amp_2.log").write_text(text + added, newline="")
    result = parse_paths([tmp_path])
    assert len(result.runs) == 1
    assert "duplicate_run" in _kinds(result)


def test_runs_differing_in_a_last_line_are_two(tmp_path):
    log = S.write(tmp_path, S.lines(300), "1n1g/r50_b128_amp_1.log")
    # a last training line more (a line elsewhere, stating nothing new, is a copy's loss)
    more = S.train_line(S.START + timedelta(seconds=40), 0, 301, 2560.0)
    (log.parent / "r50_b128_amp_2.log").write_text(log.read_text() + more + "\n")
    assert len(parse_paths([tmp_path]).runs) == 2


# --- 4b / 4c / 6. whole-second timestamps ---------------------------------------------------

MEGATRON = DATA / "megatron" / "dated_torchrun" / "1n4g" / "gpt_b2_bf16_1.log"


def _megatron_whole_seconds(folder: Path, ms: float, start: float = 5.0, n: int = 20) -> Path:
    """The dated Megatron fixture's argument dump (global batch 8, log interval 10) with `n`
    iteration lines: the first interval 356.2 ms an iteration, then `ms`; each line's
    stamp the true time floored to the second, as Megatron prints it."""
    text = MEGATRON.read_text().split("\n")
    head = [ln for ln in text if "] iteration " not in ln and "(after " not in ln and ln]
    template = next(ln for ln in text if "] iteration " in ln)
    t, out = start, []
    for k in range(1, n + 1):
        latency = 356.2 if k == 1 else ms
        t += 10 * latency / 1e3
        line = re.sub(r"\[2024-05-01 \d\d:\d\d:\d\d\]",
                      f"[2024-05-01 10:{int(t) // 60:02d}:{int(t) % 60:02d}]", template)
        line = re.sub(r"iteration +\d+/", f"iteration {10 * k:>8}/", line)
        line = re.sub(r"consumed samples: +\d+", f"consumed samples: {80 * k:>12}", line)
        line = re.sub(r"\(ms\): [0-9.]+", f"(ms): {latency:.1f}", line)
        out.append(line)
    path = folder / "1n4g" / "gpt_b2_bf16_1.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(head + out) + "\n")
    return path


@pytest.mark.parametrize("ms, start, kind, n", [
    (141.2, 5.0, "", 20), (141.2, 5.5, "", 40), (141.2, 5.5, "missing_timestamps", 20),
    (90.0, 5.0, "missing_timestamps", 20), (100.0, 5.0, "missing_timestamps", 20)])
def test_whole_second_megatron_stamps_neither_move_nor_flag_a_healthy_run(tmp_path, ms,
                                                                          start, kind, n):
    """141.2 ms an iteration: the window read 14 s for 14.12 (53.33 samples/s for 56.66);
    90 ms (0.9 s a line): flagged figure_mismatch, 8.9 samples an iteration for 8. A run of
    17 or 19 s: its stamps check the latencies the figures rest on only to 6.6 % or 5.8 %,
    more than 5 %, so no figure (missing_timestamps), and no mismatch flag; so does one of
    27 s whose stamps read the latencies 3.1 % off to within 4.2 % (7.3 % at most)."""
    _megatron_whole_seconds(tmp_path, ms, start, n=n)
    result = parse_paths([tmp_path])
    for method in ("dlperf", "window"):
        row = run_throughput(result, method).iloc[0]
        assert row["problem_kind"] == kind, (method, row["problem"])
        if not kind:
            assert row["throughput"] == pytest.approx(8 / (ms / 1e3)), method


def test_whole_second_dll_stamps_keep_the_printed_rates_figure_unflagged(tmp_path):
    """Stamps floored to the second, lines printing the true rate: reported was flagged
    figure_mismatch with "23 accumulated batches"; the window's flag blamed the batch. (1,200
    iterations, 52 s: the stamps confirm the median to 5 %; over 600 iterations, 26 s, they
    read it 2.5 % off to within 4.2 %, and so give no figure.)"""
    text = [re.sub(r"(\d\d:\d\d:\d\d)\.\d{6}", r"\1.000000", ln)
            for ln in S.lines(1200, seconds=0.04373)]
    S.write(tmp_path, text)
    result = parse_paths([tmp_path])
    row = run_throughput(result, "reported").iloc[0]
    assert row["throughput"] == pytest.approx(128 / 0.04373, rel=1e-3)
    assert row["problem_kind"] == "", row["problem"]
    # the window's 4.37 s read as 5 s: timed by the rates its lines print instead
    window = run_throughput(result, "window").iloc[0]
    assert window["problem_kind"] == "", window["problem"]
    assert window["throughput"] == pytest.approx(128 / 0.04373, rel=1e-3)
    assert "timed by the rates its lines print" in window["method"]


# --- 4. a stated Megatron batch ramp-up inside the DLPerf rule's intervals ----------------

def test_the_dlperf_rule_leaves_a_stated_ramp_up_out(tmp_path):
    """The real Megatron-DeepSpeed log with iterations 10-30 at global batch 128 (samples
    re-counted) and its ramp-up stated: the rule's median latency is that of the intervals
    at the final batch 256 only (after the first), so the figure counts no 128-sample
    iteration as 256."""
    src = REAL / "megatron_deepspeed_examples" \
        / "gpt3-0.125B-tokendropping-graduallyIncrease-lr-3.0e-4_origin.log.gz"
    out, at_final = [], []
    for ln in gzip.open(src, "rt").read().split("\n"):
        if re.match(r"\s*rampup_batch_size \.+ None", ln):
            ln = ln.replace("None", "['128', '128', '3840']")
        m = re.match(r"\s*iteration +(\d+)/", ln)
        if m:
            k = int(m.group(1))
            samples = 128 * k if k <= 30 else 3840 + 256 * (k - 30)
            ln = re.sub(r"consumed samples: +\d+", f"consumed samples: {samples:>12}", ln)
            ln = re.sub(r"consumed tokens: +\d+", f"consumed tokens: {samples * 2048:>12}", ln)
            if k <= 30:
                ln = ln.replace("global batch size:   256", "global batch size:   128")
            elif k > 40:  # the first interval at 256 is its start-up, left out too
                at_final.append(float(re.search(r"per iteration \(ms\): ([0-9.]+)", ln)[1]))
        out.append(ln)
    (tmp_path / "gpt3_rampup.log").write_text("\n".join(out))
    row = run_throughput(parse_paths([tmp_path]), "dlperf").iloc[0]
    assert row["problem_kind"] == "" and "ramp-up" in row["method"]
    assert row["throughput"] == pytest.approx(256 / (np.median(at_final) / 1e3))
