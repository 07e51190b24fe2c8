"""`dlperf report` end to end: HTML checked in headless Chromium, PDF rendered and read back."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from conftest import expected_medians

pytestmark = pytest.mark.slow

HEADINGS = {
    "en": ["Test Results", "How the numbers were computed", "Charts", "Test Descriptions",
           "Test Environment", "Problems", "Test Scripts", "Logs"],
    "zh": ["测试结果", "计算方法", "图表", "测试说明", "测试环境", "异常运行", "测试脚本", "日志"],
}
#: What page 1 of the PDF answers: the key-numbers header, the caveats, n beside the numbers.
PAGE_ONE = {
    "en": ["Read the numbers with these caveats", "Few repeats", "1 GPU, samples/s",
           "largest configuration", "2n8g", "(n = 3)", "Test Results"],
    "zh": ["阅读以下数据前请注意", "重复次数少", "单卡吞吐率", "最大规模配置", "2n8g", "（n = 3）",
           "测试结果"],
}


def test_all_outputs_written(published):
    for lang in ("en", "zh"):
        files = published.files[lang]
        for kind in ("ipynb", "html", "pdf", "json"):
            assert files[kind].is_file() and files[kind].stat().st_size > 0, (lang, kind)
        assert files["ipynb"].parent == published.out_dir
        numbers = json.loads(files["json"].read_text())
        got = {(c["num_nodes"], c["gpus_per_node"]): c["throughput_median"] for c in numbers["cases"]}
        want = expected_medians()
        assert got.keys() == want.keys()
        for k, v in want.items():
            assert got[k] == pytest.approx(v, rel=1e-4), k
        assert numbers["runs"] == 9


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_html_in_chromium(published, browser, lang, artifacts_dir):
    html_path = published.files[lang]["html"]
    text = html_path.read_text()
    assert "cdnjs.cloudflare.com" not in text and "<script src=" not in text  # self-contained
    assert re.search(r'<svg [^>]*aria-label="', text)  # charts inline, as vector images
    assert "&lt;script&gt;document.title=" in text and "PWNED" in text
    assert '<script>document.title' not in text
    page = browser.new_page(viewport={"width": 1200, "height": 1600})
    page.goto(html_path.as_uri())
    # the appendix is folded on screen; a reader opens it
    appendix = page.locator("details.dlperf-appendix")
    assert appendix.count() == 1 and appendix.get_attribute("open") is None
    appendix.evaluate("e => { e.open = true; }")
    assert page.locator("nav.dlperf-langs a").get_attribute("href") == \
        f"report_{'zh' if lang == 'en' else 'en'}.html"
    # the <script> log line is text, and it did not run
    assert page.title() != "PWNED"
    assert page.evaluate("document.title") != "PWNED"
    problems = page.locator("table.dlperf-problems").inner_text()
    assert '<script>document.title="PWNED"</script>' in problems
    assert page.locator("table.dlperf-problems script").count() == 0
    # text left, numbers right, whatever JupyterLab's table style says
    def align(loc):
        return loc.evaluate("e => getComputedStyle(e).textAlign")

    cells = page.locator("table.dlperf-problems tbody tr").first.locator("td")
    assert [align(cells.nth(i)) for i in range(5)] == ["left", "left", "left", "right", "left"]
    template = page.locator("table.dlperf-commands caption code").first  # the command template
    assert "Mono" in template.evaluate("e => getComputedStyle(e).fontFamily")
    assert align(page.locator("table.dlperf-commands tbody td").first) == "left"
    assert align(page.locator("table.dlperf-results tbody td").nth(7)) == "right"
    assert align(page.locator("table.dlperf-results tbody td").nth(0)) == "left"
    # input cells hidden: no code of the notebook in the page
    assert "report.build(" not in page.locator("body").inner_text()
    headings = page.locator("h2").all_inner_texts()
    for h in HEADINGS[lang]:
        assert any(h in x for x in headings), (h, headings)
    assert page.locator("html").get_attribute("lang") == lang
    # the contents line links to every section
    toc = page.locator("a[href^=\"#sec-\"]").all_inner_texts()
    assert toc == HEADINGS[lang]
    # topology: once, as the coloured matrix (no verbatim copy beside it)
    assert page.locator("pre", has_text="CPU Affinity").count() == 0
    matrix = page.locator("table.dlperf-topo-matrix").first
    assert matrix.locator("tbody tr").count() == 9  # GPU0..7 + mlx5_0
    nv_cell = matrix.locator("tbody tr").nth(0).locator("td").nth(2)
    assert nv_cell.inner_text() == "NV1"
    assert nv_cell.evaluate("e => getComputedStyle(e).backgroundColor") != "rgba(0, 0, 0, 0)"
    # results: seed layout, one row per configuration, in order, n beside the median
    table = page.locator("table.dlperf-results").first
    header = table.locator("thead th").all_inner_texts()
    if lang == "en":
        assert header == ["group", "nodes", "GPUs per node", "GPUs", "batch per GPU",
                          "memory, framework peak (MiB)", "memory, nvidia-smi (MiB)",
                          "Throughput (samples/s)", "interval (min–max)", "n", "Speedup",
                          "Scaling efficiency"]
    rows = [table.locator("tbody tr").nth(i).locator("td").all_inner_texts() for i in range(3)]
    assert [r[1:5] for r in rows] == [["1", "1", "1", "128"], ["1", "8", "8", "128"],
                                      ["2", "8", "16", "128"]]
    want = expected_medians()
    assert rows[0][7] == f"{want[(1, 1)]:,.2f}"
    assert rows[2][7] == f"{want[(2, 8)]:,.2f}"
    assert rows[0][9] == "3"  # n
    assert rows[0][10] == "1.00"
    assert rows[2][10] == f"{want[(2, 8)] / want[(1, 1)]:.2f}"
    # page 1: the key numbers come first
    key = page.locator("table.dlperf-key-numbers tbody tr").first.locator("td")
    assert key.nth(1).inner_text().startswith(f"{want[(1, 1)]:,.2f}")
    # scripts recorded by the campaign, and the log index with relative links
    assert "node_rank" in page.locator("table.dlperf-commands thead").inner_text()
    links = page.locator("table.dlperf-logs a")
    assert links.count() == 9
    href = links.first.get_attribute("href")
    assert not href.startswith("/") and href.endswith("r50_b128_fp32_1.log")
    assert (html_path.parent / href).resolve().is_file()
    charts = page.locator(".jp-RenderedSVG > svg")  # no empty chart is drawn
    assert charts.count() == 4 and page.locator(".jp-RenderedSVG img").count() == 0
    for i in range(4):  # each names itself and its values (alt text), each mark its value
        assert charts.nth(i).get_attribute("aria-label")
        assert charts.nth(i).locator("g[id^='dlperf-hover-'] title").count() > 0
    shot = artifacts_dir / f"report_{lang}.png"
    page.screenshot(path=str(shot), full_page=False)
    page.locator("table.dlperf-results").screenshot(path=str(artifacts_dir / f"results_{lang}.png"))
    page.close()
    assert shot.stat().st_size > 10_000


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_pdf_text_and_pages(published, lang, artifacts_dir):
    pdf = published.files[lang]["pdf"]
    assert pdf.read_bytes()[:5] == b"%PDF-"
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout
    for h in HEADINGS[lang]:
        assert h in text, h
    assert '<script>document.title="PWNED"</script>' in text.replace("\n", "")
    first = " ".join(subprocess.run(["pdftotext", "-l", "1", str(pdf), "-"],
                                    capture_output=True, text=True, check=True).stdout.split())
    for words in PAGE_ONE[lang]:
        assert words in first, words
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True,
                          check=True).stdout
    assert "(A4)" in info, info
    assert "NV1" in text  # the topology, once: its coloured matrix
    prefix = artifacts_dir / f"pdf_{lang}"
    subprocess.run(["pdftoppm", "-png", "-r", "60", "-f", "1", "-l", "4", str(pdf), str(prefix)],
                   check=True)
    pages = sorted(artifacts_dir.glob(f"pdf_{lang}-*.png"))
    assert len(pages) >= 3


def test_pdf_fonts_are_noto_not_ar_pl(published):
    assert shutil.which("pdffonts"), "pdffonts missing: run make setup (apt poppler-utils)"
    fonts = subprocess.run(["pdffonts", str(published.files["zh"]["pdf"])], capture_output=True,
                           text=True, check=True).stdout
    assert "AR PL" not in fonts and "Kaiti" not in fonts and "Sungti" not in fonts


def test_a_pdf_build_without_chromium_is_refused_before_any_kernel(tmp_path, monkeypatch):
    """It was said after both languages had executed (seconds of work thrown away)."""
    from analysis.report import publish as publishing

    monkeypatch.setenv("DLPERF_CHROMIUM", str(tmp_path / "no-chromium"))
    started = []
    monkeypatch.setattr(publishing, "execute_notebook", lambda *a, **k: started.append(a))
    with pytest.raises(publishing.PublishError, match=r"PDF export needs Chromium, and "
                       r".*no-chromium is not an executable file \(set DLPERF_CHROMIUM"):
        publishing.publish(tmp_path, tmp_path / "out", langs="en", to="html,pdf",
                           progress=None)
    assert started == [] and not (tmp_path / "out" / "report_en.html").exists()
