"""Workload templates: what each node runs for one run of a case.

A template turns a :class:`LaunchContext` (the run, its hosts, master address and port, device)
into one argument list per node (``None`` for a node that a head-node launcher such as
``mpirun`` reaches by itself). Templates never build shell strings.

Launch styles:
- ``per_node`` — the same launcher on every node with its node rank and the master address
  (torchrun, NVIDIA DLE ``multiproc.py``, OneFlow ``--node_ips``).
- ``head`` — one ``mpirun``/``horovodrun`` on node 0 with a host list.

Templates (``names()``):

``builtin``
    ``python -m torch.distributed.run [--standalone | --nnodes N --node_rank R --master_addr A
    --master_port P] --nproc_per_node G -m workloads.resnet --arch MODEL --precision P
    --batch-size B --iterations I --print-freq 1 --device D --dist-backend nccl|gloo``; on CPU
    (no CUDA GPU, or ``device: cpu``) gloo and the reduced size ``--image-size 32 --width 8``.
``dle_pytorch_rn50``
    NVIDIA DeepLearningExamples PyTorch ResNet50 v1.5 (seed 003): ``python CODE/multiproc.py
    --nnodes N --node_rank R --nproc_per_node G --master_addr A --master_port P CODE/main.py
    --data-backend dali-cpu ... -b B --epochs 1 --prof I --training-only --no-checkpoints
    [--amp --static-loss-scale S | --dynamic-loss-scale] DATA``. Options: ``code_dir``
    (default /workspace/rn50), ``data_dir`` (/data/image), ``data_backend``, ``loss_scale``.
``dle_tf_rn50``
    NVIDIA DLE TensorFlow ResNet50 v1.5 with Horovod (seed 004): on node 0 only, ``mpirun
    --allow-run-as-root -np N*G -H h1:G,h2:G -bind-to none -map-by slot -x NCCL_DEBUG ... python
    CODE/main.py --mode=train --arch=resnet50 --batch_size=B --num_iter=I --iter_unit=batch
    --warmup_steps=W [--amp] [--use_xla] --data_dir=DATA`` (``launcher: horovodrun`` gives
    ``horovodrun -np N*G -H h1:G,... python ...``). Options: ``code_dir``
    (/workspace/rn50v15_tf), ``data_dir``, ``results_dir``, ``mode``, ``xla``, ``launcher``.
``oneflow_cnn``
    OneFlow-Benchmark ``of_cnn_train_val.py`` (seed 001), the same command on every node with
    ``--node_ips``: ``python3 CODE/of_cnn_train_val.py --num_examples=N*G*B*I --num_nodes=N
    --gpu_num_per_node=G --model_update=momentum --learning_rate=0.001
    --loss_print_every_n_iter=K --batch_size_per_device=B --val_batch_size_per_device=125
    --num_epoch=1 --log_dir=./log --node_ips=h1,h2 --model=resnet50 [--use_fp16]
    [--train_data_dir=DATA/train --train_data_part_num=P]`` (synthetic data without
    ``data_dir``). Options: ``code_dir`` (cnns), ``data_dir``, ``data_part_num`` (44),
    ``print_every`` (20), ``python`` (python3).
``oneflow_gpt``
    OneFlow-Benchmark GPT (seed 002), explicit cases with ``params`` ``mp``, ``pp``
    (``dp`` = N*G/(mp*pp), checked when given), ``global_batch_size``, ``seq_length``,
    ``num_layers``, ``hidden_size``, ``num_heads``; ``batch_size`` is the micro-batch size.
    Every node: ``python3 -m oneflow_gpt.training --num-nodes N --num-gpus-per-node G
    --node-ips h1,h2 --tensor-model-parallel-size MP --pipeline-model-parallel-size PP
    --micro-batch-size M --global-batch-size GB --num-layers L --hidden-size H
    --num-attention-heads NH --seq-length S --max-position-embeddings S --train-iters I
    --log-interval 1 [--fp16] [--dataset DATA]``. Log file
    ``pretrain_gpt_<N>n<G>d_dp.._mp.._pp.._mbz.._gbz.._s.._l.._h.._nh.._<repeat>.log``.
``gpt``
    The suite's own GPT (``workloads.gpt``, plain PyTorch) with the ``oneflow_gpt`` case params
    and file names: ``python -m torch.distributed.run ... --nproc_per_node G -m workloads.gpt
    --tensor-model-parallel-size MP --pipeline-model-parallel-size PP --micro-batch-size M
    --global-batch-size GB --num-layers L --hidden-size H --num-attention-heads NH
    --seq-length S --train-iters I --log-interval 1 --precision bf16|fp32 --device D
    --dist-backend nccl|gloo``; a case's ``args`` add e.g. ``--compile`` or
    ``--pipeline-schedule gpipe``. No reduced size on CPU: the case params are the model.
"""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from analysis.errors import UnknownNameError

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
    launch: str = "per_node"  # or "head"
    default_model: str = "resnet50"
    default_iterations: int = 100
    precisions: tuple[str, ...] = ("fp32", "amp")

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

    @abstractmethod
    def commands(self, ctx: LaunchContext) -> list[list[str] | None]:
        """One argument list per node (``None``: the node runs nothing itself)."""


_REGISTRY: dict[str, type[Workload]] = {}


def register(cls: type[Workload]) -> type[Workload]:
    _REGISTRY[cls.name] = cls
    return cls


def names() -> list[str]:
    return sorted(_REGISTRY)


def get(name: str) -> Workload:
    try:
        return _REGISTRY[name]()
    except KeyError:
        raise UnknownNameError("workload", name, list(_REGISTRY)) from None


def _gpt_model_args(case, iterations: int) -> list[str]:
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


def _torchrun_head(ctx: LaunchContext, rank: int) -> list[str]:
    n = ctx.case.num_nodes
    if n == 1:
        return [ctx.python, "-m", "torch.distributed.run", "--standalone"]
    return [ctx.python, "-m", "torch.distributed.run", "--nnodes", str(n), "--node_rank",
            str(rank), "--master_addr", ctx.master_addr, "--master_port", str(ctx.master_port)]


@register
class Builtin(Workload):
    """The suite's own PyTorch ResNet-50 (``python -m workloads.resnet``) under torchrun."""

    name, framework = "builtin", "pytorch"
    precisions = ("fp32", "amp", "bf16")
    default_iterations = 100

    def commands(self, ctx):
        c = ctx.case
        cpu = ctx.device == "cpu"
        out = []
        for rank in range(c.num_nodes):
            argv = [*_torchrun_head(ctx, rank), "--nproc_per_node", str(c.gpus_per_node),
                    "-m", "workloads.resnet", "--arch", c.model, "--precision", c.precision,
                    "--batch-size", str(c.batch_size), "--iterations", str(ctx.spec.iterations),
                    "--print-freq", "1", "--device", "cpu" if cpu else "cuda",
                    "--dist-backend", "gloo" if cpu else "nccl"]
            if "warmup" in ctx.spec.raw:
                argv += ["--warmup-iterations", str(ctx.spec.warmup)]
            if ctx.reduced:
                argv += ["--image-size", "32", "--width", "8"]
            out.append(argv + ctx.extra())
        return out


@register
class DLEPyTorchRN50(Workload):
    """NVIDIA DeepLearningExamples PyTorch ResNet50 v1.5, ``multiproc.py`` per node."""

    name, framework = "dle_pytorch_rn50", "pytorch"
    default_iterations = 150

    def commands(self, ctx):
        c, code = ctx.case, str(ctx.opt("code_dir", "/workspace/rn50")).rstrip("/")
        workspace = str(ctx.opt("workspace", code))
        out = []
        for rank in range(c.num_nodes):
            argv = [ctx.opt("python", "python"), f"{code}/multiproc.py",
                    "--nnodes", str(c.num_nodes), "--node_rank", str(rank),
                    "--nproc_per_node", str(c.gpus_per_node),
                    "--master_addr", ctx.master_addr, f"--master_port={ctx.master_port}",
                    f"{code}/main.py", "--data-backend", str(ctx.opt("data_backend", "dali-cpu")),
                    "--raport-file", f"{workspace}/raport.json", "-j8", "-p", "1",
                    "--lr", "1.024", "--optimizer-batch-size", "-1", "--warmup", "8",
                    "--arch", "resnet50", "-c", "fanin", "--label-smoothing", "0.1",
                    "--lr-schedule", "cosine", "--mom", "0.125", "--wd", "3.0517578125e-05",
                    "--workspace", workspace, "-b", str(c.batch_size), "--epochs", "1",
                    "--prof", str(ctx.spec.iterations), "--training-only", "--no-checkpoints"]
            if c.precision == "amp":
                scale = ctx.opt("loss_scale", 128)
                argv += ["--amp", "--dynamic-loss-scale"] if scale == "dynamic" else \
                    ["--amp", "--static-loss-scale", str(scale)]
            out.append(argv + ctx.extra() + [str(ctx.opt("data_dir", "/data/image"))])
        return out


@register
class DLETensorFlowRN50(Workload):
    """NVIDIA DLE TensorFlow ResNet50 v1.5 with Horovod: one mpirun/horovodrun on node 0."""

    name, framework, launch = "dle_tf_rn50", "tensorflow", "head"
    default_iterations = 150

    def commands(self, ctx):
        c, code = ctx.case, str(ctx.opt("code_dir", "/workspace/rn50v15_tf")).rstrip("/")
        n, g = c.num_nodes, c.gpus_per_node
        hostlist = ",".join(f"{h}:{g}" for h in ctx.hosts[:n])
        if ctx.opt("launcher", "mpirun") == "horovodrun":
            head = ["horovodrun", "-np", str(n * g), "-H", hostlist]
        else:
            head = ["mpirun", "--allow-run-as-root", "-np", str(n * g), "-H", hostlist,
                    "-bind-to", "none", "-map-by", "slot", "-x", "NCCL_DEBUG=INFO",
                    "-x", "LD_LIBRARY_PATH", "-x", "PATH", "-mca", "pml", "ob1",
                    "-mca", "btl", "^openib"]
            for k in sorted(ctx.spec.env):  # forward the spec's variables (names only)
                head += ["-x", k]
        argv = [*head, ctx.opt("python", "python"), f"{code}/main.py",
                f"--mode={ctx.opt('mode', 'train')}", "--arch=resnet50",
                f"--batch_size={c.batch_size}", f"--num_iter={ctx.spec.iterations}",
                "--iter_unit=batch", f"--warmup_steps={ctx.spec.warmup}",
                f"--data_dir={ctx.opt('data_dir', '/data/tfrecords')}",
                f"--results_dir={ctx.opt('results_dir', '/tmp/results')}", "--display_every=1"]
        if c.precision == "amp":
            argv.append("--amp")
        if ctx.opt("xla", False):
            argv.append("--use_xla")
        return [argv + ctx.extra()] + [None] * (n - 1)


@register
class OneFlowCNN(Workload):
    """OneFlow-Benchmark CNN ``of_cnn_train_val.py``: the same command on every node."""

    name, framework = "oneflow_cnn", "oneflow"
    default_iterations = 200

    def commands(self, ctx):
        c, code = ctx.case, str(ctx.opt("code_dir", "cnns")).rstrip("/")
        n, g, b, it = c.num_nodes, c.gpus_per_node, c.batch_size, ctx.spec.iterations
        argv = [ctx.opt("python", "python3"), f"{code}/of_cnn_train_val.py",
                f"--num_examples={n * g * b * it}"]
        if ctx.opt("data_dir"):
            argv += [f"--train_data_dir={ctx.opt('data_dir')}/train",
                     f"--train_data_part_num={ctx.opt('data_part_num', 44)}"]
        argv += [f"--num_nodes={n}", f"--gpu_num_per_node={g}", "--model_update=momentum",
                 "--learning_rate=0.001", f"--loss_print_every_n_iter={ctx.opt('print_every', 20)}",
                 f"--batch_size_per_device={b}", "--val_batch_size_per_device=125",
                 "--num_epoch=1", "--log_dir=./log", f"--node_ips={','.join(ctx.hosts[:n])}",
                 f"--model={c.model}"]
        if c.precision == "amp":
            argv.append("--use_fp16")
        return [argv + ctx.extra() for _ in range(n)]


_GPT_PARAMS = ("mp", "pp", "global_batch_size", "seq_length", "num_layers", "hidden_size",
               "num_heads")


@register
class OneFlowGPT(Workload):
    """OneFlow-Benchmark GPT pre-training with data/tensor/pipeline parallel sizes."""

    name, framework, default_model = "oneflow_gpt", "oneflow", "gpt"
    default_iterations = 200

    def check_case(self, case):
        from analysis.campaign.spec import SpecError

        super().check_case(case)
        p = case.param
        missing = [k for k in _GPT_PARAMS if k not in p]
        if missing:
            raise SpecError(f"spec: workload oneflow_gpt needs case params {', '.join(missing)} "
                            f"(case {case.config} b{case.batch_size})")
        for k in (*_GPT_PARAMS, "dp"):
            if k in p and (not isinstance(p[k], int) or isinstance(p[k], bool) or p[k] < 1):
                raise SpecError(f"spec: case param {k!r}: invalid value {p[k]!r}; allowed: an "
                                "integer >= 1")
        world = case.num_nodes * case.gpus_per_node
        if world % (p["mp"] * p["pp"]):
            raise SpecError(f"spec: case params mp*pp = {p['mp'] * p['pp']} must divide the "
                            f"{world} devices of {case.config}")
        if p.get("dp", self.dp(case)) != self.dp(case):
            raise SpecError(f"spec: case param dp = {p['dp']} but {case.config} with mp "
                            f"{p['mp']} and pp {p['pp']} gives dp {self.dp(case)}")

    @staticmethod
    def dp(case) -> int:
        p = case.param
        return case.num_nodes * case.gpus_per_node // (p["mp"] * p["pp"])

    def stem(self, case, repeat):
        p = case.param
        return (f"pretrain_gpt_{case.num_nodes}n{case.gpus_per_node}d_dp{self.dp(case)}"
                f"_mp{p['mp']}_pp{p['pp']}_mbz{case.batch_size}_gbz{p['global_batch_size']}"
                f"_s{p['seq_length']}_l{p['num_layers']}_h{p['hidden_size']}"
                f"_nh{p['num_heads']}_{repeat}")

    def commands(self, ctx):
        c, p = ctx.case, ctx.case.param
        n = c.num_nodes
        argv = [ctx.opt("python", "python3"), "-m", "oneflow_gpt.training",
                "--num-nodes", str(n), "--num-gpus-per-node", str(c.gpus_per_node),
                "--node-ips", ",".join(ctx.hosts[:n]),
                *_gpt_model_args(c, ctx.spec.iterations),
                "--max-position-embeddings", str(p["seq_length"])]
        if c.precision == "amp":
            argv.append("--fp16")
        if ctx.opt("data_dir"):
            argv += ["--dataset", str(ctx.opt("data_dir"))]
        return [argv + ctx.extra() for _ in range(n)]


@register
class BuiltinGPT(OneFlowGPT):
    """The suite's own GPT (``python -m workloads.gpt``) under torchrun."""

    name, framework = "gpt", "pytorch"
    precisions = ("bf16", "fp32")
    default_iterations = 30

    def commands(self, ctx):
        c = ctx.case
        cpu = ctx.device == "cpu"
        out = []
        for rank in range(c.num_nodes):
            argv = [*_torchrun_head(ctx, rank), "--nproc_per_node", str(c.gpus_per_node),
                    "-m", "workloads.gpt", *_gpt_model_args(c, ctx.spec.iterations),
                    "--precision", c.precision, "--device", "cpu" if cpu else "cuda",
                    "--dist-backend", "gloo" if cpu else "nccl"]
            out.append(argv + ctx.extra())
        return out


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
