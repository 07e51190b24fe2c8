"""The bf16 matmul probe of `dlperf env --matmul`: without a GPU (or without torch) the record
says why it has no rate; a record with a rate keeps it under `matmul` (GPU names, UUIDs,
each GPU's timed seconds, blocks, first block, median and spread, the date), and a rate of the wrong type is left out by readers
with its JSON path. The measurement itself ran on a 4x H200 host: its record is
data/raw_logs/gpt_4gpu/matmul.json, read back here."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from analysis.env.capture import capture
from analysis.env.probes import MATMUL_SECONDS, MATMUL_SIZE, measure_matmul, probe_matmul
from analysis.env.record import EnvRecord, usable

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
    record = EnvRecord(**json.loads(MEASURED.read_text()))
    m = record.matmul
    assert m["size"] == MATMUL_SIZE and m["dtype"] == "bf16"
    assert m["measured_at"].startswith("2026-11-28T20:36") and m["seconds"] == MATMUL_SECONDS
    uuids = [g["uuid"] for g in m["gpus"]]
    assert uuids == [g["uuid"] for g in record.gpus] and len(set(uuids)) == 4
    for g in m["gpus"]:  # timed for the stated seconds; the first block above what it sustains
        assert g["seconds"] >= MATMUL_SECONDS and g["blocks"] > 500
        assert g["tflops_p5"] <= g["tflops_median"] <= g["tflops_p95"] < g["tflops_first"]
    medians = sorted(g["tflops_median"] for g in m["gpus"])
    assert m["tflops_median"] == pytest.approx((medians[1] + medians[2]) / 2, abs=0.051)


def test_the_probe_times_each_gpu_for_the_seconds_asked():
    import torch  # the dev environment's (CPU) torch

    class Event:  # CUDA events on a clock each block moves by 10 ms
        clock = [0.0]

        def __init__(self, enable_timing):
            self.at = 0.0

        def record(self):
            Event.clock[0] += 0.005
            self.at = Event.clock[0]

        def synchronize(self):
            pass

        def elapsed_time(self, other):
            return (other.at - self.at) * 1e3

    class FakeTorch:
        bfloat16 = torch.bfloat16
        cuda = type("cuda", (), {
            "Event": Event, "device": staticmethod(lambda d: __import__("contextlib").nullcontext()),
            "get_device_properties": staticmethod(lambda d: type("P", (), {"name": "G", "uuid": "u"})()),
            "empty_cache": staticmethod(lambda: None)})

        @staticmethod
        def device(kind, index):
            return "cpu"

        @staticmethod
        def randn(*size, device, dtype):
            return torch.zeros(2, 2)

        @staticmethod
        def empty(*size, device, dtype):
            return torch.zeros(2, 2)

        @staticmethod
        def matmul(a, b, out):
            return out

    g = measure_matmul(FakeTorch, 0, size=8, iters=1, seconds=0.5)
    assert g["blocks"] == 100 and g["seconds"] == pytest.approx(0.5)
    assert g["uuid"] == "GPU-u" and g["tflops_median"] == g["tflops_first"]


def test_a_rate_of_the_wrong_type_is_left_out_with_its_path():
    data = json.loads(MEASURED.read_text(encoding="utf-8"))
    data["matmul"]["tflops_median"] = "fast"
    data["matmul"]["gpus"][1]["uuid"] = 7
    kept, problems = usable(data)
    assert "tflops_median" not in kept["matmul"] and "uuid" not in kept["matmul"]["gpus"][1]
    assert sorted(p.path for p in problems) == ["matmul.gpus[1].uuid", "matmul.tflops_median"]
