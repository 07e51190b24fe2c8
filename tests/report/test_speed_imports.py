"""What a report kernel imports (issue 11, item 11): the report needs no SciPy (the
statistics it shows are computed without it: ``changes.student_t``), so neither the
report package a kernel imports first nor a whole report build loads it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.slow


def _imports_scipy(code: str) -> bool:
    done = subprocess.run([sys.executable, "-c", code + "\nimport sys\n"
                           "print(any(m == 'scipy' or m.startswith('scipy.') "
                           "for m in sys.modules))"],
                          capture_output=True, text=True, check=True, timeout=300)
    return done.stdout.strip().splitlines()[-1] == "True"


def test_the_report_kernels_first_import_leaves_scipy_out():
    assert not _imports_scipy("from analysis import report")


def test_a_report_and_its_charts_leave_scipy_out(tmp_path):
    logs, data_dir = str(tmp_path / "logs"), str(tmp_path / "data")
    code = f"""
import sys
from pathlib import Path
sys.path.insert(0, {str(HERE)!r})
import synth
from analysis import report
from analysis.report import prepared
from analysis.report.build import CHARTS
synth.write_campaign(Path({logs!r}), configs=((1, 1), (1, 4)), repeats=3)
data = prepared.compute({logs!r})
prepared.save(data, {data_dir!r})
for lang in ("en", "zh"):
    rep = report.build(lang=lang, data_dir={data_dir!r})
    page = rep.html()
    charts = [rep.chart(name) for name in CHARTS]
"""
    assert not _imports_scipy(code)
