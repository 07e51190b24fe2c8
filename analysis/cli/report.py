"""`dlperf report LOG_DIR`: bilingual HTML/PDF reports from a log folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from analysis import config
from analysis.changes import verdict
from analysis.cli._options import add_meta, add_method, add_percentage, check_outside_stores
from analysis.interrupt import sigterm_as_interrupt

COMMAND = "report"
HELP = "publish the report of a log folder as HTML and PDF, in English and Chinese"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("log_dir", nargs="?", default=None,
                   help="folder of logs (default: the bundled data/raw_logs); env.json, "
                        "*.env.json and topo*.txt inside it are used automatically")
    p.add_argument("--env", action="append", metavar="ENV.json",
                   help="environment record from `dlperf env` (repeatable; default: only "
                        "those found in LOG_DIR)")
    p.add_argument("--topology", action="append", metavar="FILE",
                   help="saved `nvidia-smi topo -m` output (repeatable; default: only those "
                        "found in LOG_DIR)")
    p.add_argument("--lang", default="en,zh", metavar="LANGS",
                   help="languages, comma-separated, from: en, zh")
    p.add_argument("--to", default="html,pdf", metavar="FORMATS",
                   help="output formats, comma-separated, from: html, pdf")
    p.add_argument("-o", "--out-dir", default=None, help="output folder (default: reports/)")
    add_method(p)
    p.add_argument("--title", default=None, metavar="TITLE",
                   help="report title, one for both languages or \"English|中文\" (default: "
                        "from the models, in each language)")
    p.add_argument("--baseline", default=None, metavar="OTHER",
                   help="add a 'Changes since baseline' section comparing every case with "
                        "OTHER: a log folder, a Parquet export of dlperf parse, or a stored "
                        "campaign (key or name, with --store), as dlperf compare takes")
    add_percentage(p, "--threshold", "smallest change the baseline section counts",
                   verdict.DEFAULT_THRESHOLD)
    p.add_argument("--store", default=None, metavar="DIR",
                   help="results store where a --baseline that is not a path is looked up")
    p.add_argument("--references", default=None, metavar="FILE",
                   help="add page 1's reference table: each reference of a report case "
                        "in FILE with its source, hardware and value, our median and the "
                        "ratio (.yaml/.yml or .csv, as dlperf check reads)")
    p.add_argument("--log-base-url", default=None, metavar="URL",
                   help="where LOG_DIR is published (http/https): every log link of the "
                        "report points under it, so links work wherever the report is "
                        "opened, the PDF included (default: links relative to the report)")
    add_meta(p)


def run(args: argparse.Namespace) -> int:
    from analysis.discover import find_logs
    from analysis.report.publish import publish

    # any store, not only --store; named by its real path, as the report writes it
    check_outside_stores(Path(args.out_dir or config.REPORTS_DIR).resolve())
    if args.log_dir:
        find_logs([args.log_dir])  # an empty folder: "no logs found" before any kernel starts
    with sigterm_as_interrupt():  # its kernel and temporary folder go, as with Ctrl-C
        done = publish(args.log_dir, args.out_dir, langs=args.lang, to=args.to, env=args.env,
                       topology=args.topology, method=args.method, warmup=args.warmup,
                       measure=args.measure, title=args.title, meta=args.meta,
                       baseline=args.baseline, store=args.store, threshold=args.threshold,
                       references=args.references, log_base_url=args.log_base_url)
    for path in done.all_files():
        print(path)
    return 0
