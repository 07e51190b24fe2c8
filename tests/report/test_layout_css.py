"""report.css is well formed: every block closed, none closed twice. A stray `}` made
Chromium drop the `:root` font rule after it, and an unclosed `@media print {` kept the
problems and GPT strategies rules out of the HTML (they applied in print only)."""

from __future__ import annotations

import re

from analysis.report.styled import CSS_PATH


def test_report_css_braces_balance():
    text = re.sub(r"/\*.*?\*/", "", CSS_PATH.read_text(encoding="utf-8"), flags=re.S)
    depth = 0
    for number, line in enumerate(text.splitlines(), start=1):
        for char in line:
            depth += {"{": 1, "}": -1}.get(char, 0)
            assert depth >= 0, f"report.css line {number}: '}}' closes nothing"
    assert depth == 0, f"report.css: {depth} block(s) left open"
