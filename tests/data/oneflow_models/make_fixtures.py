"""Write the CONSTRUCTED OneFlow models (ResNet-50) fixtures of this folder (deterministic).

Lines are formatted as ``Vision/classification/image/resnet50/train.py`` of Oneflow-Inc/models
prints them (``config.py`` ``_print_args``; ``Trainer.init_logger`` formats; ``utils/logger.py``
``Logger.print_metrics``), docs/formats.md §12. Numbers are chosen so that the tests can work
out the expected figures by hand.
"""

from __future__ import annotations

import gzip
from pathlib import Path

HERE = Path(__file__).parent

BASE_ARGS = {
    "batches_per_epoch": 300, "channels_last": False, "ddp": False, "exit_num": 301,
    "gpu_stat_file": None, "grad_clipping": 0.0, "graph": True, "label_smoothing": 0.1,
    "learning_rate": 0.768, "legacy_init": False, "load_path": None, "lr_decay_type": "cosine",
    "metric_local": True, "metric_train_acc": True, "momentum": 0.875,
    "nccl_fusion_max_ops": 24, "nccl_fusion_threshold_mb": 16, "num_classes": 1000,
    "num_devices_per_node": 2, "num_epochs": 2, "num_nodes": 1,
    "ofrecord_part_num": 256, "ofrecord_path": "/dataset/ImageNet/ofrecord",
    "print_interval": 100, "print_timestamp": False, "samples_per_epoch": 1281167,
    "save_init": False, "save_path": "./graph_distributed_fp16_checkpoints", "scale_grad": True,
    "skip_eval": False, "synthetic_data": False, "total_batches": -1,
    "train_batch_size": 192, "train_global_batch_size": 384, "use_fp16": True,
    "use_gpu_decode": True, "val_batch_size": 50, "val_batches_per_epoch": 500,
    "val_global_batch_size": 100, "val_samples_per_epoch": 50000, "warmup_epochs": 5,
    "weight_decay": 3.0517578125e-05, "zero_init_residual": True,
}


def dump(args: dict) -> str:
    """``config.py`` ``_print_args``: sorted case-insensitively, dots to column 48."""
    rows = sorted((f"  {k} {'.' * (48 - len(k))} {v}" for k, v in args.items()),
                  key=lambda s: s.lower())
    return ("------------------------ arguments ------------------------\n"
            + "".join(r + "\n" for r in rows)
            + "-------------------- end of arguments ---------------------\n")


def metric(rank, job, epoch, epochs, it, per_epoch, loss, top1, tput, lr=None, perf=None,
           date=None) -> str:
    fields = [f"[{job}]", f"epoch: {epoch}/{epochs}", f"iter: {it}/{per_epoch}",
              f"loss: {loss:.5f}"]
    if lr is not None:
        fields.append(f"lr: {lr:.6f}")
    fields.append(f"top1: {top1:.5f}")
    fields.append(f"throughput: {tput:.2f}" + ("" if perf is None else f", timestamp: {perf:.6f}"))
    line = f"[rank:{rank}] " + ", ".join(fields)
    return line + ("" if date is None else f" | {date}") + "\n"


NVSMI = ("timestamp, name, driver_version, utilization.gpu [%], utilization.memory [%], "
         "memory.total [MiB], memory.free [MiB], memory.used [MiB]\n"
         "2021/11/23 10:41:02.311, NVIDIA A100-SXM4-40GB, 470.57.02, 100 %, 61 %, 40536 MiB, "
         "9790 MiB, 30746 MiB\n"
         "2021/11/23 10:41:02.312, NVIDIA A100-SXM4-40GB, 470.57.02, 100 %, 58 %, 40536 MiB, "
         "9920 MiB, 30616 MiB\n")

#: (global step, per-rank samples/s of rank 0, seconds since 10:40:46.123 at the print)
GRAPH_TRAIN = [(100, 987.65, 16.0), (200, 1200.00, 32.0), (300, 1199.50, 48.0),
               (400, 1150.20, 68.0), (500, 1200.40, 84.0), (600, 1199.80, 100.0)]


def clock(seconds: float) -> str:
    """10:40:46.123 + `seconds` on 2021-11-23, as the logger prints it (milliseconds)."""
    ms = 46123 + round(seconds * 1000)
    return f"2021-11-23 10:{40 + ms // 60000:02d}:{ms % 60000 // 1000:02d}.{ms % 1000:03d}"


def graph_log() -> str:
    """Graph mode, AMP, 2 ranks each printing (``--metric-local``), the late-2021 logger
    with the date suffix, 2 epochs of 300 iterations, OneAutoTest's nvidia-smi at iter 100."""
    out = ["PYTHONUNBUFFERED=1\n", "NCCL_LAUNCH_MODE=PARALLEL\n", dump(BASE_ARGS),
           "***** Model Init *****\n",
           "***** Model Init Finish, time escapled: 1.83214 s *****\n"]
    losses = [6.89712, 6.71140, 6.52318, 6.40127, 6.28904, 6.17735]
    for k, (step, tput, t) in enumerate(GRAPH_TRAIN):
        epoch, it = divmod(step - 1, 300)
        it += 1
        for rank in (0, 1):
            out.append(metric(rank, "train", epoch, 2, it, 300, losses[k] + 0.00011 * rank,
                              0.00130 * (k + 1), tput - 0.35 * rank, date=clock(t + 0.004 * rank)))
        if step == 100:
            out.append(NVSMI)
        if it == 300:  # end of the epoch: one eval line per rank
            for rank in (0, 1):
                out.append(metric(rank, "eval", epoch, 2, 500, 500, 0.0, 0.00244 * (epoch + 1),
                                  3567.12 + rank, date=clock(t + 4.0 + 0.004 * rank)))
    return "".join(out)


def eager_log() -> str:
    """Eager DDP, FP32, one device, ``--print-timestamp`` on the older logger (no date)."""
    args = dict(BASE_ARGS, ddp=True, graph=False, use_fp16=False, scale_grad=False,
                num_devices_per_node=1, train_batch_size=96, train_global_batch_size=96,
                val_global_batch_size=50, val_batches_per_epoch=1000, batches_per_epoch=13345,
                num_epochs=50, exit_num=1000, print_timestamp=True, use_gpu_decode=False)
    out = [dump(args)]
    perf = 3841.250000
    for k, tput in enumerate([161.66, 320.11, 320.02, 319.87, 320.40]):
        step = 100 * (k + 1)
        perf += 96 * 100 / tput
        out.append(metric(0, "train", 0, 50, step, 13345, 1.73143 - 0.01 * k, 0.00167,
                          tput, lr=0.004604 + 0.0000384 * k, perf=round(perf, 6)))
    return "".join(out)


def write(path: Path, text: str, crlf: bool = False, gz: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.replace("\n", "\r\n").encode() if crlf else text.encode()
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)


def main() -> None:
    write(HERE / "graph_dated/1n2g/resnet50_b192_amp_1.log", graph_log())
    write(HERE / "eager_timestamp/1n1g/resnet50_b96_fp32_1.log", eager_log())
    text = graph_log()
    cut = text.index("top1: ", text.index("[rank:0] [train], epoch: 1/2, iter: 200/300"))
    write(HERE / "truncated/1n2g/resnet50_b192_amp_1.log", text[:cut])
    write(HERE / "crlf_gz/1n2g/resnet50_b192_amp_1.log.gz", graph_log(), crlf=True, gz=True)


if __name__ == "__main__":
    main()
