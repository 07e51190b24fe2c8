"""A DLE PyTorch BERT run under AMP numbers its lines by the optimizer steps taken less those
the loss scaler skipped (run_pretraining.py): a skipped step repeats the iteration with
``skipped_steps`` one larger. Such a window is in order, and the `window` method counts the
skipped steps' samples, as the program's own closing figure does."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput

GLOBAL_BATCH = 1024  # 1 node x 8 GPUs x 128


def _log(tmp_path, skips_at: set[int], steps: int = 130):
    """One line a second; each step in `skips_at` is printed once more, skipped."""
    t0 = datetime(2023, 8, 2, 2, 37, 0)
    pairs, skipped = [], 0
    for step in range(steps + 1):
        pairs.append((step, skipped))
        if step in skips_at:
            skipped += 1
            pairs.append((step, skipped))
    lines = [f"DLL {(t0 + timedelta(seconds=i)).strftime('%Y-%m-%d %H:%M:%S.%f')} - Training "
             f"Epoch: 0 Training Iteration: {s}  average_loss : 9.1  learning_rate : 0.001  "
             f"skipped_steps : {k} " for i, (s, k) in enumerate(pairs)]
    path = tmp_path / "1n8g" / "bert_b128_amp_1.log"
    path.parent.mkdir()
    path.write_text("\n".join(lines) + "\n")
    return parse_paths([path], jobs=1, cache=False)


@pytest.mark.parametrize("skips_at", [set(), {3}, {40, 41, 90}], ids=["none", "before", "inside"])
def test_the_window_counts_the_skipped_steps_samples(tmp_path, skips_at):
    result = _log(tmp_path, skips_at)
    assert "steps_backwards" not in set(result.problems["kind"])
    row = run_throughput(result, "window", warmup=10, measure=100).iloc[0]
    inside = len([s for s in skips_at if 10 <= s < 110])
    # every line took a second and ran a global batch: the samples per second are the batch
    assert row["throughput"] == pytest.approx(GLOBAL_BATCH)
    assert row["iterations"] == 100 + inside
    assert ("skipped" in row["method"]) is bool(inside)


def test_a_same_count_repeat_in_the_window_refuses_it(tmp_path):
    result = _log(tmp_path, {50})
    path = next((tmp_path / "1n8g").glob("*.log"))
    text = path.read_text().replace("Iteration: 50  average_loss : 9.1  learning_rate : 0.001  "
                                    "skipped_steps : 1 ", "Iteration: 50  average_loss : 9.1  "
                                    "learning_rate : 0.001  skipped_steps : 0 ")
    path.write_text(text)
    result = parse_paths([path.parent.parent], jobs=1, cache=False)
    assert "steps_backwards" in set(result.problems["kind"])
    row = run_throughput(result, "window", warmup=10, measure=100).iloc[0]
    assert np.isnan(row["throughput"]) and row["problem_kind"] == "steps_backwards"
