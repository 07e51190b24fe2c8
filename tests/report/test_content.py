"""Report content without a kernel: escaping, seed tables, comparison, inputs, charts."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from analysis import plots
from analysis.i18n import Translator
from analysis.report import html as H
from analysis.report import inputs, tables


def _summary(frameworks=("OneFlow",), gpt=False):
    rows = []
    for fw_i, fw in enumerate(frameworks):
        for n, g in ((1, 1), (1, 8), (4, 8)):
            thr = (400.0 - 50 * fw_i) * n * g * 0.9 ** (n * g > 1)
            rows.append(dict(framework=fw, model="resnet50", precision="amp", num_nodes=n,
                             gpus_per_node=g, num_devices=n * g, batch_size_per_device=256,
                             case="", group="", repeats=5, throughput_median=thr,
                             throughput_mean=thr, throughput_std=1.0, throughput_min=thr - 2,
                             throughput_max=thr + 2, ci_low=thr - 1, ci_high=thr + 1,
                             speedup=thr / (400.0 - 50 * fw_i),
                             scaling_efficiency=thr / (400.0 - 50 * fw_i) / (n * g),
                             memory_mib_max=12565.0, latency_ms=np.nan, tflops_per_gpu=np.nan,
                             outliers=0, problems=0))
    if gpt:
        rows.append(dict(rows[0], model="gpt", case="DP_8x1x1_16_1536x16", group="DP",
                         num_devices=8, gpus_per_node=8, latency_ms=417.952,
                         memory_mib_max=12404.0, throughput_median=38.28, tflops_per_gpu=31.5,
                         speedup=np.nan, scaling_efficiency=np.nan))
    df = pd.DataFrame(rows)
    for c in ("num_nodes", "gpus_per_node", "num_devices", "batch_size_per_device"):
        df[c] = df[c].astype("Int64")
    return df


def test_escape_everything_from_data():
    cell = '<script>alert("x")</script>'
    out = H.table(["a<b"], [[cell]])
    assert "<script>" not in out and "&lt;script&gt;" in out and "a&lt;b" in out
    assert "<script>" not in H.code_block(cell)
    assert H.md_inline("run `x<y`") == "run <code>x&lt;y</code>"


def test_seed_results_table_layout():
    tr = Translator("en")
    t = tables.results_table(_summary().iloc[:3], tr)
    assert list(t.columns) == ["node num", "gpus/node", "gpu num", "bsz/gpu", "GPU Memory Usage",
                               "Throughput", "Speedup", "Scaling efficiency", "95% CI", "repeats"]
    assert t.iloc[2].tolist() == ["4", "8", "32", "256", "12565", "11,520.00", "28.80", "90.0%",
                                  "11,519.00–11,521.00", "5"]
    zh = tables.results_table(_summary().iloc[:3], Translator("zh"))
    assert zh.columns[0] == "节点数"


def test_gpt_table_layout():
    t = tables.gpt_table(_summary(gpt=True), Translator("en"))
    assert list(t.columns) == ["group", "case", "latency", "memory", "throughput",
                               "TFLOP/s per GPU"]
    assert t.iloc[0].tolist() == ["DP", "DP_8x1x1_16_1536x16", "417.95 (ms)", "12404 (MiB)",
                                  "38.28", "31.50"]
    assert len(tables.scaling_groups(_summary(gpt=True))) == 1  # GPT rows are not scaling rows


def test_compare_frameworks_relative_speed():
    [(key, wide)] = tables.compare_frameworks(_summary(("OneFlow", "PyTorch")), baseline="PyTorch")
    assert key == ("resnet50", "amp", 256)
    assert list(wide.columns) == ["num_nodes", "num_devices", "OneFlow", "PyTorch",
                                  "OneFlow/PyTorch"]
    assert wide["OneFlow/PyTorch"].tolist() == pytest.approx([400 / 350] * 3)
    shown = tables.format_compare(wide, Translator("zh"))
    assert list(shown.columns[:2]) == ["节点数", "设备数"]
    assert shown["OneFlow/PyTorch"].tolist() == ["1.14"] * 3


def test_charts_return_figures_in_both_languages():
    s = _summary(("OneFlow", "PyTorch"), gpt=True)
    for lang in ("en", "zh"):
        for fig in (plots.throughput_vs_devices(s, lang), plots.speedup_vs_ideal(s, lang)):
            assert isinstance(fig, plots.ReportFigure)
            assert fig._repr_png_()[:8] == b"\x89PNG\r\n\x1a\n"
            assert len(fig.axes[0].lines) >= 2
    assert plots.throughput_vs_devices(s, "zh").axes[0].get_xlabel() == "设备数"
    empty = plots.throughput_vs_devices(s.iloc[0:0], "en")
    assert empty.axes[0].texts[0].get_text() == "no data"


def test_topology_heatmap_colours_links():
    m = pd.DataFrame([["X", "NV12", "SYS"], ["NV12", "X", "PIX"], ["SYS", "PIX", "X"]],
                     index=["GPU0", "GPU1", "NIC0"], columns=["GPU0", "GPU1", "NIC0"])
    fig = plots.topology_heatmap(m, "zh")
    img = fig.axes[0].images[0].get_array()
    assert tuple(np.round(img[0, 1], 3)) == tuple(np.round(plots.matplotlib.colors.to_rgb(
        plots.LINK_COLORS["NV"]), 3))
    assert plots.link_class("NV18") == "NV" and plots.link_class("0-11") is None


def test_inputs_found_in_log_dir(tmp_path):
    (tmp_path / "1n1g").mkdir()
    (tmp_path / "env.json").write_text(json.dumps({"hostname": "a", "topology_text": "x"}))
    (tmp_path / "topo_a.txt").write_text("not a topology")
    (tmp_path / "1n1g" / "r50_b1_fp32_1.done").write_text(json.dumps(
        {"commands": [{"host": "h1", "command": ["torchrun", "--nnodes=2"]}]}))
    envs, topos, camp = inputs.gather(tmp_path)
    assert [e.name for e in envs] == ["env.json"]
    assert topos[0].name == "topo_a.txt" and topos[0].topology is None and topos[0].error
    assert [(c.run, c.node, c.command) for c in camp.commands] == [
        ("1n1g/r50_b1_fp32_1", "h1", "torchrun --nnodes=2")]


def test_parsed_data_cached_and_keyed_by_the_files(tmp_path, monkeypatch):
    import os

    from synth import write_campaign

    from analysis.report import cache

    logs = tmp_path / "logs"
    paths = write_campaign(logs, configs=((1, 1),), repeats=2)
    calls = []
    real = cache.compute
    monkeypatch.setattr(cache, "compute", lambda *a, **k: calls.append(a) or real(*a, **k))
    first = cache.prepare(logs, cache_dir=tmp_path / "c")
    again = cache.prepare(logs, cache_dir=tmp_path / "c")
    assert len(calls) == 1 and len(again.runs) == len(first.runs) == 2
    assert len(list((tmp_path / "c").glob("dlperf-data-*.pkl"))) == 1
    key = cache.fingerprint(logs)
    os.utime(paths[0], ns=(1, 1))  # a touched log is a new data set
    assert cache.fingerprint(logs) != key
    cache.prepare(logs, cache_dir=tmp_path / "c")
    assert len(calls) == 2 and len(list((tmp_path / "c").glob("dlperf-data-*.pkl"))) == 1
    assert cache.fingerprint(logs, method="window") != cache.fingerprint(logs)
    # a lock left over from a crashed writer does not block for ever
    (tmp_path / "c" / "stale.lock").write_text("")
    os.utime(tmp_path / "c" / "stale.lock", (1, 1))
    assert cache._lock_age(tmp_path / "c" / "stale.lock") > cache.LOCK_WAIT_S
