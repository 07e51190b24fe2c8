"""`dlperf env`: record this host's hardware, software and topology as JSON."""

from __future__ import annotations

from analysis.cli._options import check_outside_stores, positive_float

COMMAND = "env"
HELP = "record this host's GPUs, drivers, libraries, CPU, topology and environment (JSON)"


def add_arguments(p) -> None:
    p.add_argument("-o", "--output", metavar="ENV.json", default=None,
                   help="write the record here (default: print it)")
    p.add_argument("--env-var", action="append", default=[], metavar="PATTERN",
                   help="also record environment variables matching this shell pattern "
                        "(repeatable; secret-named ones are always redacted)")
    p.add_argument("--import-frameworks", action="store_true",
                   help="also import each framework (in a child process) to ask which "
                        "CUDA/cuDNN/NCCL it loads; slower (a few seconds)")
    p.add_argument("--matmul", action="store_true",
                   help="also measure each GPU's dense bf16 matmul rate with torch (8192^3, "
                        "median of the blocks over 30 s per GPU, in turn: the sustained "
                        "rate MFU is set against). It loads the GPUs: never beside a "
                        "benchmark")
    p.add_argument("--timeout", type=positive_float, default=None, metavar="SECONDS",
                   help="timeout of each external command (default 10)")


def run(args) -> int:
    from analysis.env.capture import DEFAULT_TIMEOUT, capture
    from analysis.fsutil import display_path

    if args.output is not None:
        check_outside_stores(args.output)  # before the capture: it takes seconds
    timeout = DEFAULT_TIMEOUT if args.timeout is None else args.timeout
    record = capture(timeout=timeout, env_patterns=args.env_var,
                     import_frameworks=args.import_frameworks, matmul=args.matmul)
    if args.output is None:
        print(record.to_json())
        return 0
    path = record.save(args.output)
    missing = ", ".join(sorted(record.absent)) or "nothing"
    print(f"wrote {display_path(path)} ({record.gpu_count} GPU(s); absent: {missing})")
    return 0
