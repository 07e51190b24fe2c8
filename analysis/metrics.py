"""Every name that appears in the tidy frames' `phase`, `metric` and `unit` columns.

Parsers map what a program printed onto these names, so the statistics never need to
know which framework wrote a log (mlperf-logging keeps its keys in one module the same way).
A metric a parser cannot map keeps its printed name, without its phase prefix.
"""

from __future__ import annotations

# phase: which part of the run an observation belongs to
TRAIN = "train"  # one training interval or iteration
VAL = "val"  # validation
EPOCH = "epoch"  # end-of-epoch summary line
SUMMARY = "summary"  # end-of-run summary line (DLLogger step `()` / `Summary:`)
MEMORY = "memory"  # GPU memory / utilisation / power sample
CHECKPOINT = "checkpoint"  # a checkpoint save the log prints (training paused for it)
PHASES = (TRAIN, VAL, EPOCH, SUMMARY, MEMORY, CHECKPOINT)

# metric: canonical names
THROUGHPUT = "throughput"  # samples/s over all devices, as printed for the interval
COMPUTE_THROUGHPUT = "compute_throughput"  # DLLogger compute_ips (no data loading)
LOSS = "loss"
TOP1 = "top1"
TOPK = "topk"
LR = "lr"
LATENCY = "latency"  # seconds per iteration
#: Seconds per iteration of the interval a latency line ends by another clock its log states
#: (Megatron: DeepSpeed's stamped step= lines, or the TFLOP/s printed beside the latency).
CLOCK_LATENCY = "clock_latency"
#: Seconds per iteration the timed parts of an interval add up to, which it cannot take less
#: than (Megatron: the forward and backward passes and the optimizer step its timers print).
PARTS_LATENCY = "parts_latency"
SAMPLES = "samples"  # cumulative samples consumed
GLOBAL_BATCH = "global_batch_size"  # the global batch of an interval (a ramp-up grows it)
MEMORY_USED = "memory_used"  # MiB on one device
MEMORY_TOTAL = "memory_total"  # MiB on one device
MEMORY_MAX_ALLOCATED = "memory_max_allocated"  # MiB, framework allocator peak
UTILIZATION = "utilization"  # percent
POWER_DRAW = "power_draw"  # watts drawn by one device's board (nvidia-smi power.draw)
#: Optimizer steps skipped so far (AMP loss-scale overflow), a running count printed on each
#: training line (DLE PyTorch BERT ``skipped_steps``). The printed iteration is the optimizer
#: steps taken less those skipped, so a line that repeats the previous line's iteration with a
#: larger count is the next step, skipped: not a step going back (analysis.checks).
SKIPPED_STEPS = "skipped_steps"
#: Time to train (MLPerf): from the run's ``run_start`` to its ``run_stop`` with status
#: success, in minutes as MLPerf scores it; a summary-phase row, one per run.
TIME_TO_TRAIN = "time_to_train"

#: One checkpoint save begun on the line (value 1; `step`: the iteration it saves, where printed).
SAVE = "save"
#: A pause on the line (an evaluation, a checkpoint save) that the printed latencies leave out,
#: the program having stopped its iteration timer around it: only timestamps count it (value 1).
TIMED_APART = "timed_apart"

# unit: canonical spellings
SAMPLES_PER_S = "samples/s"
SECONDS = "s"
MINUTES = "min"
MIB = "MiB"
PERCENT = "%"
WATT = "W"
NONE = ""

#: Printed metric names (any family) mapped to (canonical metric, unit).
ALIASES: dict[str, tuple[str, str]] = {
    "total_ips": (THROUGHPUT, SAMPLES_PER_S),
    "imgs_per_sec": (THROUGHPUT, SAMPLES_PER_S),
    "samples/s": (THROUGHPUT, SAMPLES_PER_S),
    "throughput": (THROUGHPUT, SAMPLES_PER_S),
    "throughput_train": (THROUGHPUT, SAMPLES_PER_S),
    "train_throughput": (THROUGHPUT, SAMPLES_PER_S),
    "training_sequences_per_second": (THROUGHPUT, SAMPLES_PER_S),  # DLE PyTorch BERT, closing
    "compute_ips": (COMPUTE_THROUGHPUT, SAMPLES_PER_S),
    "loss": (LOSS, NONE),
    "total_loss": (LOSS, NONE),
    "top1": (TOP1, PERCENT),
    "top_1": (TOP1, NONE),
    "top5": (TOPK, PERCENT),
    "top_k": (TOPK, NONE),
    "lr": (LR, NONE),
    "learning_rate": (LR, NONE),
    "latency": (LATENCY, SECONDS),
}


def canonical(printed: str) -> tuple[str, str | None]:
    """Map a printed metric name to (canonical name, canonical unit or None if unknown)."""
    return ALIASES.get(printed, (printed, None))
