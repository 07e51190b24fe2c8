"""Per-run overhead of the campaign harness over the bare workload command (local backend).

Runs the built-in workload's command (as the campaign would build it) N times directly, then
the same run N times through ``Campaign.run`` (node agent, env capture, sampling check, log
finalization, done marker, status), and prints the mean wall time of each and the difference.

    .venv/bin/python benchmarks/campaign_overhead.py [--repeats 5] [--iterations 5]

Goal: under 1 s per run on the local backend.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from analysis import config
from analysis.campaign.runner import Campaign
from analysis.campaign.spec import from_dict


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--iterations", type=int, default=5)
    p.add_argument("--devices", default="1n1g")
    a = p.parse_args()
    spec = from_dict({"name": "overhead", "workload": "builtin", "precisions": ["fp32"],
                      "batch_sizes": [2], "devices": [a.devices], "repeats": 1,
                      "iterations": a.iterations, "retries": 0})
    one = spec
    bare, harness, execute = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.repeats):  # interleaved, so that load drift hits both alike
            c = Campaign(one, out_dir=Path(tmp) / f"out{i}")
            device, _ = c.resolve_device()
            argv = c.launch(c.runs[0], device).nodes[0].argv
            t = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, check=True,
                           cwd=config.PROJECT_DIR)
            bare.append(time.perf_counter() - t)
            t = time.perf_counter()
            status = c.run(progress=False)
            harness.append(time.perf_counter() - t)
            assert (status["state"] == "done").all(), status.to_string()
            execute.append(float(status["duration_s"].iloc[0]))
    diffs = [h - b for h, b in zip(harness, bare, strict=True)]
    print(f"{a.repeats} runs of {a.devices}, {a.iterations} iterations, device {device}")
    print(f"bare workload command: median {statistics.median(bare):.2f} s  {_fmt(bare)}")
    print(f"through the campaign : median {statistics.median(harness):.2f} s  {_fmt(harness)}"
          f"  (backend execute median {statistics.median(execute):.2f} s)")
    print(f"harness overhead     : median {statistics.median(diffs):+.2f} s per run  "
          f"{_fmt(diffs)}  (goal < 1 s)")


def _fmt(xs: list[float]) -> str:
    return "[" + ", ".join(f"{x:.2f}" for x in xs) + "]"


if __name__ == "__main__":
    main()
