"""Report content without a kernel: escaping, seed tables, comparison, inputs, charts."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from analysis import plots
from analysis.env import folder_records
from analysis.i18n import Translator
from analysis.report import prepared, tables


def _summary(frameworks=("OneFlow",), gpt=False):
    rows = []
    for fw_i, fw in enumerate(frameworks):
        for n, g in ((1, 1), (1, 8), (4, 8)):
            thr = (400.0 - 50 * fw_i) * n * g * 0.9 ** (n * g > 1)
            rows.append(dict(framework=fw, model="resnet50", precision="amp", num_nodes=n,
                             gpus_per_node=g, num_devices=n * g, batch_size_per_device=256,
                             case="", group="", repeats=5, throughput_median=thr,
                             throughput_mean=thr, throughput_std=1.0, throughput_min=thr - 2,
                             throughput_max=thr + 2, interval_low=thr - 1, interval_high=thr + 1,
                             speedup=thr / (400.0 - 50 * fw_i),
                             scaling_efficiency=thr / (400.0 - 50 * fw_i) / (n * g),
                             memory_sampled_mib=12565.0, latency_ms=np.nan, tflops_per_gpu=np.nan,
                             outliers=0, problems=0, interval_kind="min–max",
                             memory_framework_mib=11263.0, memory_framework_max_mib=11263.0,
                             memory_sampled_max_mib=14100.0, memory_flag=True, spread_pct=0.5))
    if gpt:
        rows.append(dict(rows[0], model="gpt", case="DP_8x1x1_16_1536x16", group="DP",
                         num_devices=8, gpus_per_node=8, latency_ms=417.952,
                         memory_sampled_mib=12404.0, throughput_median=38.28, tflops_per_gpu=31.5,
                         interval_low=38.0, interval_high=38.5,
                         speedup=np.nan, scaling_efficiency=np.nan))
    df = pd.DataFrame(rows)
    for c in ("num_nodes", "gpus_per_node", "num_devices", "batch_size_per_device"):
        df[c] = df[c].astype("Int64")
    return df


def test_escape_everything_from_data():
    from analysis.report import prose, styled
    from analysis.report.build import cell_html

    cell = '<script>alert("x")</script>'
    out = styled.table(pd.DataFrame({"a<b": [cell]}), "t").to_html()
    assert "<script>" not in out and "&lt;script&gt;" in out and "a&lt;b" in out
    assert "<script>" not in cell_html(prose.Markdown(prose.code_block(cell)))
    assert prose.inline("run `x<y` <b>") == "run `x<y` &lt;b&gt;"


def test_seed_results_table_layout():
    tr = Translator("en")
    t = tables.results_table(_summary().iloc[:3], tr)
    assert list(t.columns) == ["nodes", "GPUs per node", "GPUs", "batch per GPU",
                               "memory, framework peak (MiB)", "memory, nvidia-smi (MiB)",
                               "Throughput (samples/s)", "interval (min–max)", "n", "Speedup",
                               "Scaling efficiency"]
    assert t.iloc[2].tolist() == ["4", "8", "32", "256", "11,263", "12,565 (max 14,100)",
                                  "11,520.00", "11,519.00–11,521.00", "5", "28.80", "90.0%"]
    zh = tables.results_table(_summary().iloc[:3], Translator("zh"))
    assert zh.columns[0] == "节点数"
    assert zh.columns[6] == "吞吐率（samples/s）"  # the unit, as page 1 states it
    assert zh.columns[7] == "区间（最小–最大）"  # the interval's kind in Chinese, not "min–max"


def test_gpt_table_layout():
    s = _summary(gpt=True)
    runs = pd.DataFrame([dict(case="DP_8x1x1_16_1536x16", data_parallel=8, tensor_parallel=1,
                              pipeline_parallel=1, global_batch_size=16, hidden_size=1536,
                              num_layers=16, num_heads=16)])
    configs = tables.gpt_configurations(s, runs)
    assert configs[["data_parallel", "global_batch_size", "num_heads"]].iloc[0].tolist() == \
        [8, 16, 16]
    assert len(tables.scaling_groups(_summary(gpt=True))) == 1  # GPT rows are not scaling rows


def test_charts_return_figures_in_both_languages():
    s = _summary(("OneFlow", "PyTorch"), gpt=True)
    for lang in ("en", "zh"):
        for fig in (plots.throughput_vs_devices(s, lang), plots.speedup_vs_ideal(s, lang)):
            assert isinstance(fig, plots.ReportFigure)
            assert fig._repr_svg_().lstrip().startswith("<?xml")
            assert len(fig.axes[0].lines) >= 2
    assert plots.throughput_vs_devices(s, "zh").axes[0].get_xlabel() == "GPU 数"
    assert plots.throughput_vs_devices(s.iloc[0:0], "en") is None  # left out, never drawn empty


def test_topology_cells_have_link_classes():
    from analysis.report.sections.environment import LINK_COLORS, link_color

    assert link_color("NV18") == LINK_COLORS["NV"] and link_color("0-11") is None
    assert link_color("pix") == LINK_COLORS["PIX"] and link_color("") is None


def test_inputs_found_in_log_dir(tmp_path):
    (tmp_path / "1n1g").mkdir()
    (tmp_path / "env.json").write_text(json.dumps({"hostname": "a", "topology_text": "x"}))
    (tmp_path / "topo_a.txt").write_text("not a topology")
    (tmp_path / "1n1g" / "r50_b1_fp32_1.done").write_text(json.dumps(
        {"commands": [{"host": "h1", "command": ["torchrun", "--nnodes=2"]}]}))
    envs, topos, camp = folder_records.gather(tmp_path)
    assert [e.name for e in envs] == ["env.json"]
    assert topos[0].name == "topo_a.txt" and topos[0].topology is None and topos[0].error
    assert [(c.run, c.node, c.command) for c in camp.commands] == [
        ("1n1g/r50_b1_fp32_1", "h1", "torchrun --nnodes=2")]


@pytest.mark.parametrize(("option", "what"), [({"method": "windowz"}, "throughput method"),
                                              ({"lang": "fr"}, "language")])
def test_a_bad_method_or_language_is_named_before_parsing(option, what, monkeypatch):
    from analysis import report
    from analysis.errors import UnknownNameError

    monkeypatch.setattr(prepared, "compute", lambda *a, **k: pytest.fail("parsed"))
    with pytest.raises(UnknownNameError, match=f"unknown {what} '"):
        report.build(**option)


def test_prepared_frames_round_trip_as_parquet(tmp_path):
    from synth import write_campaign

    from analysis.report import prepared

    logs = tmp_path / "logs"
    write_campaign(logs, configs=((1, 1), (1, 8)), repeats=2)
    data = prepared.compute(logs)
    # runs whose parameter dumps differ in keys and value types stay as they were
    params = [{"lr": 0.1, "amp": True}, {"lr": "0.2", "tf32": None}, None, {"x": [1, 2]}]
    data.result.runs["parameters"] = pd.Series(params, dtype=object)
    prepared.save(data, tmp_path / "hand-over")
    assert sorted(p.suffix for p in (tmp_path / "hand-over").iterdir()) == [".json"] + [
        ".parquet"] * 7  # data only: nothing there is ever unpickled
    back = prepared.load(tmp_path / "hand-over")
    for name, frame in data.frames().items():
        pd.testing.assert_frame_equal(back.frames()[name], frame, obj=name)
    assert back.result.runs["parameters"].tolist() == params
    assert back.log_dir == data.log_dir and back.suite_commit == data.suite_commit


def test_prepared_load_refuses_a_folder_without_the_data(tmp_path):
    from analysis.errors import DLPerfError
    from analysis.report import prepared

    with pytest.raises(DLPerfError, match="no parsed data"):
        prepared.load(tmp_path)
    with pytest.raises(DLPerfError, match="no such data folder"):
        prepared.load(tmp_path / "missing")


def _shown_as(text) -> tuple[str, bool]:
    """(what matplotlib draws for a Text, whether it parses it as mathtext)."""
    return text._preprocess_math(text.get_text())


def test_dollar_signs_in_names_are_plain_text_in_charts():
    from matplotlib.text import Text

    name = "gpt$_$x"  # mathtext cannot parse "$_$": the chart used to abort the report
    s = _summary(("OneFlow", "Py$Torch$"))
    s["model"] = name
    runs = s.assign(run_id=[f"r{i}" for i in range(len(s))], throughput=s["throughput_median"],
                    repeat=1, outlier=False)
    trace = runs.loc[runs.index.repeat(3)].assign(step=[10, 20, 30] * len(runs))
    figs = [plots.throughput_vs_devices(s), plots.speedup_vs_ideal(s, "zh"),
            plots.iteration_traces(trace), plots.repeat_spread(runs)]
    for fig in figs:
        assert fig.svg().startswith(b"<?xml")  # drawn, not aborted
        shown = [_shown_as(t) for t in fig.findobj(Text) if "$" in t.get_text()]
        assert shown, "the names with dollar signs are on the chart"
        assert all(not math for _, math in shown)
    legend = [_shown_as(t)[0] for t in figs[0].legends[0].get_texts()]  # below the axes
    assert "Py$Torch$ gpt$_$x amp b256" in legend


def _report_with_names(tmp_path, model: str, extra_line: str):
    from synth import write_campaign, write_markers

    from analysis.report import build

    logs = tmp_path / "logs"
    paths = write_campaign(logs, configs=((1, 1), (1, 8)), repeats=2, extra_line=extra_line)
    for p in paths:
        p.write_text(p.read_text().replace("model = resnet50", f"model = {model}"))
    write_markers(logs, paths)
    return build(logs, lang="en")


def test_report_html_shows_script_and_dollars_as_text(tmp_path):
    line = 'train: epoch 0, iter 55, <script>alert("x")</script> cost $\\frac$ and $_$'
    rep = _report_with_names(tmp_path, "gpt$_$x", line)
    page = rep.html()  # charts included: no mathtext error
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; cost $\\frac$ and $_$" in page
    assert "gpt$_$x" in rep.title and "gpt$_$x" in page
    # JupyterLab typesets `$…$` in outputs with MathJax unless told not to: the tables of
    # log text carry the classes that tell it, Markdown escapes the dollar
    assert 'class="dlperf-table dlperf-problems tex2jax_ignore mathjax_ignore"' in page
    assert "gpt\\$\\_\\$x" in rep.title_block()


def test_problem_rows_and_text_are_bounded(tmp_path):
    import dataclasses

    rep = _report_with_names(tmp_path, "resnet50", "")
    huge = "<b>" + "x" * 100_000  # one long single line (think 200 MB)
    n = 300
    problems = pd.DataFrame({"run_id": [f"1n1g/r{i}" for i in range(n)], "source": "a.log",
                             "line": pd.array([1] * n, dtype="Int64"), "kind": "bad_line",
                             "reason": "unreadable", "text": [huge] * n})
    rep.result = dataclasses.replace(rep.result, problems=problems)
    frag = rep.section("problems")
    assert len(frag) < 200_000, len(frag)  # was n x 100 KB
    shown = frag.count("<tr>") - 1  # without the header
    assert 10 <= shown <= 100
    assert "&lt;b&gt;xxx" in frag and "<b>xxx" not in frag
    assert "[100,003 characters]" in frag
    more = re.search(r"… and ([\d,]+) more problems", frag)
    assert more and int(more.group(1).replace(",", "")) >= n - shown


def test_single_huge_line_log_makes_a_small_report(tmp_path):
    from synth import write_campaign

    from analysis.report import build

    logs = tmp_path / "logs"
    line = "train: epoch 0, iter 55, loss: <script>" + "y" * 20_000_000  # one 20 MB line
    write_campaign(logs, configs=((1, 1),), repeats=2, extra_line=line)
    rep = build(logs, lang="en")
    assert rep.result.problems["text"].str.contains("<script>yyy").any()
    page = rep.html()
    assert len(page) < 2_000_000, len(page)
    assert "&lt;script&gt;yyy" in page and "<script>yyy" not in page
