"""Where a `dlperf summarize --method dlperf` spends its time, step by step, in one process.

Warm (the default): the corpus's parse cache must be filled first (one `dlperf summarize
CORPUS --method dlperf` with the same ``DLPERF_CACHE_DIR``); each step is timed apart:
importing numpy and the package, finding the logs, opening the stores, looking up the
files' entries, assembling the runs, the duplicate-run lookup (with Python's collector
paused, as `parse_paths` has it); then `parse_paths` whole,
the per-run figures and the summary with its CSV. Cold (``--cold J``): `parse_paths`
without the cache in J processes, then the per-run figures and the summary.

Usage: python benchmarks/parse_phases.py CORPUS [--cold J]
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from functools import partial


def warm(root: str) -> str:
    t0 = time.perf_counter()
    importlib.import_module("numpy")
    t1 = time.perf_counter()
    from analysis import collect, parse_cache
    from analysis.cli.summarize import output
    from analysis.discover import find_logs
    from analysis.stats.per_run import run_records
    from analysis.stats.summary import summary_records
    from analysis.user_meta import MetaFiles

    t2 = time.perf_counter()
    with collect.gc_paused():  # as `parse_paths` runs all of these steps
        files, _ = find_logs([root])
        t3 = time.perf_counter()
        how = {"family": None, "max_bytes": collect.max_log_bytes(None), "dlperf_only": True}
        stores = {d: parse_cache.FolderCache(d, how) for d in sorted({f.run_key[0] for f in files})}
        t4 = time.perf_counter()
        known = {}
        for f in files:
            hit = stores[f.run_key[0]].get(f.path, f.explicit, f.real_path)
            if hit is None:
                raise SystemExit(f"{f.path} is not in the cache: fill it first (see --help)")
            fields, parsed, problems, signature = hit
            known[f.path] = collect.FileRead(f.path, parsed, problems, fields["family"],
                                             bytes.fromhex(fields["digest"]), fields["skip"],
                                             signature)
        t5 = time.perf_counter()
        groups: dict = {}
        for f in files:
            groups.setdefault(f.run_key, []).append(f)
        read_run = partial(collect._read_run, family=None, limit=how["max_bytes"],
                           meta_files=MetaFiles(), user_meta={}, dlperf_only=True)
        runs = [read_run(members, known=known) for members in groups.values()]
        t6 = time.perf_counter()
        collect.drop_copies(runs, [], how["max_bytes"], lambda f: collect._read_file(
            f.path, f.family, True, how["max_bytes"], keyed=False).signature)
    del runs  # as parse_paths holds none of them after (the steps below take longer beside them)
    t6b = time.perf_counter()
    result = collect.parse_paths([root], dlperf_only=True, cache=True, require_runs=True,
                                 figures=(["dlperf"], None, None))
    t7 = time.perf_counter()
    runs = run_records(result, ["dlperf"])["dlperf"]
    t8 = time.perf_counter()
    output(summary_records(result, "dlperf", runs=runs), "csv")
    t9 = time.perf_counter()
    return (f"numpy {t1 - t0:.3f} other imports {t2 - t1:.3f} | find_logs {t3 - t2:.3f} "
            f"stores ({len(stores)} heads, columns) {t4 - t3:.3f} entries of {len(files)} files "
            f"{t5 - t4:.3f} assembling {len(groups)} runs {t6 - t5:.3f} "
            f"duplicate-run lookup {t6b - t6:.3f} | parse_paths in all "
            f"{t7 - t6b:.3f} per-run figures (kept) {t8 - t7:.3f} summary + csv {t9 - t8:.3f} | "
            f"pandas imported: {'pandas' in sys.modules}")


def cold(root: str, jobs: int) -> str:
    from analysis.collect import parse_paths
    from analysis.stats.per_run import run_records
    from analysis.stats.summary import summary_records

    w0 = time.perf_counter()
    c0 = time.process_time()
    result = parse_paths([root], dlperf_only=True, cache=False, jobs=jobs, require_runs=True,
                         figures=(["dlperf"], None, None))  # as summarize asks
    w1 = time.perf_counter()
    c1 = time.process_time()
    children = os.times()
    runs = run_records(result, ["dlperf"])["dlperf"]
    w2 = time.perf_counter()
    summary_records(result, "dlperf", runs=runs)
    w3 = time.perf_counter()
    return (f"cold -j {jobs}: parse_paths {w1 - w0:.3f} s wall (this process CPU {c1 - c0:.3f} "
            f"s, workers' CPU {children.children_user + children.children_system:.3f} s), "
            f"per-run figures {w2 - w1:.3f} s, summary {w3 - w2:.3f} s")


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        raise SystemExit(__doc__)
    print(cold(sys.argv[1], int(sys.argv[3])) if "--cold" in sys.argv[2:3] else warm(sys.argv[1]))
