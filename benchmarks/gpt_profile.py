#!/usr/bin/env python3
"""Where one GPU's time goes in the built-in GPT: torch.profiler over a few optimizer steps.

    python benchmarks/gpt_profile.py --out prof.txt -- --micro-batch-size 16 --compile

Runs ``workloads.gpt``'s trainer in this process (one GPU, no torchrun) with the workload
options after ``--``, warms up (compilation), profiles ``--steps`` steps and writes the
GPU time by kind of kernel (matmul, attention, Triton-fused elementwise, optimizer, other)
per step, then torch's ``key_averages`` table sorted by GPU time. Only the standard library
and torch are needed.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KINDS = (("attention", re.compile(r"flash|fmha|attention|cudnn", re.I)),
         ("optimizer", re.compile(r"adam|multi_tensor|foreach", re.I)),
         ("matmul", re.compile(r"gemm|cutlass|xmma|nvjet|sm90_|cublas", re.I)),
         ("triton (fused elementwise)", re.compile(r"^triton", re.I)))


def kind_of(kernel: str) -> str:
    return next((k for k, rx in KINDS if rx.search(kernel)), "other")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--warmup", type=int, default=4)
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("workload", nargs=argparse.REMAINDER, help="-- workloads.gpt options")
    args = p.parse_args()
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    from workloads.gpt.options import check, parse_args
    from workloads.gpt.parallel import make_layout
    from workloads.gpt.train import Trainer, choose_attention

    wargs = parse_args([a for a in args.workload if a != "--"])
    problem = check(wargs, 1)
    if problem:
        print(f"gpt_profile: {problem}", file=sys.stderr)
        return 2
    device = torch.device("cuda")
    choose_attention(wargs.sdpa_backend)
    trainer = Trainer(wargs, make_layout(1, 1, 1, device), device)
    for _ in range(args.warmup):
        trainer.step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(args.steps):
            trainer.step()
        torch.cuda.synchronize()
    wall = (time.perf_counter() - t0) / args.steps
    by_kind: dict[str, float] = defaultdict(float)
    table = prof.key_averages()
    for e in table:
        if e.device_type == DeviceType.CUDA:
            by_kind[kind_of(e.key)] += e.self_device_time_total / 1e3 / args.steps
    busy = sum(by_kind.values())
    lines = [f"workload: {' '.join(args.workload)}",
             f"wall per step (profiled): {wall * 1e3:.1f} ms; GPU kernels: {busy:.1f} ms"]
    lines += [f"  {k:<28} {v:9.1f} ms  {v / busy:6.1%}"
              for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1])]
    lines += ["", table.table(sort_by="self_device_time_total", row_limit=45, max_name_column_width=90)]
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:8]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
