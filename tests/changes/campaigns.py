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
