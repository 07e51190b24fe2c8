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
    assert len(result.runs) == 68  # 35 on 1-2 GPUs (2-GPU machine), 33 on the 4-GPU machine
    assert set(result.runs["family"]) == {"oneflow_gpt"}
    assert (result.runs["problems"] == "").all()
    table = summarize(result).set_index("case")
    assert table["repeats"].sum() == 68 and table.loc["MP_PP_1x2x2_64_2304x24", "repeats"] == 3
    assert table.drop("MP_PP_1x2x2_64_2304x24")["repeats"].tolist() == [5] * 13
    assert table.loc["DP_1x1x1_8_1536x16", "latency_ms"] == pytest.approx(121.03, abs=0.01)
    assert table.loc["MP_1x2x1_8_2304x24", "latency_ms"] == pytest.approx(234.17, abs=0.01)


def test_four_gpu_runs_left_unrun_are_recorded_as_failed(campaign_dir):
    """The 4-GPU machines' device time ran out after 33 of the 35 1n4g runs (16 in one
    session, 17 in the next): the other 2 keep the 2-GPU machine's "needs 4 GPUs" record and
    run when the command is repeated."""
    status = json.loads((campaign_dir / "status.json").read_text())
    rows = status["runs"] if isinstance(status, dict) else status
    four = [r for r in rows if r["run_id"].startswith("1n4g/")]
    assert len(four) == 35
    assert sum(r["state"] == "done" for r in four) == 33
    failed = [r for r in four if r["state"] == "failed"]
    assert len(failed) == 2
    assert {r["reason"] for r in failed} == {"1n4g needs 4 GPUs on this host; it has 2"}
