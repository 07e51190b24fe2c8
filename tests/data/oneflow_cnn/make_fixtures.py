"""Write the SYNTHETIC OneFlow CNN fixtures of this folder (run from anywhere; deterministic).

Logs follow docs/formats.md §1 and §8; every example line of §1 appears in one of them.
"""

from __future__ import annotations

import gzip
from pathlib import Path

HERE = Path(__file__).parent
GLOG = ("I0727 09:28:28.773988162  8411 ev_epoll_linux.c:82] Use engine: epollex\n"
        "I0727 09:28:28.774124573  8411 ev_epoll_linux.c:84] Using polling engine: epollex\n")
T20, T120 = 1597933942.9863544, 1597933977.6064055  # docs/formats.md §1 example timestamps


def header(model="resnet50", gpus=8, nodes=1, bsz=128, fp16="False"):
    args = [("gpu_num_per_node", gpus), ("num_nodes", nodes), ("node_ips", "['192.168.1.12']"),
            ("ctrl_port", 50051), ("model", model), ("use_fp16", fp16), ("use_xla", "False"),
            ("channel_last", "None"), ("pad_output", "None"), ("num_epochs", 1),
            ("model_load_dir", "None"), ("batch_size_per_device", bsz),
            ("val_batch_size_per_device", 125), ("nccl_fusion_threshold_mb", 0),
            ("learning_rate", 0.001), ("loss_print_every_n_iter", 20),
            ("image_size", 224), ("train_data_dir", "/dataset/ImageNet/ofrecord/train"),
            ("num_examples", 204800), ("log_dir", "./output")]
    out = ["=" * 66, f"Running {model}: num_gpu_per_node = {gpus}, num_nodes = {nodes}.", "=" * 66]
    out += [f"{k} = {v}" for k, v in args]
    out += ["-" * 66, "Time stamp: 2020-08-21-23:13:45"]
    return "\n".join(out) + "\n" + GLOG + "Loading data from /dataset/ImageNet/ofrecord/train\n"


def nvsmi(n, used=11838):
    rows = "".join(f"{100 - i} %, {used + 13 * i} MiB\n" for i in range(n))
    return "utilization.gpu [%], memory.used [MiB]\n" + rows


def train_line(it, loss, ts=None, epoch=0, sps=None):
    sps = 3988.891 if sps is None else sps
    top = 0.0 if it < 60 else 1.0
    tail = "" if ts is None else f" {ts!r}"
    return (f"train: epoch {epoch}, iter {it}, loss: {loss}, top_1: {top:.6f}, top_k: {top:.6f}, "
            f"samples/s: {sps:.3f}{tail}\n")


def timestamps():
    """ts per printed iteration: §1's values at 20 and 120, 0.3462 s/iter elsewhere + jitter."""
    step = (T120 - T20) / 100
    return {it: T20 + (it - 20) * step + (0.0 if it in (20, 120) else 0.01 * ((it // 20) % 3 - 1))
            for it in range(20, 201, 20)}


def with_timestamps():
    ts = timestamps()
    lines = [header(), nvsmi(8)]
    for it in range(20, 201, 20):
        if it == 20:
            lines.append("train: epoch 0, iter 20, loss: 7.087004, top_1: 0.000000, top_k: "
                         "0.000000, samples/s: 3988.891 1597933942.9863544\n")
        elif it == 120:
            lines.append("train: epoch 0, iter 120, loss: 1.050499, top_1: 1.000000, top_k: "
                         "1.000000, samples/s: 5917.583 1597933977.6064055\n")
        else:
            lines.append(train_line(it, f"{7.0 / (it / 20):.6f}", ts[it], sps=2957.8 + it / 100))
        if it == 100:
            lines.append(GLOG)
    return "".join(lines)


SEED001 = """\
train: epoch 0, iter 20, loss: 6.505637, top_1: 0.000000, top_k: 0.000000, samples/s: 288.088
train: epoch 0, iter 40, loss: 5.736447, top_1: 0.020313, top_k: 0.117578, samples/s: 385.628
train: epoch 0, iter 60, loss: 4.274485, top_1: 0.817969, top_k: 0.991797, samples/s: 386.264
train: epoch 0, iter 80, loss: 2.331075, top_1: 1.000000, top_k: 1.000000, samples/s: 385.723
train: epoch 0, iter 100, loss: 1.236110, top_1: 1.000000, top_k: 1.000000, samples/s: 384.622
train: epoch 0, iter 120, loss: 1.078446, top_1: 1.000000, top_k: 1.000000, samples/s: 385.367
train: epoch 0, iter 140, loss: 1.054016, top_1: 1.000000, top_k: 1.000000, samples/s: 384.704
train: epoch 0, iter 160, loss: 1.048110, top_1: 1.000000, top_k: 1.000000, samples/s: 384.927
train: epoch 0, iter 180, loss: 1.050786, top_1: 1.000000, top_k: 1.000000, samples/s: 384.109
train: epoch 0, iter 200, loss: 1.047857, top_1: 1.000000, top_k: 1.000000, samples/s: 384.517
"""


def validation_lines():
    """Newer version: 1-based epochs, nan/inf losses, a validation line every 100 iterations."""
    ts = timestamps()
    lines = [header(gpus=8), nvsmi(8, used=12000)]
    for it in range(20, 201, 20):
        loss = {40: "nan", 60: "inf"}.get(it, f"{6.0 / (it / 20):.6f}")
        lines.append(train_line(it, loss, ts[it], epoch=1, sps=2950.0 + it))
        if it == 100:
            lines.append("validation: epoch 0, iter 100, top_1: 0.074620, top_k: 0.194120, "
                         "samples/s: 2014.683\n")
        if it == 200:
            lines.append(f"validation: epoch 1, iter 200, top_1: 0.101300, top_k: 0.250000, "
                         f"samples/s: 2100.500 {ts[200] + 30.5!r}\n")
    return "".join(lines)


def truncated():
    ts = timestamps()
    lines = [header(), nvsmi(8)]
    for it in range(20, 101, 20):
        lines.append(train_line(it, f"{7.0 / (it / 20):.6f}", ts[it], sps=2950.0))
    lines.append("train: epoch 0, iter 120, loss: 1.050499, top_1: 1.00")  # killed mid-write
    return "".join(lines)


def non_master():
    return header(nodes=2) + GLOG * 3 + "Init model on demand\n"


def messy():
    """CRLF, ANSI colours, a garbled metric line and a line missing its timestamp; gzip."""
    ts = timestamps()
    lines = [header(gpus=1, bsz=128, fp16="True"), nvsmi(1, used=7000)]
    for it in range(20, 201, 20):
        line = train_line(it, f"{7.0 / (it / 20):.6f}", None if it == 60 else ts[it], sps=400.0)
        if it == 80:
            line = "\x1b[32m" + line.rstrip("\n") + "\x1b[0m\n"
        lines.append(line)
        if it == 140:
            lines.append("train: epoch 0, iter 150, loss: 1.0, top_1: ??, samples/s: 1\n")
    return "".join(lines).replace("\n", "\r\n")


def write(rel: str, text: str) -> None:
    path = HERE / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if rel.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode(), mtime=0))
    else:
        path.write_text(text)


def main() -> None:
    write("with_timestamps/1n8g/resnet50_b128_fp32_1.log", with_timestamps())
    write("no_timestamps/1n1g/resnet50_b128_fp32_1.log", header(gpus=1) + nvsmi(1, 12565)
          + SEED001)
    write("validation_lines/1n8g/resnet50_b128_fp32_1.log", validation_lines())
    write("truncated/1n8g/resnet50_b128_fp32_1.log", truncated())
    write("non_master/2n8g/resnet50_b128_fp32_1.log", non_master())
    write("name_conflict/1n1g/bert_base_b128_fp32_1.log", header(gpus=1) + SEED001)
    write("crlf_ansi_gz/1n1g/resnet50_b128_amp_1.log.gz", messy())


if __name__ == "__main__":
    main()
