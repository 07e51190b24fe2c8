"""Command-line options of ``python -m workloads.resnet`` (declared once, here)."""

from __future__ import annotations

import argparse

from workloads.argtypes import Parser, non_negative_int, positive_int
from workloads.resnet.resnet import ARCHS

PRECISIONS = ("fp32", "tf32", "amp", "bf16")
#: spellings accepted on the command line (the DLPerf layout's names included)
PRECISION_ALIASES = {"fp16": "amp", "float16": "amp", "mixed": "amp", "float32": "fp32",
                     "bfloat16": "bf16"}
ARCH_ALIASES = {"r50": "resnet50", "rn50": "resnet50", "resnet50v1.5": "resnet50",
                "resnet50_v1.5": "resnet50", "resnet-50": "resnet50"}
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
OPTIMIZER_IMPLS = ("auto", "fused", "foreach", "loop")
GRAD_COMPRESSION = ("none", "fp16", "bf16")


def _precision(text: str) -> str:
    value = PRECISION_ALIASES.get(text.strip().lower(), text.strip().lower())
    if value not in PRECISIONS:
        raise argparse.ArgumentTypeError(
            f"invalid precision {text!r}; valid: {', '.join(PRECISIONS)} "
            f"(or {', '.join(PRECISION_ALIASES)})")
    return value


def _arch(text: str) -> str:
    value = ARCH_ALIASES.get(text.strip().lower(), text.strip().lower())
    if value not in ARCHS:
        raise argparse.ArgumentTypeError(f"invalid arch {text!r}; valid: {', '.join(ARCHS)}")
    return value


def _image_size(text: str) -> int:
    value = int(text)
    if value < 8:
        raise argparse.ArgumentTypeError(f"must be >= 8 pixels, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="python -m workloads.resnet",
        description="Train ResNet-50 v1.5 on synthetic device-resident data (alone or under "
                    "torchrun) and print DLLogger lines like NVIDIA DeepLearningExamples.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    on_off = argparse.BooleanOptionalAction
    g = p.add_argument_group("model and data")
    g.add_argument("--arch", type=_arch, default="resnet50",
                   help=f"{', '.join(ARCHS)} (aliases {', '.join(ARCH_ALIASES)})")
    g.add_argument("--batch-size", type=positive_int, default=256, help="images per device")
    g.add_argument("--image-size", type=_image_size, default=224)
    g.add_argument("--width", type=positive_int, default=64, help="stem width (64 = real model)")
    g.add_argument("--num-classes", type=positive_int, default=1000)
    g.add_argument("--seed", type=int, default=1)

    g = p.add_argument_group("run length and printing")
    g.add_argument("--iterations", type=positive_int, default=150)
    g.add_argument("--print-freq", type=positive_int, default=1,
                   help="print every N iterations (and the last); each printed one syncs")
    g.add_argument("--warmup-iterations", type=non_negative_int, default=20,
                   help="iterations left out of the Summary's train.total_ips")

    g = p.add_argument_group("numerics and speed")
    g.add_argument("--precision", type=_precision, default="amp",
                   help="fp32 (TF32 per --tf32), tf32 (fp32 with TF32 forced on), "
                        "amp = fp16 (fp16 autocast + GradScaler), bf16 (bf16 autocast)")
    g.add_argument("--tf32", action=on_off, default=True,
                   help="let fp32 convolutions/matmuls use TF32 on CUDA")
    g.add_argument("--channels-last", action=on_off, default=True)
    g.add_argument("--cudnn-benchmark", action=on_off, default=True)
    g.add_argument("--compile", action="store_true", help="torch.compile the (DDP) model")
    g.add_argument("--compile-mode", choices=COMPILE_MODES, default="default",
                   help="inductor mode (reduce-overhead = CUDA graphs)")
    g.add_argument("--compile-backend", default="inductor",
                   help="torch.compile backend (eager / aot_eager for debugging)")

    g = p.add_argument_group("optimizer")
    g.add_argument("--lr", type=float, default=0.256)
    g.add_argument("--momentum", type=float, default=0.875)
    g.add_argument("--weight-decay", type=float, default=3.0517578125e-05)
    g.add_argument("--label-smoothing", type=float, default=0.1)
    g.add_argument("--optimizer-impl", choices=OPTIMIZER_IMPLS, default="auto",
                   help="SGD implementation; auto = fused, else foreach, else loop")

    g = p.add_argument_group("distributed")
    g.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    g.add_argument("--dist-backend", choices=("auto", "nccl", "gloo"), default="auto",
                   help="auto = nccl on CUDA, gloo on CPU")
    g.add_argument("--static-graph", action=on_off, default=None,
                   help="DDP static_graph (default: on in eager mode, off with --compile)")
    g.add_argument("--bucket-cap-mb", type=float, default=25.0, help="DDP bucket size")
    g.add_argument("--gradient-as-bucket-view", action=on_off, default=True)
    g.add_argument("--broadcast-buffers", action=on_off, default=False,
                   help="DDP re-broadcasts BN statistics from rank 0 every forward")
    g.add_argument("--grad-compression", choices=GRAD_COMPRESSION, default="none",
                   help="DDP communication hook that all-reduces gradients in 16 bits")

    g = p.add_argument_group("failure handling")
    g.add_argument("--allow-nonfinite", action="store_true",
                   help="exit 0 even when the final loss is NaN/inf")
    return p


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    args = build_parser().parse_args(argv)
    if args.precision == "tf32":
        args.tf32 = True
    if args.static_graph is None:
        args.static_graph = not args.compile
    return args
