#!/usr/bin/env python3
"""Check and time the built-in workload on a GPU machine; write one JSON file.

    python benchmarks/workload_gpu.py --out results/workload_gpu.json

(a) architecture: our resnet50 against torchvision.models.resnet50(weights=None): parameter
    count, ordered parameter and buffer shapes, conv/linear layers of a traced forward, MACs
    at 224, and the same outputs once torchvision's weights are loaded into ours (CPU, fp32);
(b) the bf16 (and TF32) matmul rate, 8192^3 on random data, timed with CUDA events;
(c) ``python -m workloads.resnet`` runs as subprocesses (exactly what a campaign runs):
    amp bsz 256 and fp32 bsz 128, eager and ``--compile``, plus amp bsz 256 on all GPUs
    under torchrun when there are several; throughput from the printed DLL timestamps of
    iterations 25..125 (the DLPerf window), model FLOP utilisation =
    6 x MACs x img/s / measured bf16 matmul rate.

Prints PASS/FAIL lines and a table; the JSON holds everything (all DLL lines of every run).
Exit 0 when every check passed and every run that was started succeeded; 1 otherwise; the
JSON is written either way. Runs that would not fit the time budget (``--budget-s``) are
skipped and listed. NVLink multicast stays off in every child (NCCL_NVLS_ENABLE=0, ...).

Only the standard library and torch (torchvision for (a)) are imported here, and the
workload children need only torch: ``workloads.resnet`` never imports ``analysis``, so the
suite's other dependencies may be missing on the GPU machine.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
import traceback
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                "NVSHMEM_DISABLE_NVLS": "1"}
#: name -> (precision, batch size, compile, all GPUs)
CASES = {
    "amp-eager": ("amp", 256, False, False),
    "fp32-eager": ("fp32", 128, False, False),
    "amp-eager-multi": ("amp", 256, False, True),
    "amp-compile": ("amp", 256, True, False),
    "fp32-compile": ("fp32", 128, True, False),
}
DEFAULT_CASES = ",".join(CASES)
#: seconds a case needs at least to be worth starting (start-up + compile + iterations)
MIN_SECONDS = {False: 45.0, True: 120.0}
SMOKE_ARGS = ["--image-size", "32", "--width", "8", "--device", "cpu"]

_DLL = re.compile(r"^DLL (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?) - (.*?)\s*$")
_ITER = re.compile(r"^Epoch: \d+ Iteration: (\d+)  train\.loss : (\S+)  "
                   r"train\.total_ips : (\S+) img/s$")
_SUMMARY = re.compile(r"^Summary: train\.loss : (\S+)  train\.total_ips : (\S+) img/s"
                      r"(?: train\.memory_max_allocated : (\S+) MiB)?$")


def log(msg: str) -> None:
    print(msg, flush=True)


# --- DLL output of the workload ---------------------------------------------------------------

def _when(text: str) -> float:
    fmt = "%Y-%m-%d %H:%M:%S.%f" if "." in text else "%Y-%m-%d %H:%M:%S"
    return datetime.strptime(text, fmt).timestamp()


def parse_dll(text: str) -> dict:
    """The workload's stdout → {"parameters": {..}, "iterations": {i: (t, loss, ips)},
    "summary": {...} or None, "dll_lines": [...]}."""
    params: dict[str, str] = {}
    iters: dict[int, tuple[float, float, float]] = {}
    summary = None
    lines = []
    for raw in text.splitlines():
        m = _DLL.match(raw)
        if not m:
            continue
        lines.append(raw)
        t, rest = _when(m.group(1)), m.group(2)
        if rest.startswith("PARAMETER "):
            for pair in rest[len("PARAMETER "):].split("  "):
                key, sep, value = pair.partition(" : ")
                if sep:
                    params[key.strip()] = value.strip()
        elif (mi := _ITER.match(rest)):
            iters[int(mi.group(1))] = (t, float(mi.group(2)), float(mi.group(3)))
        elif (ms := _SUMMARY.match(rest)):
            summary = {"time": t, "loss": float(ms.group(1)), "total_ips": float(ms.group(2)),
                       "memory_max_allocated_mib": float(ms.group(3)) if ms.group(3) else None}
    return {"parameters": params, "iterations": iters, "summary": summary, "dll_lines": lines}


def window(iterations: dict, start: int, end: int) -> tuple[int, int] | None:
    """The (start, end) iterations to time between: the asked window, shortened to the last
    printed iteration; None when fewer than two usable iterations were printed."""
    if not iterations:
        return None
    last = max(iterations)
    end = min(end, last)
    if start >= end:
        start = max(1, end // 5)
    if start >= end or start not in iterations or end not in iterations:
        return None
    return start, end


def window_throughput(iterations: dict, global_batch: int, start: int, end: int) -> dict | None:
    """global batch x (end - start) / (t_end - t_start) from the printed timestamps."""
    w = window(iterations, start, end)
    if w is None:
        return None
    s, e = w
    dt = iterations[e][0] - iterations[s][0]
    if dt <= 0:
        return None
    return {"start": s, "end": e, "seconds": dt, "img_per_s": global_batch * (e - s) / dt}


# --- (a) architecture -------------------------------------------------------------------------

def compare_models(ours, ref, image_size: int = 224, expected_params: int | None = 25_557_032,
                   expected_macs: float | None = 4.09e9, batch: int = 2) -> list[dict]:
    """Checks of `ours` against `ref` (torchvision's resnet50 on the GPU machine):
    list of {"check", "ok", "detail"}."""
    import torch

    from workloads.resnet import resnet as R

    checks: list[dict] = []

    def check(name: str, ok: bool, detail: str) -> None:
        checks.append({"check": name, "ok": bool(ok), "detail": detail})

    n_ours, n_ref = R.count_parameters(ours), R.count_parameters(ref)
    check("parameter_count", n_ours == n_ref and (expected_params in (None, n_ours)),
          f"ours {n_ours:,}, reference {n_ref:,}, expected {expected_params}")
    check("analytic_parameter_count",
          R.analytic_parameters(ours.width, ours.num_classes) == n_ref,
          f"analytic {R.analytic_parameters(ours.width, ours.num_classes):,}")
    ps_o, ps_r = R.parameter_shapes(ours), R.parameter_shapes(ref)
    diff = next((i for i, (a, b) in enumerate(zip(ps_o, ps_r, strict=False)) if a != b), None)
    check("parameter_shapes_in_order", ps_o == ps_r,
          f"{len(ps_o)} vs {len(ps_r)} tensors" + (
              f"; first difference at {diff}: {ps_o[diff]} vs {ps_r[diff]}" if diff is not None else ""))
    bs_o = [(n, tuple(b.shape)) for n, b in ours.named_buffers()]
    bs_r = [(n, tuple(b.shape)) for n, b in ref.named_buffers()]
    check("buffer_shapes_in_order", bs_o == bs_r, f"{len(bs_o)} vs {len(bs_r)} buffers")
    tl_o, tl_r = R.traced_layers(ours, image_size), R.traced_layers(ref, image_size)
    keys = ("name", "weight_shape", "stride", "out_shape", "macs")
    same = [{k: r[k] for k in keys} for r in tl_o] == [{k: r[k] for k in keys} for r in tl_r]
    check("traced_layers_in_order", same, f"{len(tl_o)} vs {len(tl_r)} conv/linear layers")
    macs_a = R.analytic_macs(ours.width, ours.num_classes, image_size)
    macs_r = sum(r["macs"] for r in tl_r)
    ok = macs_a == macs_r and (expected_macs is None or abs(macs_a / expected_macs - 1) < 0.01)
    check("macs", ok, f"analytic {macs_a:,} vs reference traced {macs_r:,} at {image_size}px")
    try:
        ours.load_state_dict(ref.state_dict(), strict=True)
        loaded = True
        check("load_reference_state_dict", True, "strict=True")
    except RuntimeError as exc:
        loaded = False
        check("load_reference_state_dict", False, str(exc)[:500])
    if loaded:
        gen = torch.Generator().manual_seed(0)
        x = torch.randn(batch, 3, image_size, image_size, generator=gen)
        for mode in ("eval", "train"):
            getattr(ours, mode)()
            getattr(ref, mode)()
            with torch.no_grad():
                a, b = ours(x), ref(x)
            rel = float((a - b).norm() / b.norm().clamp_min(1e-30))
            check(f"same_outputs_{mode}", math.isfinite(rel) and rel < 1e-5,
                  f"relative difference {rel:.2e} (CPU fp32, batch {batch})")
        ours.eval()
        ref.eval()
    return checks


def architecture_section(smoke: bool) -> dict:
    from workloads.resnet import resnet as R

    out: dict = {"checks": []}
    if smoke:  # no torchvision needed: our model against a second copy of itself
        out["reference"] = "workloads.resnet.resnet (smoke)"
        out["checks"] = compare_models(R.resnet50(width=8), R.resnet50(width=8), image_size=64,
                                       expected_params=None, expected_macs=None)
        return out
    try:
        import torchvision

        ref = torchvision.models.resnet50(weights=None)
        out["reference"] = f"torchvision {torchvision.__version__} models.resnet50(weights=None)"
    except Exception as exc:  # an import or construction failure is a result, not a crash
        out["checks"] = [{"check": "torchvision", "ok": False,
                          "detail": f"{type(exc).__name__}: {exc}"}]
        return out
    out["checks"] = compare_models(R.resnet50(), ref)
    return out


# --- (b) matmul rate --------------------------------------------------------------------------

def matmul_section(n: int = 8192, warmup: int = 3, reps: int = 10) -> dict:
    import torch

    if not torch.cuda.is_available():
        return {"skipped": "no CUDA"}
    out: dict = {"n": n, "warmup": warmup, "reps": reps}
    for label, dtype in (("bf16", torch.bfloat16), ("tf32", torch.float32)):
        a = torch.randn(n, n, device="cuda", dtype=dtype)
        b = torch.randn(n, n, device="cuda", dtype=dtype)
        c = torch.empty(n, n, device="cuda", dtype=dtype)
        prev = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision("high")  # TF32 for the fp32 product
        try:
            for _ in range(warmup):
                torch.matmul(a, b, out=c)
            times = []
            for _ in range(reps):
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record()
                torch.matmul(a, b, out=c)
                e1.record()
                e1.synchronize()
                times.append(e0.elapsed_time(e1) / 1e3)
        finally:
            torch.set_float32_matmul_precision(prev)
        if not bool(torch.isfinite(c).all()):
            out[label] = {"error": "non-finite product"}
            continue
        flops = 2.0 * n**3
        out[label] = {"tflops_median": flops / statistics.median(times) / 1e12,
                      "tflops_best": flops / min(times) / 1e12,
                      "ms": [round(t * 1e3, 4) for t in times]}
        del a, b, c
        torch.cuda.empty_cache()
    return out


# --- (c) workload runs ------------------------------------------------------------------------

def child_env(pythonpath: str) -> dict:
    env = dict(os.environ)
    env.update(NO_MULTICAST)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONPATH"] = pythonpath + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def workload_command(python: str, case: str, args: argparse.Namespace, ngpus: int) -> list[str]:
    precision, batch, compiled, multi = CASES[case]
    wl = ["-m", "workloads.resnet", "--precision", precision, "--batch-size", str(batch),
          "--iterations", str(args.iterations), "--print-freq", "1"]
    if compiled:
        wl += ["--compile", "--compile-mode", args.compile_mode]
    if args.smoke:
        wl += SMOKE_ARGS + ["--batch-size", "4"]
    wl += args.workload_arg
    if multi:
        return [python, "-m", "torch.distributed.run", "--standalone",
                f"--nproc_per_node={ngpus}", *wl]
    return [python, *wl]


def run_case(case: str, cmd: list[str], cwd: Path, env: dict, timeout: float,
             args: argparse.Namespace, peak: dict) -> dict:
    from workloads.resnet.resnet import analytic_macs, train_flops_per_image

    res: dict = {"case": case, "command": cmd, "timeout_s": round(timeout, 1)}
    t0 = time.time()
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout)
        stdout, stderr, rc = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        def text(b):
            return b.decode("utf-8", "replace") if isinstance(b, bytes) else (b or "")
        stdout, stderr, rc = text(exc.stdout), text(exc.stderr), None
        res["timed_out"] = True
    res["wall_s"] = round(time.time() - t0, 2)
    res["returncode"] = rc
    parsed = parse_dll(stdout)
    p = parsed["parameters"]
    res["parameters"] = p
    res["dll_lines"] = parsed["dll_lines"]
    res["stderr_tail"] = stderr.splitlines()[-40:]
    res["summary"] = parsed["summary"]
    res["iterations_printed"] = len(parsed["iterations"])
    gb = int(p.get("global_batch_size", 0) or 0)
    tp = window_throughput(parsed["iterations"], gb, args.window_start, args.window_end) if gb else None
    res["window"] = tp
    res["ok"] = rc == 0 and tp is not None
    if tp:
        world = int(p.get("world_size", 1))
        macs = int(p.get("macs_per_image") or analytic_macs())
        flops = train_flops_per_image(macs) * tp["img_per_s"]
        res["img_per_s"] = tp["img_per_s"]
        res["img_per_s_per_gpu"] = tp["img_per_s"] / world
        res["achieved_tflops"] = flops / 1e12
        for label in ("bf16", "tf32"):
            rate = (peak.get(label) or {}).get("tflops_median")
            if rate:
                res[f"mfu_vs_{label}_matmul"] = flops / world / (rate * 1e12)
    return res


def plan_cases(names: list[str], ngpus: int, args: argparse.Namespace) -> list[tuple[str, str]]:
    """(case, reason to skip or '') in run order."""
    out = []
    for name in names:
        _, _, compiled, multi = CASES[name]
        if compiled and args.skip_compile:
            out.append((name, "--skip-compile"))
        elif multi and ngpus < 2:
            out.append((name, f"needs 2+ GPUs, {ngpus} visible"))
        else:
            out.append((name, ""))
    return out


# --- main -------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--out", required=True, type=Path, help="JSON file to write")
    p.add_argument("--iterations", type=int, default=150, help="iterations per workload run")
    p.add_argument("--window-start", type=int, default=25)
    p.add_argument("--window-end", type=int, default=125)
    p.add_argument("--cases", default=DEFAULT_CASES,
                   help=f"comma-separated, in run order; known: {DEFAULT_CASES}")
    p.add_argument("--skip-compile", action="store_true", help="leave out the --compile cases")
    p.add_argument("--compile-mode", default="default",
                   choices=("default", "reduce-overhead", "max-autotune",
                            "max-autotune-no-cudagraphs"))
    p.add_argument("--skip-arch", action="store_true")
    p.add_argument("--skip-matmul", action="store_true")
    p.add_argument("--budget-s", type=float, default=225.0,
                   help="wall-clock budget of the whole script; cases that would not fit are skipped")
    p.add_argument("--python", default=sys.executable, help="interpreter of the workload runs")
    p.add_argument("--smoke", action="store_true",
                   help="CPU plumbing test: tiny model on the CPU, no torchvision")
    p.add_argument("--workload-arg", action="append", default=[],
                   help="extra option for every workload run (repeat; use --workload-arg=--x)")
    return p


def environment() -> dict:
    import torch

    env = {"python": platform.python_version(), "torch": torch.__version__,
           "cuda": torch.version.cuda, "hostname": platform.node(),
           "cuda_available": torch.cuda.is_available(),
           "gpus": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]}
    if shutil.which("nvidia-smi"):
        q = subprocess.run(["nvidia-smi", "--query-gpu=index,name,driver_version,memory.total,"
                            "clocks.max.sm,power.limit,temperature.gpu", "--format=csv"],
                           capture_output=True, text=True, timeout=60)
        env["nvidia_smi"] = q.stdout.strip().splitlines()
    return env


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    started = time.time()
    names = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in names if c not in CASES]
    if unknown:
        print(f"unknown case(s) {unknown}; known: {DEFAULT_CASES}", file=sys.stderr)
        return 2
    if args.iterations < 2:
        print("--iterations must be >= 2", file=sys.stderr)
        return 2
    result: dict = {"started": datetime.now().isoformat(timespec="seconds"),
                    "argv": sys.argv if argv is None else argv}
    ok = True

    def save() -> None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1, default=str))

    try:
        import torch

        result["environment"] = environment()
        ngpus = 0 if args.smoke else torch.cuda.device_count()
        if not args.smoke and ngpus == 0:
            result["error"] = "no CUDA device visible (use --smoke for a CPU plumbing test)"
            log(f"FAIL {result['error']}")
            save()
            return 1

        if not args.skip_arch:
            arch = architecture_section(args.smoke)
            result["architecture"] = arch
            for c in arch["checks"]:
                log(f"{'PASS' if c['ok'] else 'FAIL'} arch.{c['check']}: {c['detail']}")
                ok &= c["ok"]
            save()

        peak: dict = {}
        if not args.skip_matmul and not args.smoke:
            peak = matmul_section()
            result["matmul"] = peak
            for label in ("bf16", "tf32"):
                r = peak.get(label) or {}
                if "tflops_median" in r:
                    log(f"INFO matmul.{label}: {r['tflops_median']:.1f} TFLOP/s median "
                        f"(best {r['tflops_best']:.1f}), 8192^3")
            save()

        env = child_env(str(ROOT))
        runs, skipped = [], []
        result["runs"], result["skipped"] = runs, skipped
        for name, reason in plan_cases(names, ngpus, args):
            compiled = CASES[name][2]
            left = args.budget_s - (time.time() - started)
            if not reason and left < MIN_SECONDS[compiled] * (0.2 if args.smoke else 1.0):
                reason = f"budget: {left:.0f} s left of --budget-s {args.budget_s:.0f}"
            if reason:
                skipped.append({"case": name, "reason": reason})
                log(f"SKIP run.{name}: {reason}")
                continue
            cmd = workload_command(args.python, name, args, ngpus)
            log(f"RUN  {name}: {' '.join(cmd[1:])}")
            res = run_case(name, cmd, ROOT, env, max(left, 10.0), args, peak)
            runs.append(res)
            ok &= res["ok"]
            if res["ok"]:
                log(f"{'PASS'} run.{name}: {res['img_per_s']:.1f} img/s "
                    f"(iterations {res['window']['start']}..{res['window']['end']}, "
                    f"{res['wall_s']:.0f} s wall)")
            else:
                why_failed = "timed out" if res.get("timed_out") else f"exit {res['returncode']}"
                log(f"FAIL run.{name}: {why_failed}; stderr tail:\n  "
                    + "\n  ".join(res["stderr_tail"][-8:]))
            save()
        result["scaling"] = scaling(runs)
    except Exception as exc:  # record what broke; the JSON is still written
        ok = False
        result["error"] = f"{type(exc).__name__}: {exc}"
        result["traceback"] = traceback.format_exc()
        log(f"FAIL script: {result['error']}")
    result["ok"] = ok
    result["elapsed_s"] = round(time.time() - started, 1)
    save()
    print_table(result)
    log(f"{'PASS' if ok else 'FAIL'} overall; JSON: {args.out} ({result['elapsed_s']} s)")
    return 0 if ok else 1


def scaling(runs: list[dict]) -> dict | None:
    """amp-eager on N GPUs against N x amp-eager on one."""
    by = {r["case"]: r for r in runs if r.get("ok")}
    one, multi = by.get("amp-eager"), by.get("amp-eager-multi")
    if not (one and multi):
        return None
    n = int(multi["parameters"].get("world_size", 1))
    return {"gpus": n, "img_per_s_1": one["img_per_s"], "img_per_s_n": multi["img_per_s"],
            "speedup": multi["img_per_s"] / one["img_per_s"],
            "efficiency": multi["img_per_s"] / (n * one["img_per_s"])}


def print_table(result: dict) -> None:
    rows = result.get("runs") or []
    if not rows:
        return
    log(f"{'case':<18}{'img/s':>10}{'per GPU':>10}{'TFLOP/s':>9}{'MFU(bf16)':>10}"
        f"{'mem MiB':>9}{'wall s':>8}")
    for r in rows:
        mem = (r.get("summary") or {}).get("memory_max_allocated_mib")
        mfu = r.get("mfu_vs_bf16_matmul")
        log(f"{r['case']:<18}{r.get('img_per_s', float('nan')):>10.1f}"
            f"{r.get('img_per_s_per_gpu', float('nan')):>10.1f}"
            f"{r.get('achieved_tflops', float('nan')):>9.1f}"
            f"{(mfu * 100 if mfu else float('nan')):>9.1f}%"
            f"{(mem if mem is not None else float('nan')):>9.0f}{r.get('wall_s', 0):>8.0f}")
    s = result.get("scaling")
    if s:
        log(f"scaling: {s['gpus']} GPUs speedup {s['speedup']:.2f}, "
            f"efficiency {s['efficiency'] * 100:.1f}%")


if __name__ == "__main__":
    sys.exit(main())
