"""Run fields a DLE PyTorch log states outside its usual PARAMETER line: the launch command
before the first DLL line (nodes, GPUs per node) and BERT's printed ``Config`` Namespace
(precision, gradient accumulation). Synthetic logs in the shapes of the real ones
(tests/data/real/paddle_perf_pytorch_bert)."""

from __future__ import annotations

import pytest

from analysis.collect import parse_paths
from analysis.parsers._fields import dll_parameter_fields, namespace_items

TRAIN = ("DLL 2023-08-02 02:37:{s:02d}.000000 - Training Epoch: 0 Training Iteration: {i}  "
         "average_loss : 11.1  learning_rate : 0.001  skipped_steps : 0 ")
CLOSING = ("DLL 2023-08-02 02:38:00.000000 -  e2e_train_time : 60.0 s "
           "training_sequences_per_second : 1234.5 sequences/s final_loss : 8.5 None "
           "raw_train_time : 50.0 s ")
CONFIG = ('DLL 2023-08-02 02:36:52.953304 - PARAMETER Config : ["Namespace(amp=False, '
          "config_file='bert_config_base.json', fp16={fp16}, gradient_accumulation_steps={acc}, "
          "input_dir='/data/a,b=c', local_rank=0, n_gpu=1, train_batch_size=128)\"] ")
BATCH = "DLL 2023-08-02 02:36:53.000000 - PARAMETER batch_size_per_gpu : 128 "


def _log(tmp_path, head: list[str], params: list[str] = (), after: list[str] = ()):
    lines = [*head, *params, *(TRAIN.format(s=i, i=i) for i in range(1, 6)), *after, CLOSING]
    path = tmp_path / "bert.log"
    path.write_text("\n".join(lines) + "\n")
    return parse_paths([path], jobs=1, cache=False)


def _fields(result) -> dict:
    run = result.runs.iloc[0]
    keys = ("num_nodes", "gpus_per_node", "batch_size_per_device", "global_batch_size",
            "precision")
    return {k: None if str(run[k]) in ("<NA>", "nan", "None") else run[k] for k in keys}


@pytest.mark.parametrize(("launch", "nodes", "gpus"), [
    ("+ python3 -m torch.distributed.launch --nproc_per_node=8 /w/run_pretraining.py", 1, 8),
    ("python -m torch.distributed.run --nnodes=2 --nproc_per_node 4 run_pretraining.py", 2, 4),
    ("torchrun --nnodes 4 --nproc-per-node=8 run_pretraining.py --fp16", 4, 8),
    ("+ python3 -m torch.distributed.launch --nproc_per_node=$GPUS run.py", None, None),
    ("torchrun --nnodes=1:2 --nproc_per_node=8 run.py", None, None),  # elastic: no count
    ("python run_pretraining.py --nproc_per_node=8", None, None),  # no launcher
], ids=["launch-default-nodes", "run-two-nodes", "torchrun", "shell-variable", "elastic",
        "no-launcher"])
def test_the_launch_command_states_nodes_and_gpus(tmp_path, launch, nodes, gpus):
    result = _log(tmp_path, ["+ batch_size=128", launch], [BATCH])
    got = _fields(result)
    assert (got["num_nodes"], got["gpus_per_node"]) == (nodes, gpus)
    assert got["batch_size_per_device"] == 128
    known = nodes is not None
    assert ("missing_metadata" in set(result.problems["kind"])) is not known


def test_a_launch_command_after_the_first_dll_line_is_not_read(tmp_path):
    """Only the command that started the run (before its first DLL line) counts."""
    result = _log(tmp_path, [], [BATCH],
                  after=["python3 -m torch.distributed.launch --nproc_per_node=8 x.py"])
    assert _fields(result)["gpus_per_node"] is None


@pytest.mark.parametrize(("fp16", "acc", "precision", "global_batch"), [
    ("True", 66, "amp", 128 * 66 * 8), ("False", 528, "fp32", 128 * 528 * 8),
    ("False", 1, "fp32", 128 * 8),
])
def test_bert_config_states_precision_and_accumulation(tmp_path, fp16, acc, precision,
                                                       global_batch):
    """fp16 → amp; an iteration is an optimizer step of batch × accumulation × devices."""
    launch = "+ python3 -m torch.distributed.launch --nproc_per_node=8 run_pretraining.py"
    result = _log(tmp_path, [launch], [CONFIG.format(fp16=fp16, acc=acc), BATCH])
    got = _fields(result)
    assert got["precision"] == precision and got["global_batch_size"] == global_batch
    assert result.problems.empty


def test_accumulation_without_stated_devices_leaves_the_global_batch_to_the_path(tmp_path):
    """No launch command: the devices come from elsewhere; the global batch is not guessed
    from the log's accumulation (it needs all three counts stated in the log)."""
    result = _log(tmp_path, [], [CONFIG.format(fp16="True", acc=66), BATCH])
    got = _fields(result)
    assert got["num_nodes"] is None and got["global_batch_size"] is None


def test_namespace_items_and_precedence():
    text = ('["Namespace(amp=False, fp16=True, input_dir=\'/a,b=c\', x=[1, 2], '
            'init_checkpoint=None, gradient_accumulation_steps=66)"]')
    items = namespace_items(text)
    assert items["fp16"] == "True" and items["input_dir"] == "/a,b=c"
    assert items["init_checkpoint"] == "None" and items["gradient_accumulation_steps"] == "66"
    assert namespace_items("no namespace here") == {}
    fields = dll_parameter_fields({"Config": text, "batch_size_per_gpu": "128"})
    assert ("precision", "amp", "Config") in fields  # the line it is stated on
    assert ("batch_size_per_device", 128, "batch_size_per_gpu") in fields
    # a PARAMETER line of its own wins over the Namespace
    assert ("precision", "fp32", "amp") in dll_parameter_fields(
        {"Config": text, "amp": "False", "fp16": "False"})


def test_a_launch_command_that_disagrees_with_the_world_size_is_not_read(tmp_path):
    """ResNet's PARAMETER line prints world_size: a launch command saying otherwise (its
    --nnodes given elsewhere) does not set nodes or GPUs; the world size stays."""
    param = "DLL 2023-08-04 05:46:48.062120 - PARAMETER arch : resnet50  batch_size : 256  world_size : 16 "
    launch = "python -m torch.distributed.launch --nproc_per_node=8 ./main.py"
    result = _log(tmp_path, [launch], [param])
    run = result.runs.iloc[0]
    assert str(run["num_nodes"]) == "<NA>" and str(run["gpus_per_node"]) == "<NA>"
    assert run["num_devices"] == 16 and run["global_batch_size"] == 256 * 16
