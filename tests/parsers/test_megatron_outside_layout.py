"""Megatron-LM logs outside the DLPerf layout (issue 9, item 20): what the log says is used,
what it cannot say is stated with --meta or a meta file.

The lines are written with the format strings of Megatron-LM's ``training_log``
(megatron/training/training.py): `` iteration {:8d}/{:8d} |``, `` consumed samples: {:12d} |``,
`` elapsed time per iteration (ms): {:.1f} |``, `` learning rate: {:.6E} |``,
`` global batch size: {:5d} |``, `` lm loss: {:.6E} |``, `` loss scale: {:.1f} |``,
`` grad norm: {:.3f} |``, `` number of skipped iterations: {:3d} |``,
`` number of nan iterations: {:3d} |``.
"""

from __future__ import annotations

import subprocess

import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput

GBS = 1024
MS = 139113.4  # the line: 1024 / 139.1134 s = 7.36 samples/s


#: training_log's format strings, in its order, with what each is given here.
FIELDS = (" iteration {:8d}/{:8d} |", " consumed samples: {:12d} |",
          " elapsed time per iteration (ms): {:.1f} |", " learning rate: {:.6E} |",
          " global batch size: {:5d} |", " lm loss: {:.6E} |", " loss scale: {:.1f} |",
          " grad norm: {:.3f} |", " number of skipped iterations: {:3d} |",
          " number of nan iterations: {:3d} |")


def training_line(iteration: int, ms: float = MS, gbs: int = GBS, train_iters: int = 250000) -> str:
    values = ((iteration, train_iters), (iteration * gbs,), (ms,), (1.5e-4,), (gbs,), (2.345,),
              (1.0,), (0.321,), (0,), (0,))
    return "".join(fmt.format(*v) for fmt, v in zip(FIELDS, values, strict=True)) + "\n"


def _pasted(path, first=201, n=6):
    path.write_text("".join(training_line(first + i) for i in range(n)))
    return path


def test_pasted_lines_in_train_log_give_the_throughput_they_support(tmp_path):
    log = _pasted(tmp_path / "train.log")
    assert log.read_text().startswith(
        " iteration      201/  250000 | consumed samples:       205824 | elapsed time per "
        "iteration (ms): 139113.4 |")
    r = parse_paths([log])
    [run] = run_throughput(r).itertuples()
    assert run.family == "megatron" and run.global_batch_size == GBS
    assert run.throughput == pytest.approx(GBS / (MS / 1000)) == pytest.approx(7.36, abs=0.005)
    [missing] = r.problems[r.problems["kind"] == "missing_metadata"]["reason"]
    assert missing.startswith("unknown num_nodes, gpus_per_node: state it: --meta")
    assert "batch_size_per_device" not in missing.split(":")[0]  # the global batch is known


def test_meta_states_what_the_log_cannot(tmp_path):
    log = _pasted(tmp_path / "slurm-123456.out")
    r = parse_paths([log], meta={"num_nodes": "2", "gpus_per_node": 8, "model": "GPT2"})
    run = r.runs.iloc[0]
    assert (run["num_nodes"], run["gpus_per_node"], run["num_devices"], run["model"]) == (
        2, 8, 16, "gpt")
    assert "missing_metadata" not in set(r.problems["kind"])


def test_a_meta_file_beside_the_log_and_the_log_winning_over_it(tmp_path):
    _pasted(tmp_path / "slurm-77.out")
    (tmp_path / "dlperf-meta.yaml").write_text("num_nodes: 4\ngpus_per_node: 8\nmodel: gpt\n")
    (tmp_path / "slurm-77.meta.yaml").write_text("num_nodes: 2\nglobal_batch_size: 512\n")
    r = parse_paths([tmp_path])
    run = r.runs.iloc[0]
    assert (run["num_nodes"], run["gpus_per_node"], run["global_batch_size"]) == (2, 8, GBS)
    [conflict] = r.problems.itertuples()
    assert conflict.kind == "metadata_conflict" and conflict.line == 6
    assert conflict.reason.startswith(f"{tmp_path / 'slurm-77.meta.yaml'} says "
                                      "global_batch_size=512, the log says global_batch_size=1024")


def test_world_size_and_model_from_the_argument_dump(tmp_path):
    dump = ("------------------------ arguments ------------------------\n"
            "  world_size ...................................... 16\n"
            "-------------------- end of arguments ---------------------\n"
            "> building GPT model ...\n")
    log = tmp_path / "slurm-9.out"
    log.write_text(dump + "".join(training_line(10 * i) for i in range(1, 6)))
    r = parse_paths([log], meta={"gpus_per_node": 8})
    run = r.runs.iloc[0]
    assert (run["model"], run["num_nodes"], run["gpus_per_node"], run["num_devices"]) == (
        "gpt", 2, 8, 16)
    assert r.problems.empty, r.problems


def test_cli_meta_and_its_usage_errors(tmp_path, dlperf_exe):
    log = _pasted(tmp_path / "train.log")

    def summarize(*extra):
        return subprocess.run([dlperf_exe, "summarize", str(log), "--format", "csv",
                               "--all-columns", *extra], capture_output=True, text=True,
                              timeout=120)

    done = summarize("--meta", "num_nodes=2,gpus_per_node=8", "--meta", "model=gpt", "--strict")
    assert done.returncode == 0, done.stderr
    header, row = done.stdout.strip().splitlines()
    got = dict(zip(header.split(","), row.split(",")))
    assert (got["num_nodes"], got["gpus_per_node"], got["num_devices"]) == ("2", "8", "16")
    assert float(got["throughput_median"]) == pytest.approx(7.36, abs=0.005)
    for bad, named in (("gpus=8", "unknown key 'gpus'"), ("num_nodes=two", "num_nodes must be"),
                       ("num_nodes=0", "num_nodes must be"), ("precision=fp8", "precision must"),
                       ("num_nodes", "expected KEY=VALUE")):
        done = summarize("--meta", bad)
        assert done.returncode == 2, (bad, done.stderr)
        assert named in done.stderr and "Traceback" not in done.stderr


def test_summarize_of_pasted_lines_without_meta_gives_the_throughput(tmp_path):
    """No model, no devices stated: the case row still carries what the log supports."""
    from analysis.stats import summarize

    r = parse_paths([_pasted(tmp_path / "train.log")])
    [row] = summarize(r).itertuples()
    assert row.throughput_median == pytest.approx(7.36, abs=0.005)
    assert row.latency_ms == pytest.approx(MS)
