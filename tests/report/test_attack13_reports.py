"""After attack 13: the same report printed twice gives the same PDF bytes under load; a
LiBai log appended with a rerun months later says what its year-less stamps show."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.report import webpdf
from analysis.stats import run_throughput

LIBAI = (Path(__file__).resolve().parents[1] / "data" / "libai" / "gpt2_stdout" / "1n8g"
         / "gpt2_b4_amp_1.log")
STAMP = re.compile(r"\[(\d\d)/(\d\d) (\d\d):(\d\d):(\d\d) ")


def _tagged_pdf(ids: list[int]) -> bytes:
    """The parts of a tagged PDF that carry element IDs, as Chromium 156 writes them: each
    header cell's StructElem, then the ID tree naming them in order, and a bookmark whose
    title only looks like an ID."""
    elems = b"".join(b"%d 0 obj\n<</Type /StructElem\n/S /TH\n/P 96 0 R\n/ID (node%08d)>>\nendobj\n"
                     % (100 + i, n) for i, n in enumerate(ids))
    names = b" ".join(b"(node%08d) %d 0 R" % (n, 100 + i) for i, n in enumerate(ids))
    tree = b"437 0 obj\n<</Limits [(node%08d) (node%08d)]\n/Names [%s]>>\nendobj\n" % (
        ids[0], ids[-1], names)
    return elems + tree + b"441 0 obj\n<</Title (node00000099)>>\nendobj\n"


def test_pdf_element_ids_do_not_depend_on_the_renderer_counter():
    """Two builds under load printed one table header as node00000065 and as node00000066
    (Chromium's DOM node counter, shared with other work), a one-byte difference; the IDs
    are now numbered in order, as wide as before."""
    first = list(range(65, 73)) + list(range(137, 151)) + [3055]
    shifted = [n + 1 for n in first[:8]] + first[8:]
    back = first[:8] + [n - 1 for n in first[8:-1]] + first[-1:]
    fixed = [webpdf.with_fixed_node_ids(_tagged_pdf(ids)) for ids in (first, shifted, back)]
    assert fixed[0] == fixed[1] == fixed[2] != _tagged_pdf(first)
    assert len(fixed[0]) == len(_tagged_pdf(first))
    names = re.findall(rb"\(node(\d{8})\) \d+ 0 R", fixed[0])
    assert names == [b"%08d" % n for n in range(1, len(first) + 1)]
    assert b"/Limits [(node00000001) (node00000023)]" in fixed[0]
    assert b"/Title (node00000099)" in fixed[0]  # not an element's ID: left alone


def test_printed_pdf_numbers_its_element_ids_from_one():
    """The exporter's own output (real Chromium): the header cells' IDs start at 1, not at
    wherever the renderer's counter stood."""
    page = ("<html><body><h1>T</h1><table><tr><th>a</th><th>b</th></tr>"
            "<tr><td>1</td><td>2</td></tr></table></body></html>")
    pdf, = webpdf.SystemChromiumWebPDFExporter().print_pages([page])
    assert re.findall(rb"/ID \(node(\d+)\)", pdf) == [b"00000001", b"00000002"]


def _shifted(text: str, start: datetime) -> str:
    """`text` with its LiBai stamps (11/23 of a year) moved so the first day is `start`'s."""
    offset = start - datetime(2022, 11, 23)

    def moved(m: re.Match) -> str:
        return (datetime(2022, *(int(x) for x in m.groups())) + offset).strftime(
            "[%m/%d %H:%M:%S ")
    return STAMP.sub(moved, text)


@pytest.mark.parametrize("first, days, told", [
    (datetime(2022, 11, 23), 200, "jumps 165.0 days back or about 200 days forward"),
    (datetime(2022, 7, 1), 188, "jumps 177.0 days back or about 188 days forward")])
def test_libai_rerun_appended_months_later_says_the_order_is_unknown(tmp_path, first, days,
                                                                      told):
    """A rerun appended 200 days later read "the timestamp goes back 1.42561e+07 s": the
    stamps print no year, so the jump reads as well back as forward across a new year."""
    text = LIBAI.read_text()
    log = tmp_path / "libai" / "1n8g" / LIBAI.name
    log.parent.mkdir(parents=True)
    log.write_text(_shifted(text, first) + _shifted(text, first + timedelta(days=days)))
    result = parse_paths([tmp_path / "libai"], cache=False)
    reasons = result.problems[result.problems["kind"] == "timestamps_backwards"]["reason"]
    assert [r.split(" from line")[0] for r in reasons] == [
        f"the timestamp {told} across a new year (its stamps print no year)"]
    window = run_throughput(result, "window")  # the first run's figure, as before
    assert window["throughput"].tolist() == [pytest.approx(64.0, abs=0.01)]
