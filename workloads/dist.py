"""The process's place in the job, read from torchrun's environment, and process-group set-up."""

from __future__ import annotations

import gc
import os
from collections.abc import Mapping
from dataclasses import dataclass

import torch
import torch.distributed as dist


class WorkloadError(RuntimeError):
    """A problem the workload reports with a clear message and a non-zero exit code."""


def _env_int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise WorkloadError(f"environment variable {name}={raw!r} is not an integer") from None


@dataclass(frozen=True)
class DistEnv:
    """Rank and sizes of this process. Without torchrun: one process, rank 0."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    local_world_size: int = 1
    num_nodes: int = 1

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> DistEnv:
        """Read RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE and GROUP_WORLD_SIZE (the node
        count under torchrun). Launchers that set only the first three (a hand-written srun
        line) are taken as one node unless LOCAL_WORLD_SIZE says otherwise."""
        env = os.environ if env is None else env
        world = _env_int(env, "WORLD_SIZE", 1)
        rank = _env_int(env, "RANK", 0)
        local_rank = _env_int(env, "LOCAL_RANK", rank if world > 1 else 0)
        local_world = _env_int(env, "LOCAL_WORLD_SIZE", world)
        if world < 1 or not 0 <= rank < world:
            raise WorkloadError(f"bad RANK={rank} / WORLD_SIZE={world} in the environment")
        if local_world < 1 or not 0 <= local_rank < local_world:
            raise WorkloadError(
                f"bad LOCAL_RANK={local_rank} / LOCAL_WORLD_SIZE={local_world} in the environment")
        nodes = _env_int(env, "GROUP_WORLD_SIZE", -(-world // local_world))
        return cls(rank, world, local_rank, local_world, max(1, nodes))


def resolve_device(choice: str, denv: DistEnv) -> torch.device:
    """`auto` = this process's GPU (cuda:LOCAL_RANK) when CUDA works, else the CPU."""
    if choice not in ("auto", "cuda", "cpu"):
        raise WorkloadError(f"unknown device {choice!r}; valid: auto, cuda, cpu")
    if choice == "cpu" or (choice == "auto" and not torch.cuda.is_available()):
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise WorkloadError("--device cuda was asked for but torch.cuda.is_available() is False "
                            f"(torch {torch.__version__}, built for CUDA {torch.version.cuda})")
    count = torch.cuda.device_count()
    if denv.local_rank >= count:
        raise WorkloadError(f"LOCAL_RANK {denv.local_rank} has no GPU: only {count} visible "
                            f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')!r})")
    torch.cuda.set_device(denv.local_rank)
    return torch.device("cuda", denv.local_rank)


def resolve_backend(choice: str, device: torch.device) -> str:
    """`auto` = nccl on CUDA, gloo on the CPU; an explicit choice must be available."""
    backend = choice if choice != "auto" else ("nccl" if device.type == "cuda" else "gloo")
    available = {"nccl": dist.is_nccl_available(), "gloo": dist.is_gloo_available()}
    if backend not in available:
        raise WorkloadError(f"unknown dist backend {choice!r}; valid: auto, nccl, gloo")
    if not available[backend]:
        raise WorkloadError(f"dist backend {backend!r} is not available in this torch build")
    if backend == "nccl" and device.type != "cuda":
        raise WorkloadError("dist backend nccl needs CUDA devices; use gloo on the CPU")
    return backend


def init(denv: DistEnv, backend: str, device: torch.device) -> None:
    """Join the process group (env:// rendezvous: MASTER_ADDR / MASTER_PORT); no-op alone."""
    if not denv.distributed:
        return
    missing = [v for v in ("MASTER_ADDR", "MASTER_PORT") if not os.environ.get(v)]
    if missing:
        raise WorkloadError(f"WORLD_SIZE={denv.world_size} but {', '.join(missing)} not set; "
                            "launch with torchrun or set them")
    kwargs: dict = {}
    if device.type == "cuda":
        kwargs["device_id"] = device  # binds the communicator to our GPU at once
    dist.init_process_group(backend=backend, rank=denv.rank, world_size=denv.world_size, **kwargs)


def finish() -> None:
    """Leave the process group. Objects that still hold its pending work (DDP's reducer sits
    in reference cycles) are collected first, while the group and the interpreter are whole:
    left to the interpreter's exit, gloo's threads can meet them half torn down and abort the
    rank (SIGABRT, "terminate called without an active exception") after a finished run."""
    if dist.is_available() and dist.is_initialized():
        gc.collect()
        dist.destroy_process_group()
