"""Synthetic benchmark campaigns for the report tests and benchmarks: OneFlow CNN logs in the
DLPerf layout (`<N>n<G>g/r50_b<bsz>_<precision>_<repeat>.log`) with known throughputs.

Each run's training lines carry unix timestamps spaced so that the DLPerf rule (global batch x
100 / (ts(iter 120) - ts(iter 20))) returns exactly `throughput(...)` for that repeat.
"""

from __future__ import annotations

import json
from pathlib import Path

PER_DEVICE = {("fp32", 128): 380.0, ("amp", 256): 1250.0}
T0 = 1597933900.0


def throughput(precision: str, bsz: int, nodes: int, gpus: int, repeat: int) -> float:
    """Samples/s of one repeat: per-device speed x devices x efficiency x repeat factor."""
    devices = nodes * gpus
    eff = 0.97 ** (devices.bit_length() - 1)
    factor = 1.0 + (0.004, -0.002, 0.0, 0.003, -0.005, 0.001, -0.001)[(repeat - 1) % 7]
    return round(PER_DEVICE[(precision, bsz)] * devices * eff * factor, 3)


def oneflow_cnn_log(nodes: int, gpus: int, bsz: int, precision: str, repeat: int,
                    iterations: int = 200, every: int = 10, extra_line: str = "") -> str:
    thr = throughput(precision, bsz, nodes, gpus, repeat)
    gbs = bsz * nodes * gpus
    lines = ["=" * 66, f"Running resnet50: num_gpu_per_node = {gpus}, num_nodes = {nodes}.",
             "=" * 66, f"batch_size_per_device = {bsz}", f"num_nodes = {nodes}",
             f"gpu_num_per_node = {gpus}", "model = resnet50",
             f"use_fp16 = {precision == 'amp'}", "-" * 66, "Time stamp: 2020-08-21-23:13:45"]
    t = T0 + 30.0 * repeat
    for it in range(every, iterations + 1, every):
        # the first interval includes start-up: 4x slower
        t += every * gbs / thr * (4.0 if it == every else 1.0)
        if it == 10:
            lines.append("utilization.gpu [%], memory.used [MiB]")
            lines += [f"100 %, {11800 + 10 * g + (bsz // 2)} MiB" for g in range(gpus)]
        lines.append(f"train: epoch 0, iter {it}, loss: {6.9 - it / 100:.6f}, top_1: 0.000000, "
                     f"top_k: 0.000000, samples/s: {thr:.3f} {t:.7f}")
        if extra_line and it == 50:
            lines.append(extra_line)
    return "\n".join(lines) + "\n"


def write_campaign(root: Path, configs=((1, 1), (1, 8), (2, 8)), repeats: int = 3,
                   groups=(("fp32", 128),), extra_line: str = "") -> list[Path]:
    """Write one log per (config, group, repeat) under `root`; returns the paths."""
    paths = []
    for nodes, gpus in configs:
        d = root / f"{nodes}n{gpus}g"
        d.mkdir(parents=True, exist_ok=True)
        for precision, bsz in groups:
            for rep in range(1, repeats + 1):
                p = d / f"r50_b{bsz}_{precision}_{rep}.log"
                p.write_text(oneflow_cnn_log(nodes, gpus, bsz, precision, rep,
                                             extra_line=extra_line if rep == 1 else ""))
                paths.append(p)
    return paths


def write_markers(root: Path, paths: list[Path]) -> None:
    """campaign.yaml and one `<stem>.done` marker per run with its per-node commands."""
    (root / "campaign.yaml").write_text(
        "name: synthetic-r50\nframework: OneFlow\nrepeats: 3\nbackend: ssh\n"
        "command: python3 of_cnn_train_val.py --batch_size_per_device={bsz}\n")
    for p in paths:
        nodes = int(p.parent.name.split("n")[0])
        cmds = {f"node{i}": f"python3 of_cnn_train_val.py --num_nodes={nodes} --node_rank={i} "
                            f"--log={p.name}" for i in range(nodes)}
        p.with_suffix(".done").write_text(json.dumps({"rc": 0, "commands": cmds}))


def env_record(hostname: str, topology_text: str | None = None, gpu: str = "Tesla V100-SXM2-16GB",
               count: int = 8) -> dict:
    """An environment record shaped like `analysis.env.record.EnvRecord.to_dict()`."""
    gpus = [{"index": i, "name": gpu, "uuid": f"GPU-{i:04d}", "pci_bus_id": f"0000:{i:02x}:00.0",
             "memory_total_mib": 16160, "driver_version": "440.33.01", "power_limit_w": 300.0,
             "max_sm_clock_mhz": 1530, "compute_cap": "7.0"} for i in range(count)]
    return {
        "schema_version": 1, "captured_at": "2020-08-08T10:00:00+00:00", "capture_seconds": 1.2,
        "hostname": hostname, "gpu_model": gpu, "gpu_count": count, "gpu_memory_mib": 16160,
        "gpus": gpus, "driver_version": "440.33.01", "cuda_version": "10.2",
        "cuda_toolkit": "10.2.89", "cudnn_version": "7.6.5", "nccl_version": "2.7.3",
        "frameworks": {"oneflow": {"version": "0.3.1"}}, "python": {"version": "3.7.9"},
        "cpu": {"model": "Intel(R) Xeon(R) Gold 5118 CPU @ 2.30GHz", "logical_cpus": 48,
                "numa_nodes": 2},
        "memory": {"total_mib": 393216},
        "os": {"pretty_name": "Ubuntu 16.04.4 LTS"}, "kernel": "4.4.0-116-generic",
        "machine": "x86_64",
        "infiniband": [{"device": "mlx5_0", "ports": [{"port": 1, "rate": "100 Gb/sec (4X EDR)",
                                                      "link_layer": "InfiniBand"}]}],
        "topology_text": topology_text, "topology": None, "env": {}, "sources": {}, "absent": {},
    }
