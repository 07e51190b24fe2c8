"""Megatron-LM since November 2023 stops its iteration timer around an evaluation and a
checkpoint save and prints the ``evaluate`` timer after each evaluation, and since January
2024 it dates its iteration lines (megatron/training/training.py, ``training_log``,
``evaluate``, ``evaluate_and_print_results``): the printed elapsed time per iteration is
training alone, but the dates count the pause. The logs here are printed as those functions
print them."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from analysis import metrics as M
from analysis.collect import parse_paths
from analysis.stats import run_throughput

GBS = 256
#: Milliseconds an iteration, by the (stopped) iteration timer.
ITERATION_MS = 700.0
#: Seconds an evaluation takes (eval_iters 100 forward passes at about a third of an
#: iteration each).
EVAL_S = 24.0
START = datetime(2024, 5, 1, 10, 0, 0)


def _arguments() -> str:
    args = {"data_parallel_size": 8, "eval_interval": 100, "eval_iters": 100,
            "global_batch_size": GBS, "hidden_size": 768, "log_interval": 10,
            "micro_batch_size": 4, "num_attention_heads": 12, "num_layers": 12,
            "pipeline_model_parallel_size": 1, "seq_length": 2048,
            "tensor_model_parallel_size": 1, "train_iters": 300, "world_size": 8}
    body = "".join(f"  {k} {'.' * (48 - len(k))} {v}\n" for k, v in sorted(args.items()))
    return ("using world size: 8, data-parallel size: 8, context-parallel size: 1, "
            "tensor-model-parallel size: 1, pipeline-model-parallel size: 1\n"
            "------------------------ arguments ------------------------\n" + body
            + "-------------------- end of arguments ---------------------\n"
            "> building GPT2BPETokenizer tokenizer ...\n"
            " > padded vocab (size: 50257) with 431 dummy tokens (new size: 50688)\n"
            "> building GPT model ...\n"
            "[before the start of training step] datetime: 2024-05-01 10:00:00 \n")


def _iteration(when: datetime, it: int, ms: float) -> str:
    return (f" [{when.strftime('%Y-%m-%d %H:%M:%S')}] iteration {it:8d}/{300:8d} |"
            f" consumed samples: {it * GBS:12d} | elapsed time per iteration (ms): {ms:.1f} |"
            f" learning rate: {3e-4 * it / 300:.6E} | global batch size: {GBS:5d} |"
            f" lm loss: {10.5 - it / 100:.6E} | loss scale: 1.0 | grad norm: 1.234 |"
            " number of skipped iterations:   0 | number of nan iterations:   0 |\n")


def _evaluation(it: int, seconds: float) -> str:
    """``evaluate``'s timer, then ``evaluate_and_print_results``' block."""
    string = f" validation loss at iteration {it} | lm loss value: 9.123456E+00 | " \
             "lm loss PPL: 9.162154E+03 | "
    rule = "-" * (len(string) + 1)
    ms = seconds * 1e3
    return ("(min, max) time across ranks (ms):\n"
            f"    {'evaluate '.ljust(48, '.')}: ({ms - 3.1:.2f}, {ms:.2f})\n"
            f"{rule}\n{string}\n{rule}\n")


def _save(when: datetime, it: int) -> str:
    return (f"saving checkpoint at iteration {it:7d} to /ckpt in torch_dist format\n"
            f"  successfully saved checkpoint from iteration {it:7d} to /ckpt\n"
            f"[{when.strftime('%Y-%m-%d %H:%M:%S')}] (min, max) time across ranks (ms):\n"
            f"    {'save-checkpoint '.ljust(48, '.')}: (8012.34, 8015.67)\n")


def megatron_lm_log(eval_every: int = 100, eval_s: float = EVAL_S, save_every: int = 0,
                    save_s: float = 8.0) -> str:
    """Iterations 10 to 300, a line every 10; an evaluation of `eval_s` after each
    `eval_every`-th iteration and a save of `save_s` after each `save_every`-th (0: none), as
    ``train`` runs them after the iteration's line: the timer stopped, the clock not."""
    out, when = [_arguments()], START
    for it in range(10, 301, 10):
        when += timedelta(seconds=10 * ITERATION_MS / 1e3)
        out.append(_iteration(when, it, ITERATION_MS + (it % 30) / 10))
        if eval_every and it % eval_every == 0:
            out.append(_evaluation(it, eval_s))
            when += timedelta(seconds=eval_s)
        if save_every and it % save_every == 0:
            when += timedelta(seconds=save_s)
            out.append(_save(when, it))
    return "".join(out)


def _parsed(tmp_path, text: str):
    (tmp_path / "m.log").write_text(text)
    return parse_paths([tmp_path / "m.log"], jobs=1)


def _figure(tmp_path, text: str, method: str, **window):
    return run_throughput(_parsed(tmp_path, text), method, **window).iloc[0]


def _lines_of(observations, phase: str, metric: str) -> list[int]:
    o = observations
    return o[(o["phase"] == phase) & (o["metric"] == metric)]["line"].tolist()


def test_the_validations_are_read_beside_the_evaluate_timer(tmp_path):
    """The validation rows stay, each marked as left out of the elapsed time."""
    o = _parsed(tmp_path, megatron_lm_log()).observations
    val = o[(o["phase"] == M.VAL) & (o["metric"] == M.LOSS)]
    assert val["step"].tolist() == [100, 200, 300]
    assert _lines_of(o, M.VAL, M.TIMED_APART) == val["line"].tolist()


def test_the_saves_of_a_log_printing_the_evaluate_timer_are_timed_apart(tmp_path):
    """One change of Megatron-LM stopped the timer around both: the evaluate timer dates the
    saves' too. Without it the log does not say, and the saves stay in the latencies."""
    o = _parsed(tmp_path, megatron_lm_log(save_every=50)).observations
    saves = _lines_of(o, M.CHECKPOINT, M.SAVE)
    assert len(saves) == 6 and _lines_of(o, M.CHECKPOINT, M.TIMED_APART) == saves
    o = _parsed(tmp_path, megatron_lm_log(eval_every=0, save_every=50)).observations
    assert len(_lines_of(o, M.CHECKPOINT, M.SAVE)) == 6
    assert not _lines_of(o, M.CHECKPOINT, M.TIMED_APART)


def test_the_window_by_the_stamps_leaves_the_evaluation_out(tmp_path):
    """Iterations 20-120 by the dates hold a 3 s evaluation after 100 (73 s): the window
    leaves the interval 100 -> 110 out and runs on to 130, training alone by the dates.
    Before, it counted the evaluation as training, unflagged: 350.68 samples/s."""
    row = _figure(tmp_path, megatron_lm_log(eval_s=3.0), "window")
    assert row["throughput"] == pytest.approx(GBS * 100 / 70.0, rel=1e-12)
    assert "hold evaluation lines or end at one" in row["method"]
    assert row["problem_kind"] == ""


def test_a_window_beside_a_long_evaluation_runs_on_past_it(tmp_path):
    """Iterations 90-110 by the dates hold a 24 s evaluation: left out, the window runs on to
    200 (70 s of whole-second stamps in 2 stretches: fine enough). Before, its 24 s read as a
    clock jump: no figure (timestamps_jump)."""
    row = _figure(tmp_path, megatron_lm_log(), "window", warmup=90, measure=100)
    assert row["throughput"] == pytest.approx(GBS * 100 / 70.0, rel=1e-12)
    assert "hold evaluation lines or end at one" in row["method"]
    assert row["problem_kind"] != "timestamps_jump"


@pytest.mark.parametrize("method", ["window", "dlperf"])
def test_an_evaluation_in_every_interval_counts_in_no_figure(tmp_path, method):
    """eval_interval = log_interval: every interval holds an evaluation by its dates, which
    the printed latencies leave out (the timer stopped). Before, the window counted the
    evaluations: 82.58 samples/s. The latencies alone (365 samples/s) are what the stamps
    would check, but whole-second stamps around an evaluation in every interval check them
    nowhere: no figure, by the one 5 % rule, the evaluations named."""
    row = _figure(tmp_path, megatron_lm_log(eval_every=10), method)
    assert row["problem_kind"] == "missing_timestamps"
    assert "rests on the times per iteration" in row["problem"]
    assert "29 of the 29 intervals between its training lines hold an evaluation, whose time " \
           "those times per iteration leave out and the stamps count" in row["problem"]
