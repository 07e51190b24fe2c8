"""`dlperf report` replaced a raw log with HTML through a link in its output folder that
pointed at the log; it now refuses that output, naming the link, and the log is untouched."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_link_in_the_output_folder_is_not_written_through(tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(ROOT / "data" / "raw_logs" / "rn50_4gpu" / "1n1g", logs)
    precious = logs / "resnet50_b128_fp32_1.log"
    before = precious.read_bytes()
    out = tmp_path / "out"
    out.mkdir()
    (out / "report_en.html").symlink_to(precious)
    proc = subprocess.run([sys.executable, "-m", "analysis", "report", str(logs), "--to", "html",
                           "--lang", "en", "-o", str(out)], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == (
        f"dlperf: error: {out / 'report_en.html'} -> {precious}: is a symbolic link: refusing "
        "to write through it (remove the link, or write elsewhere)")
    assert precious.read_bytes() == before and (out / "report_en.html").is_symlink()
