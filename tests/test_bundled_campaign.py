"""The bundled campaign (real runs on 4x H200, data/raw_logs/rn50_4gpu) reads back exactly."""

import json

import pytest

from analysis import parse_paths, summarize
from analysis.campaign.runner import Campaign


@pytest.fixture(scope="module")
def campaign_dir(root):
    return root / "data" / "raw_logs" / "rn50_4gpu"


@pytest.fixture(scope="module")
def result(campaign_dir):
    return parse_paths([campaign_dir])


def test_forty_clean_runs_in_eight_cases(result):
    assert len(result.runs) == 40
    assert result.problems.empty, result.problems[["source", "kind", "reason"]]
    table = summarize(result)
    assert len(table) == 8 and (table["repeats"] == 5).all()


def test_medians_speedups_and_memory(result):
    t = summarize(result).set_index(["precision", "num_nodes", "gpus_per_node"])
    assert t.loc[("amp", 1, 1), "throughput_median"] == pytest.approx(6046.57)
    assert t.loc[("fp32", 1, 1), "throughput_median"] == pytest.approx(2998.16)
    assert t.loc[("amp", 1, 4), "speedup"] == pytest.approx(23362.79 / 6046.57)
    assert t.loc[("amp", 2, 2), "scaling_efficiency"] > 0.95
    assert (t["memory_sampled_mib"] > 10000).all()  # nvidia-smi samples from the GPU host


def test_env_records_show_the_gpus(campaign_dir):
    rec = json.loads(next(campaign_dir.glob("1n4g/*.node0.env.json")).read_text())
    assert rec["gpu_model"] == "NVIDIA H200" and rec["gpu_count"] == 4
    assert "NV18" in rec["topology_text"]


def test_rerunning_the_campaign_finds_everything_done(campaign_dir):
    c = Campaign(campaign_dir / "campaign.yaml", out_dir=campaign_dir)
    status = c.status()
    assert (status["state"] == "done").all() and len(status) == 40
