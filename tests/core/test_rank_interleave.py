"""Lines of two ranks tagged by Open MPI, interleaved in any order, give the figure of the
lowest rank's lines: the rule's window counts that rank's lines only (it once counted both
ranks' lines and raised IndexError on every command reading the folder)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "data" / "raw_logs" / "rn50_4gpu" / "1n2g" / "resnet50_b128_fp32_1.log"


def _interleaved(seed: int) -> str:
    lines = RUN.read_text().splitlines()
    queues = [[f"[1,{r}]<stdout>:{line}" for line in lines] for r in (0, 1)]
    rnd, out = random.Random(seed), []
    while any(queues):
        q = rnd.choice([q for q in queues if q])
        out.append(q.pop(0))
    return "\n".join(out) + "\n"


def _figure(folder: Path, method: str) -> float:
    proc = subprocess.run(
        [sys.executable, "-m", "analysis", "summarize", str(folder), "--no-cache",
         "--method", method, "--format", "json"],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    (row,) = json.loads(proc.stdout)
    return row["throughput_median"]


@pytest.mark.parametrize("method", ["dlperf", "window", "reported"])
def test_two_ranks_in_random_order_give_rank_zeros_figure(tmp_path, method):
    alone = tmp_path / "alone" / "1n2g"
    mixed = tmp_path / "mixed" / "1n2g"
    for d in (alone, mixed):
        d.mkdir(parents=True)
    (alone / RUN.name).write_text(RUN.read_text())
    (mixed / RUN.name).write_text(_interleaved(seed=3))
    assert _figure(mixed.parent, method) == _figure(alone.parent, method)
