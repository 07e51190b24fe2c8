"""Cases that are what they claim: repeats whose argument dumps state different
configurations (an eager and a torch.compile run of our ResNet-50 workload), or whose spread
is above --spread-threshold, are flagged as problems of the case in summarize, compare and
--strict; nothing said so outside --all-columns before."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.stats import case_stats

ROOT = Path(__file__).resolve().parents[2]
RN50 = ROOT / "data" / "raw_logs" / "rn50_4gpu"
GPT = ROOT / "data" / "raw_logs" / "gpt_4gpu"
REAL = ROOT / "tests" / "data" / "real" / "paddle_perf_pytorch_resnet"


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "analysis", *map(str, args)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)


@pytest.fixture(scope="module")
def eager_and_compiled(tmp_path_factory):
    """Runs 1-3 of the bundled fp32 1n1g case, run 3 stating `compile : True` (as our
    workload prints a --compile run), and the 1n2g case as it is."""
    root = tmp_path_factory.mktemp("mixed") / "logs"
    (root / "1n1g").mkdir(parents=True)
    for i in (1, 2, 3):
        text = (RN50 / "1n1g" / f"resnet50_b128_fp32_{i}.log").read_text()
        if i == 3:
            assert "compile : False  compile_mode : None" in text
            text = text.replace("compile : False  compile_mode : None",
                                "compile : True  compile_mode : default")
        (root / "1n1g" / f"resnet50_b128_fp32_{i}.log").write_text(text)
    shutil.copytree(RN50 / "1n2g", root / "1n2g",  # the logs alone
                    ignore=lambda d, names: [n for n in names if not n.endswith("fp32_1.log")
                                             and not n.endswith("fp32_2.log")])
    return root


def _rows(proc) -> dict:
    assert proc.returncode == 0, proc.stderr
    return {(r["num_nodes"], r["gpus_per_node"], r["case"]): r for r in json.loads(proc.stdout)}


def test_runs_stating_different_configurations_are_a_flagged_case(eager_and_compiled):
    proc = _cli("summarize", eager_and_compiled, "--format", "json", "--all-columns")
    rows = _rows(proc)
    mixed, two = rows[(1, 1, "")], rows[(1, 2, "")]
    assert mixed["flags"] == "configuration differs in compile, compile_mode"
    assert mixed["problems"] == 3 and two["problems"] == 0 and two["flags"] == ""
    assert two["speedup"] is None  # not taken against a median of eager and compiled runs
    assert "mixed_configuration: configuration differs in compile, compile_mode" in proc.stderr
    assert "compile: False (1n1g/resnet50_b128_fp32_1), False (1n1g/resnet50_b128_fp32_2), " \
           "True (1n1g/resnet50_b128_fp32_3)" in proc.stderr


def test_the_default_table_counts_the_flagged_case_and_strict_fails(eager_and_compiled):
    proc = _cli("summarize", eager_and_compiled)
    line = next(s for s in proc.stdout.splitlines() if " 1n1g " in s)
    assert proc.returncode == 0 and line.split()[-1] == "3"  # problems: every run of it
    strict = _cli("summarize", eager_and_compiled, "--strict")
    assert strict.returncode == 3 and "mixed_configuration" in strict.stderr


def test_a_spread_above_the_threshold_is_flagged(tmp_path):
    # the bundled GPT campaign: two cases' repeats are 10 % and 13.4 % apart
    rows = _rows(_cli("summarize", GPT, "--format", "json", "--all-columns"))
    flagged = {k[2]: r["flags"] for k, r in rows.items() if r["flags"]}
    assert flagged == {"MP_1x4x1_8_1536x16": "spread 10.0 % > 5 %",
                       "2D_2x2x1_16_1536x16": "spread 13.4 % > 5 %"}
    assert all(r["problems"] == 3 for k, r in rows.items() if r["flags"])
    rows = _rows(_cli("summarize", GPT, "--format", "json", "--all-columns",
                      "--spread-threshold", "15%"))
    assert not any(r["flags"] for r in rows.values())
    bad = _cli("summarize", GPT, "--spread-threshold", "5")
    assert bad.returncode == 2 and "--spread-threshold" in bad.stderr


def test_compare_names_flagged_cases(eager_and_compiled):
    proc = _cli("compare", RN50 / "1n1g", eager_and_compiled / "1n1g", "--format", "json")
    rows = {r["case_key"]: r for r in json.loads(proc.stdout)}
    # NEW's runs 1 and 2 are BASE's logs: left out; run 3 is BASE's run 3 stating another
    # configuration: counted as another campaign's run, and named. The one run counted
    # differs from no other counted run: no configuration flag (the copies' was theirs)
    assert rows["PyTorch/resnet50/fp32/b128/1n1g"]["flags"] == \
        "new: 2 of 3 run(s) copies of base runs, left out; new: 1 of 3 run(s) alike to base " \
        "runs' logs (copies stating another setting, or the logs cannot tell them from " \
        "reruns made deterministic), counted"
    assert rows["PyTorch/resnet50/amp/b256/1n1g"]["flags"] == ""
    assert "1 case(s) flagged: PyTorch/resnet50/fp32/b128/1n1g (new: 2 of 3" in proc.stderr


def test_real_published_logs_of_8_and_32_gpus_in_one_case_are_flagged():
    # PaddlePaddle's published DLE PyTorch logs: nodes unknown, so both fall in one case
    proc = _cli("summarize", REAL, "--format", "json", "--all-columns")
    (row,) = json.loads(proc.stdout)
    assert row["flags"] == ("configuration differs in data, dynamic_loss_scale, "
                            "gather_checkpoints, gpu_affinity, jit, model.fused_se, … 5 more; "
                            "spread 67.6 % > 5 %")


def test_where_and_when_a_run_ran_is_no_difference_of_configuration():
    a = {"hostname": "node1", "master_port": "29500", "seed": "1", "log_dir": "/a",
         "save": "/ckpt/a", "exp_name": "rn50_1", "compile": "False", "lr": "0.1"}
    b = {"hostname": "node2", "master_port": "29501", "seed": "2", "log_dir": "/b",
         "save": "/ckpt/b", "exp_name": "rn50_2", "compile": "False", "lr": "0.1"}
    assert case_stats.differing_keys([a, b]) == {}
    assert case_stats.differing_keys([a, {**b, "lr": "0.2"}]) == {"lr": ["0.1", "0.2"]}
    assert case_stats.differing_keys([a, {}]) == {}  # a run that states nothing: unknown
    assert case_stats.differing_keys([a, {k: v for k, v in a.items() if k != "lr"}]) == {
        "lr": ["0.1", case_stats.ABSENT]}


def test_a_report_lists_the_case_problems(tmp_path):
    # the data a report is built from (also what `dlperf report` hands its notebook)
    from analysis.report import prepared

    data = prepared.compute(GPT)
    prepared.save(data, tmp_path / "data")
    problems = prepared.load(tmp_path / "data").result.problems
    spread = problems[problems["kind"] == "wide_spread"]
    assert sorted(spread["run_id"]) == ["PyTorch/gpt/bf16/b8/1n4g/2D_2x2x1_16_1536x16",
                                        "PyTorch/gpt/bf16/b8/1n4g/MP_1x4x1_8_1536x16"]
    assert data.summary.loc[data.summary["flags"] != "", "problems"].tolist() == [3, 3]


def test_megatron_runs_of_other_arguments_are_not_repeats(tmp_path):
    # Megatron-DeepSpeed experiments of other settings under one case name
    src = ROOT / "tests" / "data" / "megatron" / "iterations" / "1n4g" / "gpt_b1_amp_1.log"
    folder = tmp_path / "1n4g"
    folder.mkdir()
    text = src.read_text()
    dump_end = "-------------------- end of arguments"
    for i, (recompute, port) in enumerate((("False", 6000), ("True", 6001), ("False", 6002)), 1):
        extra = (f"  checkpoint_activations .......................... {recompute}\n"
                 f"  master_port ..................................... {port}\n")
        (folder / f"gpt_b1_amp_{i}.log").write_text(text.replace(dump_end, extra + dump_end))
    proc = _cli("summarize", tmp_path, "--format", "json", "--all-columns")
    (row,) = json.loads(proc.stdout)
    assert row["flags"] == "configuration differs in checkpoint_activations"
    assert "checkpoint_activations: False (1n4g/gpt_b1_amp_1), True (1n4g/gpt_b1_amp_2), " \
           "False (1n4g/gpt_b1_amp_3)" in proc.stderr


@pytest.mark.parametrize("record", ["{", "[" * 100_000 + "]" * 100_000])
def test_an_unreadable_environment_record_is_named_not_skipped(tmp_path, record):
    (tmp_path / "1n1g").mkdir()
    log = tmp_path / "1n1g" / "resnet50_b128_fp32_1.log"
    shutil.copy(RN50 / "1n1g" / log.name, log)
    (tmp_path / "1n1g" / "resnet50_b128_fp32_1.node0.env.json").write_text(record)
    proc = _cli("summarize", tmp_path, "--no-cache")
    assert proc.returncode == 0
    assert "resnet50_b128_fp32_1.node0.env.json: unreadable_file: an environment record" \
        in proc.stderr
    assert _cli("summarize", tmp_path, "--strict", "--no-cache").returncode == 3


def test_host_lists_and_addresses_are_where_a_run_ran():
    # TF's worker_hosts, OneFlow's node_ips and their kin name places, singular or plural
    a = {"worker_hosts": "node1:2222", "node_ips": "['192.168.1.11']", "host_ip": "10.0.0.1",
         "gpu_ids": "0,1", "wandb_exp_name": "r1", "num_nodes": "1", "lr": "0.1"}
    b = {"worker_hosts": "node2:2222", "node_ips": "['192.168.1.12']", "host_ip": "10.0.0.2",
         "gpu_ids": "2,3", "wandb_exp_name": "r2", "num_nodes": "1", "lr": "0.1"}
    assert case_stats.differing_keys([a, b]) == {}
    # a real difference beside them is still one; so is a count of places
    assert case_stats.differing_keys([a, {**b, "lr": "0.2"}]) == {"lr": ["0.1", "0.2"]}
    for count in ("num_nodes", "num_hosts", "gpus_per_node", "nproc_per_node"):
        assert case_stats.differing_keys([{**a, count: "1"}, {**b, count: "2"}]) == {
            count: ["1", "2"]}


def _tf2_repeats(folder: Path, hosts: bool) -> Path:
    """The real DLPerf TF2 1n1g repeats 1-3, each stating `worker_hosts` as a launcher on
    node N writes it when `hosts`."""
    import gzip

    src = ROOT / "tests" / "data" / "real" / "dlperf_tf2" / "1n1g"
    (folder / "1n1g").mkdir(parents=True)
    for i in (1, 2, 3):
        gz = src / f"rn50_b128_fp32_{i}.log.gz"
        text = gzip.open(gz, "rt").read() if gz.exists() else \
            (src / f"rn50_b128_fp32_{i}.log").read_text()
        assert "'worker_hosts': None" in text
        if hosts:
            text = text.replace("'worker_hosts': None", f"'worker_hosts': 'node{i}:2222'")
        (folder / "1n1g" / f"rn50_b128_fp32_{i}.log").write_text(text)
    return folder


def test_repeats_on_other_hosts_pass_strict(tmp_path):
    proc = _cli("summarize", _tf2_repeats(tmp_path / "L", True), "--no-cache", "--strict")
    assert proc.returncode == 0, proc.stderr
    assert "configuration differs" not in proc.stdout + proc.stderr


def test_a_copy_with_its_hosts_restated_is_not_re_measured(tmp_path):
    proc = _cli("compare", _tf2_repeats(tmp_path / "ctl", False),
                _tf2_repeats(tmp_path / "L", True), "--format", "json")
    assert proc.returncode == 4, proc.stderr
    assert {r["verdict"] for r in json.loads(proc.stdout)} == {"not re-measured"}
