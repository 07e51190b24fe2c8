"""Workload templates: what each node runs for one run of a case.

A template turns a :class:`LaunchContext` (the run, its hosts, master address and port, device)
into one argument list per node (``None`` for a node that a head-node launcher such as
``mpirun`` reaches by itself). Templates never build shell strings.

Launch styles:
- ``per_node`` — the same launcher on every node with its node rank and the master address
  (torchrun, NVIDIA DLE ``multiproc.py``, OneFlow ``--node_ips``).
- ``head`` — one ``mpirun``/``horovodrun`` on node 0 with a host list.

Registry: one module per template (a :class:`Workload` subclass decorated with
:func:`register`, named after its module), looked up by name (``names()``, ``get(name)``);
adding a workload means adding one module. Shared here: the launch context, the template
base class, the torchrun command and GPT model arguments of several templates, and the
container wrapper.
"""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from analysis.registry import Registry

if TYPE_CHECKING:
    from analysis.campaign.spec import Case, Run, Spec


@dataclass
class LaunchContext:
    """Everything a template needs to build one run's node commands."""

    spec: Spec
    run: Run
    hosts: list[str]  # one per node, node-rank order (host names the nodes reach each other by)
    master_addr: str
    master_port: int
    device: str = "cuda"  # "cuda" or "cpu", resolved by the backend
    python: str = field(default_factory=lambda: sys.executable)

    @property
    def case(self) -> Case:
        return self.run.case

    @property
    def reduced(self) -> bool:
        return self.spec.scale == "cpu" or (self.spec.scale == "auto" and self.device == "cpu")

    def opt(self, key: str, default: Any = None) -> Any:
        return self.spec.options.get(key, default)

    def extra(self) -> list[str]:
        return [*self.case.args, *self.spec.workload_args]


class Workload(ABC):
    """A workload template; subclasses are registered by :attr:`name`."""

    name: str = ""
    framework: str = ""
    default_model: str = "resnet50"
    default_iterations: int = 100
    precisions: tuple[str, ...] = ("fp32", "amp")
    #: the program's option that sets its warm-up iterations ("" where the suite knows none)
    #: and the warm-up it runs when its command does not give it (None: none known)
    warmup_option: str = ""
    default_warmup: int | None = None

    def check_case(self, case: Case) -> None:
        """SpecError when the template cannot run `case`."""
        from analysis.campaign.spec import SpecError

        if case.precision not in self.precisions:
            raise SpecError(f"spec: precision {case.precision!r} is not supported by workload "
                            f"{self.name!r}; allowed: {', '.join(self.precisions)}")

    def stem(self, case: Case, repeat: int) -> str:
        """Log file stem in the DLPerf layout: ``<model>_b<bsz>_<precision>_<repeat>``."""
        base = case.name or f"{case.model}_b{case.batch_size}_{case.precision}"
        return f"{base}_{repeat}"

    def warmup_given(self, argv: list[str]) -> int | str | None:
        """The warm-up a node's command `argv` gives its program, whether the spec, the
        workload's arguments or nothing set it: the value of the last :attr:`warmup_option`
        there (``OPT N``, ``OPT=N``, or a prefix argparse takes for it: ``--warmup 5``), else
        :attr:`default_warmup`."""
        opt, value = self.warmup_option, self.default_warmup
        for word, after in zip(argv, [*argv[1:], None], strict=True):
            name, eq, text = word.partition("=")
            if opt and len(name) > 2 and name.startswith("--") and opt.startswith(name):
                value = text if eq else after
        return int(value) if isinstance(value, str) and value.isdigit() else value

    @abstractmethod
    def commands(self, ctx: LaunchContext) -> list[list[str] | None]:
        """One argument list per node (``None``: the node runs nothing itself)."""


def gpt_model_args(case, iterations: int) -> list[str]:
    """Megatron-style GPT sizes of a case (``oneflow_gpt`` case params), shared by the
    OneFlow GPT and the built-in GPT command lines."""
    p = case.param
    return ["--tensor-model-parallel-size", str(p["mp"]),
            "--pipeline-model-parallel-size", str(p["pp"]),
            "--micro-batch-size", str(case.batch_size),
            "--global-batch-size", str(p["global_batch_size"]),
            "--num-layers", str(p["num_layers"]), "--hidden-size", str(p["hidden_size"]),
            "--num-attention-heads", str(p["num_heads"]), "--seq-length", str(p["seq_length"]),
            "--train-iters", str(iterations), "--log-interval", "1"]


def torchrun_node(ctx: LaunchContext, rank: int, module: str, args: list[str]) -> list[str]:
    """Node `rank`'s torchrun of G processes of ``python -m MODULE ARGS --device D
    --dist-backend nccl`` (cpu and gloo on CPU), the built-in workloads' command."""
    n, cpu = ctx.case.num_nodes, ctx.device == "cpu"
    head = [ctx.python, "-m", "torch.distributed.run", "--standalone"] if n == 1 else [
        ctx.python, "-m", "torch.distributed.run", "--nnodes", str(n), "--node_rank", str(rank),
        "--master_addr", ctx.master_addr, "--master_port", str(ctx.master_port)]
    return [*head, "--nproc_per_node", str(ctx.case.gpus_per_node), "-m", module, *args,
            "--device", "cpu" if cpu else "cuda", "--dist-backend", "gloo" if cpu else "nccl"]


def wrap_container(argv: list[str], container: dict | None, workdir: str, env_names: list[str],
                   gpus: bool) -> list[str]:
    """`argv` run inside the spec's container (host network and IPC, workdir mounted)."""
    if not container:
        return argv
    image, mounts = str(container["image"]), [str(m) for m in container.get("mounts", [])]
    extra = [str(a) for a in container.get("args", [])]
    if container.get("runtime", "docker") == "docker":
        head = ["docker", "run", "--rm", "--net=host", "--ipc=host", "--shm-size=16g",
                "-v", f"{workdir}:{workdir}", "-w", workdir]
        if gpus:
            head += ["--gpus", "all"]
        for m in mounts:
            head += ["-v", m]
        for k in env_names:  # values come from the node's environment, never the command line
            head += ["-e", k]
        return [*head, *extra, image, *argv]
    head = [container.get("runtime"), "exec", "--pwd", workdir, "-B", workdir]
    if gpus:
        head.append("--nv")
    for m in mounts:
        head += ["-B", m]
    return [*head, *extra, image, *argv]


_registry: Registry[Workload] = Registry("workload", __name__, __path__)
register = _registry.register
names = _registry.names


def get(name: str) -> Workload:
    """A template instance of the workload registered as `name` (UnknownNameError lists the
    valid names)."""
    return _registry.get(name)()
