#!/usr/bin/env python3
"""Where the GPU's time goes in the built-in GPT: torch.profiler over a few optimizer steps.

    python benchmarks/gpt_profile.py --out prof.txt -- --micro-batch-size 16 --compile
    torchrun --standalone --nproc_per_node 2 benchmarks/gpt_profile.py --out dp2.txt \\
        -- --micro-batch-size 8 --compile

Runs ``workloads.gpt``'s trainer in this process (alone, or one rank under torchrun) with the
workload options after ``--``, warms up (compilation), profiles ``--steps`` steps and writes
(rank 0) the GPU time by kind of kernel (matmul, attention, Triton-fused elementwise,
optimizer, communication, other) per step, the timeline figures of :func:`timeline`
(communication hidden under compute or exposed, GPU idle time), then torch's
``key_averages`` table sorted by GPU time. ``--no-grad-sync`` runs the steps under DDP's
``no_sync`` (no gradient all-reduce: the data-parallel step without communication, for
comparison). Only the standard library and torch are needed.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KINDS = (("communication", re.compile(r"nccl", re.I)),
         ("attention", re.compile(r"flash|fmha|attention|cudnn", re.I)),
         ("optimizer", re.compile(r"adam|multi_tensor|foreach", re.I)),
         ("matmul", re.compile(r"gemm|cutlass|xmma|nvjet|sm90_|cublas", re.I)),
         ("triton (fused elementwise)", re.compile(r"^triton", re.I)))


def kind_of(kernel: str) -> str:
    return next((k for k, rx in KINDS if rx.search(kernel)), "other")


def union(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Sorted, disjoint intervals covering the same points as `intervals`."""
    merged: list[list[float]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(a, b) for a, b in merged]


def covered(intervals: list[tuple[float, float]]) -> float:
    return sum(b - a for a, b in intervals)


def overlap(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> float:
    """Length covered by both of two disjoint sorted interval lists."""
    total, i, j = 0.0, 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(0.0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def timeline(kernels: list[tuple[str, float, float]]) -> dict[str, float]:
    """Figures (same unit as the times) of kernels given as (name, start, end): `span` first
    start to last end, `busy` time any kernel runs, `idle` = span - busy, `compute` time a
    non-communication kernel runs, `comm` time a communication (NCCL) kernel runs,
    `comm_hidden` communication under compute, `comm_exposed` communication alone."""
    comm = union([(s, e) for n, s, e in kernels if kind_of(n) == "communication"])
    compute = union([(s, e) for n, s, e in kernels if kind_of(n) != "communication"])
    busy = union(comm + compute)
    span = (max(e for _, _, e in kernels) - min(s for _, s, _ in kernels)) if kernels else 0.0
    hidden = overlap(comm, compute)
    return {"span": span, "busy": covered(busy), "idle": span - covered(busy),
            "compute": covered(compute), "comm": covered(comm), "comm_hidden": hidden,
            "comm_exposed": covered(comm) - hidden}


def kernel_spans(events, device_type) -> list[tuple[str, float, float]]:
    """(name, start, end) of the profiler's GPU kernels; the GPU-side spans of annotations
    (DDP's forward, ``nccl:all_reduce``, the optimizer step) are left out: counted as well,
    they would count their kernels' time twice."""
    return [(e.name, e.time_range.start, e.time_range.end) for e in events
            if e.device_type == device_type and not getattr(e, "is_user_annotation", False)]


def _setup(wargs):
    """(trainer, rank, device) for this process: alone, or one rank under torchrun."""
    import torch

    from workloads import dist as wdist
    from workloads.dist import DistEnv
    from workloads.gpt.options import check
    from workloads.gpt.parallel import make_layout
    from workloads.gpt.train import Trainer, choose_attention, limit_nccl

    denv = DistEnv.from_env()
    problem = check(wargs, denv.world_size)
    if problem:
        raise SystemExit(f"gpt_profile: {problem}")
    device = wdist.resolve_device("cuda", denv)
    choose_attention(wargs.sdpa_backend)
    limit_nccl(wargs, "nccl")
    wdist.init(denv, "nccl", device)
    layout = make_layout(wargs.data_parallel_size, wargs.tensor_model_parallel_size,
                         wargs.pipeline_model_parallel_size, device)
    return Trainer(wargs, layout, device), denv.rank, torch.device(device)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--warmup", type=int, default=4)
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--no-grad-sync", action="store_true",
                   help="profile the steps under DDP's no_sync (no gradient all-reduce)")
    p.add_argument("workload", nargs=argparse.REMAINDER, help="-- workloads.gpt options")
    args = p.parse_args()
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    from workloads import dist as wdist
    from workloads.gpt.options import parse_args

    wargs = parse_args([a for a in args.workload if a != "--"])
    trainer, rank, _device = _setup(wargs)
    try:
        if args.no_grad_sync and hasattr(trainer.wrapped, "no_sync"):
            trainer._sync_context = lambda last: trainer.wrapped.no_sync()
        for _ in range(args.warmup):
            trainer.step()
        torch.cuda.synchronize()
        if torch.distributed.is_initialized():
            torch.distributed.barrier()
        t0 = time.perf_counter()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(args.steps):
                trainer.step()
            torch.cuda.synchronize()
        wall = (time.perf_counter() - t0) / args.steps
    finally:
        with contextlib.suppress(Exception):
            wdist.finish()
    if rank:
        return 0
    kernels = kernel_spans(prof.events(), DeviceType.CUDA)
    by_kind: dict[str, float] = defaultdict(float)
    for name, start, end in kernels:
        by_kind[kind_of(name)] += (end - start) / 1e3 / args.steps
    line = timeline(kernels)
    table = prof.key_averages()
    busy = sum(by_kind.values())
    lines = [f"workload: {' '.join(args.workload)}"
             + ("  [no gradient all-reduce]" if args.no_grad_sync else ""),
             f"wall per step (profiled): {wall * 1e3:.1f} ms; GPU kernels: {busy:.1f} ms"]
    lines += [f"  {k:<28} {v:9.1f} ms  {v / busy:6.1%}"
              for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1])]
    lines += ["timeline per step (ms): "
              + ", ".join(f"{k} {v / 1e3 / args.steps:.2f}" for k, v in line.items())]
    lines += ["", table.table(sort_by="self_device_time_total", row_limit=45,
                              max_name_column_width=90)]
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:10]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
