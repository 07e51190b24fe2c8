"""Write the SYNTHETIC OneFlow BERT fixtures of this folder (deterministic).

Logs follow docs/formats.md §2 and §8; every example line of §2 appears in one of them.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
T19, T119 = 1598056519.8844702, 1598056537.0029895  # docs/formats.md §2 example timestamps
GLOG = "I0821 08:21:50.123456789  9102 ev_epoll_linux.c:82] Use engine: epollex\n"


def header(gpus=8, nodes=1, bsz=96, fp16="False"):
    args = [("gpu_num_per_node", gpus), ("node_num", nodes), ("num_nodes", nodes),
            ("batch_size_per_device", bsz), ("use_fp16", fp16), ("use_xla", "False"),
            ("seq_length", 128), ("max_predictions_per_seq", 20), ("num_hidden_layers", 12),
            ("num_attention_heads", 12), ("hidden_size", 768), ("vocab_size", 30522),
            ("loss_print_every_n_iter", 20), ("iter_num", 200),
            ("data_dir", "/dataset/bert/of_wiki_seq_len_128")]
    out = ["=" * 66, f"Running bert: num_gpu_per_node = {gpus}, num_nodes = {nodes}.", "=" * 66]
    out += [f"{k} = {v}" for k, v in args]
    out += ["-" * 66, "Time stamp: 2020-08-22-08:21:45"]
    return "\n".join(out) + "\n" + GLOG


def nvsmi(n, used=9500):
    return "utilization.gpu [%], memory.used [MiB]\n" + "".join(
        f"{97 + i % 3} %, {used + 7 * i} MiB\n" for i in range(n))


def step_line(step, ts=None, loss=None, tput=None):
    loss = 11.0 - step / 40 if loss is None else loss
    tput = 139.9 + (step % 3) if tput is None else tput
    tail = "" if ts is None else f" {ts!r}"
    loss_text = loss if isinstance(loss, str) else f"{loss:.3f}"
    return (f"step: {step}, total_loss: {loss_text}, mlm_loss: {10.4 - step / 50:.3f}, "
            f"nsp_loss: 0.671, throughput: {tput:.3f}{tail}\n")


def timestamps():
    per = (T119 - T19) / 100
    return {s: T19 + (s - 19) * per + (0.0 if s in (19, 119) else 0.02 * ((s // 20) % 2))
            for s in range(19, 200, 20)}


def with_timestamps():
    ts = timestamps()
    out = [header()]
    for s in range(19, 200, 20):
        if s == 19:
            out.append("step: 19, total_loss: 9.725, mlm_loss: 8.960, nsp_loss: 0.766, "
                       "throughput: 54.982 1598056519.8844702\n")
            out.append(nvsmi(8))
        elif s == 119:
            out.append("step: 119, total_loss: 8.010, mlm_loss: 7.331, nsp_loss: 0.679, "
                       "throughput: 139.896 1598056537.0029895\n")
        else:
            out.append(step_line(s, ts[s], loss="nan" if s == 79 else None))
    return "".join(out)


def no_timestamps():
    out = [header(gpus=1)]
    for s in range(19, 200, 20):
        if s == 19:
            out.append("step: 19, total_loss: 11.078, mlm_loss: 10.407, nsp_loss: 0.671, "
                       "throughput: 52.257\n")
        else:
            out.append(step_line(s, tput=140.0 + s / 100))
    return "".join(out)


def truncated():
    ts = timestamps()
    out = [header(gpus=8)]
    for s in range(19, 80, 20):
        out.append(step_line(s, ts[s]))
        if s == 39:
            out.append("step: 40, total_loss: inf, mlm_loss: garbled\n")
    out.append("step: 99, total_loss: 8.2")
    return "".join(out)


def main():
    for rel, text in (("with_timestamps/1n8g/bert_base_b96_fp32_1.log", with_timestamps()),
                      ("no_timestamps/1n1g/bert_base_b96_fp32_1.log", no_timestamps()),
                      ("truncated/1n8g/bert_base_b96_fp32_1.log", truncated())):
        path = HERE / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


if __name__ == "__main__":
    main()
