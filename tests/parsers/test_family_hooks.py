"""What only some families' runs have reaches the frames through the family's hooks
(`LogParser.case_label`, `LogParser.case_figures`): the core asks the run's family and
names no family or model itself, so a family that adds columns is one module."""

from __future__ import annotations

import math

from analysis import parsers
from analysis.collect import parse_paths
from analysis.parsers._gpt import GPTCases
from analysis.stats import summarize

GPT_FAMILIES = {"megatron", "oneflow_gpt", "libai"}


def test_the_gpt_families_and_only_they_label_cases_and_add_tflops():
    for name in parsers.names():
        parser = parsers.get(name)
        assert isinstance(parser, GPTCases) == (name in GPT_FAMILIES), name
    full = {"data_parallel": 2, "tensor_parallel": 2, "pipeline_parallel": 1,
            "global_batch_size": 16, "hidden_size": 1536, "num_layers": 16}
    assert parsers.get("megatron").case_label(full) == ("2D_2x2x1_16_1536x16", "2D")
    assert parsers.get("megatron").case_label({**full, "num_layers": None}) is None
    assert parsers.get("dll_pytorch").case_label(full) is None
    assert parsers.get("dll_pytorch").case_figures(None, None, None, 1.0) == {}


def test_the_core_takes_labels_and_case_columns_from_the_family(data_dir, monkeypatch):
    cls = type(parsers.get("dll_pytorch"))
    monkeypatch.setattr(cls, "case_label", lambda self, run: (f"b{run['repeat']}", "G"),
                        raising=False)
    monkeypatch.setattr(cls, "case_figures", lambda self, result, runs, ids, latency: {
        "tflops_per_gpu": 1.5, "tflops_formula": "a formula"}, raising=False)
    result = parse_paths([data_dir / "dll_pytorch"], jobs=1)
    runs = result.runs[result.runs["family"] == "dll_pytorch"]
    assert len(runs) and (runs["case"] == "b" + runs["repeat"].astype(str)).all()
    assert (runs["group"] == "G").all()
    table = summarize(result)
    ours = table[table["case"].str.match(r"b\d+$")]  # the family's cases (not dll_json's)
    assert len(ours) and (ours["tflops_per_gpu"] == 1.5).all()
    assert (ours["tflops_formula"] == "a formula").all()
    assert all(math.isnan(x) for x in ours["tflops_per_gpu_seed002"])  # not given: empty
