"""The allocator peak `workloads.gpt` prints (`max_allocated_mib`) is the framework's memory."""

from pathlib import Path

from analysis import metrics as M
from analysis import stats
from analysis.collect import parse_paths

LOG = next((Path(__file__).resolve().parents[2] / "data/raw_logs/gpt_4gpu/1n1g").glob(
    "pretrain_gpt_1n1d_dp1_mp1_pp1_mbz8_gbz8_s2048_l16_h1536_nh16_1.log"))


def test_max_allocated_column_is_a_memory_observation_and_the_framework_peak():
    result = parse_paths([LOG])
    obs = result.observations
    mem = obs[obs["metric"] == M.MEMORY_MAX_ALLOCATED]
    assert len(mem) > 0 and (mem["phase"] == M.MEMORY).all() and (mem["unit"] == M.MIB).all()
    assert "max_allocated_mib" not in set(obs["metric"].astype(str))
    runs = stats.run_throughput(result)
    assert runs["memory_framework_mib"].iloc[0] == mem["value"].max() > 20_000
