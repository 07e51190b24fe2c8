"""Write the SYNTHETIC OneFlow BERT fixtures of this folder (deterministic).

Logs follow docs/formats.md §2 and §8; every example line of §2 appears in one of them. As the
writer does, each line prints the samples of every device since the previous line over the
seconds between their stamps, so the rates agree with the stamps and the stated batch: the
§2 stamps (step 19 → 119, 17.1185 s) and the rate 139.896 fit 100 steps of 1 GPU x 24.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
T19, T119 = 1598056519.8844702, 1598056537.0029895  # docs/formats.md §2 example timestamps
RATE119 = 139.896  # docs/formats.md §2 rate printed with T119
EVERY = 20  # loss_print_every_n_iter
GLOG = "I0822 08:35:04.123456789  9102 ev_epoll_linux.c:82] Use engine: epollex\n"
#: the §2 lines, printed 0-based step -> (total_loss, mlm_loss, nsp_loss, rate)
EXAMPLES = {19: (9.725, 8.960, 0.766, 54.982), 119: (8.010, 7.331, 0.679, RATE119)}
NO_STAMP_19 = (11.078, 10.407, 0.671, 52.257)  # the §2 line of the versions without stamps


def header(gpus, bsz, nodes=1, fp16="False"):
    args = [("gpu_num_per_node", gpus), ("node_num", nodes), ("num_nodes", nodes),
            ("batch_size_per_device", bsz), ("use_fp16", fp16), ("use_xla", "False"),
            ("seq_length", 128), ("max_predictions_per_seq", 20), ("num_hidden_layers", 12),
            ("num_attention_heads", 12), ("hidden_size", 768), ("vocab_size", 30522),
            ("loss_print_every_n_iter", EVERY), ("iter_num", 200),
            ("data_dir", "/dataset/bert/of_wiki_seq_len_128")]
    out = ["=" * 66, f"Running bert: num_gpu_per_node = {gpus}, num_nodes = {nodes}.", "=" * 66]
    out += [f"{k} = {v}" for k, v in args]
    out += ["-" * 66, "Time stamp: 2020-08-22-08:35:02"]
    return "\n".join(out) + "\n" + GLOG


def nvsmi(n, used=9500):
    return "utilization.gpu [%], memory.used [MiB]\n" + "".join(
        f"{97 + i % 3} %, {used + 7 * i} MiB\n" for i in range(n))


def step_line(step, ts=None, losses=None, tput=None):
    total = 10.0 - step / 60
    total, mlm, nsp, tput = losses or (total, total - 0.68, 0.671, tput)
    tail = "" if ts is None else f" {ts!r}"
    return (f"step: {step}, total_loss: {total:.3f}, mlm_loss: {mlm:.3f}, "
            f"nsp_loss: {nsp:.3f}, throughput: {tput:.3f}{tail}\n")


def stamped(batch, seconds_per_line, t19=T19):
    """printed step -> (stamp, rate) from step 19 to 199: lines `seconds_per_line` apart with a
    small alternating jitter, each rate `batch` x EVERY over the seconds since the last line."""
    out, ts = {19: (t19, None)}, t19
    for k, step in enumerate(range(39, 200, EVERY)):
        gap = seconds_per_line * (1 + 0.004 * (-1) ** k)
        ts += gap
        out[step] = (ts, batch * EVERY / gap)
    return out


def section2_run():
    """The run the §2 lines came from, 1 GPU x 24: step 99 stamped 480 samples at 139.896
    before step 119, steps 39 to 99 sharing what is left of the 17.1185 s since step 19."""
    last = T119 - 24 * EVERY / RATE119
    before = stamped(24, (last - T19) / 4)
    after = stamped(24, 3.4218, t19=T119)
    return ({s: v for s, v in before.items() if s <= 99} | {119: (T119, RATE119)}
            | {s + 100: v for s, v in after.items() if 119 < s + 100 < 200})


def with_timestamps():
    out = [header(gpus=1, bsz=24)]
    for step, (ts, rate) in section2_run().items():
        out.append(step_line(step, ts, EXAMPLES.get(step), rate))
        if step == 19:
            out.append(nvsmi(1))
    return "".join(out)


def no_timestamps():
    out = [header(gpus=1, bsz=24), step_line(19, losses=NO_STAMP_19)]
    out += [step_line(s, tput=140.0 + s / 100) for s in range(39, 200, EVERY)]
    return "".join(out)


def truncated():
    out = [header(gpus=8, bsz=96)]
    for step, (ts, rate) in stamped(8 * 96, 13.3).items():
        if step > 79:
            break
        out.append(step_line(step, ts, tput=rate if rate else 402.5))
        if step == 39:
            out.append("step: 40, total_loss: inf, mlm_loss: garbled\n")
    out.append("step: 99, total_loss: 8.2")
    return "".join(out)


def main():
    for rel, text in (("with_timestamps/1n1g/bert_base_b24_fp32_1.log", with_timestamps()),
                      ("no_timestamps/1n1g/bert_base_b24_fp32_1.log", no_timestamps()),
                      ("truncated/1n8g/bert_base_b96_fp32_1.log", truncated())):
        path = HERE / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


if __name__ == "__main__":
    main()
