"""References carry the hardware they were measured on (issue 11, item 8): the loader wants
a complete case, a source and the GPU model and count, and names file, line and entry when
one is missing; a reference is a verdict only for cases whose runs ran on its GPUs; the
bundled examples hold the seeds' published figures."""

from __future__ import annotations

import pytest

from analysis.changes import gpus, references
from analysis.changes.sources import from_folder
from analysis.errors import UsageError

from .campaigns import BUNDLED, ROOT

EXAMPLES = ROOT / "examples" / "references"
H200_4 = "4x NVIDIA H200"  # the bundled campaign's machine, from its env records
GOOD = ("{framework: PyTorch, model: resnet50, precision: fp32, batch_size_per_device: 128, "
        "num_nodes: 1, gpus_per_node: 1, value: 3000, source: ours, hardware: 4x H200}")

#: Read by hand from the seeds' tables (/work/shared/seeds): (framework, precision, batch,
#: nodes, GPUs per node) -> samples/s.
SEED_003 = {  # DLPerf PyTorch ResNet50 v1.5, Performance: FP32 b128, AMP & dynamic loss scale b256
    ("PyTorch", "fp32", 128, 1, 1): 367.29, ("PyTorch", "fp32", 128, 1, 4): 1449.48,
    ("PyTorch", "fp32", 128, 1, 8): 2887.65, ("PyTorch", "fp32", 128, 2, 8): 5716.79,
    ("PyTorch", "fp32", 128, 4, 8): 10917.09, ("PyTorch", "amp", 256, 1, 1): 802.9,
    ("PyTorch", "amp", 256, 1, 4): 3137.44, ("PyTorch", "amp", 256, 1, 8): 6154.66,
    ("PyTorch", "amp", 256, 2, 8): 11991.94, ("PyTorch", "amp", 256, 4, 8): 22551.16,
}
SEEDS_000_001 = {  # OneFlow ResNet50-V1.5: seed 000's FP16 table, seed 001's two fp32 groups
    ("OneFlow", "amp", 256, 1, 1): 1290.78, ("OneFlow", "amp", 256, 1, 8): 8992.31,
    ("OneFlow", "amp", 256, 2, 8): 15754.52, ("OneFlow", "amp", 256, 4, 8): 28421.45,
    ("OneFlow", "fp32", 128, 1, 1): 383.760, ("OneFlow", "fp32", 128, 1, 2): 747.295,
    ("OneFlow", "fp32", 128, 1, 4): 1497.618, ("OneFlow", "fp32", 128, 1, 8): 2942.321,
    ("OneFlow", "fp32", 128, 2, 8): 5839.054, ("OneFlow", "fp32", 128, 4, 8): 11548.451,
    ("OneFlow", "fp32", 160, 1, 1): 382.324, ("OneFlow", "fp32", 160, 1, 2): 755.956,
    ("OneFlow", "fp32", 160, 1, 4): 1494.733, ("OneFlow", "fp32", 160, 1, 8): 3016.431,
    ("OneFlow", "fp32", 160, 2, 8): 5877.289, ("OneFlow", "fp32", 160, 4, 8): 11623.889,
}


@pytest.fixture(scope="module")
def bundled():
    return from_folder(BUNDLED)


def _figures(path) -> dict:
    out = {}
    for ref in references.load_references(path):
        m = ref["match"]
        key = (m["framework"], m["precision"], m["batch_size_per_device"], m["num_nodes"],
               m["gpus_per_node"])
        assert key not in out, f"two references of {key}"
        out[key] = ref["value"]
        assert str(ref["hardware"]) == "8x V100-SXM2-16GB"
        assert "seed 00" in ref["source"]
    return out


def test_the_bundled_references_are_the_seeds_published_figures():
    assert _figures(EXAMPLES / "dlperf_pytorch_resnet50_v100.yaml") == SEED_003
    assert _figures(EXAMPLES / "dlperf_oneflow_resnet50_v100.csv") == SEEDS_000_001


@pytest.mark.parametrize("entry, needles", [
    (GOOD.replace(", hardware: 4x H200", ""), ["hardware must be", "'8x V100-SXM2-16GB'"]),
    (GOOD.replace("4x H200", "H200"), ["hardware must be", "'H200'"]),
    (GOOD.replace("4x H200", "0x H200"), ["hardware must be"]),
    (GOOD.replace(", source: ours", ""), ["give the source"]),
    (GOOD.replace("batch_size_per_device: 128, ", ""), ["missing batch_size_per_device"]),
    (GOOD.replace("precision: fp32, ", ""), ["missing precision"]),
    ("{key: 'PyTorch/resnet50/*/b128/1n1g', value: 1, source: s, hardware: 1x A100}",
     ["no wildcards"]),
    ("{key: PyTorch/resnet50/amp/b256/1n1g, precision: fp32, value: 1, source: s, "
     "hardware: 1x A100}", ["says precision amp", "the entry fp32"]),
])
def test_a_reference_without_hardware_source_or_a_complete_case_names_file_and_entry(
        tmp_path, entry, needles):
    path = tmp_path / "refs.yaml"
    path.write_text(f"references:\n  - {GOOD}\n  - {entry}\n", encoding="utf-8")
    with pytest.raises(UsageError) as err:
        references.load_references(path)
    message = str(err.value)
    assert "\n" not in message and "refs.yaml:3 (reference 2)" in message
    for needle in needles:
        assert needle in message


def test_a_case_key_alone_names_the_case_and_hardware_can_be_a_default(tmp_path):
    path = tmp_path / "refs.yaml"
    path.write_text("hardware: 8x Tesla V100-SXM2-16GB\nsource: s\nreferences:\n"
                    "  - {key: PyTorch/resnet50/amp/b256/1n4g, value: 3137.44}\n")
    [ref] = references.load_references(path)
    assert ref["match"] == {"framework": "PyTorch", "model": "resnet50", "precision": "amp",
                            "batch_size_per_device": 256, "num_nodes": 1, "gpus_per_node": 4}
    assert gpus.same(ref["hardware"], gpus.parse("8x V100-SXM2-16GB"))


def test_gpu_models_compare_without_vendor_words_but_memory_and_count_count():
    v100 = gpus.parse("8x V100-SXM2-16GB")
    assert gpus.same(v100, gpus.parse("8x Tesla V100-SXM2-16GB"))
    assert gpus.same(v100, gpus.parse("8 x NVIDIA V100 SXM2 16GB"))
    assert not gpus.same(v100, gpus.parse("8x Tesla V100-SXM2-32GB"))
    assert not gpus.same(v100, gpus.parse("4x Tesla V100-SXM2-16GB"))
    assert not gpus.same(v100, None)
    assert gpus.of_hardware("4x NVIDIA H200, Intel(R) Xeon(R) Processor (64 CPUs), 504 GiB, "
                            "x86_64") == H200_4
    assert gpus.of_hardware("8x A, cpu; 8x B, cpu") == "8x A; 8x B"


def test_references_on_other_gpus_are_no_verdict_and_say_why(bundled, tmp_path):
    """The bundled H200 campaign against the seed's V100 medians: before, every case was
    'faster' (8.16x for fp32 1n1g); now each is 'other hardware' with the reason, no ratio."""
    v100 = references.load_references(EXAMPLES / "dlperf_pytorch_resnet50_v100.yaml")
    by_case = references.case_gpus(bundled.runs, bundled.env)
    assert set(by_case.values()) == {H200_4}
    table = references.check(bundled.summary, v100, gpus_by_case=by_case)
    matched = table[table["case_key"] != ""]
    assert len(matched) == 4 and (matched["verdict"] == references.OTHER_HARDWARE).all()
    assert matched["ratio"].isna().all()
    assert (matched["excluded"] == "reference measured on 8x V100-SXM2-16GB, the runs on "
            "4x NVIDIA H200").all()
    # the same figure stated for the runs' own machine is a verdict with a ratio
    path = tmp_path / "h200.yaml"
    path.write_text(f"- {GOOD.replace('3000', '2998.16')}\n")
    [row] = references.check(bundled.summary, references.load_references(path),
                             gpus_by_case=by_case).to_dict("records")
    assert row["verdict"] == references.WITHIN and row["excluded"] == ""
    assert row["ratio"] == pytest.approx(1.0, abs=1e-4)


def test_runs_without_an_environment_record_are_hardware_unknown(bundled):
    """Checked against a file naming one machine per case, saying the hardware was not
    checked; hardware unknown, no verdict, once a second machine names the same case."""
    refs = references.load_references(EXAMPLES / "dlperf_pytorch_resnet50_v100.yaml")
    no_env = bundled.env.iloc[0:0]
    by_case = references.case_gpus(bundled.runs, no_env)
    assert set(by_case.values()) == {gpus.NOT_RECORDED}
    table = references.check(bundled.summary, refs, gpus_by_case=by_case)
    matched = table[table["case_key"] != ""]
    assert (matched["verdict"] == references.FASTER).all()
    assert matched["excluded"].str.startswith("hardware not checked").all()
    other = [{**refs[0], "hardware": gpus.parse("4x H200")}]
    table = references.check(bundled.summary, refs + other, gpus_by_case=by_case)
    matched = table[table["reference"] == table["reference"].iloc[0]]
    assert (matched["verdict"] == references.HARDWARE_UNKNOWN).all() and len(matched) == 2
    assert matched["excluded"].str.contains("no environment record").all()


def test_a_case_over_two_kinds_of_machine_matches_no_reference(bundled):
    env = bundled.env.copy()
    first = env["run_id"] == env["run_id"].iloc[0]
    env.loc[first, "hardware"] = "8x Tesla V100-SXM2-16GB, Intel Gold (48 CPUs), 384 GiB"
    by_case = references.case_gpus(bundled.runs, env)
    mixed = {k: v for k, v in by_case.items() if ";" in v}
    assert mixed == {"PyTorch/resnet50/fp32/b128/1n1g": "8x Tesla V100-SXM2-16GB; 4x NVIDIA H200"}
    refs = references.load_references(EXAMPLES / "dlperf_pytorch_resnet50_v100.yaml")
    row = references.check(bundled.summary, refs, gpus_by_case=by_case).iloc[0]
    assert row["verdict"] == references.OTHER_HARDWARE and "several kinds" in row["excluded"]


def test_derived_references_keep_their_verdict_and_name_their_source_machine(bundled, tmp_path):
    """The 4-GPU H200 values are 4 x the 1-GPU figure x the stated efficiency: the file says
    so in derived_from, the check still gives them a verdict on the runs' machine, and a
    bad derived_from names file and entry."""
    refs = references.load_references(EXAMPLES / "rn50_4gpu.yaml")
    derived = [r for r in refs if r["derived_from"]]
    assert [(r["match"]["gpus_per_node"], r["derived_from"], str(r["hardware"]))
            for r in derived] == [(4, "1x H200", "4x H200")] * 2
    table = references.check(bundled.summary, derived,
                             gpus_by_case=references.case_gpus(bundled.runs, bundled.env))
    assert list(table["verdict"]) == [references.FASTER, references.FASTER]
    assert list(table["derived_from"]) == ["1x H200", "1x H200"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"- {GOOD[:-1]}, derived_from: lots}}\n")
    with pytest.raises(UsageError, match="bad.yaml.*derived_from must be"):
        references.load_references(bad)
