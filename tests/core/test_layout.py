import pytest

from analysis.layout import gpt_case, meta_from_path, node_index, run_stem


def test_dlperf_layout_fields_and_precision_synonyms():
    m = meta_from_path("ngc/pytorch/4n8g/r50_b256_fp16_3.log")
    assert m == {"num_nodes": 4, "gpus_per_node": 8, "model": "resnet50",
                 "batch_size_per_device": 256, "precision": "amp", "repeat": 3}
    assert meta_from_path("oneflow/1n8g/bert_base_b96_fp32_7.log")["model"] == "bert_base"
    assert meta_from_path("x/12n16g/r50_b64_bf16_1.log.gz")["gpus_per_node"] == 16


@pytest.mark.parametrize("name,case", [
    ("pretrain_gpt_1n1d_dp1_mp1_pp1_mbz2_gbz2_s2048_l16_h1536_nh16.log", "DP_1x1x1_2_1536x16"),
    ("pretrain_gpt_2n8d_dp1_mp16_pp1_mbz16_gbz16_s2048_l16_h3072_nh32.log", "MP_1x16x1_16_3072x16"),
    ("pretrain_gpt_1n8d_dp2_mp4_pp1_mbz8_gbz16_s2048_l16_h1536_nh16.log", "2D_2x4x1_16_1536x16"),
    ("pretrain_gpt_4n8d_dp8_mp1_pp4_mbz2_gbz512_s2048_l16_h1536_nh16.log", "DP_PP_8x1x4_512_1536x16"),
    ("pretrain_gpt_4n8d_dp1_mp8_pp4_mbz16_gbz512_s2048_l24_h2304_nh24.log", "MP_PP_1x8x4_512_2304x24"),
    ("pretrain_gpt_4n8d_dp2_mp8_pp2_mbz8_gbz512_s2048_l24_h2304_nh24.log", "2D_PP_2x8x2_512_2304x24"),
])
def test_gpt_file_names_give_seed_002_case_labels(name, case):
    m = meta_from_path(f"perf_test_logs/{name}")
    assert m["case"] == case
    assert m["num_nodes"] * m["gpus_per_node"] == (
        m["data_parallel"] * m["tensor_parallel"] * m["pipeline_parallel"])


def test_gpt_case_helper():
    assert gpt_case(4, 8, 1, 32, 2304, 24) == "2D_4x8x1_32_2304x24"


def test_run_stem_joins_logs_sidecars_and_node_logs():
    for f in ("r50_b256_amp_1.log", "r50_b256_amp_1.mem", "r50_b256_amp_1.gpu.csv",
              "r50_b256_amp_1.node1.log", "r50_b256_amp_1.node1.gpu.csv", "r50_b256_amp_1.log.gz"):
        assert run_stem(f) == "r50_b256_amp_1"
    assert node_index("r50_b256_amp_1.node3.log") == 3
    assert node_index("r50_b256_amp_1.log") == 0


def test_unrelated_names_state_nothing():
    assert meta_from_path("logs/oneflow.log") == {}
