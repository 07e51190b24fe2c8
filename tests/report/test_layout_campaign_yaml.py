"""The campaign YAML of the report's appendix is for screens: the HTML shows it whole, as
written; on paper it is left out (the real GPT campaign's 197-line campaign.yaml took a page
and a third even in three columns of 6.5 pt type, below the 8 pt a printed table gets, and
repeated the launch commands above it). Measured in headless Chromium, in the cell layout of
a published report."""

from __future__ import annotations

import pytest
from conftest import ROOT

from analysis.report import build
from analysis.report.build import cell_html
from analysis.report.styled import CSS_PATH

GPT = ROOT / "data" / "raw_logs" / "gpt_4gpu"
#: CSS pixels a report's output has across a printed A4 page: 186 mm (210 mm less the 12 mm
#: margins, 703 px) less the notebook output area's own margins (46 px), as measured in a
#: published report
PAGE_WIDTH = 657
#: CSS pixels of an A4 page's printable height (297 mm less the report's 14 mm margins)
PAGE_HEIGHT = 1016
#: the report's body text size (JupyterLab's --jp-content-font-size1, which nbconvert embeds)
BODY_PX = 14


@pytest.fixture(scope="module")
def report():
    return build(GPT, lang="en")


def _measure(browser, fragment: str, media: str) -> list:
    page = browser.new_page(viewport={"width": PAGE_WIDTH, "height": 1000})
    page.emulate_media(media=media)
    page.set_content(f"<html><head><style>{CSS_PATH.read_text(encoding='utf-8')}</style>"
                     f'</head><body style="margin:0; font-size:{BODY_PX}px">'
                     f'<div class="jp-Cell"><div class="jp-RenderedMarkdown">{fragment}</div>'
                     "</div></body></html>")
    found = page.evaluate("""() => Array.from(document.querySelectorAll('pre')).map(p => [
        p.textContent, p.getBoundingClientRect().height, p.getBoundingClientRect().right])""")
    page.close()
    return found


def test_campaign_yaml_is_not_printed(browser, report):
    yaml_text = (GPT / "campaign.yaml").read_text(encoding="utf-8").rstrip("\n")
    assert yaml_text.count("\n") > 150  # the case this test is about: a long campaign
    blocks = _measure(browser, cell_html(report.campaign_yaml()), "print")
    shown = [h for text, h, _ in blocks if text.rstrip("\n") == yaml_text]
    assert shown == [0] or shown == [], shown  # in the page, but takes no room on paper


def test_campaign_yaml_on_screen_is_one_column_as_written(browser, report):
    yaml_text = (GPT / "campaign.yaml").read_text(encoding="utf-8").rstrip("\n")
    blocks = _measure(browser, cell_html(report.campaign_yaml()), "screen")
    heights = [h for text, h, _ in blocks if text.rstrip("\n") == yaml_text]
    assert heights and heights[0] > 2 * PAGE_HEIGHT  # the HTML keeps the full listing
