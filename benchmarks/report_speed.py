"""Report speed: en+zh HTML for a 100-run synthetic campaign vs the floor (executing an empty
notebook with the same kernel), and PDF time vs HTML time. Prints the figures.

The main figure times ``publish()`` in this process, papermill and nbformat imported already,
against papermill executing the empty notebook here. With ``--cli`` it also times what a user
waits for, imports included: ``dlperf report`` in a new process against the ``papermill``
command on the empty notebook, ``--repeat`` pairs run in turn.

    .venv/bin/python benchmarks/report_speed.py [--runs 100] [--cli]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
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


def floor_times(tmp: Path, repeat: int = 3, code: str = "pass",
                name: str = "empty") -> list[float]:
    """Seconds of `repeat` papermill runs of a one-cell notebook of `code` (kernel start +
    execute + stop)."""
    nb = new_notebook(cells=[new_code_cell(code)],
                      metadata={"kernelspec": {"name": "python3", "language": "python",
                                               "display_name": "Python 3"}})
    src = tmp / f"{name}.ipynb"
    nbformat.write(nb, src)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        pm.execute_notebook(str(src), str(tmp / f"{name}_out.ipynb"), progress_bar=False)
        times.append(time.perf_counter() - t)
    return times


#: The report notebook's first cell.
IMPORT_CELL = "from analysis import report"


def command_seconds(argv: list[str], cwd: Path) -> float:
    """Wall seconds of one run of `argv` (which must succeed)."""
    t = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def cli_seconds(tmp: Path, repeat: int) -> list[tuple[float, float]]:
    """(`dlperf report` of the campaign to en+zh HTML, the papermill command on the empty
    notebook), each in a new process, `repeat` pairs run in turn (a shared machine's load
    then weighs on both alike)."""
    bindir = Path(sys.executable).parent
    pairs = []
    for _ in range(repeat):
        report = command_seconds([str(bindir / "dlperf"), "report", str(tmp / "logs"), "-o",
                                  str(tmp / "out_cli"), "--lang", "en,zh", "--to", "html"], tmp)
        floor = command_seconds([str(bindir / "papermill"), "--no-progress-bar",
                                 str(tmp / "empty.ipynb"), str(tmp / "empty_cli.ipynb")], tmp)
        pairs.append((report, floor))
    return pairs


def cpu_seconds() -> tuple[float, float]:
    """(CPU seconds of this process, of its children that have ended: the kernels, parse
    workers): what a build costs the machine, which wall times on a shared VM hide."""
    me, children = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                     resource.RUSAGE_CHILDREN))
    return me.ru_utime + me.ru_stime, children.ru_utime + children.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100, help="runs in the synthetic campaign")
    ap.add_argument("--repeat", type=int, default=3,
                    help="builds and floor runs, each (best and median are shown)")
    ap.add_argument("--cli", action="store_true",
                    help="also time `dlperf report` and `papermill` in new processes")
    args = ap.parse_args()
    configs = ((1, 1), (1, 2), (1, 4), (1, 8), (2, 8))
    groups = (("fp32", 128), ("amp", 256))
    repeats = max(1, args.runs // (len(configs) * len(groups)))
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        paths = synth.write_campaign(tmp / "logs", configs, repeats, groups)
        synth.write_markers(tmp / "logs", paths)
        floors = floor_times(tmp, args.repeat)
        # the first cell of notebooks/20_report.ipynb alone: the imports every report kernel
        # makes (pandas, matplotlib, seaborn through analysis.report), no work
        kernel_floor = min(floor_times(tmp, args.repeat, code=IMPORT_CELL, name="imports"))
        builds, cpus = [], []
        for i in range(args.repeat):  # the same statistics as the floor's
            cpu0 = cpu_seconds()
            t = time.perf_counter()
            html = publish(tmp / "logs", tmp / f"out_html{i}", langs="en,zh", to="html",
                           progress=None)
            builds.append(time.perf_counter() - t)
            cpus.append([b - a for a, b in zip(cpu0, cpu_seconds())])
        floor, html_s = min(floors), min(builds)
        cpu = cpus[builds.index(html_s)]
        t = time.perf_counter()
        both = publish(tmp / "logs", tmp / "out_pdf", langs="en,zh", to="html,pdf")
        both_s = time.perf_counter() - t
        pdf_s = sum(v for k, v in both.seconds.items() if k.endswith(".pdf"))
        cli = cli_seconds(tmp, args.repeat) if args.cli else None
    print(f"campaign: {len(paths)} runs ({len(configs)} configs x {len(groups)} groups x {repeats} repeats)")
    n = args.repeat
    print(f"floor (empty notebook, same kernel): best of {n} {floor:.2f} s, median "
          f"{statistics.median(floors):.2f} s")
    print(f"kernel with the report's imports only ({IMPORT_CELL!r}, best of {n}): "
          f"{kernel_floor:.2f} s = {kernel_floor / floor:.1f}x floor")
    print(f"en+zh HTML: best of {n} {html_s:.2f} s = "
          f"{html_s / floor:.1f}x floor (goal <= 3x); median {statistics.median(builds):.2f} s "
          f"= {statistics.median(builds) / statistics.median(floors):.1f}x the median floor")
    for k, v in html.seconds.items():
        print(f"  {k}: {v:.2f} s")
    print(f"  CPU of the best build: publisher {cpu[0]:.2f} s, kernel and parse workers "
          f"{cpu[1]:.2f} s "
          f"(load average {os.getloadavg()[0]:.1f}); that CPU spread over all "
          f"{os.cpu_count()} cores would take {sum(cpu) / os.cpu_count():.2f} s "
          f"= {sum(cpu) / os.cpu_count() / floor:.1f}x floor")
    print(f"en+zh HTML+PDF: {both_s:.2f} s; PDF export alone {pdf_s:.2f} s = "
          f"{pdf_s / html_s:.2f}x the HTML time (goal <= 2x)")
    if cli:
        reports, floors = [r for r, _ in cli], [f for _, f in cli]
        ratios = [r / f for r, f in cli]
        print(f"new processes, {n} pairs in turn: dlperf report (en+zh HTML) best "
              f"{min(reports):.2f} s, median {statistics.median(reports):.2f} s; papermill on "
              f"the empty notebook best {min(floors):.2f} s, median "
              f"{statistics.median(floors):.2f} s; best/best {min(reports) / min(floors):.1f}x "
              f"(goal <= 3x), ratio per pair {' '.join(f'{x:.1f}' for x in ratios)} "
              f"(median {statistics.median(ratios):.1f}x); load average "
              f"{os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
