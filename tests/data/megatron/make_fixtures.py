"""Write the SYNTHETIC Megatron-LM fixtures of this folder (deterministic). docs/formats.md §4."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
EX10 = (" iteration       10/ 1000000 | consumed samples:           40 | elapsed time per iteration "
        "(ms): 356.2 | learning rate: 0.000E+00 | global batch size:     4 | loss scale: 8388608.0 "
        "| number of skipped iterations:  10 | number of nan iterations:   0 |\n")
EX20 = (" iteration       20/ 1000000 | consumed samples:           80 | elapsed time per iteration "
        "(ms): 140.6 | learning rate: 2.020E-08 | global batch size:     4 | lm loss: 1.005022E+01 "
        "| loss scale: 32768.0 | grad norm: 217.199 | number of skipped iterations:   0 | number of "
        "nan iterations:   0 |\n")
MEM = ("[Rank 0] (after 10 iterations) memory (MB) | allocated: 1523.4 | max allocated: 2311.7 | "
       "reserved: 2560.0 | max reserved: 2560.0\n")


def arguments(mbz, gbz, fp16="True", bf16="False", world=4):
    """The argument dump of a data-parallel run on `world` GPUs (the path's nodes x GPUs)."""
    args = {"bf16": bf16, "data_parallel_size": world, "fp16": fp16, "global_batch_size": gbz,
            "hidden_size": 1024, "micro_batch_size": mbz, "num_attention_heads": 16,
            "num_layers": 24, "pipeline_model_parallel_size": 1, "seq_length": 1024,
            "tensor_model_parallel_size": 1, "world_size": world}
    body = "\n".join(f"  {k} {'.' * (48 - len(k))} {v}" for k, v in sorted(args.items()))
    return (f"using world size: {world}, data-parallel-size: {world}, tensor-model-parallel "
            "size: 1\n"
            "------------------------ arguments ------------------------\n" + body
            + "\n-------------------- end of arguments ---------------------\n"
            "> building GPT2BPETokenizer tokenizer ...\n> building GPT model ...\n")


ELAPSED = [141.2, 140.1, 139.8, 140.6, 141.9, 140.3, 140.6, 139.5, 140.9,
           142.0, 140.4, 140.6, 139.9, 140.8, 141.1, 140.2, 140.7, 140.5]  # iterations 30..200


def iteration(it, gbs, ms, prefix=" ", extra="", loss=True, nan=0):
    fields = [f"consumed samples: {it * gbs:12d}", f"elapsed time per iteration (ms): {ms:.1f}"]
    fields += [extra] if extra else []
    fields += ["learning rate: 1.500E-04", f"global batch size: {gbs:5d}"]
    if loss:
        fields += [f"lm loss: {9.5 - it / 100:.6E}"]
    fields += ["loss scale: 65536.0"]
    if loss:
        fields += ["grad norm: 3.142"]
    fields += ["number of skipped iterations:   0", f"number of nan iterations: {nan:3d}"]
    return f"{prefix}iteration {it:8d}/ 1000000 | " + " | ".join(fields) + " |\n"


def plain():
    out = [arguments(1, 4), EX10, MEM, EX20]
    for i, ms in enumerate(ELAPSED):
        it = 30 + 10 * i
        out.append(iteration(it, 4, ms, loss=it != 100, nan=1 if it == 100 else 0))
    return "".join(out)


def dated_torchrun():
    """torchrun `[defaultN]:` prefixes, `[YYYY-MM-DD HH:MM:SS]` dates, a newer field, a cut line."""
    out = ["[default0]:" + line + "\n" for line in arguments(2, 8, fp16="False", bf16="True")
           .splitlines()]
    for i, ms in enumerate([356.2] + ELAPSED[:9]):
        it = 10 * (i + 1)
        sec = 5 + it // 10 * 2
        out.append(iteration(it, 8, ms, prefix=f"[default3]: [2024-05-01 10:00:{sec:02d}] ",
                             extra="throughput per GPU (TFLOP/s/GPU): 12.3"))
        if it == 10:
            out.append("[default0]:" + MEM)
    out.append("[default3]: [2024-05-01 10:00:27] iteration      110/ 1000000 | consumed samples:")
    return "".join(out)


def srun_prefix():
    """`srun -l` prefixes (`15:  iteration …`) and a global batch size ramp-up (16 → 32)."""
    out = ["0: " + line + "\n" for line in arguments(2, 32, world=16).splitlines()]
    for i, ms in enumerate([500.0] + ELAPSED):
        it = 10 * (i + 1)
        out.append(iteration(it, 16 if it <= 30 else 32, ms * 2, prefix="15:  "))
    return "".join(out)


def main():
    files = {"iterations/1n4g/gpt_b1_amp_1.log": plain(),
             "dated_torchrun/1n4g/gpt_b2_bf16_1.log": dated_torchrun(),
             "srun_prefix/2n8g/gpt_b2_amp_1.log": srun_prefix(),
             "non_master/2n8g/gpt_b2_amp_1.log": arguments(2, 32, world=16)
             + "> compiling dataset index\n"}
    for rel, text in files.items():
        path = HERE / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


if __name__ == "__main__":
    main()
