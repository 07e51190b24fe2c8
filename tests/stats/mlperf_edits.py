"""Real MLPerf v1.0 logs with their clock edited, for the block-pace tests."""

from __future__ import annotations

import json
from pathlib import Path

REAL_MLPERF = Path(__file__).resolve().parents[1] / "data/real/mlperf_v1_0_google_tf_resnet"


def shifted(folder: Path, shifts: dict) -> None:
    """The five real v1.0 TF ResNet logs, every time_ms from the record after the k-th
    block_start on moved by shifts[k] ms (cumulative)."""
    folder.mkdir(parents=True, exist_ok=True)
    for r in range(5):
        src = (REAL_MLPERF / f"result_{r}.txt").read_text().split("\n")
        starts = [i for i, ln in enumerate(src) if '"key": "block_start"' in ln]
        moves = {starts[k] + 1: ms for k, ms in shifts.items()}
        off, out = 0, []
        for i, ln in enumerate(src):
            off += moves.get(i, 0)
            if ":::MLLOG" in ln and off:
                t = json.loads(ln.split(":::MLLOG", 1)[1])["time_ms"]
                ln = ln.replace(f'"time_ms": {t}', f'"time_ms": {t + off}')
            out.append(ln)
        (folder / f"result_{r}.txt").write_text("\n".join(out))
