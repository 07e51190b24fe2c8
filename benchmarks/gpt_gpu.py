#!/usr/bin/env python3
"""Time the built-in GPT workload on a GPU machine: one log per case and a JSON summary.

    python benchmarks/gpt_gpu.py --out results/ --cases eager8,compile8,compile32x2-bp

A case is a name of CASES followed by any technique suffixes of TECHNIQUES (``-bp`` bf16
weights with fp32 master weights, ``-lc`` chunked logit layer + loss, ``-cg`` CUDA graphs,
``-mat`` max-autotune, ``-flash`` / ``-cudnn`` attention kernel; for DDP ``-gr16`` bf16
gradient all-reduce, ``-sg`` static graph, ``-b100`` / ``-b400`` bucket MiB, ``-c4`` /
``-m32`` etc. at most / at least that many NCCL thread blocks).

Each case runs ``python -m torch.distributed.run --standalone --nproc_per_node N -m
workloads.gpt ...`` (exactly what a campaign runs) at hidden 1536 x 16 layers, seq 2048,
unless the case says otherwise; its figure is the median printed latency of the iterations
after ``--skip`` (start-up and compilation), with model TFLOP/s per GPU by
``workloads.gpt.flops.FORMULA``. The bf16 matmul rate (8192^3, CUDA events) is measured first
for reference. NVLink multicast stays off in every child. Only the standard library and torch
are needed. ``benchmarks/gpt_profile.py`` shows where one case's GPU time goes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
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
for _mb, _gb in ((48, 96), (64, 64), (64, 128)):
    CASES[f"compile{_mb}x{_gb // _mb}"] = (
        1, ["--micro-batch-size", str(_mb), "--global-batch-size", str(_gb), "--compile"])
#: technique -> workload arguments, added to a case by a suffix ("compile32x2-bp-lc"): bf16
#: weights with fp32 master weights, chunked logit layer and loss, max-autotune compilation,
#: CUDA graphs (compile mode reduce-overhead), the flash or cuDNN attention kernel, and for
#: DDP: the gradient all-reduce in bf16, a static graph, 100 or 400 MiB buckets, at most
#: 2/4/8/16 or at least 16/24/32 thread blocks (SMs) per NCCL collective
TECHNIQUES = {"bp": ["--param-dtype", "bf16"], "lc": ["--loss-chunk-tokens", "16384"],
              "mat": ["--compile-mode", "max-autotune-no-cudagraphs"],
              "cg": ["--compile-mode", "reduce-overhead"],
              "flash": ["--sdpa-backend", "flash"], "cudnn": ["--sdpa-backend", "cudnn"],
              "gr16": ["--grad-reduce-dtype", "bf16"], "sg": ["--ddp-static-graph"],
              "b100": ["--ddp-bucket-mb", "100"], "b400": ["--ddp-bucket-mb", "400"],
              **{f"c{n}": ["--nccl-max-ctas", str(n)] for n in (2, 4, 8, 16)},
              **{f"m{n}": ["--nccl-min-ctas", str(n)] for n in (16, 24, 32)}}
#: environment variables that change what is measured (recorded in the summary)
TUNING_ENV = ("TORCHINDUCTOR_", "PYTORCH_CUDA_ALLOC_CONF", "CUDA_VISIBLE_DEVICES", "NCCL_")
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


def case_argv(name: str) -> tuple[int, list[str]]:
    """(processes, workload arguments) of a case: a name of CASES, then any technique
    suffixes of TECHNIQUES."""
    parts = name.split("-")
    for cut in range(len(parts), 0, -1):
        base, suffixes = "-".join(parts[:cut]), parts[cut:]
        if base in CASES and all(s in TECHNIQUES for s in suffixes):
            nproc, extra = CASES[base]
            return nproc, extra + [a for s in suffixes for a in TECHNIQUES[s]]
    raise SystemExit(f"gpt_gpu.py: unknown case {name!r}")


def run_command(argv: list[str], env: dict, timeout_s: float | None) -> tuple[int | None, str]:
    """(exit status, stdout + stderr) of a command in its own process group; past
    `timeout_s` the whole group (torchrun and its workers) is killed and the status is None."""
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
        return proc.returncode, stdout + stderr
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        return None, stdout + stderr


def run_case(name: str, iters: int, skip: int, out: Path, timeout_s: float | None) -> dict:
    nproc, extra = case_argv(name)
    argv = [sys.executable, "-m", "torch.distributed.run", "--standalone",
            "--nproc_per_node", str(nproc), "-m", "workloads.gpt", *BASE, *extra,
            "--train-iters", str(iters)]
    env = {**os.environ, **NO_MULTICAST, "PYTHONPATH": str(ROOT)}
    t0 = time.time()
    rc, text = run_command(argv, env, timeout_s)
    (out / f"{name}.log").write_text(text)
    rows = [[c.strip() for c in m.group(2).split("|")] for m in _ROW.finditer(text)]
    kept = rows[skip:]
    result = {"case": name, "argv": argv[3:], "rc": rc, "wall_s": round(time.time() - t0, 1),
              "rows": len(rows)}
    if rc is None:
        result["timed_out_after_s"] = timeout_s
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
    p.add_argument("--case-timeout", type=float, default=None,
                   help="seconds a case may run (compilation included); past them it is "
                        "killed with its workers and recorded as timed out")
    args = p.parse_args()
    for name in args.cases.split(","):
        case_argv(name)
    args.out.mkdir(parents=True, exist_ok=True)
    summary = {"matmul_bf16_tflops": round(matmul_tflops(), 1),
               "env": {k: v for k, v in sorted(os.environ.items()) if k.startswith(TUNING_ENV)},
               "cases": []}
    print(f"bf16 matmul 8192^3: {summary['matmul_bf16_tflops']} TFLOP/s", flush=True)
    for name in args.cases.split(","):
        r = run_case(name, args.iters, args.skip, args.out, args.case_timeout)
        summary["cases"].append(r)
        print(json.dumps({k: v for k, v in r.items() if k != "argv"}), flush=True)
        (args.out / "gpt_gpu.json").write_text(json.dumps(summary, indent=1))
    return 0 if all(c["rc"] == 0 for c in summary["cases"]) else 1


if __name__ == "__main__":
    sys.exit(main())
