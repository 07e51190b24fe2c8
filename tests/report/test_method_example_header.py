"""The method section's example line: a row of a pipe table is quoted under its header, so
the reader knows which number is the one the rule reads; a plain line is quoted alone."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

from analysis.logtext import LogText
from analysis.report.build import build
from analysis.report.family import table_header

ROOT = Path(__file__).resolve().parents[2]

TABLE = (b"starting\n"
         b"| step | samples | throughput |\n"
         b"| ---- | ------- | ---------- |\n"
         b"| 1    | 8       | 0.8        |\n"
         b"| 2    | 16      | 24.1       |\n"
         b"done\n")


def test_a_table_row_gets_its_header():
    log = LogText.from_bytes(TABLE, "t.log")
    assert table_header(log, 5) == "| step | samples | throughput |"
    assert table_header(log, 4) == "| step | samples | throughput |"


def test_lines_that_are_no_table_row_get_none():
    log = LogText.from_bytes(TABLE, "t.log")
    assert table_header(log, 1) == "" and table_header(log, 6) == ""
    assert table_header(log, 2) == ""  # the header itself has no header above it
    headless = LogText.from_bytes(b"x\n| --- | --- |\n| 1 | 2 |\n", "h.log")
    assert table_header(headless, 3) == ""  # a rule row names no column


def test_gpt_method_quotes_the_header_then_the_row():
    rep = build(ROOT / "data" / "raw_logs" / "gpt_4gpu", lang="en")
    text = unescape(re.sub(r"<[^>]+>", " ", rep.method_section()))
    head = text.index("| step ")
    assert "throughput" in text[head:head + 200] and "latency" in text[head:head + 200]
    assert re.search(r"\| step [^\n]*\n\s*\| 20 ", text[head:]), text[head:head + 400]


def test_precision_is_said_once_in_the_descriptions():
    """What precision ran is a fact of the Test Descriptions; the method section two pages
    before it does not repeat the line (its extra line cost the ResNet report a page)."""
    rep = build(ROOT / "data" / "raw_logs" / "rn50_4gpu", lang="en")
    label = "FP32 (TF32 on for matmuls and convolutions)"
    assert label not in rep.method_section()
    assert label in unescape(re.sub(r"<[^>]+>", " ", rep.section("descriptions")))
