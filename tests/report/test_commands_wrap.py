"""The report's launch-commands table fits a printed page: long run ids wrap, and no cell
reaches past the page (measured in headless Chromium)."""

from __future__ import annotations

import re

import pandas as pd

from analysis.report import styled
from analysis.report.styled import CSS_PATH

#: CSS pixels of a Letter page's printable width (816 px less Chromium's default margins);
#: narrower than the A4 width too.
PAGE_WIDTH = 700
RUN = "1n1g/pretrain_gpt_1n1d_dp1_mp1_pp1_mbz8_gbz8_s2048_l24_h2304_nh24"  # gpt_4gpu's
COMMAND = ("/opt/torch/.venv/bin/python3 -m torch.distributed.run --standalone "
           "--nproc_per_node 1 -m workloads.gpt --tensor-model-parallel-size 1 "
           "--pipeline-model-parallel-size 1 --micro-batch-size 8 --global-batch-size 8 "
           "--num-layers 24 --hidden-size 2304 --num-attention-heads 24 --seq-length 2048 "
           "--train-iters 20 --log-interval 1 --precision bf16 --device cuda "
           "--dist-backend nccl --compile")


def _page(rows) -> str:
    frame = pd.DataFrame(rows, columns=["case", "node", "runs", "command"])
    table = styled.table(frame, "commands", "lrrl", markup={
        "case": styled.label_words}, code=["command"]).to_html()
    return (f"<html><head><style>{CSS_PATH.read_text(encoding='utf-8')}</style></head>"
            f'<body style="margin:0"><div class="dlperf-report" id="page">{table}</div>'
            "</body></html>")


def test_case_labels_break_after_slashes_and_underscores_only(browser):
    """``1n1g/resnet50_b128_fp32`` may wrap after ``/`` and ``_``, never inside
    ``resnet50`` (the column took 8 characters and cut it as ``1n1g/res|net50_b1|28_fp32``)."""
    page = browser.new_page(viewport={"width": PAGE_WIDTH, "height": 1000})
    page.emulate_media(media="print")
    page.set_content(_page([["1n1g/resnet50_b128_fp32", "0", "5", COMMAND], [RUN, "0", "5", COMMAND]]))
    pieces = page.evaluate("""() => {
        const out = [];
        for (const td of document.querySelectorAll('table.dlperf-commands tbody tr td:first-child')) {
            for (const node of td.childNodes) {
                if (node.nodeType !== Node.TEXT_NODE) continue;
                const range = document.createRange();
                range.selectNodeContents(node);
                out.push([node.textContent, range.getClientRects().length]);
            }
        }
        return out; }""")
    right = page.evaluate("document.getElementById('page').getBoundingClientRect().right")
    edge = page.evaluate("""() => Math.max(...Array.from(document.querySelectorAll(
        'table.dlperf-commands td')).map(e => e.getBoundingClientRect().right))""")
    page.close()
    assert ["resnet50_", 1] in pieces and ["pretrain_", 1] in pieces
    assert all(lines == 1 for _, lines in pieces), pieces  # no piece is cut inside
    assert edge <= right + 0.5


def test_launch_table_names_gpt_cases_as_page_one():
    """GPT case folders (``1n1g/pretrain_gpt_1n1d_dp1_…_nh16``) wrap to three lines; the
    table gives page 1's names and one folder for an example. ResNet's names stand for
    several folders, so its folders stay."""
    from pathlib import Path

    from analysis.report.build import build

    root = Path(__file__).resolve().parents[2] / "data" / "raw_logs"
    gpt = build(root / "gpt_4gpu", lang="en").commands().to_html()
    assert "DP_1x1x1_8_1536x16" in re.sub(r"<[^>]+>", "", gpt)
    assert "Cases are named as on page 1" in gpt
    assert gpt.count("pretrain_gpt_") == 1  # the one example folder in the caption
    rn50 = build(root / "rn50_4gpu", lang="en").commands().to_html()
    assert "1n4g/resnet50_b256_amp" in re.sub(r"<[^>]+>", "", rn50) and "page 1" not in rn50
