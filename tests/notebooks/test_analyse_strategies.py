"""10_analyse executed with papermill on the bundled GPT campaign (its default): the
strategies table answers "which case scales worst and why" with the report's care
(efficiency in % with its range over the repeats, the DP implementation, notes on
baselines of another implementation and on unresolved orders), the markdown beside it
says what the suite does not measure, and the summary stays narrow."""

from __future__ import annotations

import re

import nbformat
import papermill as pm
import pytest
from conftest import ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    out = tmp_path_factory.mktemp("analyse") / "10_analyse.ipynb"
    pm.execute_notebook(str(ROOT / "notebooks" / "10_analyse.ipynb"), str(out),
                        cwd=str(out.parent), progress_bar=False)
    return nbformat.read(out, as_version=4)


def _html(nb, start: str) -> str:
    [cell] = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(start)]
    return "".join(o.get("data", {}).get("text/html", "") for o in cell.outputs)


def _static_table(html: str) -> tuple[list[str], dict[str, list[str]]]:
    """(headers, case -> cells) of the static copy itables puts beside its interactive
    table (what a viewer without JavaScript shows)."""
    static = html[html.rindex("<thead", 0, html.index("static_preview")):]
    head, body = static.split("</thead>", 1)
    headers = [re.sub(r"<[^>]+>", "", h).split("ⓘ")[-1]
               for h in re.findall(r"<th[^>]*>(.*?)</th>", head)]
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", body)]
    return headers, {r[0]: r for r in rows if r}


def test_strategies_table_states_ranges_implementation_and_notes(executed):
    html = _html(executed, "strategies = gpt_parallel.strategies(")
    headers, rows = _static_table(html)
    assert headers == ["case", "GPUs", "DP×TP×PP", "DP impl.", "vs 1 GPU", "vs 1 GPU, range",
                       "vs DP", "TP lost", "PP loss", "bubble, theory", "notes"]
    # what only widened the view is left to the `strategies` frame
    assert "global_batch" not in html and "tflops" not in html
    mp, two_d = rows["MP_1x4x1_8_1536x16"], rows["2D_2x2x1_16_1536x16"]
    assert mp[1:8] == ["4", "1×4×1", "", "38.1\u00a0%", "36.7–40.5\u00a0%", "42.1\u00a0%",
                       "61.9\u00a0%"]
    assert two_d[3:9] == ["FSDP2", "40.5\u00a0%", "38.7–44.1\u00a0%", "44.8\u00a0%",
                          "55.4\u00a0%", "-"]
    assert "includes FSDP2's cost over DDP" in two_d[-1]
    assert "range overlaps MP_1x4x1_8_1536x16's: order not resolved" in two_d[-1]
    assert mp[-1] == "range overlaps 2D_2x2x1_16_1536x16's: order not resolved"
    assert rows["DP_4x1x1_32_1536x16"][3:6] == ["DDP", "90.4\u00a0%", "89.8–90.6\u00a0%"]
    assert len(rows) == 14


def test_the_markdown_beside_it_says_what_is_not_measured_and_how_to(executed):
    cells = [c.source for c in executed.cells]
    at = next(i for i, s in enumerate(cells) if s.startswith("strategies = gpt_parallel"))
    note = cells[at + 1]
    assert note.startswith("**What the suite does not measure: communication and kernel time.**")
    assert "torch.profiler" in note and "NCCL_DEBUG=INFO" in note


def test_the_summary_stays_narrow(executed):
    """The bundled GPT cases differ in more than the GPU count: no speedup or efficiency
    column in the summary, which keeps to at most 14 columns."""
    html = _html(executed, "summary[")
    assert "throughput_median" in html and "scaling_efficiency" not in html
    assert len(re.findall(r"<th>", html.split("</thead>")[0])) <= 14
