"""Parse speed: `dlperf` against a faithful re-implementation of DLPerf's extract scripts.

Generates, in the DLPerf layout, NVIDIA DLE PyTorch DLLogger logs (3 of every 5 files) and
OneFlow CNN logs (2 of 5), 1,000 iterations each (the issue-10 corpus: 3,000 files), then
measures on that one corpus, in one run, with the page cache warm:

- scripts: the algorithm of DLPerf's ``extract_pytorch_logs_time.py`` and OneFlow
  ``extract_cnn_result.py`` re-implemented (not copied), each as its own process
  (``--script pytorch|oneflow``). PyTorch: glob ``<dir>/*/*.log``, case fields from the
  file and folder names, ``readlines()``, count the lines holding ``Iteration: `` whose
  iteration is > 5, datetimes of the 20th and 120th counted line, global batch × 100 / Δt
  (``datetime`` subtraction, exact microseconds), rounded to 2 decimals, stop reading.
  OneFlow: ``str.split`` of the training lines, ``float`` timestamps of iterations 20 and
  120, global batch × 100 / Δt, stop reading. Median over repeats (numpy), speedup vs 1n1g;
- floor: a plain Python read of every file;
- write floor: a new process importing pyarrow's Parquet writer and writing the table
  ``parse -o`` wrote (whole, and its per-row columns only): a lower bound of ``parse -o``;
- whole ``dlperf`` processes (imports included) of the `analysis` package of the tree this
  file is in: ``summarize --method dlperf --format csv`` (all cores, and ``-j 1`` where the
  tree has ``-j``) and ``parse -o x.parquet`` (the full tidy frame), each on an empty parse
  cache; where the tree has one, ``summarize`` again on the cache it filled, and
  ``parse_paths`` + ``run_throughput`` as a library call: first, then cached (re-run in this
  process, and in a new process with its imports not counted).

Every measurement is repeated `--rounds` times, interleaved; the median is reported.
Per-run equality: the scripts' figure of every run against the suite's full path
(`run_throughput` with the dlperf method) and its lean lane (`analysis.lean`, what
`summarize` runs on logs it reads), and each case's median against each `summarize` csv. Peak memory is each process's maximum RSS.
Usage: python benchmarks/parse_speed.py [--files 3000] [--iterations 1000] [--rounds 3]
       [--dir DIR] [--keep] [--json OUT]
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import glob
import importlib.util
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CONFIGS = [(1, 1), (1, 2), (1, 4), (1, 8), (2, 8), (4, 8)]
#: The tree this file belongs to: its `analysis` is measured (run from a snapshot, e.g.
#: ``git archive HEAD | tar -x -C /tmp/snap``, while others edit the working tree).
TREE = Path(__file__).resolve().parents[1]


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
    """Write `files` logs under `root` (``pytorch/`` and ``oneflow/``); returns total bytes."""
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


# --- the DLPerf scripts' algorithm -------------------------------------------------------
def _case_of(path: str) -> tuple[str, int, int, int, str, str]:
    """(model, batch, nodes, gpus, precision, repeat) from ``<N>n<G>g/<model>_b<B>_<prec>_<r>.log``."""
    folder = os.path.basename(os.path.dirname(path))
    nodes, gpus = folder[:-1].split("n")
    model, bsz, precision, repeat = os.path.basename(path)[:-4].split("_")
    return model, int(bsz[1:]), int(nodes), int(gpus), precision, repeat


def _pytorch_run(path: str, gbs: int) -> float | None:
    with open(path) as fh:
        lines = fh.readlines()
    counted, t20 = 0, None
    for line in lines:
        if "Iteration: " not in line:
            continue
        if int(line.split("Iteration: ")[1].split()[0]) <= 5:
            continue
        counted += 1
        if counted in (20, 120):
            day, clock = line.split()[1:3]
            fmt = "%Y-%m-%d %H:%M:%S.%f" if "." in clock else "%Y-%m-%d %H:%M:%S"
            stamp = dt.datetime.strptime(f"{day} {clock}", fmt)
            if counted == 20:
                t20 = stamp
            else:
                return round(gbs * 100 / (stamp - t20).total_seconds(), 2)
    return None


def _oneflow_run(path: str, gbs: int) -> float | None:
    with open(path) as fh:
        lines = fh.readlines()
    t20 = None
    for line in lines:
        if not line.startswith("train: "):
            continue
        words = line.split()
        it = int(words[4].rstrip(","))
        if it == 20:
            t20 = float(words[-1])
        elif it == 120:
            return gbs * 100 / (float(words[-1]) - t20)
    return None


def scripts(family: str, root: str) -> dict:
    """What one DLPerf script computes for ``<root>/<family>``: per-run figures, medians
    per case and speedup against 1n1g."""
    read = _pytorch_run if family == "pytorch" else _oneflow_run
    per_run, cases = {}, {}
    for path in sorted(glob.glob(os.path.join(root, family, "*", "*.log"))):
        model, bsz, nodes, gpus, precision, _ = _case_of(path)
        thr = read(path, bsz * nodes * gpus)
        per_run[os.path.relpath(path, root)[:-4]] = thr
        if thr is not None:
            cases.setdefault((model, bsz, precision, nodes, gpus), []).append(thr)
    medians = {k: float(np.median(v)) for k, v in cases.items()}
    table = [{"model": m, "bsz": b, "precision": p, "nodes": n, "gpus": g, "median": v,
              "speedup": round(v / medians[(m, b, p, 1, 1)], 2) if (m, b, p, 1, 1) in medians
              else None}
             for (m, b, p, n, g), v in sorted(medians.items())]
    return {"runs": per_run, "cases": table}


# --- measuring ---------------------------------------------------------------------------
def _run_process(cmd: list[str], env: dict | None = None) -> tuple[float, int, str]:
    """(wall seconds, peak RSS in MB, stdout) of one whole process. The peak is measured by
    ``/usr/bin/time`` (a child started straight from this process would count this
    process's memory too: it is vforked)."""
    with tempfile.NamedTemporaryFile("r") as peak:
        t0 = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", peak.name, *cmd],
                              capture_output=True, text=True, env=env)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
        return wall, int(peak.read().split()[-1]) // 1024, proc.stdout


def read_floor(root: Path) -> float:
    t0 = time.perf_counter()
    for path in root.rglob("*.log"):
        with open(path, "rb") as fh:
            fh.read()
    return time.perf_counter() - t0


def suite_per_run(root: Path) -> dict[str, float]:
    """Per-run dlperf figures the suite gives (the code path of `dlperf summarize`: only the
    lines the rule reads, where the tree can)."""
    import inspect

    from analysis import parse_paths
    from analysis.stats import run_throughput

    lean = "dlperf_only" in inspect.signature(parse_paths).parameters
    result = parse_paths([root], dlperf_only=True) if lean else parse_paths([root])
    runs = run_throughput(result, "dlperf")
    return dict(zip(runs["run_id"], runs["throughput"]))


def lean_per_run(root: Path) -> dict[str, float] | None:
    """Per-run figures of the lean lane of `dlperf summarize` (analysis.lean), where the tree
    has one; None when it has none or does not read this corpus."""
    try:
        from analysis.lean.lane import run_rows
    except ImportError:
        return None
    rows = run_rows([root], jobs=1, cache=False)
    return None if rows is None else {r["run_id"]: r["throughput"] for r in rows}


def cli_commands(root: Path, out: Path) -> dict[str, list[str]]:
    """The `dlperf` processes measured, by name (`-j 1` where the tree has `-j`)."""
    dlperf = [sys.executable, "-m", "analysis"]
    summarize = [*dlperf, "summarize", str(root), "--method", "dlperf", "--format", "csv"]
    commands = {"summarize": summarize}
    helptext = subprocess.run([*dlperf, "summarize", "--help"], capture_output=True, text=True,
                              env=_tree_env()).stdout
    if "--no-cache" in helptext:
        commands["summarize_cached"] = summarize  # again, on the cache the first one filled
    if "--jobs" in helptext:
        commands["summarize_1_core"] = [*summarize, "-j", "1"]
    commands["parse_parquet"] = [*dlperf, "parse", str(root), "-o", str(out), "--force"]
    return commands


def _tree_env(cache: Path | None = None) -> dict:
    """The environment of a `dlperf` process: this tree's package first (then whatever
    PYTHONPATH held: packages installed with ``pip --target``), parse cache in `cache`."""
    path = os.pathsep.join(p for p in (str(TREE), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    return env if cache is None else {**env, "DLPERF_CACHE_DIR": str(cache)}


_LIBRARY_CALL = """
import sys, time
from analysis import parse_paths
from analysis.stats import run_throughput
t0 = time.perf_counter()
run_throughput(parse_paths([sys.argv[1]], dlperf_only=True, cache=True), "dlperf")
print(time.perf_counter() - t0)
"""


def library_cached(root: Path, cache: Path) -> tuple[float, float, float, dict[str, float]]:
    """Seconds of `parse_paths` + `run_throughput` (dlperf) as a library call: the first in
    this process (an empty cache), the best of two re-runs in this process on the filled
    cache, the best of two in new processes (imports not counted) on it; and the per-run
    figures of the last re-run here."""
    from analysis import parse_paths
    from analysis.stats import run_throughput

    os.environ["DLPERF_CACHE_DIR"] = str(cache)
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        runs = run_throughput(parse_paths([root], dlperf_only=True, cache=True), "dlperf")
        times.append(time.perf_counter() - t0)
    fresh = [float(subprocess.run([sys.executable, "-c", _LIBRARY_CALL, str(root)],
                                  capture_output=True, text=True, check=True,
                                  env=_tree_env(cache)).stdout) for _ in range(2)]
    return times[0], min(times[1:]), min(fresh), dict(zip(runs["run_id"], runs["throughput"]))


#: The write floor of the full frame: a new process imports pyarrow's Parquet writer and
#: writes the observations table `dlperf parse` wrote (read back first, not timed): the
#: whole table, then only its per-row columns (run-constant ones dropped: what a frame
#: that kept them in the runs frame alone would write). A lower bound of `parse -o`.
_WRITE_FLOOR = """
import sys, time
t0 = time.perf_counter()
import pyarrow.parquet as pq
imported = time.perf_counter() - t0
table = pq.read_table(sys.argv[1])
per_row = table.select([c for c in sys.argv[3].split(",") if c in table.column_names])
best = []
for t in (table, per_row):
    seconds = []
    for _ in range(2):
        t0 = time.perf_counter()
        pq.write_table(t, sys.argv[2])
        seconds.append(time.perf_counter() - t0)
    best.append(imported + min(seconds))
print(*best)
"""
#: Columns that vary within a run (the rest are the run's fields, constant per run).
PER_ROW = ("run_id", "source", "line", "rank", "device", "phase", "epoch", "step",
           "timestamp", "metric", "value", "unit")


def write_floor(observations: Path) -> tuple[float, float]:
    """(seconds to import the Parquet writer and write the whole observations table, the
    same for its per-row columns only), best of two writes each, in a new process."""
    out = subprocess.run([sys.executable, "-c", _WRITE_FLOOR, str(observations),
                          str(observations.with_suffix(".floor.parquet")), ",".join(PER_ROW)],
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), float(out[1])


def _cli_medians(text: str) -> dict[tuple, float]:
    """Case medians of the csv by (batch, nodes, GPUs): the two families' batches differ."""
    rows = csv.DictReader(io.StringIO(text))
    return {(int(r["batch_size_per_device"]), int(r["num_nodes"]), int(r["gpus_per_node"])):
            float(r["throughput_median"]) for r in rows}


def reference_check() -> list:
    """The scripts' algorithm on the seed-003 logs of the tests (built so that DLPerf's
    ``extract_pytorch_logs_time.py`` gives the published per-repeat figures): the figures
    that differ from the published ones (none when the re-implementation is faithful)."""
    spec = importlib.util.spec_from_file_location(
        "seed003", Path(__file__).parents[1] / "tests/parsers/test_seed003_reproduction.py")
    seed = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(seed)
    with tempfile.TemporaryDirectory() as tmp:
        published = {}
        for (folder, prefix, bsz, world), figures in seed.CASES.items():
            (Path(tmp) / "pytorch" / folder).mkdir(parents=True)
            for r, fig in figures.items():
                run = f"pytorch/{folder}/{prefix}_{r}"
                (Path(tmp) / f"{run}.log").write_text(seed._log(bsz, world, fig, seed=r))
                published[run] = fig
        got = scripts("pytorch", tmp)["runs"]
    return [(k, v, got.get(k)) for k, v in published.items() if got.get(k) != v]


def _differences(ref: dict[str, float | None], got: dict[str, float]) -> list:
    """Runs whose figures differ: exactly for PyTorch (both rounded to 2 decimals), to the
    last bit for OneFlow (the same float operations on the same printed numbers)."""
    return [(k, v, got.get(k)) for k, v in ref.items() if v is None or got.get(k) != v]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=3000)
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (median reported)")
    ap.add_argument("--dir", type=Path, default=None, help="corpus folder (default: a temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the corpus afterwards")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument("--script", choices=("pytorch", "oneflow"), default=None,
                    help=argparse.SUPPRESS)  # run one DLPerf script's algorithm on --dir
    args = ap.parse_args()
    sys.path.insert(0, str(TREE))
    if args.script:
        json.dump(scripts(args.script, str(args.dir)), sys.stdout)
        return

    wrong = reference_check()
    print(f"scripts' algorithm on the seed-003 logs: {10 - len(wrong)} of 10 published figures")
    if wrong:
        raise SystemExit(f"the re-implementation differs from DLPerf's published figures: {wrong}")
    root = args.dir or Path(tempfile.mkdtemp(prefix="dlperf-corpus-"))
    try:
        if not any(root.rglob("*.log")):
            t0 = time.perf_counter()
            make_corpus(root, args.files, args.iterations)
            print(f"corpus generated in {time.perf_counter() - t0:.1f} s")
        files = sorted(root.rglob("*.log"))
        mb = sum(p.stat().st_size for p in files) / 1e6
        print(f"corpus: {len(files)} files, {mb:.0f} MB ({root})")
        me = [sys.executable, os.path.abspath(__file__), "--dir", str(root), "--script"]
        out_dir = Path(tempfile.mkdtemp(prefix="dlperf-parse-out-"))
        commands = cli_commands(root, out_dir / "observations.parquet")
        read_floor(root)  # warm the page cache
        times: dict[str, list[float]] = {k: [] for k in ("scripts", "floor", *commands,
                                                          "write_floor", "write_floor_per_row")}
        peaks = dict.fromkeys(("scripts", *commands), 0)
        outputs = {}
        for _ in range(args.rounds):
            wall_pt, rss_pt, out_pt = _run_process(me + ["pytorch"])
            wall_of, rss_of, out_of = _run_process(me + ["oneflow"])
            times["scripts"].append(wall_pt + wall_of)
            peaks["scripts"] = max(peaks["scripts"], rss_pt, rss_of)
            times["floor"].append(read_floor(root))
            for name, cmd in commands.items():
                if name != "summarize_cached":  # every other run starts on an empty cache
                    shutil.rmtree(out_dir / "cache", ignore_errors=True)
                wall, rss, outputs[name] = _run_process(cmd, _tree_env(out_dir / "cache"))
                times[name].append(wall)
                peaks[name] = max(peaks[name], rss)
            whole, per_row = write_floor(out_dir / "observations.parquet")
            times["write_floor"].append(whole)
            times["write_floor_per_row"].append(per_row)
        lib = ()
        if "summarize_cached" in commands:
            shutil.rmtree(out_dir / "cache", ignore_errors=True)
            lib = library_cached(root, out_dir / "cache")
        shutil.rmtree(out_dir, ignore_errors=True)
        ref_pt, ref_of = json.loads(out_pt), json.loads(out_of)
        ref = {**ref_pt["runs"], **ref_of["runs"]}
        got = suite_per_run(root)
        diffs = _differences(ref, got)
        lean = lean_per_run(root)
        lean_diffs = None if lean is None else _differences(ref, lean)
        case_diffs = []
        for name in commands:
            if name.startswith("summarize"):
                medians = _cli_medians(outputs[name])
                case_diffs += [(name, c, medians.get((c["bsz"], c["nodes"], c["gpus"])))
                               for c in ref_pt["cases"] + ref_of["cases"]
                               if medians.get((c["bsz"], c["nodes"], c["gpus"])) != c["median"]]
        t = {k: statistics.median(v) for k, v in times.items()}
        figures = {
            "files": len(files), "megabytes": round(mb, 1), "rounds": args.rounds,
            "cpus": os.cpu_count(), "load_avg_1min": round(os.getloadavg()[0], 2),
            "scripts_s": round(t["scripts"], 2), "floor_s": round(t["floor"], 3),
            **{f"{k}_s": round(t[k], 2) for k in commands},
            "scripts_mb_per_s": round(mb / t["scripts"], 1),
            "floor_mb_per_s": round(mb / t["floor"], 1),
            **{f"{k}_mb_per_s": round(mb / t[k], 1) for k in commands},
            **{f"{k}_vs_scripts": round(t["scripts"] / t[k], 2) for k in commands},
            "parquet_write_floor_s": round(t["write_floor"], 2),
            "parquet_write_floor_vs_scripts": round(t["scripts"] / t["write_floor"], 2),
            "parquet_write_floor_per_row_s": round(t["write_floor_per_row"], 2),
            "parquet_write_floor_per_row_vs_scripts":
                round(t["scripts"] / t["write_floor_per_row"], 2),
            **({"library_first_s": round(lib[0], 2), "library_cached_s": round(lib[1], 3),
                "library_cached_speedup": round(lib[0] / lib[1], 1),
                "library_cached_vs_scripts": round(t["scripts"] / lib[1], 1),
                "library_cached_new_process_s": round(lib[2], 3),
                "library_cached_new_process_vs_scripts": round(t["scripts"] / lib[2], 1),
                "library_cached_run_mismatches": len(_differences(ref, lib[3]))}
               if lib else {}),
            "all_times_s": {k: [round(x, 2) for x in v] for k, v in times.items()},
            "peak_rss_mb": peaks,
            "runs_compared": len(ref), "run_mismatches": len(diffs),
            "lean_lane_reads_corpus": lean is not None,
            **({} if lean_diffs is None else {"lean_run_mismatches": len(lean_diffs)}),
            "cases_compared": len(ref_pt["cases"]) + len(ref_of["cases"]),
            "case_median_mismatches": len(case_diffs),
        }
        for k, v in figures.items():
            print(f"{k:>22}: {v}")
        if diffs:
            print("first run mismatches (run, scripts, suite):", diffs[:5])
        if case_diffs:
            print("first case mismatches (command, scripts, suite):", case_diffs[:3])
        if args.json:
            args.json.write_text(json.dumps(figures, indent=2) + "\n")
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
