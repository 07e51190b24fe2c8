"""Reports after attack 13: the same report printed twice gives the same PDF bytes under load."""

from __future__ import annotations

import re

from analysis.report import webpdf


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
