"""Place the GPT on a (pipeline, data, tensor) device mesh with torch-native APIs.

Rank r = (pp_index · dp + dp_index) · tp + tp_index: tensor-parallel peers are neighbours (the
fastest links), pipeline stages the farthest apart.

- tensor parallel: DTensor ``parallelize_module`` with Megatron's splits: qkv and fc1 by
  columns, proj and fc2 by rows (one all-reduce after attention, one after the MLP); without
  pipelining the logit layer is split by vocabulary and the loss computed under
  ``loss_parallel`` (no gathered logits);
- pipeline parallel: contiguous layer ranges, ``PipelineStage`` + ``ScheduleGPipe`` or
  ``Schedule1F1B``;
- data parallel: DDP alone, FSDP2 ``fully_shard`` over the data-parallel sub-mesh with tensor
  or pipeline parallelism (DDP's reducer asserts when a pipeline schedule runs several
  backward passes under ``no_sync`` in the first iteration).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import nn

from workloads.gpt.model import GPT


@dataclass
class Layout:
    """This process's coordinates and groups (groups are None when a size is 1)."""

    dp: int
    tp: int
    pp: int
    dp_rank: int = 0
    tp_rank: int = 0
    pp_rank: int = 0
    mesh: object = None  # DeviceMesh ("pp", "dp", "tp") when distributed

    @property
    def first_stage(self) -> bool:
        return self.pp_rank == 0

    @property
    def last_stage(self) -> bool:
        return self.pp_rank == self.pp - 1

    def group(self, dim: str):
        return None if self.mesh is None else self.mesh.get_group(dim)

    def sub_mesh(self, dim: str):
        return None if self.mesh is None else self.mesh[dim]


def make_layout(dp: int, tp: int, pp: int, device: torch.device) -> Layout:
    if dp * tp * pp == 1:
        return Layout(1, 1, 1)
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh(device.type, (pp, dp, tp), mesh_dim_names=("pp", "dp", "tp"))
    coords = mesh.get_coordinate()
    return Layout(dp, tp, pp, pp_rank=coords[0], dp_rank=coords[1], tp_rank=coords[2], mesh=mesh)


def stage_layers(num_layers: int, pp: int, stage: int) -> tuple[int, int]:
    """Block range [first, stop) of a stage; earlier stages take the remainder."""
    base, extra = divmod(num_layers, pp)
    first = stage * base + min(stage, extra)
    return first, first + base + (1 if stage < extra else 0)


def apply_tensor_parallel(model: GPT, layout: Layout, vocab_parallel: bool) -> None:
    from torch.distributed.tensor import Shard
    from torch.distributed.tensor.parallel import (
        ColwiseParallel,
        RowwiseParallel,
        parallelize_module,
    )

    tp_mesh = layout.sub_mesh("tp")
    plan = {"attn.qkv": ColwiseParallel(), "attn.proj": RowwiseParallel(),
            "mlp.fc1": ColwiseParallel(), "mlp.fc2": RowwiseParallel()}
    for block in model.blocks.values():
        parallelize_module(block, tp_mesh, plan)
    if vocab_parallel and model.head is not None:
        parallelize_module(model, tp_mesh, {
            "head": ColwiseParallel(output_layouts=Shard(-1), use_local_output=False)})


@dataclass(frozen=True)
class DDPTuning:
    """How DDP all-reduces gradients: bucket size (torch's default 25 MiB), static graph
    (buckets and hook order fixed after the first iteration) and the dtype on the wire
    (bf16 halves the bytes: :func:`bf16_mean_hook`)."""

    bucket_mb: float = 25.0
    static_graph: bool = False
    reduce_dtype: str = "fp32"


def apply_data_parallel(model: nn.Module, layout: Layout, impl: str, device: torch.device,
                        tuning: DDPTuning = DDPTuning()) -> nn.Module:
    """Wrap for data parallelism (`impl` ddp or fsdp); the model itself when dp == 1.
    `tuning` applies to DDP only."""
    if layout.dp == 1:
        return model
    if impl == "fsdp":
        from torch.distributed.fsdp import fully_shard

        dp_mesh = layout.sub_mesh("dp")
        for block in model.blocks.values():
            fully_shard(block, mesh=dp_mesh, reshard_after_forward=layout.pp == 1)
        fully_shard(model, mesh=dp_mesh, reshard_after_forward=layout.pp == 1)
        return model
    from torch.nn.parallel import DistributedDataParallel as DDP

    ids = [device.index] if device.type == "cuda" else None
    ddp = DDP(model, device_ids=ids, process_group=layout.group("dp"),
              bucket_cap_mb=tuning.bucket_mb, gradient_as_bucket_view=True,
              static_graph=tuning.static_graph)
    if tuning.reduce_dtype == "bf16":
        ddp.register_comm_hook(layout.group("dp"), bf16_mean_hook)
    return ddp


def bf16_mean_hook(group, bucket):
    """DDP communication hook: the mean of a gradient bucket over `group`, sent and summed in
    bf16, written back into the (fp32) bucket. Unlike torch's ``bf16_compress_hook`` it
    runs on any backend (gloo too)."""
    buffer = bucket.buffer()
    sent = buffer.to(torch.bfloat16).div_(dist.get_world_size(group))
    future = dist.all_reduce(sent, group=group, async_op=True).get_future()

    def write_back(done):
        buffer.copy_(done.value()[0])
        return buffer

    return future.then(write_back)


def build_schedule(module: nn.Module, layout: Layout, device: torch.device,
                   num_micro_batches: int, schedule: str, loss_fn):
    """The pipeline schedule of this stage (stage shapes are inferred on the first step)."""
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe

    stage = PipelineStage(module, layout.pp_rank, layout.pp, device, group=layout.group("pp"))
    cls = Schedule1F1B if schedule == "1f1b" else ScheduleGPipe
    return cls(stage, n_microbatches=num_micro_batches, loss_fn=loss_fn)


def all_reduce_mean(value: torch.Tensor, layout: Layout) -> torch.Tensor:
    """Mean over the data-parallel group (value itself when dp == 1)."""
    if layout.dp > 1:
        dist.all_reduce(value, group=layout.group("dp"))
        value = value / layout.dp
    return value
