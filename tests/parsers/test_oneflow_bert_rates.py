"""OneFlow BERT's printed throughput is the interval's samples/s over every device, the
accumulated micro-batches counted (util.Metric with batch_size x num_accumulation_steps):
the figures are checked against it, and a stated accumulation counts in the global batch.
Logs written here in the shape of LanguageModeling/BERT (SYNTHETIC)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats.per_run import run_records

METHODS = ("dlperf", "window", "reported")
SECONDS = 0.2  # a step
PER_DEVICE = 32


def _log(path: Path, gpus: int = 8, ran_gpus: int = 8, acc: int = 1, state_acc: bool = True,
         scale: float = 1.0) -> None:
    """A 300-step run printing every 20 steps: `ran_gpus` x 32 x `acc` samples a step at
    0.2 s (+-0.5 %), the header saying `gpus`; the printed throughput times `scale`."""
    dump = [f"gpu_num_per_node = {gpus}", "num_nodes = 1", f"batch_size_per_device = {PER_DEVICE}",
            "iter_num = 300", "loss_print_every_n_iter = 20", "num_hidden_layers = 12",
            "hidden_size = 768", "use_fp16 = False"]
    dump += [f"num_accumulation_steps = {acc}"] if state_acc else []
    lines = ["=" * 66, f"Running bert: num_gpu_per_node = {gpus}, num_nodes = 1.", "=" * 66,
             *dump, "-" * 66, "Time stamp: 2020-08-22-01:23:45"]
    t = last = 1598056500.0
    for step in range(300):
        t += SECONDS * (1.005 if step % 2 else 0.995) + (3.0 if step == 0 else 0.0)
        if (step + 1) % 20 == 0:
            rate = ran_gpus * PER_DEVICE * acc * 20 / (t - last) * scale
            lines.append(f"step: {step}, total_loss: 9.000, mlm_loss: 8.300, nsp_loss: 0.700, "
                         f"throughput: {rate:.3f} {t}")
            last = t
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def _figures(tmp_path: Path, **kw) -> dict[str, dict]:
    _log(tmp_path / "1n8g" / "bert_base_b32_fp32_1.log", **kw)
    result = parse_paths([tmp_path])
    return {m: rows[0] for m, rows in run_records(result, METHODS).items()}


def test_healthy_run_is_clean(tmp_path):
    for m, row in _figures(tmp_path).items():
        assert row["throughput"] == pytest.approx(1280, rel=0.005), m
        assert not row["problem_kind"], (m, row["problem"])


@pytest.mark.parametrize("kw", [{"scale": 1.1}, {"ran_gpus": 4}],
                         ids=["rates_x1.10", "banner_8_rates_of_4"])
def test_printed_rates_of_another_batch_are_flagged(tmp_path, kw):
    """Rates 10 % high, or of 4 GPUs under a banner of 8: every method gave its figure
    (1,280 / 1,408 or 640) unflagged."""
    for m, row in _figures(tmp_path, **kw).items():
        assert row["problem_kind"] == "figure_mismatch", (m, row["problem"])


def test_stated_accumulation_counts_in_the_global_batch(tmp_path):
    """num_accumulation_steps = 4: the writer's rates count 4 x 256 samples a step; the
    window and dlperf figures were 1,280, a quarter of what ran."""
    figures = _figures(tmp_path, acc=4)
    for m, row in figures.items():
        assert row["global_batch_size"] == 1024
        assert row["throughput"] == pytest.approx(5120, rel=0.005), m
        assert not row["problem_kind"], (m, row["problem"])


def test_unstated_accumulation_is_flagged(tmp_path):
    """Rates of 4 x the stated batch a step, nothing stating the accumulation: one of the
    figures was 4x off, unflagged."""
    figures = _figures(tmp_path, acc=4, state_acc=False)
    for m, row in figures.items():
        assert row["problem_kind"] == "figure_mismatch", (m, row["problem"])
    assert "1,024.0 samples an iteration" in figures["window"]["problem"]
