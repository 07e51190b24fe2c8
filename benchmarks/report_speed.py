"""Report speed: en+zh HTML for a 100-run synthetic campaign vs the floor (executing an empty
notebook with the same kernel), and PDF time vs HTML time. Prints the figures.

    .venv/bin/python benchmarks/report_speed.py [--runs 100]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import papermill as pm
from nbformat.v4 import new_code_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "report"))

import synth  # noqa: E402

from analysis.report.publish import publish  # noqa: E402


def floor_seconds(tmp: Path, repeat: int = 3) -> float:
    """Best of `repeat` papermill runs of a one-cell notebook (kernel start + execute + stop)."""
    nb = new_notebook(cells=[new_code_cell("pass")],
                      metadata={"kernelspec": {"name": "python3", "language": "python",
                                               "display_name": "Python 3"}})
    src = tmp / "empty.ipynb"
    nbformat.write(nb, src)
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        pm.execute_notebook(str(src), str(tmp / "empty_out.ipynb"), progress_bar=False)
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100, help="runs in the synthetic campaign")
    args = ap.parse_args()
    configs = ((1, 1), (1, 2), (1, 4), (1, 8), (2, 8))
    groups = (("fp32", 128), ("amp", 256))
    repeats = max(1, args.runs // (len(configs) * len(groups)))
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        paths = synth.write_campaign(tmp / "logs", configs, repeats, groups)
        synth.write_markers(tmp / "logs", paths)
        floor = floor_seconds(tmp)
        t = time.perf_counter()
        html = publish(tmp / "logs", tmp / "out_html", langs="en,zh", to="html")
        html_s = time.perf_counter() - t
        t = time.perf_counter()
        both = publish(tmp / "logs", tmp / "out_pdf", langs="en,zh", to="html,pdf")
        both_s = time.perf_counter() - t
        pdf_s = sum(v for k, v in both.seconds.items() if k.endswith(".pdf"))
    print(f"campaign: {len(paths)} runs ({len(configs)} configs x {len(groups)} groups x {repeats} repeats)")
    print(f"floor (empty notebook, same kernel, best of 3): {floor:.2f} s")
    print(f"en+zh HTML: {html_s:.2f} s = {html_s / floor:.1f}x floor (goal <= 3x)")
    for k, v in html.seconds.items():
        print(f"  {k}: {v:.2f} s")
    print(f"en+zh HTML+PDF: {both_s:.2f} s; PDF export alone {pdf_s:.2f} s = "
          f"{pdf_s / html_s:.2f}x the HTML time (goal <= 2x)")


if __name__ == "__main__":
    main()
