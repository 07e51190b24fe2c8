"""`capture()`: record this host's hardware, software, topology and environment.

The probes run in parallel threads (each external command under its own timeout), so a
capture takes about as long as the slowest probe: ~0.3 s on a 4 x H200 node, ~4 s there when
frameworks are imported (``import_frameworks``).
Nothing here raises for a missing GPU, tool or file: the record's ``absent`` says what is
missing and why.
"""

from __future__ import annotations

import fnmatch
import os
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from functools import partial

from analysis.env.probes import (
    Found,
    probe_cpu,
    probe_cuda_driver,
    probe_gpus,
    probe_infiniband,
    probe_matmul,
    probe_memory_os,
    probe_topology,
)
from analysis.env.record import EnvRecord
from analysis.env.software import probe_software
from analysis.redact import redact_env

#: Environment variables recorded by default: what can change performance (shell-style
#: patterns, case-sensitive). An allow-list: nothing else is recorded unless asked for.
DEFAULT_ENV_PATTERNS = (
    "CUDA_*", "NCCL_*", "NVIDIA_*", "CUDNN_*", "NVSHMEM_*", "UCX_*", "OMPI_MCA_*", "GLOO_*",
    "OMP_*", "MKL_*", "KMP_*", "GOMP_*", "HOROVOD_*", "TF_*", "XLA_*", "ONEFLOW_*", "TORCH_*",
    "PYTORCH_*", "TORCHINDUCTOR_*", "TORCHDYNAMO_*", "TRITON_*", "CUBLAS_*", "CUBLASLT_*",
    "NVTE_*", "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK",
    "LOCAL_WORLD_SIZE", "NODE_RANK", "LD_LIBRARY_PATH", "LD_PRELOAD",
    # Slurm job geometry
    "SLURM_JOB_ID", "SLURM_JOB_PARTITION", "SLURM_JOB_NODELIST", "SLURM_JOB_NUM_NODES",
    "SLURM_NNODES", "SLURM_NTASKS", "SLURM_NPROCS", "SLURM_NTASKS_PER_NODE",
    "SLURM_TASKS_PER_NODE", "SLURM_CPUS_PER_TASK", "SLURM_CPUS_ON_NODE",
    "SLURM_JOB_CPUS_PER_NODE", "SLURM_GPUS", "SLURM_GPUS_PER_NODE", "SLURM_GPUS_PER_TASK",
    "SLURM_GPUS_ON_NODE", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS", "SLURM_MEM_PER_NODE",
    "SLURM_MEM_PER_CPU", "SLURM_DISTRIBUTION", "SLURM_CPU_BIND", "SLURM_CPU_BIND_TYPE",
    "SLURM_HINT", "SLURM_NODEID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_STEP_NUM_NODES",
    "SLURM_STEP_NUM_TASKS", "SLURM_STEP_TASKS_PER_NODE",
)
#: Matched by a default pattern but not TensorFlow's: Terraform's and OpenTofu's ``TF_*``
#: variables (``TF_ENCRYPTION`` holds the state encryption passphrase).
NOT_RECORDED = (
    "TF_CLI_*", "TF_VAR_*", "TF_TOKEN_*", "TF_ENCRYPTION", "TF_LOG", "TF_LOG_*", "TF_INPUT",
    "TF_DATA_DIR",
    "TF_WORKSPACE", "TF_IN_AUTOMATION", "TF_REGISTRY_*", "TF_STATE_*", "TF_PLUGIN_*",
    "TF_IGNORE", "TF_APPEND_USER_AGENT", "TF_ACC*", "TF_REATTACH_PROVIDERS", "TF_CLOUD_*",
    "TF_HOSTNAME", "TF_ORGANIZATION", "TF_PROJECT", "TF_WORKDIR", "TF_SKIP_*",
)

#: Default timeout (s) of each external command; they run in parallel.
DEFAULT_TIMEOUT = 10.0

PROBES: dict[str, Callable[[float], Found]] = {
    "gpus": probe_gpus,
    "cuda_driver": probe_cuda_driver,
    "topology": probe_topology,
    "cpu": probe_cpu,
    "system": probe_memory_os,
    "infiniband": probe_infiniband,
    "software": probe_software,
}


def _matches(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def select_env(environ: Mapping[str, str], extra_patterns: Sequence[str] = ()
               ) -> dict[str, str]:
    """The variables of ``environ`` on the allow-list (:data:`DEFAULT_ENV_PATTERNS` but not
    :data:`NOT_RECORDED`) or matching ``extra_patterns``, sorted; secrets (by name or value,
    :mod:`analysis.redact`) redacted."""
    chosen = {k: v for k, v in environ.items()
              if (_matches(k, DEFAULT_ENV_PATTERNS) and not _matches(k, NOT_RECORDED))
              or _matches(k, extra_patterns)}
    return redact_env(dict(sorted(chosen.items())))


def capture(timeout: float = DEFAULT_TIMEOUT, env_patterns: Sequence[str] = (),
            environ: Mapping[str, str] | None = None, import_frameworks: bool = False,
            matmul: bool = False) -> EnvRecord:
    """Describe this host as an :class:`EnvRecord`.

    ``timeout`` bounds each external command (nvidia-smi, lscpu, framework imports, …).
    ``env_patterns`` adds shell-style name patterns to :data:`DEFAULT_ENV_PATTERNS`;
    ``environ`` replaces ``os.environ`` as the source of recorded variables. Framework
    versions come from package metadata and build files; ``import_frameworks`` also imports
    each framework in a child process to ask which CUDA/cuDNN/NCCL it loads (authoritative,
    but a CUDA build of torch takes ~3–4 s to import). ``matmul`` also measures the bf16
    matmul rate of each GPU (:func:`~analysis.env.probes.probe_matmul`), after the other
    probes so that it does not slow them.
    """
    start = time.monotonic()
    found = Found()
    probes = dict(PROBES)
    if import_frameworks:
        probes["software"] = partial(probe_software, import_frameworks=True)
    with ThreadPoolExecutor(max_workers=len(probes)) as pool:
        futures = {name: pool.submit(fn, timeout) for name, fn in probes.items()}
        for name, fut in futures.items():
            try:
                found.merge(fut.result())
            except Exception as exc:  # a probe bug or an odd host must not stop the capture
                found.absent[name] = f"probe failed: {type(exc).__name__}: {exc}"
    if matmul:
        found.merge(probe_matmul(timeout))
    environ = os.environ if environ is None else environ
    return EnvRecord(
        captured_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        hostname=socket.gethostname(),
        env=select_env(environ, tuple(env_patterns)),
        sources=found.sources,
        absent=found.absent,
        capture_seconds=round(time.monotonic() - start, 3),
        **found.values,
    )
