"""The notebook-native appendix sections, published and printed (headless Chromium, print
media, the report's own page): the topology text is set in monospace so that its columns
line up, a cell that shows nothing takes no room, a Markdown link target takes no room and
keeps the heading above it with what follows, and a topology matrix is not split."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=["en", "zh"])
def page(request, published, browser):
    page = browser.new_page(viewport={"width": 800, "height": 1200})
    page.goto(published.files[request.param]["html"].as_uri())
    page.emulate_media(media="print")
    yield page
    page.close()


def test_topology_is_shown_once_in_monospace(page):
    """A topology that parses is its coloured matrix alone (no verbatim copy), in the
    monospace type of the nvidia-smi text."""
    assert page.locator("pre", has_text="CPU Affinity").count() == 0
    cell = page.locator("table.dlperf-topo-matrix td").first
    assert "Mono" in cell.evaluate("e => getComputedStyle(e).fontFamily")


def test_empty_cells_take_no_room(page):
    heights = page.evaluate("""() => Array.from(document.querySelectorAll(
        '.jp-Cell.jp-mod-noOutputs.jp-mod-noInput')).map(e => [e.id,
        e.getBoundingClientRect().height])""")
    assert heights, "the synthetic report has cells that show nothing (no GPT, no baseline)"
    assert all(h == 0 for _, h in heights), heights


def test_link_targets_take_no_room_and_keep_headings_with_their_content(page):
    found = page.evaluate("""() => Array.from(document.querySelectorAll(
        '.jp-RenderedMarkdown p')).filter(p => p.children.length === 1
        && p.firstElementChild.tagName === 'A' && p.firstElementChild.id
        && !p.textContent.trim()).map(p => [p.firstElementChild.id,
        p.getBoundingClientRect().height, getComputedStyle(p).breakAfter])""")
    ids = [i for i, _, _ in found]
    assert "sec-environment" in ids and "node-type-1" in ids and "campaign-yaml" in ids
    assert all(h == 0 and brk == "avoid" for _, h, brk in found), found


def test_topology_matrix_is_not_split(page):
    matrix = page.locator("table.dlperf-topo-matrix").first
    assert matrix.evaluate("e => getComputedStyle(e).breakInside") == "avoid"
