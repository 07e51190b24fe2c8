"""Campaigns for the tests of `dlperf compare`: the bundled campaign run again (each line's
time and rate its own, so that no log is a copy of the bundled one's, which compare leaves
out as not re-measured), with one configuration's clock stretched (every run of it takes
longer by a known factor)."""

from __future__ import annotations

import random
import re
import shutil
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "data" / "raw_logs" / "rn50_4gpu"
_DLL_TIME = re.compile(r"^(DLL )(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+)", re.M)
_FORMAT = "%Y-%m-%d %H:%M:%S.%f"
_IPS = re.compile(r"(?<=total_ips : )(\d+\.\d+)")
#: Each interval's own jitter in a run made again (a real GPU run's is 0.3 % and more).
JITTER = 0.01


def stretch_log(path: Path, factor: float, jitter: float = 0.0, seed: int = 0) -> None:
    """Every DLL line's time moved so that time since the first line is `factor` times longer,
    each interval also by its own random part within +-`jitter`, and the rate it prints with
    that part (not with `factor`: what such a log prints is not what its stamps time)."""
    text = path.read_text(encoding="utf-8")
    stamps = _DLL_TIME.findall(text)
    if not stamps:
        return
    draw = random.Random(f"{seed}:{path.name}")
    start = last = datetime.strptime(stamps[0][1], _FORMAT)
    lines, now = [], start
    for line in text.splitlines(keepends=True):
        m = _DLL_TIME.match(line)
        if m:
            t = datetime.strptime(m.group(2), _FORMAT)
            own = 1 + draw.uniform(-jitter, jitter)
            now, last = now + (t - last) * factor * own, t
            line = m.group(1) + now.strftime(_FORMAT) + line[m.end():]
            line = _IPS.sub(lambda r, s=own: f"{float(r.group(1)) / s:.2f}", line)
        lines.append(line)
    path.write_text("".join(lines), encoding="utf-8")


def rerun(dest: Path, config: str = "", factor: float = 1.0, seed: int = 0) -> Path:
    """The bundled campaign run again at `dest`: its records copied, each log's timing its
    own (`JITTER`), the runs of `config` `factor` times slower."""
    shutil.copytree(BUNDLED, dest)
    for log in sorted(dest.rglob("*.log")):
        stretch_log(log, factor if log.parent.name == config else 1.0, JITTER, seed)
    return dest


def stretched_copy(dest: Path, config: str = "1n4g", factor: float = 1.03) -> Path:
    """The bundled campaign run again (`rerun`) with its `config` runs `factor` times slower."""
    return rerun(dest, config, factor)


def failed_case_campaign(dest: Path, failed_repeats=(1, 2, 3), repeats: int = 3) -> Path:
    """The bundled campaign's 1n1g runs (repeats 1..`repeats` of fp32 b128 and amp b256) as
    `dlperf run` leaves them when the amp runs of `failed_repeats` failed: their done markers
    say ``ok: false`` and the node's exit status, status.json says failed, and their files are
    moved aside (none left beside the markers)."""
    import json

    (dest / "1n1g").mkdir(parents=True)
    shutil.copy(BUNDLED / "campaign.yaml", dest)
    status = json.loads((BUNDLED / "status.json").read_text())
    runs = []
    for stem in ("resnet50_b128_fp32", "resnet50_b256_amp"):
        for r in range(1, repeats + 1):
            row = next(x for x in status["runs"] if x["run_id"] == f"1n1g/{stem}_{r}")
            failed = stem.endswith("amp") and r in failed_repeats
            for f in (BUNDLED / "1n1g").glob(f"{stem}_{r}.*"):
                if not failed or f.suffix == ".done":
                    shutil.copy(f, dest / "1n1g")
            if failed:
                marker_path = dest / "1n1g" / f"{stem}_{r}.done"
                marker = json.loads(marker_path.read_text())
                marker.update(ok=False, state="failed", reason="exit 1: CUDA out of memory")
                marker["nodes"][0]["rc"] = 1
                marker_path.write_text(json.dumps(marker))
                row = {**row, "state": "failed", "reason": marker["reason"]}
                row.pop("log")
            runs.append(row)
    failed_runs = sum(r["state"] == "failed" for r in runs)
    status.update(runs=runs, counts={"done": len(runs) - failed_runs, "failed": failed_runs,
                                     "pending": 0})
    (dest / "status.json").write_text(json.dumps(status))
    return dest
