"""Text that comes from logs and folder names reaches exports as text: a CSV cell that a
spreadsheet would read as a formula starts with an apostrophe, and a report's log link stays a
relative path whatever the folder is called."""

from __future__ import annotations

import csv
import shutil
import subprocess
from pathlib import Path

from analysis.text_tables import csv_text

LOG = "dll_pytorch/current_version/1n1g/r50_b256_amp_1.log"


def _planted(tmp_path: Path, data_dir: Path) -> Path:
    """A real DLLogger log whose PARAMETER line names the model '=1+2' (file name too)."""
    folder = tmp_path / "logs" / "1n1g"
    folder.mkdir(parents=True)
    text = (data_dir / LOG).read_text().replace("arch : resnet50", "arch : =1+2")
    (folder / "=r50_b256_amp_1.log").write_text(text)
    return folder.parent


def test_formula_cells_get_an_apostrophe_and_numbers_stay():
    assert [csv_text(t) for t in ("=1+2", "+1", "-cmd", "@SUM(A1)", "\tx", "resnet50")] == \
        ["'=1+2", "'+1", "'-cmd", "'@SUM(A1)", "'\tx", "resnet50"]


def test_summarize_csv_writes_log_text_as_text(tmp_path, data_dir, dlperf_exe):
    logs = _planted(tmp_path, data_dir)
    done = subprocess.run([dlperf_exe, "summarize", str(logs), "--format", "csv",
                           "--all-columns"], capture_output=True, text=True, timeout=120)
    rows = list(csv.DictReader(done.stdout.splitlines()))
    assert [r["model"] for r in rows] == ["'=1+2"]
    assert not any(v.startswith(("=", "+", "@")) for r in rows for v in r.values())


def test_parse_csv_writes_log_text_as_text(tmp_path, data_dir, dlperf_exe):
    logs = _planted(tmp_path, data_dir)
    out = tmp_path / "obs.csv"
    subprocess.run([dlperf_exe, "parse", str(logs), "-o", str(out)], capture_output=True,
                   timeout=120, check=False)
    for path in (out, tmp_path / "obs.runs.csv"):
        rows = list(csv.DictReader(path.read_text().splitlines()))
        assert rows and {r["model"] for r in rows} == {"'=1+2"}, path
        assert not any(v.startswith(("=", "+", "@")) for r in rows for v in r.values()), path
    values = [float(r["value"]) for r in csv.DictReader(out.read_text().splitlines())]
    assert values and all(isinstance(v, float) for v in values)


def test_a_log_link_under_a_folder_named_like_a_url_scheme_stays_relative(tmp_path, data_dir):
    from analysis.report import build

    logs = tmp_path / "javascript:alert(document.domain)<!--"
    shutil.copytree(data_dir / "dll_pytorch/current_version", logs)
    html = build(logs, lang="en", link_base=tmp_path).log_table().to_html()  # the report beside it
    hrefs = [h for h in html.split('href="')[1:]]
    # percent-encoded: the colon that would make a URL scheme is %3A
    assert hrefs and all(h.startswith("javascript%3Aalert") for h in hrefs), hrefs[:3]
