"""summarize over the fixture folders of each family gives the hand-checked figures."""

import pandas as pd
import pytest

from analysis import parse_paths, summarize


def _table(data_dir, *parts):
    return summarize(parse_paths([data_dir.joinpath(*parts)])).set_index("case", drop=False)


def test_gpt_seed_002_row_with_latency_memory_and_tflops(data_dir):
    t = _table(data_dir, "oneflow_gpt")
    row = t.loc["DP_1x1x1_2_1536x16"]
    assert row["latency_ms"] == pytest.approx(406.16, abs=0.005)
    assert row["throughput_median"] == pytest.approx(4.92, abs=0.005)
    assert row["memory_sampled_mib"] == 11066 and row["memory_sampled_max_mib"] == 11066
    assert pd.isna(row["memory_framework_mib"]) and not row["memory_flag"]
    assert row["tflops_per_gpu"] == pytest.approx(49.43, abs=0.01)
    # the log's 24 layers override the file name's 16, and the case label follows the log
    assert "DP_1x1x1_2_1536x24" in t.index


@pytest.mark.parametrize("parts,framework,median", [
    (("oneflow_cnn", "with_timestamps"), "OneFlow", 2957.82),
    (("oneflow_bert", "with_timestamps"), "OneFlow", 140.20),
    (("dll_pytorch", "seed003_2020"), "PyTorch", 5120.00),
    (("dll_tensorflow", "horovod_mpi_prefixes"), "TensorFlow", 1049.50),
    (("megatron", "iterations"), "Megatron-LM", 28.45),
])
def test_each_family_summarizes(data_dir, parts, framework, median):
    t = summarize(parse_paths([data_dir.joinpath(*parts)]))
    assert list(t["framework"]) == [framework]
    assert t["throughput_median"].iloc[0] == pytest.approx(median, abs=0.01)
