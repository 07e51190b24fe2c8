"""The gpt campaign template and the committed gpt_4gpu campaign (real runs on H200)."""

from __future__ import annotations

import json

import pytest

from analysis.campaign import spec_from_dict
from analysis.campaign.runner import Campaign
from analysis.errors import DLPerfError

CASE = {"devices": "1n2g", "precision": "bf16", "batch_size": 8, "args": ["--compile"],
        "params": {"mp": 2, "pp": 1, "global_batch_size": 8, "seq_length": 2048,
                   "num_layers": 16, "hidden_size": 1536, "num_heads": 16}}


def _campaign(tmp_path, case):
    spec = spec_from_dict({"name": "g", "workload": "gpt", "cases": [case], "repeats": 1,
                           "iterations": 20, "device": "cuda"})
    return Campaign(spec, out_dir=tmp_path)


def test_template_runs_workloads_gpt_with_the_case_sizes(tmp_path):
    c = _campaign(tmp_path, CASE)
    run = c.runs[0]
    assert run.run_id == "1n2g/pretrain_gpt_1n2d_dp1_mp2_pp1_mbz8_gbz8_s2048_l16_h1536_nh16_1"
    from analysis.campaign.workloads import LaunchContext

    (argv,) = c.workload.commands(LaunchContext(c.spec, run, ["127.0.0.1"], "127.0.0.1", 29500))
    text = " ".join(argv)
    assert "--nproc_per_node 2 -m workloads.gpt --tensor-model-parallel-size 2 " \
           "--pipeline-model-parallel-size 1 --micro-batch-size 8 --global-batch-size 8" in text
    assert text.endswith("--precision bf16 --device cuda --dist-backend nccl --compile")


def test_template_refuses_amp_and_missing_params(tmp_path):
    with pytest.raises(DLPerfError, match="precision 'amp'"):
        _campaign(tmp_path, {**CASE, "precision": "amp"})
    params = {k: v for k, v in CASE["params"].items() if k != "num_heads"}
    with pytest.raises(DLPerfError, match="num_heads"):
        _campaign(tmp_path, {**CASE, "params": params})


@pytest.fixture(scope="module")
def campaign_dir(root):
    return root / "data" / "raw_logs" / "gpt_4gpu"


def test_committed_campaign_reads_back(campaign_dir):
    from analysis import parse_paths, summarize

    result = parse_paths([str(campaign_dir)])
    assert len(result.runs) == 41  # 14 cases x 3 repeats, less TP 2 x PP 2's third
    assert set(result.runs["family"]) == {"oneflow_gpt"}
    assert (result.runs["problems"] == "").all()
    table = summarize(result).set_index("case")
    assert table.loc["MP_PP_1x2x2_64_2304x24", "repeats"] == 2
    assert table.drop("MP_PP_1x2x2_64_2304x24")["repeats"].tolist() == [3] * 13
    assert table.loc["DP_1x1x1_8_1536x16", "latency_ms"] == pytest.approx(120.46, abs=0.01)
    assert table.loc["MP_1x2x1_8_2304x24", "latency_ms"] == pytest.approx(235.40, abs=0.01)


@pytest.mark.parametrize("name", ["gpt_4gpu", "gpt_4gpu_bf16w"])
def test_every_run_used_the_same_four_gpus(root, name):
    """Both campaigns ran on one 4-GPU machine: every env record lists the same four GPU
    UUIDs, and each run's CUDA_VISIBLE_DEVICES names as many of them as its case has."""
    folder = root / "data" / "raw_logs" / name
    hosts, visible = set(), []
    for record in folder.glob("*/*.env.json"):
        env = json.loads(record.read_text())
        hosts.add(tuple(g["uuid"] for g in env["gpus"]))
        gpus = int(record.parent.name.split("n")[1].rstrip("g"))
        visible.append(len(env["env"]["CUDA_VISIBLE_DEVICES"].split(",")) == gpus)
    assert len(hosts) == 1 and len(next(iter(hosts))) == 4
    assert visible and all(visible)


def test_runs_left_unrun_are_pending_not_failed(campaign_dir):
    """The spec asks for 5 repeats; the lent machine's device time ended after repeats 1-3
    (TP 2 x PP 2 at 2304 x 24: 1-2). The rest stay pending, nothing failed, and the same
    command on one 4-GPU machine runs exactly those."""
    status = json.loads((campaign_dir / "status.json").read_text())
    rows = status["runs"] if isinstance(status, dict) else status
    assert len(rows) == 70
    assert {r["state"] for r in rows} == {"done", "pending"}
    pending = [r for r in rows if r["state"] == "pending"]
    assert len(pending) == 29
    assert {r["repeat"] for r in pending} == {3, 4, 5}
    assert [r["run_id"] for r in pending if r["repeat"] == 3] == [
        "1n4g/pretrain_gpt_1n4d_dp1_mp2_pp2_mbz8_gbz64_s2048_l24_h2304_nh24_3"]
