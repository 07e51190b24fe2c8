"""Write the SYNTHETIC OneFlow GPT fixtures of this folder (deterministic).

Logs follow docs/formats.md §3 and §8. Each is built so that the recommended method (median of
the printed latencies after the first interval; throughput = global batch / latency; memory =
max memory.used) reproduces one row of the seed 002 report table.
"""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).parent
NOISE = ("W20210601 11:02:33.140  3361 cuda_util.cpp:52] nccl version 2.7.8\n"
         "building GPT model ...\n")


def case(name):
    m = re.match(r"pretrain_gpt_(\d+)n(\d+)d_dp(\d+)_mp(\d+)_pp(\d+)_mbz(\d+)_gbz(\d+)_s(\d+)"
                 r"_l(\d+)_h(\d+)_nh(\d+)", name)
    keys = "nodes gpus dp tp pp mbz gbz seq layers hidden heads".split()
    return dict(zip(keys, map(int, m.groups()), strict=True))


def arguments(c, override=None):
    args = {"checkpoint_activations": "True", "data_parallel_size": None, "fp16": "True",
            "global_batch_size": c["gbz"], "hidden_size": c["hidden"], "log_interval": 10,
            "micro_batch_size": c["mbz"], "num_accumulation_steps": c["gbz"] // (c["mbz"] * c["dp"]),
            "num_attention_heads": c["heads"], "num_gpus_per_node": c["gpus"],
            "num_layers": c["layers"], "num_nodes": c["nodes"], "padded_vocab_size": 51200,
            "pipeline_model_parallel_size": c["pp"], "seq_length": c["seq"],
            "tensor_model_parallel_size": c["tp"], "train_iters": 200, "vocab_size": 50257}
    args.update(override or {})
    lines = [f"  {k} {'.' * (48 - len(k))} {v}" for k, v in sorted(args.items()) if v is not None]
    return ("------------------------ arguments ------------------------\n"
            + "\n".join(lines)
            + "\n-------------------- end of arguments ---------------------\n")


def nvsmi(n, max_used):
    used = [max_used - 11 * ((i * 3) % n) for i in range(n)]
    return "utilization.gpu [%], memory.used [MiB]\n" + "".join(
        f"{100 - i} %, {u} MiB\n" for i, u in enumerate(used))


def latencies(median, first, given=()):
    """19 intervals after the first whose median is `median` (5 decimals), `given` first."""
    out = list(given)
    below = sum(v < median for v in out)
    above = sum(v > median for v in out)
    out.append(median)
    k = 1
    while below < 9:
        out.append(round(median - 0.00031 * k * median, 5))
        below += 1
        k += 1
    k = 1
    while above < 9:
        out.append(round(median + 0.00027 * k * median, 5))
        above += 1
        k += 1
    # interleave deterministically so the log is not sorted
    mixed = out[:len(given)] + out[len(given):][::2] + out[len(given):][1::2]
    return [first] + mixed


HEADER = ("| {:<8} | micro_batches   | samples         | throughput | latency    | loss       |\n"
          "| -------- | --------------- | --------------- | ---------- | ---------- | ---------- |\n")


def table_row(step, c, lat, loss):
    micro = step * c["gbz"] // c["mbz"]
    return (f"| {step:<8} | {micro:<15} | {step * c['gbz']:<15} | {c['gbz'] / lat:<10.5f} | "
            f"{lat:<10.5f} | {loss:<10} |\n")


def record(step, c, lat, loss, first="step"):
    micro = step * c["gbz"] // c["mbz"]
    return (f"{first}={step},micro_batches={micro},samples={step * c['gbz']},"
            f"throughput={c['gbz'] / lat:.5f},latency={lat:.5f},loss={loss},\n")


def table_log(name, median, mem, first_col="step", given_rows=(), override=None, cut=False):
    c = case(name)
    ngpu = c["gpus"]
    lats = latencies(median, 14.26962, [r[2] for r in given_rows[1:]])
    out = [arguments(c, override), NOISE, "Training...\n", HEADER.format(first_col)]
    for i, lat in enumerate(lats):
        step = 10 * (i + 1)
        loss = "nan" if step == 30 else f"{11.2 - step / 40:.5f}"
        if i < len(given_rows):
            out.append(given_rows[i][0])
        else:
            out.append(table_row(step, c, lat, loss))
        if step == 10:
            out.append(nvsmi(ngpu, mem))
            out.append(HEADER.format(first_col))
    if cut:
        out.append(f"| 210      | {210 * c['gbz'] // c['mbz']:<15} | 4")
    return "".join(out)


def kv_log(name, median, mem, given=()):
    c = case(name)
    lats = latencies(median, 14.26962)
    out = [arguments(c), NOISE, "Training...\n"]
    for i, lat in enumerate(lats):
        step = 10 * (i + 1)
        out.append(given[i] if i < len(given) else record(step, c, lat, f"{11.2 - step / 40:.5f}"))
        if step == 10:
            out.append(nvsmi(c["gpus"], mem))
    return "".join(out)


EXAMPLE_ROWS = (  # docs/formats.md §3, the table's data rows (latency 14.26962 / 13.12142)
    ("| 10       | 320             | 5120            | 35.88042   | 14.26962   | 11.23708   |\n",
     10, 14.26962),
    ("| 20       | 640             | 10240           | 39.02016   | 13.12142   | 10.43741   |\n",
     20, 13.12142),
)
EXAMPLE_RECORD = ("step=10,micro_batches=320,samples=5120,throughput=35.88042,latency=14.26962,"
                  "loss=11.23708,\n")


def main():
    files = {
        # seed 002 DP_1x1x1_2_1536x16: 406.16 ms, 11066 MiB, 4.92 samples/s
        "table/pretrain_gpt_1n1d_dp1_mp1_pp1_mbz2_gbz2_s2048_l16_h1536_nh16.log":
            table_log("pretrain_gpt_1n1d_dp1_mp1_pp1_mbz2_gbz2_s2048_l16_h1536_nh16", 0.40616,
                      11066),
        # seed 002 MP_PP_1x8x4_512_2304x24: 19196.65 ms, 15670 MiB, 26.67 samples/s
        "table/pretrain_gpt_4n8d_dp1_mp8_pp4_mbz16_gbz512_s2048_l24_h2304_nh24.log":
            table_log("pretrain_gpt_4n8d_dp1_mp8_pp4_mbz16_gbz512_s2048_l24_h2304_nh24", 19.19665,
                      15670, given_rows=EXAMPLE_ROWS),
        # seed 002 DP_PP_8x1x4_512_1536x16: 4006.318 ms, 8712 MiB, 127.8 samples/s
        "key_value/pretrain_gpt_4n8d_dp8_mp1_pp4_mbz2_gbz512_s2048_l16_h1536_nh16.log":
            kv_log("pretrain_gpt_4n8d_dp8_mp1_pp4_mbz2_gbz512_s2048_l16_h1536_nh16", 4.00632,
                   8712, given=(EXAMPLE_RECORD,)),
        # seed 002 MP_1x1x1_8_768x12: 525.214 ms, 7416 MiB, 15.23 samples/s; older `batches`
        "batches_header/pretrain_gpt_1n1d_dp1_mp1_pp1_mbz8_gbz8_s2048_l12_h768_nh12.log":
            table_log("pretrain_gpt_1n1d_dp1_mp1_pp1_mbz8_gbz8_s2048_l12_h768_nh12", 0.52521,
                      7416, first_col="batches", cut=True),
        # file name says 16 layers, the dump says 24
        "arg_conflict/pretrain_gpt_1n1d_dp1_mp1_pp1_mbz2_gbz2_s2048_l16_h1536_nh16.log":
            table_log("pretrain_gpt_1n1d_dp1_mp1_pp1_mbz2_gbz2_s2048_l16_h1536_nh16", 0.40616,
                      11066, override={"num_layers": 24}),
    }
    for rel, text in files.items():
        path = HERE / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


if __name__ == "__main__":
    main()
