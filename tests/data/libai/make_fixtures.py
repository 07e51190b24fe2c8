"""Write the CONSTRUCTED LiBai fixtures of this folder (deterministic).

Lines are formatted as LiBai prints them: ``libai/utils/logger.py`` (stdout and ``log.txt``
prefixes), ``libai/engine/default.py`` ``default_setup`` (world size, command line, config
file), ``libai/utils/events.py`` ``CommonMetricPrinter`` (metric lines, from per-iteration
times through ``IterationTimer``'s running mean) and ``libai/engine/hooks.py`` (overall
speed); docs/formats.md §13. The per-iteration times are chosen here so that the tests can
compute the expected figures.
"""

from __future__ import annotations

import datetime
import gzip
import statistics
from pathlib import Path

HERE = Path(__file__).parent
GLOBAL_BATCH = 32
TRAIN_ITER = 220
LOG_PERIOD = 20

CONFIG = """\
from libai.config import LazyCall
from libai.evaluation import PPLEvaluator
from configs.common.models.gpt import pretrain_model as model
from configs.common.train import train
from configs.common.optim import optim
from configs.common.data.gpt_dataset import dataloader, tokenization

from configs.common.models.graph import graph

vocab_file = "/dataset/gpt/gpt2-vocab.json"
merge_files = "/dataset/gpt/gpt2-merges.txt"
data_prefix = "/dataset/gpt/loss_compara_content_sentence"

tokenization.tokenizer.vocab_file = vocab_file
tokenization.tokenizer.merges_file = merge_files
dataloader.train.dataset[0].data_prefix = data_prefix
dataloader.train.dataset[0].indexed_dataset.data_prefix = data_prefix

# GPT-2 model config
model.cfg.embedding_dropout_prob = 0.1
model.cfg.attention_dropout_prob = 0.1
model.cfg.num_attention_heads = 16
model.cfg.hidden_size = 1024
model.cfg.ffn_hidden_size = 4 * 1024
model.cfg.num_layers = 24
model.cfg.max_seq_length = 1024

train.dist.pipeline_num_layers = model.cfg.num_layers

for ds in dataloader.train.dataset:
    ds.max_seq_length = model.cfg.max_seq_length

optim.lr = 1.5e-4

train.train_micro_batch_size = 4
train.amp.enabled = True

train.evaluation.evaluator = LazyCall(PPLEvaluator)()

train.output_dir = "./output/gpt2_output"
"""

OPTS = ["train.train_micro_batch_size=4", f"train.global_batch_size={GLOBAL_BATCH}",
        "train.dist.tensor_parallel_size=2", "train.dist.pipeline_parallel_size=1",
        "train.amp.enabled=True", "train.activation_checkpoint.enabled=False",
        f"train.train_iter={TRAIN_ITER}", f"train.log_period={LOG_PERIOD}",
        "train.output_dir=test_logs/01b1d32/1n8g/LibAI_gpt2_nl24_nah16_hs1024_FP16_acFalse"
        "_mp2_pp1_mb4_gb32_1n8g_20221123_104001"]


def iteration_seconds(i: int) -> float:
    """Seconds of 0-based iteration `i`: 0.5 s with a little deterministic noise, slower
    start-up iterations before 20."""
    return 0.5 + 0.001 * ((i * 7) % 5 - 2) + (0.03 if i < 20 else 0.0)


class Clock:
    """Wall clock of the run, printed as the logger's ``%m/%d %H:%M:%S``."""

    def __init__(self) -> None:
        self.t = datetime.datetime(2022, 11, 23, 10, 40, 1)

    def add(self, seconds: float) -> None:
        self.t += datetime.timedelta(seconds=seconds)

    def __str__(self) -> str:
        return self.t.strftime("%m/%d %H:%M:%S")


def prefix(clock: Clock, name: str, stdout: bool) -> str:
    if stdout:  # the colourful stdout formatter shortens `libai.` to `lb.`; ANSI colours
        short = name.replace("libai.", "lb.")
        return f"\x1b[32m[{clock} {short}]: \x1b[0m"
    return f"[{clock}] {name} INFO: "


def metric_line(it: int, timed: list[float], losses: dict, lr: float, old: bool) -> str:
    """``CommonMetricPrinter.write`` for 0-based iteration `it`, `timed` the seconds of the
    timed iterations so far: ``time`` is their mean (``global_avg``), the ETA their median
    (``median(1000)``) times the iterations left."""
    mean = sum(timed) / len(timed)
    eta = str(datetime.timedelta(
        seconds=int(statistics.median(timed[-1000:]) * (TRAIN_ITER - it - 1))))
    loss_text = "  ".join(f"{k}: {v:.4g}" for k, v in losses.items())
    samples = (it + 1) * GLOBAL_BATCH
    if old:  # events.py before the `total_throughput` field
        return (f" eta: {eta}  iteration: {it}/{TRAIN_ITER}  consumed samples: {samples}  "
                f"{loss_text}  time: {mean:.4f}({GLOBAL_BATCH / mean:.2f})  "
                f"data_time: 0.0016  lr: {lr:.2e}  ")
    return (f" eta: {eta}  iteration: {it}/{TRAIN_ITER}  consumed_samples: {samples}  "
            f"{loss_text}  time: {mean:.4f} s/iter  data_time: 0.0016 s/iter "
            f"total_throughput: {GLOBAL_BATCH / mean:.2f} samples/s lr: {lr:.2e}  ")


NVSMI = ("utilization.gpu [%], memory.used [MiB]\n"
         + "".join(f"{97 + i % 3} %, {14021 + 16 * i} MiB\n" for i in range(8)))


def training_log(stdout: bool = True, old: bool = False, config: bool = True,
                 nan_at: int | None = None, seconds_of=iteration_seconds) -> str:
    """A run's stdout (or log.txt); `seconds_of(i)`: the seconds of 0-based iteration i."""
    clock = Clock()

    def log(name: str, message: str) -> str:
        return prefix(clock, name, stdout) + message + "\n"

    namespace = (f"Namespace(config_file='configs/gpt2_nl24_nah16_hs1024.py', eval_only=False, "
                 f"fast_dev_run=False, opts={OPTS!r}, resume=False)")
    out = ["PYTHONUNBUFFERED=1\n",
           log("libai", "Rank of current process: 0. World size: 8"),
           log("libai", "Command line arguments: " + namespace)]
    if config:
        out.append(log("libai", "Contents of args.config_file=configs/gpt2_nl24_nah16_hs1024.py:")
                   + CONFIG)
        out.append(log("libai", "Full config saved to " + OPTS[-1].split("=")[1] + "/config.yaml"))
    out += [log("libai.engine.default", "> compiling dataset index builder ..."),
            log("libai.engine.default", ">>> done with dataset index builder. Compilation time: "
                "0.058 seconds"),
            log("libai.engine.default", "Prepare training, validating, testing set"),
            log("libai.engine.default", "> Start building model...")]
    clock.add(4)
    out += [log("libai.engine.default", ">>> done with building model. Building time: 3.742 "
                "seconds"),
            log("libai.engine.default", f"Auto-scaling the config to train.train_iter="
                f"{TRAIN_ITER}, train.warmup_iter=0"),
            log("libai.engine.trainer", "Starting training from iteration 0"),
            log("libai.models.utils.graph_base", "Start compiling the train graph which may take "
                "some time. Please wait for a moment ...")]
    clock.add(14)  # graph compilation: iterations 0 and 1 are not timed
    timed = []
    for it in range(TRAIN_ITER):
        seconds = seconds_of(it)
        clock.add(seconds)
        if it >= 2:  # IterationTimer(warmup_iter=3): iter_done >= 3
            timed.append(seconds)
        if (it + 1) % LOG_PERIOD == 0 or it == TRAIN_ITER - 1:  # PeriodicWriter
            loss = float("nan") if it == nan_at else 10.81 - 0.0123 * it
            out.append(log("libai.utils.events",
                           metric_line(it, timed, {"total_loss": loss}, 1.5e-4, old)))
            if it == 19:
                out.append(NVSMI)
    total = sum(timed)
    out.append(log("libai.engine.hooks", f"Overall training speed: {len(timed)} iterations in "
                   f"{datetime.timedelta(seconds=int(total))} ({total / len(timed):.4f} s / it)"))
    out.append(log("libai.engine.hooks", "Total training time: 0:02:10 (0:00:02 on hooks)"))
    return "".join(out)


def write(path: Path, text: str, crlf: bool = False, gz: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.replace("\n", "\r\n").encode() if crlf else text.encode()
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)


def main() -> None:
    write(HERE / "gpt2_stdout/1n8g/gpt2_b4_amp_1.log", training_log())
    write(HERE / "v1_log_txt/1n8g/log.txt", training_log(stdout=False, old=True, config=False))
    text = training_log(nan_at=99)
    last = text.rindex("iteration: 199/")
    write(HERE / "truncated/1n8g/gpt2_b4_amp_1.log", text[:text.index("time: ", last)])
    write(HERE / "crlf_gz/1n8g/gpt2_b4_amp_1.log.gz", training_log(), crlf=True, gz=True)


if __name__ == "__main__":
    main()
