"""Train the GPT on one fixed synthetic batch of tokens; print OneFlow GPT metric tables.

Every rank builds the whole model from the same seed and keeps its own part (pipeline stage,
tensor shards), so a layout's weights equal the single-process model's; the global batch is
made once on the device from the seed and each data-parallel rank takes its rows. The rank
that prints is the last pipeline stage's first data- and tensor-parallel rank (it holds the
loss, averaged over data-parallel ranks). Latency is wall time between iteration ends, after a
device synchronisation on the printing rank.

Exit codes: 0 success, 1 run-time error, 2 bad options, 3 non-finite final loss.
"""

from __future__ import annotations

import contextlib
import math
import os
import resource
import sys
import time

import torch

from workloads import dist as wdist
from workloads.dist import DistEnv, WorkloadError
from workloads.gpt import logfmt
from workloads.gpt.chunked_loss import ChunkedHeadLoss
from workloads.gpt.flops import FORMULA, model_flops, parameter_count
from workloads.gpt.master_weights import MasterWeights
from workloads.gpt.model import GPT, GPTConfig, lm_loss
from workloads.gpt.options import check, parse_args
from workloads.gpt.parallel import (
    DDPTuning,
    Layout,
    all_reduce_mean,
    apply_data_parallel,
    apply_tensor_parallel,
    build_schedule,
    make_layout,
    stage_layers,
)

EXIT_ERROR, EXIT_USAGE, EXIT_NONFINITE = 1, 2, 3


def choose_attention(backend: str) -> None:
    """Allow only one fused SDPA kernel (plus the math fallback); `auto` changes nothing."""
    if backend == "auto":
        return
    cuda = torch.backends.cuda
    cuda.enable_cudnn_sdp(backend == "cudnn")
    cuda.enable_flash_sdp(backend == "flash")
    cuda.enable_mem_efficient_sdp(backend == "efficient")


def limit_nccl(args, backend: str) -> None:
    """--nccl-min-ctas / --nccl-max-ctas as NCCL_MIN_CTAS / NCCL_MAX_CTAS, which NCCL reads
    when the process group starts."""
    if backend != "nccl":
        return
    for name, value in (("NCCL_MIN_CTAS", args.nccl_min_ctas),
                        ("NCCL_MAX_CTAS", args.nccl_max_ctas)):
        if value:
            os.environ[name] = str(value)


def build_model(args, layout: Layout, device: torch.device) -> GPT:
    """The whole model from the seed, cut to this rank's stage and tensor shards."""
    cfg = GPTConfig(args.num_layers, args.hidden_size, args.num_attention_heads,
                    args.seq_length, args.vocab_size)
    torch.manual_seed(args.seed)
    autocast = args.precision == "bf16" and args.param_dtype == "fp32"
    with torch.device(device):
        model = GPT(cfg, autocast=torch.bfloat16 if autocast else None,
                    checkpointing=args.activation_checkpointing)
    model.logits = not args.loss_chunk_tokens
    if layout.pp > 1:
        model.keep_layers(*stage_layers(args.num_layers, layout.pp, layout.pp_rank),
                          args.num_layers)
    if layout.tp > 1:
        apply_tensor_parallel(model, layout, vocab_parallel=layout.pp == 1)
    if args.compile:
        for block in model.blocks.values():
            block.compile(mode=args.compile_mode)
    return model


def parameter_groups(model: torch.nn.Module) -> list[dict]:
    """Tensor-parallel (DTensor) and plain parameters in separate groups: the fused AdamW
    kernel takes one group at a time and refuses a mix of the two."""
    from torch.distributed.tensor import DTensor

    params = list(model.parameters())
    groups = [[p for p in params if isinstance(p, DTensor)],
              [p for p in params if not isinstance(p, DTensor)]]
    return [{"params": g} for g in groups if g]


def synthetic_batch(args, layout: Layout, device: torch.device):
    """(inputs, targets) of this data-parallel rank: rows of one seeded global batch."""
    gen = torch.Generator(device=device)
    gen.manual_seed(args.seed + 1)
    tokens = torch.randint(0, args.vocab_size, (args.global_batch_size, args.seq_length + 1),
                           device=device, generator=gen)
    rows = args.global_batch_size // layout.dp
    mine = tokens[layout.dp_rank * rows:(layout.dp_rank + 1) * rows]
    return mine[:, :-1].contiguous(), mine[:, 1:].contiguous()


class Trainer:
    """One optimizer step over all micro-batches: plain gradient accumulation, or the
    pipeline schedule when there are several stages. `step()` returns the mean loss on the
    last stage (None elsewhere), not yet averaged over data-parallel ranks."""

    def __init__(self, args, layout: Layout, device: torch.device):
        self.args, self.layout, self.device = args, layout, device
        self.model = build_model(args, layout, device)
        # bf16 weights before DDP wraps the model: its buckets then hold bf16 gradients
        self.master = MasterWeights(self.model, hooks=layout.dp == 1) \
            if args.param_dtype == "bf16" else None
        impl = args.data_parallel_impl
        if impl == "auto":  # DDP's reducer asserts on pipelined no_sync backward passes
            impl = "fsdp" if layout.tp > 1 or layout.pp > 1 else "ddp"
        self.impl = impl
        self.wrapped = apply_data_parallel(
            self.model, layout, impl, device,
            DDPTuning(args.ddp_bucket_mb, args.ddp_static_graph, args.grad_reduce_dtype))
        self.vocab_parallel = layout.tp > 1 and layout.pp == 1
        self.loss_fn = self._loss_function()
        groups = [{"params": self.master.master}] if self.master else \
            parameter_groups(self.model)
        self.optimizer = torch.optim.AdamW(groups, lr=args.lr, weight_decay=args.weight_decay,
                                           fused=True)
        self.schedule = None
        if layout.pp > 1:
            self.schedule = build_schedule(self.wrapped, layout, device, args.num_micro_batches,
                                           args.pipeline_schedule, self.loss_fn)
        self.inputs, self.targets = synthetic_batch(args, layout, device)

    def _loss_function(self):
        args = self.args
        if args.loss_chunk_tokens and self.model.head is not None:
            dtype = torch.bfloat16 if args.precision == "bf16" else None
            return ChunkedHeadLoss(self.model.head, args.loss_chunk_tokens, dtype, args.compile)
        if args.compile and not self.vocab_parallel:
            return torch.compile(lm_loss)
        return lm_loss

    def _loss_context(self):
        if not self.vocab_parallel:
            return contextlib.nullcontext()
        from torch.distributed.tensor.parallel import loss_parallel

        return loss_parallel()

    def _sync_context(self, last: bool):
        if self.layout.dp == 1 or last:
            return contextlib.nullcontext()
        if self.impl == "ddp":
            return self.wrapped.no_sync()
        self.model.set_requires_gradient_sync(False)
        return contextlib.nullcontext()

    def _accumulate(self) -> torch.Tensor:
        n = self.args.num_micro_batches
        total = torch.zeros((), device=self.device)
        for x, y, j in zip(self.inputs.chunk(n), self.targets.chunk(n), range(n), strict=True):
            if self.impl == "fsdp" and self.layout.dp > 1:
                self.model.set_requires_gradient_sync(j == n - 1)
            with self._sync_context(j == n - 1), self._loss_context():
                loss = self.loss_fn(self.wrapped(x), y) / n
                loss.backward()
            value = loss.detach()
            total += value.full_tensor() if hasattr(value, "full_tensor") else value
        return total

    def _pipeline(self) -> torch.Tensor | None:
        layout = self.layout
        if layout.last_stage:
            losses: list[torch.Tensor] = []
            args = (self.inputs,) if layout.first_stage else ()
            self.schedule.step(*args, target=self.targets, losses=losses)
            return torch.stack([v.detach().float() for v in losses]).mean()
        if layout.first_stage:
            self.schedule.step(self.inputs)
        else:
            self.schedule.step()
        return None

    def step(self) -> torch.Tensor | None:
        loss = self._pipeline() if self.schedule is not None else self._accumulate()
        if self.master is not None and not self.master.hooks:
            self.master.take_grads()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        if self.master is not None:
            self.master.copy_to_model()
        return loss


def _arguments(args, denv: DistEnv, layout: Layout, trainer_impl: str,
               device: torch.device) -> dict:
    """The argument dump: every option as the run used it (the suite tells runs of other
    configurations apart by it)."""
    return {
        "framework": "pytorch", "workload": "workloads.gpt", "torch_version": torch.__version__,
        "num_layers": args.num_layers, "hidden_size": args.hidden_size,
        "num_attention_heads": args.num_attention_heads, "seq_length": args.seq_length,
        "vocab_size": args.vocab_size, "padded_vocab_size": args.vocab_size,
        "micro_batch_size": args.micro_batch_size, "global_batch_size": args.global_batch_size,
        "num_accumulation_steps": args.num_micro_batches,
        "data_parallel_size": layout.dp, "tensor_model_parallel_size": layout.tp,
        "pipeline_model_parallel_size": layout.pp, "pipeline_schedule": args.pipeline_schedule,
        "data_parallel_impl": trainer_impl, "grad_reduce_dtype": args.grad_reduce_dtype,
        "ddp_bucket_mb": args.ddp_bucket_mb, "ddp_static_graph": args.ddp_static_graph,
        "nccl_min_ctas": os.environ.get("NCCL_MIN_CTAS", "auto"),
        "nccl_max_ctas": os.environ.get("NCCL_MAX_CTAS", "auto"),
        "num_nodes": denv.num_nodes,
        "num_gpus_per_node": denv.local_world_size, "bf16": args.precision == "bf16",
        "fp16": False, "precision": args.precision, "param_dtype": args.param_dtype,
        "loss_chunk_tokens": args.loss_chunk_tokens,
        "compile": args.compile, "compile_mode": args.compile_mode,
        "checkpoint_activations": args.activation_checkpointing,
        "sdpa_backend": args.sdpa_backend, "train_iters": args.train_iters,
        "log_interval": args.log_interval, "seed": args.seed, "lr": args.lr,
        "weight_decay": args.weight_decay, "device": device.type,
        "dist_backend": (torch.distributed.get_backend() if torch.distributed.is_initialized()
                         else None),
        "parameters": parameter_count(args.num_layers, args.hidden_size, args.vocab_size,
                                      args.seq_length),
        "flops_formula": FORMULA.replace(" ", ""),
    }


def train(args, denv: DistEnv, device: torch.device) -> int:
    layout = make_layout(args.data_parallel_size, args.tensor_model_parallel_size,
                         args.pipeline_model_parallel_size, device)
    printer = layout.last_stage and layout.dp_rank == 0 and layout.tp_rank == 0
    trainer = Trainer(args, layout, device)
    if printer:
        print(logfmt.argument_dump(_arguments(args, denv, layout, trainer.impl, device)), flush=True)
        print("Training...", flush=True)
        print(logfmt.table_header(), flush=True)
    flops = model_flops(args.global_batch_size, args.seq_length, args.num_layers,
                        args.hidden_size, args.vocab_size)
    micro_per_step = args.global_batch_size // args.micro_batch_size
    cuda = device.type == "cuda"
    last_time, last_step, loss_value = time.perf_counter(), 0, float("nan")
    for step in range(1, args.train_iters + 1):
        loss = trainer.step()
        if step % args.log_interval and step != args.train_iters:
            continue
        if layout.last_stage:
            loss_value = float(all_reduce_mean(loss, layout))
        if cuda:
            torch.cuda.synchronize(device)
        now = time.perf_counter()
        latency = (now - last_time) / (step - last_step)
        last_time, last_step = now, step
        if printer:
            memory = torch.cuda.max_memory_allocated(device) / 2**20 if cuda else \
                resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
            print(logfmt.table_row(step, step * micro_per_step, step * args.global_batch_size,
                                   args.global_batch_size / latency, latency, loss_value,
                                   flops / latency / denv.world_size / 1e12, memory), flush=True)
    if layout.last_stage and not math.isfinite(loss_value):
        print(f"workloads.gpt: the final loss is {loss_value}", file=sys.stderr)
        return EXIT_NONFINITE
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        denv = DistEnv.from_env()
        problem = check(args, denv.world_size)
        if problem:
            print(f"workloads.gpt: {problem}", file=sys.stderr)
            return EXIT_USAGE
        device = wdist.resolve_device(args.device, denv)
        backend = wdist.resolve_backend(args.dist_backend, device)
        choose_attention(args.sdpa_backend)
        limit_nccl(args, backend)
        wdist.init(denv, backend, device)
        try:
            return train(args, denv, device)
        finally:
            wdist.finish()
    except WorkloadError as exc:
        print(f"workloads.gpt: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except (RuntimeError, ValueError, torch.OutOfMemoryError) as exc:
        print(f"workloads.gpt: {error_line(exc)}", file=sys.stderr)
        return EXIT_ERROR


def error_line(exc: BaseException) -> str:
    """One line: the first line of the innermost cause (the pipeline stage wraps the real
    error in "[Stage k] failed to run forward:"), after the outer error's when they differ."""
    root = exc
    while root.__cause__ is not None:
        root = root.__cause__

    def first(e: BaseException) -> str:
        lines = [x.strip() for x in str(e).splitlines() if x.strip()]
        return f"{type(e).__name__}: {lines[0] if lines else ''}"

    return first(root) if root is exc else f"{first(exc)} {first(root)}"
