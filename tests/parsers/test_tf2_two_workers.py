"""Two TF2 workers (MultiWorkerMirrored, 2n8g) printing TimeHistory into one file, every line
tagged ``[1,r]<stdout>:``: the DLPerf rule reads the lowest rank's lines, as the other
methods do. The input is the real 1n8g repeat 3 (tests/data/real/dlperf_tf2) made a 2-node
job: 16 devices, global batch 2048, twice the examples/second, worker 1's lines a copy."""

from __future__ import annotations

import re
from pathlib import Path

from analysis.collect import parse_paths
from analysis.stats import run_throughput

ROOT = Path(__file__).resolve().parents[2]
EIGHT_GPU = ROOT / "tests" / "data" / "real" / "dlperf_tf2" / "1n8g" / "rn50_b128_fp32_3.log"


def _double(m: re.Match) -> str:
    return f"{float(m.group(1)) * 2:.2f} examples/second"


def test_two_tagged_workers_give_the_dlperf_figure_of_the_first(tmp_path):
    text = EIGHT_GPU.read_text().replace("Detected 8 devices.", "Detected 16 devices.")
    text = text.replace("Global batch size: 1024", "Global batch size: 2048")
    text = re.sub(r"(\d+\.\d+) examples/second", _double, text)
    out = []
    for line in text.splitlines():
        out.append("[1,0]<stdout>:" + line)
        if "TimeHistory:" in line:
            out.append("[1,1]<stdout>:" + line)
    log = tmp_path / "2n8g" / "rn50_b128_fp32_1.log"
    log.parent.mkdir()
    log.write_text("\n".join(out) + "\n")
    row = run_throughput(parse_paths([tmp_path], jobs=1), "dlperf").iloc[0]
    assert row["problem_kind"] == "", row["problem"]
    assert row["throughput"] == 2458.74 * 2
