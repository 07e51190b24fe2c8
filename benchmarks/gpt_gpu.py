#!/usr/bin/env python3
"""Time the built-in GPT workload on a GPU machine: one log per case and a JSON summary.

    python benchmarks/gpt_gpu.py --out results/ --cases eager8,compile8,compile16

Each case runs ``python -m torch.distributed.run --standalone --nproc_per_node N -m
workloads.gpt ...`` (exactly what a campaign runs) at hidden 1536 x 16 layers, seq 2048,
unless the case says otherwise; its figure is the median printed latency of the iterations
after ``--skip`` (start-up and compilation), with model TFLOP/s per GPU by
``workloads.gpt.flops.FORMULA``. The bf16 matmul rate (8192^3, CUDA events) is measured first
for reference. NVLink multicast stays off in every child. Only the standard library and torch
are needed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                "NVSHMEM_DISABLE_NVLS": "1"}
BASE = ["--hidden-size", "1536", "--num-layers", "16", "--num-attention-heads", "16",
        "--seq-length", "2048"]
#: name -> (processes, extra workload arguments)
CASES = {
    "eager8": (1, ["--micro-batch-size", "8"]),
    "compile8": (1, ["--micro-batch-size", "8", "--compile"]),
    "compile16": (1, ["--micro-batch-size", "16", "--compile"]),
    "compile4": (1, ["--micro-batch-size", "4", "--compile"]),
    "compile8-ac": (1, ["--micro-batch-size", "8", "--compile", "--activation-checkpointing"]),
    "dp2-compile8": (2, ["--micro-batch-size", "8", "--compile"]),
    "tp2-compile8": (2, ["--micro-batch-size", "8", "--compile",
                         "--tensor-model-parallel-size", "2"]),
    "tp2-eager8": (2, ["--micro-batch-size", "8", "--tensor-model-parallel-size", "2"]),
    "pp2-compile4x8": (2, ["--micro-batch-size", "4", "--global-batch-size", "32", "--compile",
                           "--pipeline-model-parallel-size", "2"]),
    "compile16x4": (1, ["--micro-batch-size", "16", "--global-batch-size", "64", "--compile"]),
    "compile32x2": (1, ["--micro-batch-size", "32", "--global-batch-size", "64", "--compile"]),
    "dp2-compile16x2": (2, ["--micro-batch-size", "16", "--global-batch-size", "64",
                            "--compile"]),
    "pp2-1f1b-compile8x8": (2, ["--micro-batch-size", "8", "--global-batch-size", "64",
                                "--compile", "--pipeline-model-parallel-size", "2"]),
    "pp2-gpipe-compile8x8": (2, ["--micro-batch-size", "8", "--global-batch-size", "64",
                                 "--compile", "--pipeline-model-parallel-size", "2",
                                 "--pipeline-schedule", "gpipe"]),
    "cudnn-compile8": (1, ["--micro-batch-size", "8", "--compile", "--sdpa-backend", "cudnn"]),
    "cudnn-compile16x4": (1, ["--micro-batch-size", "16", "--global-batch-size", "64",
                              "--compile", "--sdpa-backend", "cudnn"]),
    "cudnn-compile32x2": (1, ["--micro-batch-size", "32", "--global-batch-size", "64",
                              "--compile", "--sdpa-backend", "cudnn"]),
    "flash-compile8": (1, ["--micro-batch-size", "8", "--compile", "--sdpa-backend", "flash"]),
    "pp2-eager4x8": (2, ["--micro-batch-size", "4", "--global-batch-size", "32",
                         "--pipeline-model-parallel-size", "2"]),
}
_ROW = re.compile(r"^\|\s*(\d+)\s*\|(.*)\|\s*$", re.M)


def matmul_tflops() -> float:
    import torch

    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        a @ b
    end.record()
    torch.cuda.synchronize()
    return 2 * 8192**3 * 10 / (start.elapsed_time(end) / 1e3) / 1e12


def run_case(name: str, iters: int, skip: int, out: Path) -> dict:
    nproc, extra = CASES[name]
    argv = [sys.executable, "-m", "torch.distributed.run", "--standalone",
            "--nproc_per_node", str(nproc), "-m", "workloads.gpt", *BASE, *extra,
            "--train-iters", str(iters)]
    env = {**os.environ, **NO_MULTICAST, "PYTHONPATH": str(ROOT)}
    t0 = time.time()
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    text = proc.stdout + proc.stderr
    (out / f"{name}.log").write_text(text)
    rows = [[c.strip() for c in m.group(2).split("|")] for m in _ROW.finditer(proc.stdout)]
    kept = rows[skip:]
    result = {"case": name, "argv": argv[3:], "rc": proc.returncode,
              "wall_s": round(time.time() - t0, 1), "rows": len(rows)}
    if kept:
        result["latency_ms"] = statistics.median(float(r[3]) for r in kept) * 1e3
        result["tflops_per_gpu"] = statistics.median(float(r[5]) for r in kept)
        result["max_allocated_mib"] = max(float(r[6]) for r in kept)
        result["final_loss"] = float(rows[-1][4])
    else:
        result["tail"] = text[-1500:]
    return result


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--cases", default="eager8,compile8")
    p.add_argument("--iters", type=int, default=15)
    p.add_argument("--skip", type=int, default=5, help="printed rows left out of the median")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    summary = {"matmul_bf16_tflops": round(matmul_tflops(), 1), "cases": []}
    print(f"bf16 matmul 8192^3: {summary['matmul_bf16_tflops']} TFLOP/s", flush=True)
    for name in args.cases.split(","):
        r = run_case(name, args.iters, args.skip, args.out)
        summary["cases"].append(r)
        print(json.dumps({k: v for k, v in r.items() if k != "argv"}), flush=True)
        (args.out / "gpt_gpu.json").write_text(json.dumps(summary, indent=1))
    return 0 if all(c["rc"] == 0 for c in summary["cases"]) else 1


if __name__ == "__main__":
    sys.exit(main())
