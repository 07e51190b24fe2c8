"""The method section's example line: a row of a pipe table is quoted under its header, so
the reader knows which number is the one the rule reads; a plain line is quoted alone."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

from analysis.logtext import LogText
from analysis.report.build import build
from analysis.report.sections.method import table_header

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
    text = str(rep.method_section())
    # a Markdown table: the header's names over the row's values, cell by cell
    rows = re.search(r"\n(\| step \|[^\n]*)\n(\|[ -:|]+)\n(\| 20 \|[^\n]*)\n", text)
    assert rows, text
    head, row = ([c.strip() for c in r.strip("|").split("|")] for r in rows.group(1, 3))
    assert len(head) == len(row) == 8
    assert dict(zip(head, row))["latency"] == "0.12214"
    # the family's format named as a format, the framework as what ran
    assert "**PyTorch runs (41; logged in the OneFlow GPT table format).** Rule (" in text


def test_precision_is_said_once_in_the_descriptions():
    """What precision ran is a fact of the Test Descriptions; the method section two pages
    before it does not repeat the line (its extra line cost the ResNet report a page)."""
    rep = build(ROOT / "data" / "raw_logs" / "rn50_4gpu", lang="en")
    label = "FP32 (TF32 on for matmuls and convolutions)"
    assert label not in rep.method_section()
    assert label in unescape(re.sub(r"<[^>]+>", " ", rep.section("descriptions")))


def test_cells_pair_only_where_the_row_matches_its_header():
    from analysis.report.sections.method import FamilyRule

    rule = FamilyRule("f", "PyTorch", "r", 1, example_text="| 2 | 16 | 24.1 |",
                      example_header="| step | samples | throughput |")
    assert rule.example_cells() == [("step", "2"), ("samples", "16"), ("throughput", "24.1")]
    short = FamilyRule("f", "PyTorch", "r", 1, example_text="| 2 | 16 |",
                       example_header="| step | samples | throughput |")
    assert short.example_cells() == []  # quoted as the line it is, not mislabelled
    assert FamilyRule("f", "x", "r", 1, example_text="Iteration: 25").example_cells() == []
