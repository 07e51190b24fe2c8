"""Collecting runs: multi-node logs, sidecars, and bad files next to good ones."""

import gzip

from analysis.collect import parse_paths

BANNER = ("*****************************************\n"
          "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default\n"
          "*****************************************\n")


def _dll(n_iter=150, bsz=4, world=4):
    lines = [f"DLL 2026-11-21 10:00:00.000001 - PARAMETER arch : resnet50  batch_size : {bsz}  "
             f"precision : amp  world_size : {world} "]
    for i in range(1, n_iter + 1):
        lines.append(f"DLL 2026-11-21 10:00:{i // 10:02d}.{(i % 10) * 100000:06d} - Epoch: 0 "
                     f"Iteration: {i}  train.loss : 6.9  train.total_ips : 160.0 img/s")
    return "\n".join(lines) + "\n"


def test_other_nodes_logs_join_the_run_without_problems(tmp_path):
    d = tmp_path / "2n2g"
    d.mkdir()
    (d / "resnet50_b4_amp_1.log").write_text(_dll())
    (d / "resnet50_b4_amp_1.node1.log").write_text(BANNER)
    (d / "resnet50_b4_amp_1.node1.gpu.csv").write_text(
        "timestamp, index, memory.used [MiB], memory.total [MiB], utilization.gpu [%]\n"
        "2026/11/21 10:00:01.000, 0, 1234 MiB, 143771 MiB, 99 %\n")
    r = parse_paths([tmp_path])
    assert r.problems.empty, r.problems
    [run] = r.runs.itertuples()
    assert (run.run_id, run.num_nodes, run.gpus_per_node, run.global_batch_size) == (
        "2n2g/resnet50_b4_amp_1", 2, 2, 16)
    assert run.source.endswith("resnet50_b4_amp_1.log")
    mem = r.observations[r.observations["metric"] == "memory_used"]
    assert mem["value"].tolist() == [1234.0]
    assert str(mem["source"].iloc[0]).endswith(".node1.gpu.csv")


def test_a_single_node_log_without_training_lines_is_flagged(tmp_path):
    d = tmp_path / "1n1g"
    d.mkdir()
    (d / "resnet50_b4_amp_1.log").write_text(BANNER)
    r = parse_paths([tmp_path])
    assert set(r.problems["kind"]) & {"unknown_format", "no_training_lines"}
    assert r.runs["problems"].iloc[0] != ""


def test_a_corrupt_file_never_hides_the_good_ones(tmp_path):
    d = tmp_path / "1n1g"
    d.mkdir()
    (d / "resnet50_b4_amp_1.log").write_text(_dll(world=1))
    (d / "resnet50_b4_amp_2.log.gz").write_bytes(gzip.compress(_dll(world=1).encode())[:40])
    (d / "resnet50_b4_amp_3.log").write_bytes(b"\x00\xff" * 100)
    r = parse_paths([tmp_path])
    by_run = dict(zip(r.runs["run_id"], r.runs["problems"]))
    assert by_run["1n1g/resnet50_b4_amp_1"] == ""
    assert "unreadable_file" in by_run["1n1g/resnet50_b4_amp_2"]
    assert by_run["1n1g/resnet50_b4_amp_3"] != ""
    good = r.observations[r.observations["run_id"] == "1n1g/resnet50_b4_amp_1"]
    assert good["step"].max() == 150
