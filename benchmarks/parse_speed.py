"""Parse speed: `dlperf summarize` against DLPerf's real extract script, on real line shapes.

Corpus: the DLPerf layout (``<N>n<G>g/r50_b256_amp_<repeat>.log``, configurations 1n1g to
4n8g) of `--files` logs of `--iterations` iterations, each built from a real published log:
NVIDIA DeepLearningExamples PyTorch ResNet-50, ``tests/data/real/paddle_perf_pytorch_resnet/
pytorch_gpu8_amp_bs256.txt`` (DLE's current line shape: ``train.compute_ips``, ``None``
units, ``train.grad_scale``). Its start-up lines, PARAMETER dump (world size set to the
configuration's), training lines and closing Epoch/Summary lines are kept as printed; the
training lines are its 63 real lines taken in turn, their iteration numbered on and their
datetimes advanced by the log's own gaps between iterations (rotated and scaled by a few %
per log and by about 1 % per line, so runs differ; a datetime on a whole second moves 1 µs:
DLPerf's script cannot read the fraction-less form DLLogger prints then).

Baseline: DLPerf's own ``NVIDIADeepLearningExamples/PyTorch/resnet50v1.5/
extract_pytorch_logs_time.py``, run unmodified from a checkout of Oneflow-Inc/DLPerf
(``--dlperf DIR`` or ``$DLPERF_REPO``; ``git clone https://github.com/Oneflow-Inc/DLPerf``),
as its own process.

Measured, interleaved over `--rounds` rounds, each a whole process (imports included, page
cache warm): the script; ``dlperf summarize --method dlperf --format csv --no-cache``
(cold); the same without ``--no-cache`` on the cache a previous call filled (warm). Wall
time CPU seconds and peak RSS (``/usr/bin/time``) of each; every round's figures are kept.
Checks: every run's figure from `parse_paths` + `run_throughput` (what `summarize` computes)
equals the script's, and every case median of each `summarize` equals the script's.

Usage: python benchmarks/parse_speed.py --dlperf DIR [--files 3000] [--iterations 1000]
       [--rounds 3] [--dir CORPUS] [--json OUT]
"""

from __future__ import annotations

import argparse
import ast
import csv
import datetime as dt
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

TREE = Path(__file__).resolve().parents[1]
REAL_LOG = TREE / "tests/data/real/paddle_perf_pytorch_resnet/pytorch_gpu8_amp_bs256.txt"
SCRIPT = "NVIDIADeepLearningExamples/PyTorch/resnet50v1.5/extract_pytorch_logs_time.py"
CONFIGS = [(1, 1), (1, 2), (1, 4), (1, 8), (2, 8), (4, 8)]
BATCH = 256
_STAMP = re.compile(r"^(DLL )(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{6})?)( - )")
_ITERATION = re.compile(r"Iteration: \d+ ")
_IPS = re.compile(r"(_ips : )([0-9.]+)")


# --- corpus ------------------------------------------------------------------------------
def _real_parts() -> tuple[list[str], list[str], list[str], np.ndarray]:
    """The real log as (lines before its first training line, training lines, lines after
    them) and the microseconds between its consecutive training lines."""
    lines = REAL_LOG.read_text().splitlines()
    train = [i for i, ln in enumerate(lines) if " Iteration: " in ln and ln.startswith("DLL ")]
    first, last = train[0], train[-1]
    stamps = [dt.datetime.fromisoformat(_STAMP.match(lines[i]).group(2)) for i in train]
    gaps = np.array([(b - a) // dt.timedelta(microseconds=1) for a, b in zip(stamps, stamps[1:])])
    return lines[:first], lines[first:last + 1], lines[last + 1:], gaps


def _stamp(t: dt.datetime) -> str:
    return t.isoformat(sep=" ")  # DLLogger's form: no fraction when it is 0


def _retime(line: str, t: dt.datetime) -> str:
    m = _STAMP.match(line)
    return line if m is None else f"{m.group(1)}{_stamp(t)}{m.group(3)}{line[m.end():]}"


def _log(parts, rng, world: int, iterations: int) -> str:
    head, train, tail, gaps = parts
    t = dt.datetime(2026, 11, 21, 10) + dt.timedelta(seconds=int(rng.integers(0, 86400)),
                                                     microseconds=int(rng.integers(0, 10**6)))
    scale = rng.uniform(0.97, 1.03)
    # each training line keeps the gap before it in the real log, so its printed rate stays
    # the rate its timestamps give. The real log's first interval (start-up) opens every log
    # and its last (a 5 s final iteration) is left out: repeated every 60 lines, a one-off
    # stall would become the logs' steady state. A random start varies the logs.
    steady = len(train) - 3  # lines 2 .. len - 2
    start = int(rng.integers(0, steady))
    out = [_retime(ln, t).replace("world_size : 8 ", f"world_size : {world} ") for ln in head]
    for i in range(1, iterations + 1):
        src = 0 if i == 1 else 2 + (start + i - 2) % steady
        own = scale * rng.lognormal(0, 0.01)  # each line its own time: logs that start at
        # the same line would otherwise be one log stretched, i.e. copies of one another
        t += dt.timedelta(microseconds=int(gaps[max(src - 1, 0)] * own))
        if t.microsecond == 0:
            t += dt.timedelta(microseconds=1)
        line = _ITERATION.sub(f"Iteration: {i} ", train[src], count=1)
        line = _IPS.sub(lambda m, own=own: f"{m.group(1)}{float(m.group(2)) * world / 8 / own:.2f}",
                       line)
        out.append(_retime(line, t))
    out += [_retime(ln, t) for ln in tail]
    return "\n".join(out) + "\n"


def make_corpus(root: Path, files: int, iterations: int, seed: int = 0) -> int:
    """Write `files` logs under `root`; returns their bytes."""
    parts, rng, total = _real_parts(), np.random.default_rng(seed), 0
    for k in range(files):
        n, g = CONFIGS[k % len(CONFIGS)]
        folder = root / f"{n}n{g}g"
        folder.mkdir(parents=True, exist_ok=True)
        data = _log(parts, rng, n * g, iterations).encode()
        (folder / f"r50_b{BATCH}_amp_{k // len(CONFIGS) + 1}.log").write_bytes(data)
        total += len(data)
    return total


# --- measuring -----------------------------------------------------------------------------
def run_process(cmd: list[str], env: dict | None = None, cwd: Path | None = None
                ) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds of it and its children, peak RSS in MB, stdout) of one
    whole process (CPU and peak by /usr/bin/time). On a machine others load, the CPU
    seconds move less than the wall time."""
    with tempfile.NamedTemporaryFile("r") as used:
        t0 = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", used.name, *cmd],
                              capture_output=True, text=True, env=env, cwd=cwd)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
        user, system, peak = used.read().split()[-3:]
        return wall, float(user) + float(system), int(peak) // 1024, proc.stdout


def script_figures(stdout: str, root: Path) -> dict[str, float]:
    """Per-run figures the script printed: one line per log, ``<path> {repeat: figure, …}``
    (the repeats of its case read so far)."""
    out = {}
    for line in stdout.splitlines():
        path, _, rest = line.partition(" {")
        if not path.endswith(".log"):
            continue
        repeat = int(Path(path).stem.rsplit("_", 1)[1])
        out[os.path.relpath(path, root)[:-4]] = ast.literal_eval("{" + rest)[repeat]
    return out


def script_medians(result_dir: Path) -> dict[tuple[int, int], float]:
    """Case medians the script wrote (its JSON), by (nodes, GPUs per node)."""
    [path] = result_dir.glob("*_result.json")
    cases = json.loads(path.read_text())["r50"]
    return {(int(c[0]), int(c[2:-1])): v["median_speed"] for c, v in cases.items()}


def cli_medians(text: str) -> dict[tuple[int, int], float]:
    return {(int(r["num_nodes"]), int(r["gpus_per_node"])): float(r["throughput_median"])
            for r in csv.DictReader(io.StringIO(text))}


def suite_figures(root: Path) -> dict[str, float]:
    """Per-run figures of `parse_paths` + `run_throughput`, the computation of `summarize`
    (each run's figure made in the worker that reads it)."""
    sys.path.insert(0, str(TREE))
    from analysis import parse_paths
    from analysis.stats import run_throughput

    runs = run_throughput(parse_paths([root], dlperf_only=True, cache=False,
                                      figures=(["dlperf"], None, None)), "dlperf")
    return dict(zip(runs["run_id"], runs["throughput"]))


def tree_env(cache: Path) -> dict:
    path = os.pathsep.join(p for p in (str(TREE), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, "DLPERF_CACHE_DIR": str(cache)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dlperf", type=Path, default=os.environ.get("DLPERF_REPO"),
                    help="a checkout of Oneflow-Inc/DLPerf (default: $DLPERF_REPO)")
    ap.add_argument("--files", type=int, default=3000)
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=None, help="corpus folder (kept; made if empty)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args()
    script = args.dlperf / SCRIPT if args.dlperf else None
    if script is None or not script.is_file():
        raise SystemExit(f"{script or 'the DLPerf script'} not found: --dlperf DIR or "
                         "DLPERF_REPO=DIR names a checkout of https://github.com/Oneflow-Inc/DLPerf, "
                         "whose script is the baseline")
    work = Path(tempfile.mkdtemp(prefix="dlperf-bench-"))
    root = args.dir or work / "corpus"
    try:
        if not any(root.rglob("*.log")):
            make_corpus(root, args.files, args.iterations)
        files = sorted(root.rglob("*.log"))
        mb = sum(p.stat().st_size for p in files) / 1e6
        print(f"corpus: {len(files)} logs, {mb:.0f} MB ({root})")
        shutil.copy(script, work / "extract.py")  # it writes beside itself: run a copy
        baseline = [sys.executable, str(work / "extract.py"), "-ld", str(root),
                    "-od", str(work / "result")]
        summarize = [sys.executable, "-m", "analysis", "summarize", str(root), "--method",
                     "dlperf", "--format", "csv"]
        commands = {"script": (baseline, None), "cold": ([*summarize, "--no-cache"], "cold"),
                    "warm": (summarize, "warm")}
        run_process(summarize, tree_env(work / "warm"))  # fills the warm cache
        load = os.getloadavg()[0]
        times = {k: [] for k in commands}
        cpu = {k: [] for k in commands}
        peaks = dict.fromkeys(commands, 0)
        outputs = {}
        for _ in range(args.rounds):
            for name, (cmd, cache) in commands.items():
                env = tree_env(work / (cache or "none"))
                wall, seconds, rss, outputs[name] = run_process(cmd, env, cwd=work)
                times[name].append(wall)
                cpu[name].append(seconds)
                peaks[name] = max(peaks[name], rss)
        ref = script_figures(outputs["script"], root)
        got = suite_figures(root)
        run_diffs = [(k, v, got.get(k)) for k, v in ref.items() if got.get(k) != v]
        missing = sorted(set(got) - set(ref))
        medians = script_medians(work / "result")
        # the script rounds numpy's median by numpy's rounding (half to even, after scaling)
        case_diffs = [(name, case, v, cli_medians(outputs[name]).get(case))
                      for name in ("cold", "warm") for case, v in medians.items()
                      if np.round(cli_medians(outputs[name]).get(case, np.nan), 2) != v]
        t = {k: statistics.median(v) for k, v in times.items()}
        figures = {
            "logs": len(files), "iterations": args.iterations, "megabytes": round(mb, 1),
            "rounds": args.rounds, "cpus": len(os.sched_getaffinity(0)),
            "load_avg_1min": [round(load, 2), round(os.getloadavg()[0], 2)],
            "times_s": {k: [round(x, 2) for x in v] for k, v in times.items()},
            "median_s": {k: round(v, 2) for k, v in t.items()},
            "speedup_vs_script": {k: [round(s / x, 2) for s, x in zip(times["script"], v)]
                                  for k, v in times.items() if k != "script"},
            "cpu_s": {k: [round(x, 2) for x in v] for k, v in cpu.items()},
            "cpu_ratio_vs_script": {k: [round(s / x, 2) for s, x in zip(cpu["script"], v)]
                                    for k, v in cpu.items() if k != "script"},
            "peak_rss_mb": peaks,
            "runs_compared": len(ref), "run_mismatches": len(run_diffs),
            "runs_without_script_figure": len(missing),
            "cases_compared": len(medians), "case_median_mismatches": len(case_diffs),
        }
        print(json.dumps(figures, indent=1))
        if run_diffs or case_diffs:
            print("first mismatches (run, script, suite):", run_diffs[:5], case_diffs[:3])
        if args.json:
            args.json.write_text(json.dumps(figures, indent=2) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
