"""Train ResNet-50 v1.5 with DDP on synthetic device-resident data; print DLLogger lines.

Speed choices (each switchable, see ``options.py``): channels-last tensors, cudnn.benchmark,
one synthetic batch made once on the device, fp32 weights (so batch norm runs with fp32
parameters and statistics under autocast), ``zero_grad(set_to_none=True)``, fused SGD (which
also lets GradScaler skip its per-step host sync), DDP with gradient_as_bucket_view, static
graph and no buffer broadcast, optional torch.compile. The only host syncs are one per printed
iteration (``loss.item()`` after the optimizer step: it waits for all of the iteration's work
on the stream), plus the warm-up boundary and the last iteration.

Exit codes: 0 success, 1 run-time error, 2 bad options, 3 non-finite final loss.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import os
import platform
import socket
import sys
import time
import traceback
from argparse import Namespace
from dataclasses import dataclass, field

import torch
import torch.distributed as dist
from torch import nn

from workloads import dist as wdist
from workloads.dist import DistEnv, WorkloadError
from workloads.resnet import dllog
from workloads.resnet.options import parse_args
from workloads.resnet.resnet import ARCHS, analytic_macs, count_parameters

EXIT_ERROR, EXIT_NONFINITE = 1, 3  # argparse exits 2 on bad options


# ---------------------------------------------------------------------------------------------
# set-up helpers


def configure_tf32(enabled: bool) -> bool:
    """Allow (or forbid) TF32 for fp32 matmuls and convolutions; return whether it is on.

    torch >= 2.9 has ``fp32_precision`` knobs and refuses to mix them with the legacy
    ``allow_tf32`` flags, so use the new ones where they exist."""
    matmul, cudnn = torch.backends.cuda.matmul, torch.backends.cudnn
    if hasattr(matmul, "fp32_precision") and hasattr(cudnn, "conv"):
        value = "tf32" if enabled else "ieee"
        matmul.fp32_precision = value
        cudnn.conv.fp32_precision = value
        return matmul.fp32_precision == "tf32" and cudnn.conv.fp32_precision == "tf32"
    matmul.allow_tf32 = enabled
    cudnn.allow_tf32 = enabled
    return bool(matmul.allow_tf32 and cudnn.allow_tf32)


def make_optimizer(model: nn.Module, args: Namespace) -> tuple[torch.optim.Optimizer, str]:
    """SGD with momentum; `auto` takes the fused kernel, else foreach, else the Python loop."""
    base = dict(lr=args.lr, momentum=args.momentum, weight_decay=args.weight_decay)
    flags = {"fused": {"fused": True}, "foreach": {"foreach": True}, "loop": {"foreach": False}}
    tries = ["fused", "foreach", "loop"] if args.optimizer_impl == "auto" else [args.optimizer_impl]
    errors = []
    for impl in tries:
        try:
            opt = torch.optim.SGD(model.parameters(), **base, **flags[impl])
        except (RuntimeError, TypeError, ValueError) as exc:
            errors.append(f"{impl}: {exc}")
            continue
        prefill_momentum(opt)
        return opt, impl
    raise WorkloadError("cannot build SGD: " + "; ".join(errors))


def prefill_momentum(opt: torch.optim.Optimizer) -> None:
    """Start every momentum buffer at zero (same update as SGD's first step with dampening 0).

    Fused SGD allocates its buffers with ``empty_like`` on the first step and lets the kernel
    copy the gradients in; when GradScaler skips that step (inf/NaN gradients, common at
    the initial scale) the kernel returns early and the buffers keep uninitialised memory,
    which poisons every later step (seen with torch 2.13: NaN weights one step after the
    first unskipped one). Zero buffers make every step an ordinary momentum update."""
    for group in opt.param_groups:
        if group.get("momentum", 0) == 0 or group.get("dampening", 0) != 0:
            continue
        for p in group["params"]:
            opt.state[p]["momentum_buffer"] = torch.zeros_like(p)


def wrap_ddp(model: nn.Module, args: Namespace, device: torch.device) -> nn.Module:
    from torch.nn.parallel import DistributedDataParallel as DDP

    kwargs = dict(
        device_ids=[device.index] if device.type == "cuda" else None,
        bucket_cap_mb=args.bucket_cap_mb, gradient_as_bucket_view=args.gradient_as_bucket_view,
        static_graph=args.static_graph)
    known = inspect.signature(DDP.__init__).parameters
    # newer torch renamed the per-forward buffer sync (and warns on the old name)
    sync = "forward_sync_buffers" if "forward_sync_buffers" in known else "broadcast_buffers"
    kwargs[sync] = args.broadcast_buffers
    ddp = DDP(model, **{k: v for k, v in kwargs.items() if k in known})
    if args.grad_compression != "none":
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

        hook = {"fp16": default_hooks.fp16_compress_hook,
                "bf16": default_hooks.bf16_compress_hook}[args.grad_compression]
        ddp.register_comm_hook(None, hook)
    return ddp


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for text in f:
                if text.startswith("model name"):
                    return text.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"


def _versions(device: torch.device) -> dict[str, object]:
    out: dict[str, object] = {"framework": "PyTorch", "torch_version": torch.__version__,
                              "cuda_version": torch.version.cuda,
                              "cudnn_version": None, "nccl_version": None}
    if device.type == "cuda":
        with contextlib.suppress(Exception):
            out["cudnn_version"] = torch.backends.cudnn.version()
        with contextlib.suppress(Exception):
            v = torch.cuda.nccl.version()
            out["nccl_version"] = ".".join(map(str, v)) if isinstance(v, tuple) else v
    out["python_version"] = platform.python_version()
    out["hostname"] = socket.gethostname()
    return out


@dataclass
class Setup:
    """Everything a training step needs, made once."""

    args: Namespace
    denv: DistEnv
    device: torch.device
    backend: str
    model: nn.Module
    optimizer: torch.optim.Optimizer
    optimizer_impl: str
    scaler: torch.amp.GradScaler | None
    autocast_dtype: torch.dtype | None
    criterion: nn.Module
    images: torch.Tensor
    labels: torch.Tensor
    tf32: bool
    num_parameters: int
    macs: int
    extra: dict = field(default_factory=dict)

    @property
    def global_batch(self) -> int:
        return self.args.batch_size * self.denv.world_size


def build(args: Namespace, denv: DistEnv) -> Setup:
    device = wdist.resolve_device(args.device, denv)
    backend = wdist.resolve_backend(args.dist_backend, device)
    wdist.init(denv, backend, device)
    tf32 = False
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = args.cudnn_benchmark
        tf32 = configure_tf32(args.tf32)

    torch.manual_seed(args.seed)  # same initial weights everywhere (DDP broadcasts them anyway)
    model = ARCHS[args.arch](width=args.width, num_classes=args.num_classes)
    num_parameters = count_parameters(model)
    fmt = torch.channels_last if args.channels_last else torch.contiguous_format
    model = model.to(device=device, memory_format=fmt)
    optimizer, impl = make_optimizer(model, args)
    if denv.distributed:
        model = wrap_ddp(model, args, device)
    if args.compile:
        ckw: dict = {"backend": args.compile_backend}
        if args.compile_backend == "inductor":
            ckw["mode"] = args.compile_mode
        model = torch.compile(model, **ckw)

    gen = torch.Generator(device=device).manual_seed(args.seed + 7919 * (denv.rank + 1))
    shape = (args.batch_size, 3, args.image_size, args.image_size)
    images = torch.randn(shape, generator=gen, device=device).contiguous(memory_format=fmt)
    labels = torch.randint(0, args.num_classes, (args.batch_size,), generator=gen, device=device)

    autocast_dtype = {"fp32": None, "tf32": None, "amp": torch.float16,
                      "bf16": torch.bfloat16}[args.precision]
    scaler = torch.amp.GradScaler(device.type) if args.precision == "amp" else None
    return Setup(
        args=args, denv=denv, device=device, backend=backend, model=model, optimizer=optimizer,
        optimizer_impl=impl, scaler=scaler, autocast_dtype=autocast_dtype,
        criterion=nn.CrossEntropyLoss(label_smoothing=args.label_smoothing),
        images=images, labels=labels, tf32=tf32, num_parameters=num_parameters,
        macs=analytic_macs(args.width, args.num_classes, args.image_size))


def parameters(s: Setup) -> dict[str, object]:
    """The PARAMETER line's fields, in print order."""
    a, d = s.args, s.denv
    device_name = (torch.cuda.get_device_name(s.device) if s.device.type == "cuda"
                   else _cpu_name())
    out: dict[str, object] = {
        "arch": a.arch, "batch_size": a.batch_size, "global_batch_size": s.global_batch,
        "precision": a.precision,
        # DLE's `amp` flag means fp16 AMP; DLL readers map `amp : False` to fp32, so bf16 and
        # tf32 runs leave it out rather than print a flag that reads as the wrong precision
        **({"amp": a.precision == "amp"} if a.precision in ("fp32", "amp") else {}),
        "bf16": a.precision == "bf16",
        "world_size": d.world_size, "num_nodes": d.num_nodes, "gpus_per_node": d.local_world_size,
        "distributed": d.distributed,
        # the parameters stay fp32 in every precision (autocast computes in fp16/bf16)
        "param_dtype": "fp32",
        "data_parallel_impl": "ddp" if d.distributed else "none",
        "channels_last": a.channels_last, "compile": a.compile,
        "compile_mode": a.compile_mode if a.compile else None,
        "compile_backend": a.compile_backend if a.compile else None,
        "tf32": s.tf32, "cudnn_benchmark": a.cudnn_benchmark and s.device.type == "cuda",
        "image_size": a.image_size, "width": a.width, "num_classes": a.num_classes,
        "iterations": a.iterations, "print_freq": a.print_freq,
        "warmup_iterations": a.warmup_iterations, "data": "synthetic",
        "optimizer": "sgd", "optimizer_impl": s.optimizer_impl, "lr": a.lr,
        "momentum": a.momentum, "weight_decay": a.weight_decay,
        "label_smoothing": a.label_smoothing, "seed": a.seed,
        "ddp_static_graph": a.static_graph if d.distributed else None,
        "ddp_bucket_cap_mb": a.bucket_cap_mb if d.distributed else None,
        "ddp_gradient_as_bucket_view": a.gradient_as_bucket_view if d.distributed else None,
        "ddp_broadcast_buffers": a.broadcast_buffers if d.distributed else None,
        "ddp_grad_compression": a.grad_compression if d.distributed else None,
        "dist_backend": s.backend if d.distributed else None,
        "device": s.device.type, "device_name": device_name,
        "allow_nonfinite": a.allow_nonfinite,
        "num_parameters": s.num_parameters, "macs_per_image": s.macs,
    }
    out.update(_versions(s.device))
    return out


# ---------------------------------------------------------------------------------------------
# the loop


def make_step(s: Setup):
    model, opt, scaler, crit = s.model, s.optimizer, s.scaler, s.criterion
    images, labels, dev_type, dtype = s.images, s.labels, s.device.type, s.autocast_dtype

    def step() -> torch.Tensor:
        opt.zero_grad(set_to_none=True)
        with torch.autocast(dev_type, dtype=dtype or torch.float32, enabled=dtype is not None):
            loss = crit(model(images), labels)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        return loss.detach()

    return step


@dataclass
class RunResult:
    times: dict[int, float]  # iteration -> wall time right after its work finished
    losses: dict[int, float]
    start: float  # wall time before iteration 1

    def window_ips(self, global_batch: int, first: int, last: int) -> float:
        """Images/s over iterations first+1..last, from the synced wall times."""
        t0 = self.start if first == 0 else self.times[first]
        return global_batch * (last - first) / max(self.times[last] - t0, 1e-9)


def summary_window(iterations: int, warmup: int) -> int:
    """The iteration after which the Summary's throughput starts: `warmup` when the run is
    longer, else 1 (leave out the first, start-up iteration) when there are 2+, else 0."""
    if iterations > warmup:
        return warmup
    return 1 if iterations >= 2 else 0


def run(s: Setup, out=None) -> RunResult:
    a, gb = s.args, s.global_batch
    n, pf = a.iterations, a.print_freq
    printed = set(range(pf, n + 1, pf)) | {n}
    warm = summary_window(n, a.warmup_iterations)
    synced = printed | ({warm} if warm else set())
    step = make_step(s)

    if s.device.type == "cuda":
        torch.cuda.synchronize(s.device)
    if s.denv.distributed:
        dist.barrier()
    start = last_t = time.time()
    last_i = 0
    res = RunResult({}, {}, start)
    for i in range(1, n + 1):
        loss = step()
        if i not in synced:
            continue
        value = loss.item()  # the one host sync: waits for the whole iteration on the stream
        now = time.time()
        res.times[i], res.losses[i] = now, value
        if i in printed and s.denv.is_main:
            ips = gb * (i - last_i) / max(now - last_t, 1e-9)
            dllog.emit(dllog.iteration_line(now, 0, i, value, ips), out)
        last_i, last_t = i, now
    return res


def peak_memory_mib(s: Setup) -> float | None:
    """torch.cuda.max_memory_allocated over the run, MiB, max over ranks; None on the CPU."""
    if s.device.type != "cuda":
        return None
    peak = torch.tensor([torch.cuda.max_memory_allocated(s.device)], dtype=torch.float64,
                        device=s.device)
    if s.denv.distributed:
        dist.all_reduce(peak, op=dist.ReduceOp.MAX)
    return float(peak.item()) / 2**20


def train(args: Namespace, denv: DistEnv, out=None) -> int:
    s = build(args, denv)
    if denv.is_main:
        dllog.emit(dllog.parameter_line(time.time(), parameters(s)), out)
    res = run(s, out)
    n = args.iterations
    warm = summary_window(n, args.warmup_iterations)
    ips = res.window_ips(s.global_batch, warm, n)
    memory = peak_memory_mib(s)
    final_loss = res.losses[n]
    if denv.is_main:
        dllog.emit(dllog.summary_line(time.time(), final_loss, ips, memory), out)
    if not math.isfinite(final_loss) and not args.allow_nonfinite:
        raise NonFiniteLoss(f"final loss on rank {denv.rank} is {final_loss} "
                            "(pass --allow-nonfinite to accept)")
    return 0


class NonFiniteLoss(WorkloadError):
    pass


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)  # exits 2 on bad options
    rank = os.environ.get("RANK", "0")
    try:
        denv = DistEnv.from_env()
        return train(args, denv)
    except NonFiniteLoss as exc:
        print(f"workloads.resnet: rank {rank}: {exc}", file=sys.stderr, flush=True)
        return EXIT_NONFINITE
    except WorkloadError as exc:
        print(f"workloads.resnet: rank {rank}: error: {exc}", file=sys.stderr, flush=True)
        return EXIT_ERROR
    except torch.cuda.OutOfMemoryError as exc:
        print(f"workloads.resnet: rank {rank}: out of GPU memory with --batch-size "
              f"{args.batch_size}: {exc}", file=sys.stderr, flush=True)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print(f"workloads.resnet: rank {rank}: interrupted", file=sys.stderr, flush=True)
        return 130
    except Exception as exc:  # anything else: the traceback, then one clear last line
        traceback.print_exc()
        print(f"workloads.resnet: rank {rank}: failed: {type(exc).__name__}: {exc}",
              file=sys.stderr, flush=True)
        return EXIT_ERROR
    finally:
        wdist.finish()
