"""The GPT strategies table of the real 4-GPU GPT campaign (data/raw_logs/gpt_4gpu) on a
printed A4 page, measured in headless Chromium: the table fits the page, a header wraps only
between words or labels (never between two letters of an English word or two Chinese
characters), each case (the chart's label) and each row naming a model is one line inside
the page, and the notes are readable sentences under the table instead of a column a few
characters wide."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT

from analysis.report import build
from analysis.report.build import Report
from analysis.report.styled import CSS_PATH

GPT = ROOT / "data" / "raw_logs" / "gpt_4gpu"
#: CSS pixels a report's output has across a printed A4 page: 186 mm (210 mm less the 12 mm
#: margins, 703 px) less the notebook output area's own margins (46 px), as measured in a
#: published report
PAGE_WIDTH = 657
#: the report's body text size (JupyterLab's --jp-content-font-size1, which nbconvert embeds)
BODY_PX = 14
#: per character of each header and case cell: its text and the top of its line box
LINES_JS = """sel => Array.from(document.querySelectorAll(sel)).map(cell => {
    const out = [];
    const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) {
        for (let i = 0; i < node.length; i++) {
            const r = document.createRange();
            r.setStart(node, i); r.setEnd(node, i + 1);
            const box = r.getClientRects()[0];
            if (box) out.push([node.data[i], box.top]);
        }
    }
    return out;
})"""


@pytest.fixture(scope="module")
def reports():
    data = build(GPT, lang="en").data  # parsed once, both languages
    return {lang: Report(data, lang=lang) for lang in ("en", "zh")}


@pytest.fixture(scope="module")
def strategies(reports):
    return {lang: rep.gpt_strategies() for lang, rep in reports.items()}


def _render(browser, styler):
    page = browser.new_page(viewport={"width": PAGE_WIDTH, "height": 1000})
    page.emulate_media(media="print")
    page.set_content(f"<html><head><style>{CSS_PATH.read_text(encoding='utf-8')}</style>"
                     f'</head><body style="margin:0; font-size:{BODY_PX}px">'
                     f'<div class="dlperf-report" id="page">'
                     f"{styler.to_html()}</div></body></html>")
    return page


def _breaks(chars: list) -> list[tuple[str, str]]:
    """The (last character, first character) around each line break of one cell."""
    return [(a[0], b[0]) for a, b in zip(chars, chars[1:]) if b[1] > a[1] + 1]


def _inside_word(a: str, b: str) -> bool:
    return bool(re.fullmatch(r"\w", a) and re.fullmatch(r"\w", b))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_strategies_table_fits_a4_and_wraps_between_words(browser, strategies, lang):
    page = _render(browser, strategies[lang])
    right = page.evaluate("document.getElementById('page').getBoundingClientRect().right")
    edges = page.evaluate("""() => Array.from(document.querySelectorAll(
        'table.dlperf-gpt-parallel th, table.dlperf-gpt-parallel td'))
        .map(e => e.getBoundingClientRect().right)""")
    headers = page.evaluate(LINES_JS, "table.dlperf-gpt-parallel thead th")
    cases = page.evaluate(LINES_JS, "table.dlperf-gpt-parallel tbody td:first-child")
    rows = page.evaluate("""() => Array.from(document.querySelectorAll(
        'table.dlperf-gpt-parallel tbody tr')).map(r => r.getBoundingClientRect().height)""")
    texts = page.evaluate("""() => Array.from(document.querySelectorAll(
        'table.dlperf-gpt-parallel tbody td:first-child')).map(
        td => { const r = document.createRange(); r.selectNodeContents(td);
                return r.getBoundingClientRect().height; })""")
    text_right = page.evaluate("""() => Math.max(...Array.from(document.querySelectorAll(
        'table.dlperf-gpt-parallel tbody td:first-child')).map(
        td => { const r = document.createRange(); r.selectNodeContents(td);
                return r.getBoundingClientRect().right; }))""")
    page.close()
    assert max(edges) <= right + 0.5, (max(edges), right)
    for chars in headers:
        label = "".join(c for c, _ in chars)
        bad = [pair for pair in _breaks(chars) if _inside_word(*pair)]
        assert not bad, f"header {label!r} wraps inside a word at {bad}"
    # every case of the committed campaign (data/raw_logs/gpt_4gpu) and a row per model
    assert len(cases) == 14 + 2
    for chars in cases:
        assert not _breaks(chars), "".join(c for c, _ in chars)
    assert text_right <= right + 0.5, (text_right, right)
    # a row is as high as its case name's lines: no note squeezed into a narrow column
    assert all(row < text + 8 for row, text in zip(rows, texts, strict=True)), (rows, texts)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_configurations_table_fits_a4_and_wraps_between_words(browser, reports, lang):
    """Page 1's table of the GPT cases (9 columns, 14 cases and a row naming each of the two
    models) stays on the page at print size, and its headers wrap between words only."""
    page = _render(browser, reports[lang].gpt_configurations())
    right = page.evaluate("document.getElementById('page').getBoundingClientRect().right")
    edges = page.evaluate("""() => Array.from(document.querySelectorAll(
        'table.dlperf-gpt-cases th, table.dlperf-gpt-cases td')).map(
        e => e.getBoundingClientRect().right)""")
    headers = page.evaluate(LINES_JS, "table.dlperf-gpt-cases thead th")
    page.close()
    assert len(edges) == 9 * 17 and max(edges) <= right + 0.5, (max(edges), right)
    for chars in headers:
        label = "".join(c for c, _ in chars)
        bad = [pair for pair in _breaks(chars) if _inside_word(*pair)]
        assert not bad, f"header {label!r} wraps inside a word at {bad}"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_strategies_notes_are_under_the_table(strategies, lang):
    styler = strategies[lang]
    html = styler.to_html()
    caption = re.search(r"<caption>(.*?)</caption>", html, re.S).group(1)
    pp4 = "PP_1x1x4_64_1536x16"
    note = ("measured PP loss 11.4 pp beyond the (p−1)/(m+p−1) bubble" if lang == "en"
            else "实测流水线并行损失比理论气泡 (p−1)/(m+p−1) 高 11.4 个百分点")
    assert f"{pp4}: {note}" in caption.replace("&nbsp;", " ") or \
        f"{pp4}：{note}" in caption
    # its row, by the chart's label, in the first model's rows (the second has no PP 1×1×4)
    marker = styler.data.loc[styler.data.iloc[:, 0] == "PP 1×1×4 B64"].iloc[0, -1]
    assert re.fullmatch(r"\[\d+\]", marker), marker
    assert f"{marker} {pp4}" in caption  # the row's note is the case's
    names = caption.split("<br>")[1]  # the line that maps labels to case names
    assert "DP_1x1x1_8_1536x16" in names and "DP 1×1×1 B8" in names, names
