"""FP32 → AMP ratios: which cases pair, which labels count as full or reduced precision, and
the figures of each side (issue 11 items 2 and 8)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import parse_paths, summarize
from analysis.stats import SUMMARY_COLUMNS, precision_ratios


def test_bundled_campaign_pairs_each_precision_at_its_own_batch_size(root):
    t = precision_ratios(summarize(parse_paths([root / "data" / "raw_logs" / "rn50_4gpu"])))
    assert len(t) == 4  # 1n1g, 1n2g, 1n4g, 2n2g
    assert set(zip(t["base_precision"], t["amp_precision"])) == {("fp32", "amp")}
    assert (t["base_batch_size"] == 128).all() and (t["amp_batch_size"] == 256).all()
    assert not t["same_batch"].any()
    one = t[(t["num_nodes"] == 1) & (t["gpus_per_node"] == 1)].iloc[0]
    assert one["ratio"] == pytest.approx(6046.57 / 2998.16)
    assert (one["base_repeats"], one["amp_repeats"]) == (5, 5)


def test_same_batch_pair_and_an_unpaired_case(data_dir):
    # TensorFlow: amp and fp32 at b128 on 1n8g; amp b32 on 1n1g has no fp32 beside it
    t = precision_ratios(summarize(parse_paths([data_dir / "dll_tensorflow"])))
    assert len(t) == 1
    row = t.iloc[0]
    assert (row["gpus_per_node"], row["base_batch_size"], row["same_batch"]) == (8, 128, True)
    assert row["ratio"] == pytest.approx(2928.64 / 1049.50, abs=1e-4)


def _case(precision, batch, median, case="", gpus=1, repeats=5):
    row = dict.fromkeys(SUMMARY_COLUMNS, np.nan)
    row.update(framework="PyTorch", model="resnet50", precision=precision, num_nodes=1,
               gpus_per_node=gpus, num_devices=gpus, batch_size_per_device=batch, case=case,
               group="", repeats=repeats, throughput_median=median)
    return row


def test_labels_as_the_parsers_write_them_and_batch_sizes():
    summary = pd.DataFrame([
        _case("fp32", 128, 100.0), _case("tf32", 128, 150.0), _case("bf16", 128, 300.0),
        _case("amp", 256, 400.0), _case("fp16", 64, 250.0),
        _case("fp32", 64, 90.0, gpus=8), _case("amp", 64, 360.0, case="DP_8x1x1"),
    ])
    t = precision_ratios(summary).set_index(["base_precision", "amp_precision"])
    # bf16 shares b128 with fp32 and tf32: same batch
    assert t.loc[("fp32", "bf16"), "ratio"] == 3.0 and t.loc[("fp32", "bf16"), "same_batch"]
    assert t.loc[("tf32", "bf16"), "ratio"] == 2.0
    # amp runs only b256: paired with the largest fp32 / tf32 batch (128), said so
    assert t.loc[("fp32", "amp"), "base_batch_size"] == 128
    assert not t.loc[("fp32", "amp"), "same_batch"]
    assert t.loc[("tf32", "amp"), "ratio"] == pytest.approx(400 / 150)
    # fp16 (a hand-written label) is reduced precision; it runs only b64: against fp32's b128
    assert t.loc[("fp32", "fp16"), "base_batch_size"] == 128
    # other GPU counts and other case labels never pair: 8 GPUs fp32 has no amp beside it
    assert len(t) == 6 and (t["gpus_per_node"] == 1).all()


def test_no_pair_gives_an_empty_frame_with_the_columns():
    t = precision_ratios(pd.DataFrame([_case("fp32", 128, 100.0)]))
    assert t.empty and "ratio" in t.columns
