"""Parse speed: `dlperf parse` + `summarize` against an extract-script style baseline.

Generates a corpus of NVIDIA DLE PyTorch DLLogger logs and OneFlow CNN logs in the DLPerf
layout (default ≥ 1 GB in ≥ 10,000 files), then times, in this one process (one core):

- baseline: per file `readlines()` then `re.findall` per line, timestamps with
  `datetime.strptime`, the DLPerf rule per file — the style of the DLPerf extract scripts;
- suite: `analysis.parse_paths` (full tidy frame of every metric) + `run_throughput` +
  `summarize` with the `dlperf` method.

It checks that both give the same per-run throughput and prints MB/s, files/s and the ratio.
Usage: python benchmarks/parse_speed.py [--files 10000] [--iterations 1000] [--dir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

CONFIGS = [(1, 1), (1, 2), (1, 4), (1, 8), (2, 8), (4, 8)]


# --- corpus ----------------------------------------------------------------------------
def _dll_log(rng, bsz: int, n: int, g: int, iters: int) -> str:
    world = n * g
    t = dt.datetime(2026, 11, 21, 10, 0, 0) + dt.timedelta(seconds=float(rng.integers(0, 86400)))
    per_it = bsz * world / (800.0 * world * rng.uniform(0.9, 1.0))
    out = [
        "=> creating model '('resnet50', 'fanin', 1000)'",
        f"DLL {t:%Y-%m-%d %H:%M:%S.%f} - PARAMETER data : /data/image  data_backend : dali-cpu  "
        f"arch : resnet50  batch_size : {bsz}  amp : True  world_size : {world}  "
        f"memory_format : nhwc  print_freq : 1 ",
        "RUNNING EPOCHS FROM 0 TO 1",
    ]
    durations = rng.normal(per_it, per_it * 0.02, iters)
    durations[:3] *= (30.0, 4.0, 2.0)
    loss = 7.0
    for i in range(1, iters + 1):
        t += dt.timedelta(seconds=float(durations[i - 1]))
        loss -= 0.001
        ips = bsz * world / durations[i - 1]
        stamp = f"{t:%Y-%m-%d %H:%M:%S}" if t.microsecond == 0 else f"{t:%Y-%m-%d %H:%M:%S.%f}"
        out.append(f"DLL {stamp} - Epoch: 0 Iteration: {i}  train.loss : {loss:.5f}  "
                   f"train.total_ips : {ips:.2f} img/s")
        if i % 97 == 0:
            out.append("[W reducer.cpp:1300] Warning: Grad strides do not match bucket view strides.")
    return "\n".join(out) + "\n"


def _oneflow_log(rng, bsz: int, n: int, g: int, iters: int) -> str:
    world = n * g
    t = 1.6e9 + float(rng.integers(0, 10**7))
    per_it = bsz * world / (380.0 * world * rng.uniform(0.9, 1.0))
    out = ["=" * 74, f"Running resnet50: num_gpu_per_node = {g}, num_nodes = {n}.", "=" * 74,
           f"batch_size_per_device = {bsz}", f"gpu_num_per_node = {g}", "loss_print_every_n_iter = 1",
           "model = resnet50", f"num_nodes = {n}", "use_fp16 = False", "-" * 74,
           "Time stamp: 2020-08-21-23:13:45"]
    loss = 6.9
    for i in range(1, iters + 1):
        d = per_it * (20.0 if i == 1 else rng.normal(1.0, 0.02))
        t += d
        loss = max(loss - 0.005, 1.0)
        out.append(f"train: epoch 0, iter {i}, loss: {loss:.6f}, top_1: 0.000000, top_k: 0.000000, "
                   f"samples/s: {bsz * world / d:.3f} {t:.7f}")
    return "\n".join(out) + "\n"


def make_corpus(root: Path, files: int, iterations: int, seed: int = 0) -> int:
    """Write `files` logs under `root`; returns total bytes."""
    rng = np.random.default_rng(seed)
    total = 0
    for k in range(files):
        n, g = CONFIGS[k % len(CONFIGS)]
        if k % 5 < 3:
            sub, text = root / "pytorch" / f"{n}n{g}g", _dll_log(rng, 256, n, g, iterations)
            name = f"r50_b256_amp_{k // len(CONFIGS) + 1}.log"
        else:
            sub, text = root / "oneflow" / f"{n}n{g}g", _oneflow_log(rng, 128, n, g, iterations)
            name = f"resnet50_b128_fp32_{k // len(CONFIGS) + 1}.log"
        sub.mkdir(parents=True, exist_ok=True)
        data = text.encode()
        (sub / name).write_bytes(data)
        total += len(data)
    return total


# --- baseline: the extract-script style ---------------------------------------------------
_DLL_LINE = re.compile(r"DLL (\d+-\d+-\d+ \d+:\d+:\d+(?:\.\d+)?) - Epoch: \d+ Iteration: (\d+)\s+train\.loss")
_OF_LINE = re.compile(r"train: epoch \d+, iter (\d+), .*samples/s: [\d.]+ ([\d.]+)")
_CFG = re.compile(r"(\d+)n(\d+)g")
_BSZ = re.compile(r"_b(\d+)_")


def _strptime(s: str) -> float:
    fmt = "%Y-%m-%d %H:%M:%S.%f" if "." in s else "%Y-%m-%d %H:%M:%S"
    return dt.datetime.strptime(s, fmt).replace(tzinfo=dt.timezone.utc).timestamp()


def baseline(root: Path) -> dict[str, float]:
    """Per-run throughput the way the DLPerf extract scripts compute it."""
    out = {}
    for dirpath, _, names in os.walk(root):
        for name in sorted(names):
            path = os.path.join(dirpath, name)
            n, g = map(int, _CFG.search(dirpath).groups())
            gbs = int(_BSZ.search(name).group(1)) * n * g
            with open(path) as fh:
                lines = fh.readlines()
            if "oneflow" in path:
                ts = {}
                for line in lines:
                    for it, stamp in re.findall(_OF_LINE, line):
                        ts[int(it)] = float(stamp)
                thr = gbs * 100 / (ts[120] - ts[20])
            else:
                kept = []
                for line in lines:
                    for stamp, it in re.findall(_DLL_LINE, line):
                        if int(it) > 5:
                            kept.append(_strptime(stamp))
                thr = round(gbs * 100 / (kept[119] - kept[19]), 2)
            out[os.path.relpath(path, root)[: -len(".log")]] = thr
    return out


def suite(root: Path):
    from analysis import parse_paths
    from analysis.stats import run_throughput, summarize

    result = parse_paths([root])
    runs = run_throughput(result, "dlperf")
    table = summarize(result, "dlperf", runs=runs)
    return result, runs, table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--dir", type=Path, default=None, help="corpus folder (default: a temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the corpus afterwards")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args()

    root = args.dir or Path(tempfile.mkdtemp(prefix="dlperf-corpus-"))
    try:
        t0 = time.perf_counter()
        size = make_corpus(root, args.files, args.iterations)
        gen = time.perf_counter() - t0
        mb = size / 1e6
        print(f"corpus: {args.files} files, {mb:.0f} MB, generated in {gen:.1f} s ({root})")

        t0 = time.perf_counter()
        ref = baseline(root)
        t_base = time.perf_counter() - t0

        t0 = time.perf_counter()
        result, runs, table = suite(root)
        t_suite = time.perf_counter() - t0

        got = dict(zip(runs["run_id"], runs["throughput"]))
        mismatch = [k for k, v in ref.items() if not np.isclose(got.get(k, np.nan), v, rtol=1e-9, atol=0.006)]
        figures = {
            "files": args.files, "megabytes": round(mb, 1),
            "observations": int(len(result.observations)), "cases": int(len(table)),
            "baseline_s": round(t_base, 2), "suite_s": round(t_suite, 2),
            "baseline_mb_per_s": round(mb / t_base, 1), "suite_mb_per_s": round(mb / t_suite, 1),
            "baseline_files_per_s": round(args.files / t_base, 1),
            "suite_files_per_s": round(args.files / t_suite, 1),
            "speedup_vs_baseline": round(t_base / t_suite, 2),
            "runs_compared": len(ref), "mismatches": len(mismatch),
        }
        for k, v in figures.items():
            print(f"{k:>22}: {v}")
        if mismatch:
            print("first mismatches:", [(k, ref[k], got.get(k)) for k in mismatch[:5]])
        if args.json:
            args.json.write_text(json.dumps(figures, indent=2))
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
