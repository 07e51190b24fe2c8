"""The report of an MLPerf campaign, read in Chromium as a reader sees it: its score (the time
to train, as ``summarize`` prints it) on page 1 with the GPUs as stated, and the throughput
tables, which do not apply, neither shown as dashes nor as "no throughput"."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.report.publish import publish

UNET3D = Path(__file__).resolve().parents[1] / "data" / "real" / "mlperf_v1_0_google_jax_unet3d"


def _page_text(browser, html: Path) -> str:
    page = browser.new_page(viewport={"width": 1200, "height": 1000})
    try:
        page.goto(html.as_uri())
        return page.inner_text("body")
    finally:
        page.close()


@pytest.mark.parametrize("meta, devices", [(None, "an unstated number of GPUs"),
                                           ({"num_nodes": 128, "gpus_per_node": 4}, "512 GPUs")])
def test_mlperf_report_shows_its_time_to_train(tmp_path, browser, meta, devices):
    """The report showed dashes, "No throughput", "on 1 to 0 GPUs" and "bsz <NA>" where
    summarize gives the published score, 6.17 min."""
    out = publish(UNET3D, tmp_path, langs="en", to="html", progress=None, meta=meta)
    text = _page_text(browser, out.files["en"]["html"])
    head = text[:text.index("How the numbers were computed", text.index("these caveats"))]
    assert "6.17 min" in head and "Time to train" in head, head
    assert f"unet3d (MLPerf, {devices}): 6.17 min" in head, head
    assert f"on {devices}" in head, head
    for wrong in ("1 to 0 GPUs", "<NA>", "No throughput", "bsz", "n = 0"):
        assert wrong not in text, wrong


RESNET = Path(__file__).resolve().parents[1] / "data" / "real" / "mlperf_v1_0_google_tf_resnet"


def test_mlperf_report_without_a_score_says_why(tmp_path, browser):
    """Two of five resnet runs aborted leave no score (the rule drops at most one): page 1
    fell back to the throughput layout, a row `bsz <NA>` of dashes and no "no score"
    anywhere, while summarize says why. It keeps the time-to-train layout and says so."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for src in sorted(RESNET.glob("result_*.txt")):
        text = src.read_text()
        if src.name in ("result_3.txt", "result_4.txt"):
            assert '"status": "success"' in text
            text = text.replace('"status": "success"', '"status": "aborted"')
        (logs / src.name).write_text(text)
    out = publish(logs, tmp_path / "out", langs="en,zh", to="html", progress=None)
    en = _page_text(browser, out.files["en"]["html"])
    head = en[:en.index("How the numbers were computed", en.index("these caveats"))]
    assert ("resnet (MLPerf, an unstated number of GPUs): no time to train (2 of 5 runs "
            "aborted; the MLPerf rule drops at most 1: no score)") in head, head
    zh = _page_text(browser, out.files["zh"]["html"])
    assert "resnet（MLPerf，未注明数量的 GPU）：无训练时间，没有成绩（2 of 5 runs aborted" in zh, zh
    for text in (en, zh):
        for wrong in ("<NA>", "bsz", "每卡批大小", "Throughput, speedup", "\t-\t", "n = 0"):
            assert wrong not in text, wrong
