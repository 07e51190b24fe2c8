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
    probe_memory_os,
    probe_topology,
)
from analysis.env.record import EnvRecord, redact_env
from analysis.env.software import probe_software

#: Environment variables recorded by default (shell-style patterns, case-sensitive).
DEFAULT_ENV_PATTERNS = (
    "NCCL_*", "CUDA_*", "NVIDIA_*", "CUDNN_*", "NVSHMEM_*", "UCX_*", "OMPI_MCA_*", "GLOO_*",
    "OMP_*", "MKL_*", "KMP_*", "GOMP_*", "HOROVOD_*", "TF_*", "XLA_*", "ONEFLOW_*", "TORCH_*",
    "PYTORCH_*", "SLURM_*", "DLPERF_*", "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK",
    "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK", "LD_LIBRARY_PATH", "LD_PRELOAD",
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


def select_env(environ: Mapping[str, str], patterns: Sequence[str] = DEFAULT_ENV_PATTERNS
               ) -> dict[str, str]:
    """The variables of ``environ`` whose names match ``patterns``, sorted, secrets redacted."""
    chosen = {k: v for k, v in environ.items()
              if any(fnmatch.fnmatchcase(k, p) for p in patterns)}
    return redact_env(dict(sorted(chosen.items())))


def capture(timeout: float = DEFAULT_TIMEOUT, env_patterns: Sequence[str] = (),
            environ: Mapping[str, str] | None = None, import_frameworks: bool = False
            ) -> EnvRecord:
    """Describe this host as an :class:`EnvRecord`.

    ``timeout`` bounds each external command (nvidia-smi, lscpu, framework imports, …).
    ``env_patterns`` adds shell-style name patterns to :data:`DEFAULT_ENV_PATTERNS`;
    ``environ`` replaces ``os.environ`` as the source of recorded variables. Framework
    versions come from package metadata and build files; ``import_frameworks`` also imports
    each framework in a child process to ask which CUDA/cuDNN/NCCL it loads (authoritative,
    but a CUDA build of torch takes ~3–4 s to import).
    """
    start = time.monotonic()
    values: dict = {}
    sources: dict[str, str] = {}
    absent: dict[str, str] = {}
    probes = dict(PROBES)
    if import_frameworks:
        probes["software"] = partial(probe_software, import_frameworks=True)
    with ThreadPoolExecutor(max_workers=len(probes)) as pool:
        futures = {name: pool.submit(fn, timeout) for name, fn in probes.items()}
        for name, fut in futures.items():
            try:
                found = fut.result()
            except Exception as exc:  # a probe bug or an odd host must not stop the capture
                absent[name] = f"probe failed: {type(exc).__name__}: {exc}"
                continue
            values.update(found.values)
            sources.update(found.sources)
            absent.update(found.absent)
    environ = os.environ if environ is None else environ
    return EnvRecord(
        captured_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        hostname=socket.gethostname(),
        env=select_env(environ, tuple(DEFAULT_ENV_PATTERNS) + tuple(env_patterns)),
        sources=sources,
        absent=absent,
        capture_seconds=round(time.monotonic() - start, 3),
        **values,
    )
