"""Inputs that a figure's checks still let through after the second attack of the day: a
wrong number with no flag, or a flag that one output dropped. DLLogger logs of batch 128 on
1 GPU at 50 ms an iteration (2,560 img/s) unless said."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import re
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from analysis.changes import trend
from analysis.cli import main
from analysis.collect import parse_paths
from analysis.stats.per_run import run_throughputs

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402


def _uneven(n: int = 400) -> list[str]:
    """Three iterations of 50 ms then one of 250 ms, each line printing its own interval's
    rate: 2,560 img/s printed three lines in four, 512 the fourth; 128 x 4 / 0.4 s = 1,280
    img/s ran."""
    out = [S.parameter(S.START, arch="resnet50", batch_size=128, amp=True, world_size=1,
                       print_freq=1)]
    t = S.START + timedelta(seconds=20)
    for i in range(1, n + 1):
        dt = 0.25 if i % 4 == 0 else 0.05
        t += timedelta(seconds=dt)
        out.append(S.train_line(t, 0, i, 128 / dt))
    return out


def _reported(folder: Path):
    result = parse_paths([folder])
    return run_throughputs(result, ["reported"])["reported"].iloc[0]


def test_the_median_printed_rate_of_uneven_iterations_is_flagged_with_the_timed_one(tmp_path):
    """--method reported gave 2,560 img/s, problems 0, where the timestamps say 1,280."""
    S.write(tmp_path, _uneven())
    row = _reported(tmp_path)
    assert row["throughput"] == pytest.approx(2560.0)  # kept
    assert row["problem_kind"] == "figure_mismatch"
    assert "2,560.00 samples/s" in row["problem"] and "1,280.00 samples/s" in row["problem"]


@pytest.mark.parametrize("from_iteration", [1, 61])
def test_a_printed_rate_twice_the_stated_batch_over_the_timestamps_is_flagged(tmp_path,
                                                                              from_iteration):
    """Lines 50 ms apart printing 5,120 img/s for a stated 128 x 1 (from the start, or from
    iteration 61 on): --method reported gave 5,120, problems 0, --strict passed, while
    dlperf and window flagged the same log."""
    text = S.lines(300)
    text = [ln.replace("2560.00 images/s", "5120.00 images/s")
            if i >= from_iteration else ln for i, ln in enumerate(text)]
    S.write(tmp_path, text)
    row = _reported(tmp_path)
    assert row["throughput"] == pytest.approx(5120.0) and row["problem_kind"] == "figure_mismatch"
    assert "global batch 128" in row["problem"] and "2,560.00 samples/s" in row["problem"]


def test_even_iterations_keep_the_median_printed_rate_unflagged(tmp_path):
    S.write(tmp_path, S.lines(400))
    row = _reported(tmp_path)
    assert row["throughput"] == pytest.approx(2560.0) and row["problem_kind"] == ""


def _main(*args) -> tuple[int, str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        status = main([str(a) for a in args])
    return status, buf.getvalue()


def test_store_trend_shows_a_stored_flagged_figure_with_its_flag(tmp_path):
    """A campaign whose logs state global_batch_size 1,024 for lines printing 2,560 img/s
    (20,480 by the stated batch, flagged figure_mismatch by summarize, compare and check):
    `store trend` printed 20,480 with no flag."""
    for r in (1, 2, 3):  # repeats a minute apart: identical logs are one run copied
        start = S.START + timedelta(minutes=r)
        S.write(tmp_path / "fixed", S.lines(300, start=start), f"1n1g/r50_b128_amp_{r}.log")
        S.write(tmp_path / "stated", S.lines(300, start=start, global_batch_size=1024),
                f"1n1g/r50_b128_amp_{r}.log")
    store = tmp_path / "store"
    for name in ("fixed", "stated"):
        assert _main("store", "add", tmp_path / name, "--store", store, "--name", name)[0] == 0
    status, text = _main("store", "trend", "--store", store, "--format", "json")
    rows = {r["name"]: r for r in json.loads(text)}
    assert status == 0 and rows["stated"]["throughput_median"] == pytest.approx(20480.0)
    assert rows["stated"]["flags"] == "3 of 3 run(s) figure_mismatch"
    assert rows["fixed"]["flags"] == ""
    status, table = _main("store", "trend", "--store", store)
    assert "figure_mismatch" in table.splitlines()[2]  # the flagged campaign's own row
    assert list(trend.trend(store).columns) == trend.COLUMNS


GPT_1N1G = (Path(__file__).resolve().parents[2] / "data" / "raw_logs" / "gpt_4gpu" / "1n1g"
            / "pretrain_gpt_1n1d_dp1_mp1_pp1_mbz8_gbz8_s2048_l16_h1536_nh16_1.log")


def test_a_gpt_table_whose_stated_batch_its_printed_rate_and_latency_contradict_is_flagged(
        tmp_path):
    """The suite's own GPT log with global_batch_size 16 stated and its samples column
    counting 16 a step, while each line's throughput x latency is 8 (micro batch 8, one
    data-parallel rank): 131.33 samples/s and 1,020 TFLOP/s/GPU, problems 0."""
    text = GPT_1N1G.read_text().replace("global_batch_size ............................... 8",
                                        "global_batch_size ............................... 16")
    text = re.sub(r"^(\| (\d+) +\| +\d+ +\| )\d+( +)",
                  lambda m: f"{m[1]}{int(m[2]) * 16:<{len(m[0]) - len(m[1]) - 0}}",
                  text, flags=re.M)
    assert "| 3        | 3               | 48 " in text
    (tmp_path / "1n1g").mkdir()
    (tmp_path / "1n1g" / GPT_1N1G.name).write_text(text)
    result = parse_paths([tmp_path])
    row = run_throughputs(result, ["dlperf"])["dlperf"].iloc[0]
    assert row["throughput"] == pytest.approx(131.33, abs=0.01)  # kept: the log states 16
    assert row["problem_kind"] == "figure_mismatch"
    assert "global batch 16" in row["problem"] and "65.58 samples/s" in row["problem"]


MLPERF = Path(__file__).resolve().parents[1] / "data" / "real" / "mlperf_v1_0_google_tf_resnet"


def _clock_stepped(text: str, ms: int, from_block: int) -> str:
    """`text` with every record from its `from_block`-th block_start on stamped `ms` later."""
    out, seen = [], 0
    for line in text.splitlines():
        seen += '"key": "block_start"' in line
        if seen >= from_block and '"time_ms": ' in line:
            line = re.sub(r'"time_ms": (\d+)', lambda m: f'"time_ms": {int(m[1]) + ms}', line)
        out.append(line)
    return "\n".join(out) + "\n"


def test_an_mlperf_clock_stepping_back_inside_the_run_is_flagged(tmp_path):
    """The real v1.0 TF ResNet result with every record from its 5th block_start on 60 s
    earlier (block 5 starting before block 4 stopped): a time to train 60 s short, no
    problem (the case's olympic mean 7.8 % low with two such files)."""
    text = (MLPERF / "result_2.txt").read_text()
    (tmp_path / "result_2.txt").write_text(_clock_stepped(text, -60000, 5))
    (tmp_path / "healthy").mkdir()
    (tmp_path / "healthy" / "result_2.txt").write_text(text)
    problems = parse_paths([tmp_path]).problems
    back = problems[problems["kind"] == "timestamps_backwards"]
    assert len(back) == 1 and back["source"].iloc[0].endswith("/result_2.txt")
    assert "healthy" not in back["source"].iloc[0]
    assert "60.0 s before the block_stop on line 35" in back["reason"].iloc[0]


PADDLE_RN50 = (Path(__file__).resolve().parents[1] / "data" / "real" / "paddle_perf_pytorch_resnet"
               / "pytorch_gpu8_amp_bs256.txt")


@pytest.mark.parametrize("meta_file", [True, False])
def test_stated_nodes_and_gpus_the_logs_world_size_contradicts_are_a_conflict(tmp_path, meta_file):
    """A published 8-GPU DLLogger log (world_size 8) with a dlperf-meta.yaml, or --meta,
    stating 2 nodes x 8 GPUs: filed as 16 devices, no problem (a path saying so is a
    metadata_conflict)."""
    (tmp_path / PADDLE_RN50.name).write_bytes(PADDLE_RN50.read_bytes())
    kw = {}
    if meta_file:
        (tmp_path / "dlperf-meta.yaml").write_text("num_nodes: 2\ngpus_per_node: 8\n")
    else:
        kw["meta"] = {"num_nodes": 2, "gpus_per_node": 8}
    result = parse_paths([tmp_path], **kw)
    conflict = result.problems[result.problems["kind"] == "metadata_conflict"]
    assert len(conflict) == 1
    assert "says 2n8g (16 devices), the log says world_size=8" in conflict["reason"].iloc[0]


def test_stated_nodes_and_gpus_the_world_size_agrees_with_are_no_conflict(tmp_path):
    (tmp_path / PADDLE_RN50.name).write_bytes(PADDLE_RN50.read_bytes())
    (tmp_path / "dlperf-meta.yaml").write_text("num_nodes: 1\ngpus_per_node: 8\n")
    assert "metadata_conflict" not in set(parse_paths([tmp_path]).problems["kind"])


def _unprinted(text: list[str]) -> list[str]:
    """The lines without their printed throughput (a log that prints loss and lr only)."""
    return [re.sub(r"train\.total_ips : \S+ images/s ", "", ln) for ln in text]


@pytest.mark.parametrize("steps, off", [({60: 0.4}, "7.4%"), ({40: 0.4, 70: 0.4, 100: 0.4}, "19.4%")])
def test_clock_steps_each_under_the_jump_factor_that_add_up_give_no_figure(tmp_path, steps, off):
    """A log printing no throughput whose clock moves 0.4 s forward (9x an iteration) once
    or three times in the window: 2,370.37 or 2,064.52 img/s (7 % and 19 % low), no
    problem; one step of 0.6 s (13x) was already refused."""
    S.write(tmp_path, _unprinted(S.lines(300, jumps=steps)))
    result = parse_paths([tmp_path])
    for method, runs in run_throughputs(result, ["dlperf", "window"]).items():
        row = runs.iloc[0]
        assert row["problem_kind"] == "timestamps_jump" and row["throughput"] != row["throughput"], method
        assert f"are {off} of the window's" in row["problem"], method


def test_iterations_a_little_uneven_still_give_a_figure(tmp_path):
    """Every fifth iteration 2.5x the others (data loading): the run's own pace, kept."""
    S.write(tmp_path, _unprinted(S.lines(300, jumps={i: 0.075 for i in range(5, 301, 5)})))
    row = run_throughputs(parse_paths([tmp_path]), ["window"])["window"].iloc[0]
    assert row["problem_kind"] == "" and row["throughput"] == pytest.approx(128 * 5 / 0.325, rel=0.02)


def test_a_closing_figure_above_every_line_it_summarises_is_flagged(tmp_path):
    """60 iterations printing 2,560 img/s, then a Summary of 3,712 (+45 %): 3,712 with only
    method_fallback, `--strict` passed; the 50 % bound is for a closing average below the
    lines (it may hold the warm-up), not above them."""
    text = S.lines(60)
    text.append(f"DLL {S.stamp(S.START + timedelta(seconds=24))} - Summary: train.total_ips : "
                "3712.00 images/s ")
    S.write(tmp_path, text)
    row = run_throughputs(parse_paths([tmp_path]), ["dlperf"])["dlperf"].iloc[0]
    assert row["throughput"] == pytest.approx(3712.0) and row["problem_kind"] == "figure_mismatch"
    assert "3,712.00 samples/s" in row["problem"] and "2,560.00 samples/s" in row["problem"]


@pytest.mark.parametrize("every", [25, 16])
def test_a_stall_recurring_all_through_the_run_is_its_pace(tmp_path, every):
    """0.55 s more at every 25th iteration (a periodic checkpoint), nothing printed to
    compare with: timestamps_jump and no figure (every 16th, too many for the 95th
    percentile to miss, kept its figure). The window's iterations 21 to 120 hold
    100 // every stalls."""
    S.write(tmp_path, _unprinted(S.lines(300, jumps={i: 0.55 for i in range(every, 301, every)})))
    row = run_throughputs(parse_paths([tmp_path]), ["window"])["window"].iloc[0]
    stalls = len(range(every, 121, every)) - len(range(every, 21, every))
    assert row["problem_kind"] == ""
    assert row["throughput"] == pytest.approx(128 * 100 / (5 + stalls * 0.55))


@pytest.mark.parametrize("key", ["num_accumulation_steps", "accumulation_steps", "grad_accum_steps"])
def test_accumulation_steps_in_other_spellings_count(tmp_path, key):
    """`num_accumulation_steps : 2` (DLE TF BERT's and the suite's GPT's spelling), 100 ms
    an iteration of 2 x 128, nothing printed: 1,280 img/s, problems 0 (only
    gradient_accumulation_steps was read)."""
    S.write(tmp_path, _unprinted(S.lines(300, seconds=0.1, **{key: 2})))
    row = run_throughputs(parse_paths([tmp_path]), ["window"])["window"].iloc[0]
    assert row["throughput"] == pytest.approx(2560.0)


def test_a_clock_step_in_a_window_printing_two_throughputs_gives_no_figure(tmp_path):
    """A throughput printed only at iterations 50 and 100, the clock 2 s forward at 70:
    --method window gave 1,828.57 img/s (-29 %), problems 0, though with nothing printed
    the same step was timestamps_jump."""
    text = S.lines(300, jumps={70: 2.0})
    text = [ln if any(f"Iteration: {k} " in ln for k in (50, 100)) else _unprinted([ln])[0]
            for ln in text]
    assert sum("total_ips" in ln for ln in text) == 2
    S.write(tmp_path, text)
    row = run_throughputs(parse_paths([tmp_path]), ["window"])["window"].iloc[0]
    assert row["problem_kind"] == "timestamps_jump" and row["throughput"] != row["throughput"]
    assert "jumps forward 2.05 s" in row["problem"]


def _mlperf_set(folder: Path, edit=lambda name, text: text) -> None:
    for f in sorted(MLPERF.glob("result_*.txt")):
        (folder / f.name).write_text(edit(f.name, f.read_text()))


def _score(folder: Path) -> tuple[float, str]:
    from analysis.stats.summary import summarize
    row = summarize(parse_paths([folder])).iloc[0]
    return float(row["time_to_train_min"]), str(row["time_to_train_rule"])


def _accuracy_as(value: str):
    return lambda name, text: re.sub(r'("key": "eval_accuracy", "value": )[^,]+,',
                                     lambda m: m[1] + value + ",", text)


def test_mlperf_runs_printing_their_accuracy_as_no_number_have_no_time(tmp_path):
    """Every eval_accuracy printed as Mask R-CNN's dict: 4.301094 min, as though every run
    reached ResNet's 0.759; one run's printed as null: the same score, no problem."""
    (tmp_path / "dicts").mkdir()
    _mlperf_set(tmp_path / "dicts", _accuracy_as('{"BBOX": 0.38, "SEGM": 0.34}'))
    score, rule = _score(tmp_path / "dicts")
    assert score != score and "5 of 5 runs aborted" in rule
    (tmp_path / "null").mkdir()
    _mlperf_set(tmp_path / "null", lambda name, text: _accuracy_as("null")(name, text)
                if name == "result_0.txt" else text)
    score, rule = _score(tmp_path / "null")
    assert score == pytest.approx(4.301122, abs=1e-6) and "1 aborted run" in rule


def test_an_mlperf_benchmark_without_a_known_target_says_its_accuracy_is_unchecked(tmp_path):
    _mlperf_set(tmp_path, lambda name, text: text.replace('"value": "resnet"', '"value": "ssd"'))
    score, rule = _score(tmp_path)
    assert score == pytest.approx(4.301094, abs=1e-6)
    assert "ssd: its quality target is not known here" in rule
    _mlperf_set(tmp_path)
    assert "not known here" not in _score(tmp_path)[1]


MEGATRON = Path(__file__).resolve().parents[1] / "data" / "real" / "megatron_deepspeed_examples"


def test_megatron_block_recomputation_of_some_layers_counts_only_those(tmp_path):
    """Full recomputation by `recompute_method block` of 3 of 12 layers was counted as all
    12 (the 96 convention): 136.15 TFLOP/s/GPU where the 72 convention plus 3 layers'
    forward pass gives 115.50."""
    from analysis.stats.summary import summarize

    src = sorted(MEGATRON.glob("*.log.gz"))[0]
    text = gzip.decompress(src.read_bytes()).decode()
    extra = ("  recompute_granularity ........................... full\n"
             "  recompute_method ................................ block\n"
             "  recompute_num_layers ............................ 3\n")
    at = text.index("  num_layers ....")
    (tmp_path / "gpt.log").write_text(text[:at] + extra + text[at:])
    row = summarize(parse_paths([tmp_path])).iloc[0]
    assert row["tflops_per_gpu"] == pytest.approx(115.50, abs=0.01)
    assert row["tflops_formula"].endswith("r=3") and row["tflops_per_gpu_seed002"] == \
        pytest.approx(136.15, abs=0.01)


def _smi(t0, seconds: float, mib: int) -> list[str]:
    """nvidia-smi samples of GPU 0 every 500 ms for `seconds` from `t0`, at `mib`."""
    return [f"{(t0 + timedelta(seconds=k * 0.5)).strftime('%Y/%m/%d %H:%M:%S.%f')[:-3]}, 0, "
            f"{mib} MiB, 143771 MiB, 90 %, 300.00 W" for k in range(int(seconds / 0.5) + 1)]


def test_a_retry_within_a_minute_leaves_the_earlier_attempts_samples_out(tmp_path):
    """An earlier attempt sampled at 70,000 MiB until 22 s before this run's samples (from
    its first line on, 1,000 MiB) resume: 70,000 MiB was the run's peak, no problem (only a
    pause of more than 60 s ended the start-up)."""
    S.write(tmp_path, S.lines(1500))
    head = ("timestamp, index, memory.used [MiB], memory.total [MiB], utilization.gpu [%], "
            "power.draw [W]")
    first = S.START  # the PARAMETER line's time
    S.write(tmp_path, [head, *_smi(first - timedelta(seconds=62), 60, 70000),
                       *_smi(first + timedelta(seconds=20), 80, 1000)],
            "1n1g/r50_b128_amp_1.gpu.csv")
    result = parse_paths([tmp_path])
    assert run_throughputs(result, ["window"])["window"].iloc[0]["memory_sampled_mib"] == 1000.0
    found = result.problems[result.problems["kind"] == "foreign_gpu_sample"]
    assert len(found) == 1 and "after a pause of 22 s" in found["reason"].iloc[0]


def test_strict_passes_mlperf_runs_scored_by_their_time_to_train():
    """Five healthy published MLPerf runs, every run field stated: --strict exited 3 on the
    method_fallback note every MLPerf run gets, though each has its time to train."""
    status, _ = _main("summarize", MLPERF, "--strict", "--meta", "num_nodes=1,gpus_per_node=8",
                      "--format", "csv")
    assert status == 0


def test_strict_still_fails_an_mlperf_run_without_a_time(tmp_path):
    _mlperf_set(tmp_path, lambda name, text: text if name != "result_0.txt" else "\n".join(
        ln for ln in text.splitlines() if '"key": "run_stop"' not in ln) + "\n")
    status, _ = _main("summarize", tmp_path, "--strict", "--meta",
                      "num_nodes=1,gpus_per_node=8", "--format", "csv")
    assert status == 3


def test_a_python_logging_record_written_onto_a_dll_line_leaves_its_fields_readable(tmp_path):
    """TensorFlow's `INFO:tensorflow:Saving checkpoints for 45 …` on the same line as the
    DLL record of iteration 40 (the published DLE TF BERT log, line 250): bad_line, and
    --strict failed a healthy log."""
    text = S.lines(300)
    text[40] = text[40] + "INFO:tensorflow:Saving checkpoints for 45 into /results/model.ckpt."
    S.write(tmp_path, text)
    result = parse_paths([tmp_path])
    assert "bad_line" not in set(result.problems["kind"])
    obs = result.observations
    assert ((obs["line"] == 41) & (obs["metric"] == "throughput")).sum() == 1


def test_an_mlperf_clock_step_of_15_s_between_blocks_of_23_s_is_flagged(tmp_path):
    """Every record from the 5th block_start on 15 s later (a gap of 38 s where the blocks
    come every 23.2 s within 0.1 s): time to train +15 s, no problem (only 2x the median
    and 30 s more were seen)."""
    text = (MLPERF / "result_2.txt").read_text()
    (tmp_path / "result_2.txt").write_text(_clock_stepped(text, 15000, 5))
    (tmp_path / "healthy").mkdir()
    (tmp_path / "healthy" / "result_2.txt").write_text(text)
    problems = parse_paths([tmp_path]).problems
    jump = problems[problems["kind"] == "timestamps_jump"]
    assert len(jump) == 1 and "healthy" not in jump["source"].iloc[0]
    assert "38.2 s pass" in jump["reason"].iloc[0]


BUNDLED = Path(__file__).resolve().parents[2] / "data" / "raw_logs" / "rn50_4gpu"


def test_a_log_with_its_own_marker_that_the_campaigns_status_does_not_list_is_a_stray(tmp_path):
    """A sixth log of a 5-repeat case planted in the bundled campaign with a done marker
    copied from run 1 and its run_id edited to the stray's own name: counted (6 repeats),
    no problem, though status.json lists 5."""
    import shutil

    folder = tmp_path / "rn50_4gpu"
    shutil.copytree(BUNDLED, folder)
    case = folder / "1n1g"
    shutil.copy(case / "resnet50_b128_fp32_1.log", case / "resnet50_b128_fp32_6.log")
    marker = json.loads((case / "resnet50_b128_fp32_1.done").read_text())
    marker["run_id"] = "1n1g/resnet50_b128_fp32_6"
    (case / "resnet50_b128_fp32_6.done").write_text(json.dumps(marker))
    result = parse_paths([folder])
    stray = result.problems[result.problems["kind"] == "stray_log"]
    assert len(stray) == 1 and stray["source"].iloc[0].endswith("resnet50_b128_fp32_6.log")
    assert "status.json does not list it" in stray["reason"].iloc[0]
    assert "1n1g/resnet50_b128_fp32_6" not in set(result.runs["run_id"])


def test_results_after_an_unreadable_run_start_are_no_configuration(tmp_path):
    """result_0's run_start with its time_ms quoted (a bad_line): every later event of the
    run was read as a setting, and the case was flagged mixed_configuration in
    eval_accuracy."""
    _mlperf_set(tmp_path, lambda name, text: text if name != "result_0.txt" else re.sub(
        r'"time_ms": (\d+), "key": "run_start"', r'"time_ms": "\1", "key": "run_start"', text))
    result = parse_paths([tmp_path])
    from analysis.stats.summary import summarize
    summarize(result)
    kinds = set(result.problems["kind"])
    assert "bad_line" in kinds and "mixed_configuration" not in kinds


def test_a_megatron_log_after_mb_of_start_up_output_is_still_megatron(tmp_path):
    """70,000 start-up lines (6.5 MB) before the argument dump of a published Megatron log:
    'no log of a known format', the run lost; its iteration lines run to the end."""
    from analysis.stats.summary import summarize

    text = gzip.decompress(sorted(MEGATRON.glob("*.log.gz"))[0].read_bytes()).decode()
    at = text.index("------------------------ arguments")
    noise = "".join(f"[startup] loading shard {i:06d} of the dataset index ........ ok\n"
                    for i in range(70000))
    assert len(noise) > 4 << 20
    (tmp_path / "gpt.log").write_text(text[:at] + noise + text[at:])
    row = summarize(parse_paths([tmp_path])).iloc[0]
    assert row["throughput_median"] == pytest.approx(438.36, abs=0.01)


def test_megatron_without_its_padded_vocab_line_pads_the_gpt2_vocabulary_as_megatron_does(
        tmp_path):
    """The published log without `> padded vocab (size: 50257) with 47 dummy tokens (new
    size: 50304)`: TFLOP/s took OneFlow's default 51,200 (109.08, +0.43 %) though the dump
    states GPT2BPETokenizer and make_vocab_size_divisible_by 128."""
    from analysis.stats.summary import summarize

    text = gzip.decompress(sorted(MEGATRON.glob("*.log.gz"))[0].read_bytes()).decode()
    kept = "".join(ln for ln in text.splitlines(keepends=True) if "> padded vocab" not in ln)
    assert len(kept) < len(text)
    (tmp_path / "gpt.log").write_text(kept)
    row = summarize(parse_paths([tmp_path])).iloc[0]
    assert row["tflops_per_gpu"] == pytest.approx(108.617, abs=0.001)
