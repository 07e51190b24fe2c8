"""The CPU-runnable parts of benchmarks/gpt_profile.py: kernel spans and the timeline figures
(communication hidden under compute or exposed) it prints for a data-parallel step."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gp():
    spec = importlib.util.spec_from_file_location("gpt_profile",
                                                  ROOT / "benchmarks" / "gpt_profile.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _event(name, start, end, device="cuda", annotation=False):
    return SimpleNamespace(name=name, device_type=device, is_user_annotation=annotation,
                           time_range=SimpleNamespace(start=start, end=end))


def test_kernel_spans_leave_out_cpu_ops_and_annotations(gp):
    events = [_event("aten::mm", 0, 5, device="cpu"),
              _event("nvjet_sm90_tst_256x128", 1, 4),
              _event("nccl:all_reduce", 3, 9, annotation=True),
              _event("Optimizer.step#AdamW.step", 9, 12, annotation=True),
              _event("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 3, 8)]
    assert gp.kernel_spans(events, "cuda") == [("nvjet_sm90_tst_256x128", 1, 4),
                                               ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 3, 8)]


def test_timeline_splits_communication_into_hidden_and_exposed(gp):
    kernels = [("nvjet_gemm", 0, 10), ("triton_poi_fused_add", 10, 12),
               ("ncclDevKernel_AllReduce", 8, 15),   # 4 under compute, 3 exposed
               ("multi_tensor_apply_kernel_adam", 17, 20),   # 2 idle before it
               ("ncclDevKernel_AllReduce", 18, 19)]  # wholly under the optimizer
    got = gp.timeline(kernels)
    assert got == {"span": 20, "busy": 18, "idle": 2, "compute": 15, "comm": 8,
                   "comm_hidden": 5, "comm_exposed": 3}


def test_timeline_of_no_kernels_is_zero(gp):
    assert set(gp.timeline([]).values()) == {0}


def test_communication_kernels_are_their_own_kind(gp):
    assert gp.kind_of("ncclDevKernel_AllReduce_Sum_f32_RING_LL") == "communication"
    assert gp.kind_of("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT") == "matmul"
