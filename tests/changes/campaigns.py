"""Campaign copies for the tests of `dlperf compare`: the bundled campaign with one
configuration's clock stretched (every run of it takes longer by a known factor)."""

from __future__ import annotations

import re
import shutil
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "data" / "raw_logs" / "rn50_4gpu"
_DLL_TIME = re.compile(r"^(DLL )(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+)", re.M)
_FORMAT = "%Y-%m-%d %H:%M:%S.%f"


def stretch_log(path: Path, factor: float) -> None:
    """Every DLL line's time moved so that time since the first line is `factor` times longer."""
    text = path.read_text(encoding="utf-8")
    stamps = _DLL_TIME.findall(text)
    if not stamps:
        return
    start = datetime.strptime(stamps[0][1], _FORMAT)

    def moved(m: re.Match) -> str:
        t = datetime.strptime(m.group(2), _FORMAT)
        return m.group(1) + (start + (t - start) * factor).strftime(_FORMAT)

    path.write_text(_DLL_TIME.sub(moved, text), encoding="utf-8")


def stretched_copy(dest: Path, config: str = "1n4g", factor: float = 1.03) -> Path:
    """A copy of the bundled campaign whose `config` runs are `factor` times slower."""
    shutil.copytree(BUNDLED, dest)
    for log in sorted((dest / config).glob("*.log")):
        stretch_log(log, factor)
    return dest
