"""Command-line options of ``python -m workloads.gpt`` (Megatron/OneFlow GPT spellings)."""

from __future__ import annotations

import argparse

from workloads.argtypes import Parser, non_negative_int, positive_int

SCHEDULES = ("1f1b", "gpipe")
PRECISIONS = ("bf16", "fp32")
PARAM_DTYPES = ("fp32", "bf16")
SDPA_BACKENDS = ("auto", "cudnn", "flash", "efficient")
COMPILE_MODES = ("default", "max-autotune-no-cudagraphs", "reduce-overhead", "max-autotune")


def positive_float(text: str) -> float:
    """A number > 0, else argparse's one-line error."""
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="python -m workloads.gpt",
        description="Train a GPT on synthetic tokens with data x tensor x pipeline parallelism "
                    "(alone or under torchrun) and print OneFlow GPT style metric tables.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    g = p.add_argument_group("model")
    g.add_argument("--num-layers", type=positive_int, default=16)
    g.add_argument("--hidden-size", type=positive_int, default=1536)
    g.add_argument("--num-attention-heads", type=positive_int, default=16)
    g.add_argument("--seq-length", type=positive_int, default=2048)
    g.add_argument("--vocab-size", type=positive_int, default=51200)

    g = p.add_argument_group("batch and parallelism")
    g.add_argument("--micro-batch-size", type=positive_int, default=8,
                   help="sequences per micro-batch per data-parallel rank")
    g.add_argument("--global-batch-size", type=positive_int, default=None,
                   help="sequences per iteration (default: micro-batch x data-parallel size); "
                        "micro-batch x dp x micro-batches")
    g.add_argument("--tensor-model-parallel-size", type=positive_int, default=1)
    g.add_argument("--pipeline-model-parallel-size", type=positive_int, default=1)
    g.add_argument("--pipeline-schedule", choices=SCHEDULES, default="1f1b")
    g.add_argument("--data-parallel-impl", choices=("auto", "ddp", "fsdp"), default="auto",
                   help="auto: DDP for data parallelism alone, FSDP2 (fully_shard) with tensor "
                        "or pipeline parallelism")
    g.add_argument("--grad-reduce-dtype", choices=("fp32", "bf16"), default="fp32",
                   help="dtype of DDP's gradient all-reduce: fp32, or bf16 (half the bytes; "
                        "each bucket is cast to bf16, averaged in bf16 and cast back into "
                        "the fp32 gradients)")
    g.add_argument("--ddp-bucket-mb", type=positive_float, default=25.0,
                   help="DDP gradient bucket size in MiB (bigger: fewer, longer all-reduces)")
    g.add_argument("--nccl-max-ctas", type=non_negative_int, default=0,
                   help="at most this many thread blocks (SMs) per NCCL collective "
                        "(NCCL_MAX_CTAS; fewer leave more SMs to the compute that an "
                        "overlapped all-reduce runs beside); 0: NCCL's choice, or the "
                        "environment's NCCL_MAX_CTAS")
    g.add_argument("--nccl-min-ctas", type=non_negative_int, default=0,
                   help="at least this many thread blocks per NCCL collective (NCCL_MIN_CTAS; "
                        "more move a bucket sooner); 0: NCCL's choice or the environment's")
    g.add_argument("--ddp-static-graph", action="store_true",
                   help="DDP static_graph=True: bucket order and hooks fixed after the first "
                        "iteration (one micro-batch per iteration only)")

    g = p.add_argument_group("run length and printing")
    g.add_argument("--train-iters", type=positive_int, default=30)
    g.add_argument("--log-interval", type=positive_int, default=1)
    g.add_argument("--seed", type=int, default=1234)

    g = p.add_argument_group("numerics and speed")
    g.add_argument("--precision", choices=PRECISIONS, default="bf16",
                   help="bf16 matmuls and activations (under autocast, or on bf16 weights: "
                        "--param-dtype) with an fp32 optimizer, or fp32 throughout")
    g.add_argument("--param-dtype", choices=PARAM_DTYPES, default="fp32",
                   help="weights in the forward and backward passes: fp32 (cast under bf16 "
                        "autocast) or bf16 with fp32 master weights and fp32 gradient sums in "
                        "the optimizer, no autocast (needs --precision bf16; one process, or "
                        "data parallelism alone with one micro-batch per iteration: DDP then "
                        "averages bf16 gradients, half the bytes of fp32 ones)")
    g.add_argument("--loss-chunk-tokens", type=non_negative_int, default=0,
                   help="apply the logit layer and the cross-entropy this many tokens at a "
                        "time, never holding all logits (0: one logit tensor, then the loss; "
                        "needs --tensor-model-parallel-size 1 and no FSDP)")
    g.add_argument("--compile", action="store_true", help="torch.compile each block and the loss")
    g.add_argument("--compile-mode", choices=COMPILE_MODES, default="default")
    g.add_argument("--sdpa-backend", choices=SDPA_BACKENDS, default="auto",
                   help="attention kernel: auto = torch's choice (flash on CUDA); cudnn / flash "
                        "/ efficient allow only that one (and math, the CPU fallback)")
    g.add_argument("--activation-checkpointing", action="store_true",
                   help="recompute each block's activations in the backward pass")
    g.add_argument("--lr", type=float, default=1e-4)
    g.add_argument("--weight-decay", type=float, default=0.01)

    g = p.add_argument_group("distributed")
    g.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    g.add_argument("--dist-backend", choices=("auto", "nccl", "gloo"), default="auto")
    return p


def check(args: argparse.Namespace, world_size: int) -> str | None:
    """The first inconsistency of the sizes, or None. Fills args.data_parallel_size,
    args.num_micro_batches and args.global_batch_size."""
    tp, pp = args.tensor_model_parallel_size, args.pipeline_model_parallel_size
    if world_size % (tp * pp):
        return f"tensor x pipeline parallel sizes {tp} x {pp} do not divide {world_size} processes"
    dp = world_size // (tp * pp)
    per_step = args.micro_batch_size * dp
    gbs = args.global_batch_size or per_step
    if gbs % per_step:
        return (f"--global-batch-size {gbs} is not a multiple of micro-batch x data-parallel "
                f"size = {per_step}")
    if args.num_attention_heads % tp or args.hidden_size % args.num_attention_heads:
        return (f"--num-attention-heads {args.num_attention_heads} must divide --hidden-size "
                f"{args.hidden_size} and be a multiple of the tensor-parallel size {tp}")
    if args.num_layers < pp:
        return f"--num-layers {args.num_layers} is fewer than the {pp} pipeline stages"
    if args.vocab_size % tp:
        return f"--vocab-size {args.vocab_size} is not a multiple of the tensor-parallel size {tp}"
    impl = args.data_parallel_impl
    if args.param_dtype == "bf16" and (args.precision != "bf16" or tp > 1 or pp > 1
                                       or impl == "fsdp" or (dp > 1 and gbs > per_step)):
        return ("--param-dtype bf16 needs --precision bf16 and one process, or data "
                "parallelism alone (DDP) with one micro-batch per iteration (tensor and "
                "pipeline layouts keep fp32 weights under bf16 autocast)")
    if args.param_dtype == "bf16" and args.grad_reduce_dtype == "bf16":
        return "--grad-reduce-dtype bf16 with --param-dtype bf16: the gradients are bf16 already"
    if args.grad_reduce_dtype == "bf16" and dp > 1 and (
            impl == "fsdp" or (impl == "auto" and (tp > 1 or pp > 1))):
        return ("--grad-reduce-dtype bf16 applies to DDP (data parallelism alone or "
                "--data-parallel-impl ddp), not to FSDP")
    if args.ddp_static_graph and gbs > per_step:
        return ("--ddp-static-graph needs one micro-batch per iteration (DDP's static graph "
                "cannot accumulate gradients under no_sync)")
    fsdp = dp > 1 and (pp > 1 or args.data_parallel_impl == "fsdp")
    if args.loss_chunk_tokens and (tp > 1 or fsdp):
        return ("--loss-chunk-tokens needs the whole logit layer on the last stage: "
                "--tensor-model-parallel-size 1 and no FSDP (pipeline stages with data "
                "parallelism use FSDP)")
    args.data_parallel_size, args.global_batch_size = dp, gbs
    args.num_micro_batches = gbs // per_step
    return None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    return build_parser().parse_args(argv)
