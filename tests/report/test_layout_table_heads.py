"""A table does not start at a page foot with its header row alone (its rows, the header
repeated, on the next page): seen in the printed report of the OneFlow GPT fixture, whose
Problems table began on page 4 with "run kind reason line text" and nothing under it."""

from __future__ import annotations

import re
import subprocess

import pytest
from conftest import ROOT

from analysis.report.publish import publish

pytestmark = pytest.mark.slow

#: The Problems table's header row as pdftotext -layout prints it.
HEADER = re.compile(r"^\s*run\s+kind\s+reason\s+line\s+text\s*$", re.M)
#: Words of its rows in this fixture (each problem's kind column).
ROW = re.compile(r"non-finite|conflict|unreadable")


def test_no_table_header_is_left_alone_at_a_page_foot(tmp_path):
    result = publish(ROOT / "tests" / "data" / "oneflow_gpt", tmp_path, langs="en", to="pdf",
                     progress=None)
    pdf = str(result.files["en"]["pdf"])
    pages = int(re.search(r"Pages:\s+(\d+)", subprocess.run(
        ["pdfinfo", pdf], capture_output=True, text=True, check=True).stdout).group(1))
    headed = 0
    for n in range(1, pages + 1):
        text = subprocess.run(["pdftotext", "-layout", "-f", str(n), "-l", str(n), pdf, "-"],
                              capture_output=True, text=True, check=True).stdout
        if HEADER.search(text):
            headed += 1
            assert ROW.search(text), f"page {n}: the Problems table's header without a row"
    assert headed >= 1
