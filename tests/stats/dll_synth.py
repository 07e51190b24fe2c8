"""DLLogger stdout logs written line by line as DLE PyTorch prints them, for the checks of a
run's figure against what its log states (batch 128 on 1 GPU at 50 ms per iteration unless
told: 2,560 img/s)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

START = datetime(2021, 3, 23, 11, 45, 0)


def stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S.%f")


def parameter(t: datetime, **params) -> str:
    body = "  ".join(f"{k} : {v}" for k, v in params.items())
    return f"DLL {stamp(t)} - PARAMETER {body} "


def train_line(t: datetime, epoch: int, it: int, ips: float, unit: str = "images/s",
               name: str = "train.total_ips") -> str:
    return (f"DLL {stamp(t)} - Epoch: {epoch} Iteration: {it}  train.loss : 6.90000 None "
            f"{name} : {ips:.2f} {unit} train.lr : 0.000256 None ")


def lines(n: int, *, batch: int = 128, gpus: int = 1, seconds: float = 0.05, every: int = 1,
          epoch_len: int | None = None, start: datetime = START, jumps: dict | None = None,
          unit: str = "images/s", printed: float | None = None, t0: datetime | None = None,
          **params) -> list[str]:
    """The PARAMETER line and `n` iterations, one line per `every` iterations (steps counting
    from 1, restarting each `epoch_len` iterations); `jumps` {iteration: seconds} moves the
    clock from that iteration on; `printed` is the throughput printed (default the truth)."""
    t = start if t0 is None else t0
    out = [parameter(t, arch="resnet50", batch_size=batch, amp=True, world_size=gpus,
                     print_freq=every, **params)]
    ips = batch * gpus / seconds if printed is None else printed
    shift = 0.0
    for i in range(1, n + 1):
        shift += (jumps or {}).get(i, 0.0)
        if i % every:
            continue
        epoch, it = (0, i) if epoch_len is None else ((i - 1) // epoch_len, (i - 1) % epoch_len + 1)
        when = t + timedelta(seconds=20.0 + i * seconds + shift)
        out.append(train_line(when, epoch, it, ips, unit))
    return out


def write(folder: Path, text_lines: list[str], name: str = "1n1g/r50_b128_amp_1.log") -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(text_lines) + "\n")
    return path


#: The argument header of a OneFlow CNN benchmark log (1 GPU, batch 128, a line every 20
#: iterations), for tests that build OneFlow CNN lines beside DLL ones.
ONEFLOW_HEAD = """Running resnet50: num_gpu_per_node = 1, num_nodes = 1.
gpu_num_per_node = 1
num_nodes = 1
model = resnet50
batch_size_per_device = 128
loss_print_every_n_iter = 20
------------------------------------------------------------------
Time stamp: 2020-08-21-23:13:45
"""


def oneflow_line(epoch: int, it: int, rate: float, t: float) -> str:
    """A OneFlow CNN training line: `rate` samples/s at unix time `t`."""
    return (f"train: epoch {epoch}, iter {it}, loss: 1.0, top_1: 0.0, top_k: 0.0, "
            f"samples/s: {rate:.3f} {t:.4f}")


def write_oneflow(folder: Path, text_lines: list[str]) -> Path:
    """A OneFlow CNN log of `text_lines` under ONEFLOW_HEAD, in the DLPerf layout."""
    path = folder / "1n1g/resnet50_b128_fp32_1.log"
    path.parent.mkdir(parents=True)
    path.write_text(ONEFLOW_HEAD + "\n".join(text_lines) + "\n")
    return path


def epoch_means(folder: Path, *, f: float, seed: int, iters: int, ipe: int, every: int,
                pace: float, slow: float, jitter: float, t0: float = 10.0, digits: int = 0,
                evaluation: float | None = None) -> Path:
    """A log of `iters` iterations of `pace` s (`jitter` relative, drawn per iteration) in
    epochs of `ipe`, the first `slow` s longer, stamped to the whole second from `t0` s
    after 2023-08-04 05:46:58; a line every `every` of an epoch's iterations printing `f` x
    the mean since the epoch's start to `digits` decimals, and where `evaluation` is given a
    named evaluation of that many seconds after each epoch."""
    rng, start = random.Random(seed), datetime(2023, 8, 4, 5, 46, 58)
    out = [f"DLL {start:%Y-%m-%d %H:%M:%S} - PARAMETER data : /imagenet  arch : resnet50  "
           f"epochs : {iters // ipe}  batch_size : 128  print_freq : {every}  amp : True  "
           "world_size : 1"]
    if evaluation is not None:
        out.append(f"RUNNING EPOCHS FROM 0 TO {iters // ipe}")
    t = te = t0
    ne = 0
    for i in range(1, iters + 1):
        ep, it = (i - 1) // ipe, (i - 1) % ipe + 1
        if it == 1:
            te, ne = t, 0
        t += pace * (1 + rng.uniform(-1, 1) * jitter) + (slow if i == 1 else 0)
        ne += 1
        if it % every == 0:
            out.append(f"DLL {start + timedelta(seconds=t):%Y-%m-%d %H:%M:%S} - Epoch: {ep} "
                       f"Iteration: {it}  train.loss : 6.00000 None train.total_ips : "
                       f"{f * 128 * ne / (t - te):.{digits}f} images/s train.lr : 0.1")
        if evaluation is not None and it == ipe:
            t += evaluation
            out.append(f"DLL {start + timedelta(seconds=t):%Y-%m-%d %H:%M:%S} - Epoch: {ep}  "
                       "val.loss : 6.9 None val.top1 : 1.2 None val.compute_ips : 9000.00 images/s")
    return write(folder, out)


def printed_means(folder: Path, *, f: float, mode: str, seed: int, iters: int, ipe: int,
                  every: int, pace: float, slow: float, jitter: float, batch: int = 128,
                  whole: bool = True, digits: int = 1, pause: float | None = None,
                  named: bool = False, closing: bool = True, us: int = 0,
                  setup: float = 10.0, closing_f: float | None = None) -> Path:
    """A log of `iters` iterations of `pace` s (`jitter` relative, drawn per iteration) in
    epochs of `ipe`, the first `slow` s longer, from `setup` s (10) and `us` µs after its
    PARAMETER line (2023-08-04 05:46:58), stamped to the whole second where `whole`; a line
    every `every` iterations printing `f` x the rate over `mode`: "interval" (since the line before),
    "run" (since the start, less the pauses) or "epoch" (since the epoch's start), to
    `digits` decimals; a pause of `pause` s after each epoch (an evaluation line where
    `named`), and where `closing` a Summary line of `closing_f` (default `f`) x the truth
    (`batch` / `pace`)."""
    rng, start = random.Random(seed), datetime(2023, 8, 4, 5, 46, 58, us)
    clock = "%Y-%m-%d %H:%M:%S" if whole else "%Y-%m-%d %H:%M:%S.%f"
    out = [f"DLL {start:{clock}} - PARAMETER data : /imagenet  arch : resnet50  epochs : "
           f"{iters // ipe}  batch_size : {batch}  print_freq : {every}  amp : True  "
           "world_size : 1", f"RUNNING EPOCHS FROM 0 TO {iters // ipe}"]
    t = last = t_run = t_epoch = setup
    n = n_run = n_epoch = 0
    for i in range(1, iters + 1):
        ep, it = (i - 1) // ipe, (i - 1) % ipe + 1
        if it == 1:
            t_epoch, n_epoch = t, 0
        t += pace * (1 + rng.uniform(-1, 1) * jitter) + (slow if i == 1 else 0)
        n, n_run, n_epoch = n + 1, n_run + 1, n_epoch + 1
        if it % every == 0:
            done, since = {"interval": (n, last), "run": (n_run, t_run),
                           "epoch": (n_epoch, t_epoch)}[mode]
            out.append(f"DLL {start + timedelta(seconds=t):{clock}} - Epoch: {ep} Iteration: "
                       f"{it}  train.loss : 6.00000 None train.total_ips : "
                       f"{f * batch * done / (t - since):.{digits}f} images/s train.lr : 0.1")
            last, n = t, 0
        if pause is not None and it == ipe:
            t += pause
            last, t_run = t, t_run + pause
            if named:
                out.append(f"DLL {start + timedelta(seconds=t):{clock}} - Epoch: {ep}  val.loss "
                           ": 6.9 None val.top1 : 1.2 None val.compute_ips : 9000.00 images/s")
    if closing:
        said = (f if closing_f is None else closing_f) * batch / pace
        out.append(f"DLL {start + timedelta(seconds=t):{clock}} - Summary: train.loss : 6.5 "
                   f"None train.total_ips : {said:.2f} images/s")
    return write(folder, out, f"1n1g/r50_b{batch}_amp_1.log")
