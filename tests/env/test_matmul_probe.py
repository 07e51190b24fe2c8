"""The bf16 matmul probe of `dlperf env --matmul`: without a GPU (or without torch) the record
says why it has no rate; a record with a rate keeps it under `matmul` (GPU names, UUIDs,
each GPU's blocks and median, the date), and a rate of the wrong type is left out by readers
with its JSON path. The measurement itself ran on a 4x H200 host: its record is
data/raw_logs/gpt_4gpu/matmul.json, read back here."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from analysis.env.capture import capture
from analysis.env.fields import usable
from analysis.env.probes import MATMUL_SIZE, probe_matmul
from analysis.env.record import EnvRecord

ROOT = Path(__file__).resolve().parents[2]
MEASURED = ROOT / "data" / "raw_logs" / "gpt_4gpu" / "matmul.json"


def test_without_torch_the_probe_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    found = probe_matmul(1.0)
    assert found.values == {} and found.absent == {"matmul": "torch is not installed"}


def test_without_a_gpu_the_probe_says_so(monkeypatch):
    import torch  # the dev environment's (CPU) torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # as on a CPU machine
    found = probe_matmul(1.0)
    assert found.values == {} and found.absent == {"matmul": "torch sees no CUDA GPU"}


def test_capture_measures_only_when_asked():
    assert capture(timeout=2.0).matmul is None
    record = capture(timeout=2.0, matmul=True)
    assert record.matmul is not None or "matmul" in record.absent


def test_the_measured_record_reads_back_with_its_gpus_and_date():
    record = EnvRecord.load(MEASURED)
    m = record.matmul
    assert m["size"] == MATMUL_SIZE and m["dtype"] == "bf16"
    assert m["measured_at"].startswith("2026-11-28T19:04")
    uuids = [g["uuid"] for g in m["gpus"]]
    assert uuids == [g["uuid"] for g in record.gpus] and len(set(uuids)) == 4
    for g in m["gpus"]:  # each GPU's median is the median of its blocks
        blocks = sorted(g["tflops"])
        assert len(blocks) == m["blocks"] and g["tflops_median"] == blocks[len(blocks) // 2]
    medians = sorted(g["tflops_median"] for g in m["gpus"])
    assert m["tflops_median"] == pytest.approx((medians[1] + medians[2]) / 2, abs=0.051)


def test_a_rate_of_the_wrong_type_is_left_out_with_its_path():
    data = json.loads(MEASURED.read_text(encoding="utf-8"))
    data["matmul"]["tflops_median"] = "fast"
    data["matmul"]["gpus"][1]["uuid"] = 7
    kept, problems = usable(data)
    assert "tflops_median" not in kept["matmul"] and "uuid" not in kept["matmul"]["gpus"][1]
    assert sorted(p.path for p in problems) == ["matmul.gpus[1].uuid", "matmul.tflops_median"]
