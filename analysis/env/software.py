"""Software versions: frameworks, CUDA toolkit, cuDNN and NCCL.

Installed packages are listed from their metadata (no import). Frameworks that can state the
CUDA/cuDNN/NCCL they were built with are imported in child processes (:mod:`fwprobe`), in
parallel and under a timeout, so a slow or broken import only adds an ``absent`` entry.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

from analysis.env.probes import Found, read_text_or_none, why_absent
from analysis.shell import CommandError, run_command

#: Distribution name (normalised) -> framework probe name, for frameworks worth importing.
PROBED = {"torch": "torch", "oneflow": "oneflow", "tensorflow": "tensorflow",
          "tensorflow-gpu": "tensorflow", "tensorflow-cpu": "tensorflow",
          "paddlepaddle": "paddle", "paddlepaddle-gpu": "paddle"}
#: Other packages whose version is recorded (a trailing ``*`` matches any suffix).
LISTED = ("jax", "jaxlib", "mxnet*", "mindspore*", "horovod", "deepspeed", "megatron-core",
          "transformers", "apex", "nvidia-dali*", "triton", "flash-attn", "oneflow*")
#: pip wheels that carry cuDNN / NCCL / the CUDA runtime.
_PIP_LIBS = {"cudnn_version": re.compile(r"nvidia-cudnn-cu\d+"),
             "nccl_version": re.compile(r"nvidia-nccl-cu\d+"),
             "cuda_runtime": re.compile(r"nvidia-cuda-runtime-cu\d+")}
#: Build facts a framework writes into its package: (file, key, regex), read without importing.
_BUILD_FILES = {
    "torch": (("version.py", "cuda", r"^cuda\b[^=\n]*=\s*['\"]([^'\"]+)['\"]"),
              ("version.py", "git_version", r"^git_version\b[^=\n]*=\s*['\"]([^'\"]+)['\"]")),
    "tensorflow": (("python/platform/build_info.py", "cuda", r"['\"]cuda_version['\"]:\s*['\"]([^'\"]+)"),
                   ("python/platform/build_info.py", "cudnn", r"['\"]cudnn_version['\"]:\s*['\"]([^'\"]+)")),
}


def installed_packages() -> dict[str, str]:
    """Normalised distribution name -> version, for everything this Python can import."""
    out: dict[str, str] = {}
    for dist in metadata.distributions():
        name = dist.metadata.get("Name")
        if name:
            out.setdefault(re.sub(r"[-_.]+", "-", name).lower(), dist.version)
    return out


def _listed(packages: dict[str, str]) -> dict[str, dict]:
    found = {}
    for pattern in LISTED:
        for name, version in packages.items():
            if name == pattern or (pattern.endswith("*") and name.startswith(pattern[:-1])):
                found[name] = {"version": version}
    return found


def _run_probe(name: str, timeout: float) -> dict:
    source = Path(__file__).with_name("fwprobe.py").read_text(encoding="utf-8")
    # cwd "/" so that a folder named like a framework in the caller's cwd cannot shadow it
    res = run_command([sys.executable, "-c", source, name], timeout, cwd="/")
    lines = res.stdout.strip().splitlines()
    try:
        return json.loads(lines[-1]) if lines else {"error": "printed nothing"}
    except json.JSONDecodeError:
        return {"error": f"unreadable output {lines[-1][:200]!r}"}


def _cuda_toolkit(timeout: float) -> tuple[str, str] | None:
    try:
        out = run_command(["nvcc", "--version"], timeout).stdout
    except CommandError:
        return None
    m = re.search(r"release [\d.]+, V([\d.]+)", out)
    return (m.group(1), "nvcc") if m else None


def _build_file_info(probe: str) -> dict[str, str]:
    """What a framework's own version file states (no import): torch's ``version.py``,
    TensorFlow's ``build_info.py``."""
    try:
        spec = importlib.util.find_spec(probe)  # locates the package without importing it
    except (ImportError, ValueError):
        return {}
    if spec is None or not spec.submodule_search_locations:
        return {}
    root = Path(next(iter(spec.submodule_search_locations)))
    info = {}
    for rel, key, pattern in _BUILD_FILES.get(probe, ()):
        m = re.search(pattern, read_text_or_none(root / rel) or "", re.M)
        if m:
            info[key] = m.group(1)
    return info


def probe_software(timeout: float, import_frameworks: bool = False) -> Found:
    """Framework versions (``frameworks``), ``cuda_toolkit``, ``cudnn_version``, ``nccl_version``.

    Versions come from package metadata and the frameworks' build files, which costs
    ~0.1 s. With ``import_frameworks`` each framework is also imported in a child process
    (seconds each, in parallel) to ask it which CUDA/cuDNN/NCCL it actually loads.
    """
    found = Found()
    packages = installed_packages()
    frameworks: dict[str, dict] = {}
    probes = {}
    for dist, probe in PROBED.items():
        if dist in packages and probe not in probes:
            probes[probe] = dist
            frameworks[dist] = {"version": packages[dist], **_build_file_info(probe)}
    if not import_frameworks:
        probes = {}
    with ThreadPoolExecutor(max_workers=max(1, len(probes) + 1)) as pool:
        futures = {p: pool.submit(_run_probe, p, timeout) for p in probes}
        toolkit = pool.submit(_cuda_toolkit, timeout)
        for probe, fut in futures.items():
            dist = probes[probe]
            try:
                info = fut.result()
            except CommandError as exc:
                info = {"error": f"import {why_absent(exc)}"}
            if "error" in info:
                found.absent[f"{dist} import"] = info.pop("error")
            frameworks[dist].update(info)
        tk = toolkit.result()
    frameworks.update({k: v for k, v in _listed(packages).items() if k not in frameworks})
    found.values["frameworks"] = frameworks
    if tk:
        found.values["cuda_toolkit"], found.sources["cuda_toolkit"] = tk
    else:
        found.absent["cuda_toolkit"] = "no nvcc on PATH"
    for key, lib in (("cudnn_version", "cudnn"), ("nccl_version", "nccl")):
        _pick_lib(found, frameworks, packages, key, lib)
    return found


def _pick_lib(found: Found, frameworks: dict, packages: dict, key: str, lib: str) -> None:
    """What a framework states it was built with (its build file, or its import with
    ``import_frameworks``), else the pip wheel the framework installed; a system header is
    not read: it need not be the library the framework loads."""
    for dist, info in frameworks.items():
        if info.get(lib):
            found.values[key], found.sources[key] = str(info[lib]), dist
            return
    for name, version in packages.items():
        if _PIP_LIBS[key].fullmatch(name):
            found.values[key], found.sources[key] = version, f"pip {name}"
            return
    found.absent[key] = (f"no framework states it and no pip {lib} wheel is installed "
                         "(dlperf env --import-frameworks asks the frameworks)")
