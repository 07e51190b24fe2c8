"""A report's log links open the logs whatever their names hold: a '#' or '?' in a name
would end the link's path (the rest read as a fragment or a query), a '%' start an escape,
a ':' in the first segment make a URL scheme; the path is percent-encoded, then escaped."""

from __future__ import annotations

import os
import re
import shutil
from html import unescape
from pathlib import Path
from urllib.parse import unquote, urlsplit

from analysis.report import build

LOG = "dll_pytorch/current_version/1n1g/r50_b256_amp_1.log"
NAMES = ["r50_b256_amp_1 x#y?.log", "r50_b256_amp_2 100%25 'q\".log", "r50_b256_amp_3#.log"]


def _hrefs(html: str) -> list[str]:
    return [unescape(h) for h in re.findall(r'<a href="([^"]*)"', html)]


def test_each_log_link_resolves_to_its_log(tmp_path, data_dir):
    logs = tmp_path / "logs: a#b" / "1n1g"
    logs.mkdir(parents=True)
    for name in NAMES:
        shutil.copy(data_dir / LOG, logs / name)
    report = tmp_path / "report"
    report.mkdir()
    html = build(logs.parent, lang="en", link_base=report).log_table().to_html()
    hrefs = _hrefs(html)
    assert len(hrefs) == len(NAMES)
    for h in hrefs:
        parts = urlsplit(h)
        assert (parts.scheme, parts.query, parts.fragment) == ("", "", ""), h
    opened = {Path(os.path.normpath(report / unquote(h))) for h in hrefs}
    assert opened == {logs / name for name in NAMES}
