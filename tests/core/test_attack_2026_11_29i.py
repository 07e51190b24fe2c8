"""Inputs of an eighth attack on what a log states: a Megatron-DeepSpeed log whose global
batch was altered alike wherever Megatron prints it while DeepSpeed's settings and the
micro-batch layout still state the real one, done markers saying failure in words the
campaign's reader skipped, and printed rates timed by another clock than the stamps. Built
in tmp_path from the real Megatron-DeepSpeed log of the test bed and the bundled ResNet-50
campaign (data/raw_logs/rn50_4gpu: 1 node of 4 GPUs, batch 128)."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.problems import strict_failures

ROOT = Path(__file__).resolve().parents[2]
RN50 = ROOT / "data" / "raw_logs" / "rn50_4gpu" / "1n4g"
STEM = "resnet50_b128_fp32_"
MEGATRON = ROOT / "tests" / "data" / "real" / "megatron_deepspeed_examples" \
    / "gpt3-0.125B-tokendropping-graduallyIncrease-lr-3.0e-4.log.gz"


# --- a Megatron-DeepSpeed global batch held to the log's other statements of it -------------

def _times_ten(match: re.Match) -> str:
    """`match`'s number x 10, right-aligned in the same width plus one."""
    return f"{match.group(1)}{int(match.group(2)) * 10:>{len(match.group(2))}}"


def _megatron(tmp_path: Path, edit) -> Path:
    folder = tmp_path / "megatron"
    folder.mkdir()
    text = gzip.decompress(MEGATRON.read_bytes()).decode()
    (folder / "gpt3.log").write_text(edit(text))
    return folder


def _batch_ten_times(text: str) -> str:
    """Megatron's every statement of the global batch x 10 (argument dump, each iteration
    line's field, consumed samples and tokens); DeepSpeed's settings left as they are."""
    text, n = re.subn(r"(global_batch_size \.+ )(256)", _times_ten, text)
    assert n == 1
    for field in ("global batch size: +", "consumed samples: +", "consumed tokens: +"):
        text, n = re.subn(f"({field})(\\d+)", _times_ten, text)
        assert n == 12
    return text


def test_a_megatron_global_batch_ten_times_its_deepspeed_settings_fails_strict(tmp_path):
    """The global batch x 10 wherever Megatron prints it gave 4,383.56 samples/s and 1,086
    TFLOP/s per GPU with 0 problems, though DeepSpeed's train_batch_size and micro 4 x DP 8 x
    8 accumulated micro-batches state 256."""
    result = parse_paths([_megatron(tmp_path, _batch_ten_times)], cache=False)
    [failed] = strict_failures(result.problem_list())
    assert failed.kind == "metadata_conflict" and failed.line == 1669
    for said in ("global batch of 2,560", "DeepSpeed's train_batch_size 256 (line 1669)",
                 "x Megatron's micro-batches an iteration 8 (line 306) = 256",
                 "x DeepSpeed's gradient_accumulation_steps 8 (line 1641) = 256",
                 "argument dump's global_batch_size 2,560 (line 168)"):
        assert said in failed.reason


def test_a_megatron_global_batch_off_the_micro_batch_layout_fails_strict(tmp_path):
    """Without any accumulation count printed, a global batch that is no whole multiple of
    micro x DP (4 x 8) is the conflict."""
    def edit(text: str) -> str:
        text = _batch_ten_times(text).replace("global_batch_size ............................... 2560",
                                              "global_batch_size ............................... 2564")
        text = re.sub(r"global batch size: +2560", "global batch size:  2564", text)
        return re.sub(r"[^\n]*(?:micro-batches to constant|gradient_accumulation_steps|"
                      r"train_batch_size \.)[^\n]*", "", text)

    result = parse_paths([_megatron(tmp_path, edit)], cache=False)
    conflicts = [p for p in strict_failures(result.problem_list())
                 if p.kind == "metadata_conflict"]
    assert len(conflicts) == 1
    assert "= 32, of which 2,564 is no whole multiple" in conflicts[0].reason


def test_the_real_megatron_deepspeed_log_states_one_global_batch(tmp_path):
    """The unaltered log: every statement says 256, so no problem."""
    result = parse_paths([_megatron(tmp_path, lambda text: text)], cache=False)
    assert not strict_failures(result.problem_list())


# --- done markers saying failure in words the reader skipped ----------------------------------

def _run_three_marked(tmp_path: Path, edit) -> Path:
    """Runs 1-3 of the bundled 1n4g fp32 case with their sidecars, run 3's done marker
    replaced by `edit` of it."""
    folder = tmp_path / "1n4g"
    folder.mkdir()
    for i in (1, 2, 3):
        for f in RN50.glob(f"{STEM}{i}.*"):
            shutil.copy(f, folder)
    marker = folder / f"{STEM}3.done"
    marker.write_text(json.dumps(edit(json.loads(marker.read_text()))))
    return folder


def _node_killed(marker: dict) -> dict:
    """The campaign's own marker, its node 0 killed by the harness on a timeout."""
    marker["nodes"][0].update(rc=137, stopped="timeout after 1200 s")
    return marker


@pytest.mark.parametrize("edit, said", [
    (lambda m: {"success": False}, '"success": false'),
    (lambda m: {"run_id": m["run_id"], "success": "no"}, '"success": "no"'),
    (_node_killed, 'nodes[0].rc 137, stopped "timeout after 1200 s" beside "ok": true'),
])
def test_a_done_marker_saying_failed_in_success_or_its_nodes_leaves_the_run_out(
        tmp_path, edit, said):
    """`{"success": false}`, or the campaign's own marker saying ok while its node 0 exited
    137 having been stopped on a timeout, counted the run (3 repeats, 0 problems)."""
    _run_three_marked(tmp_path, edit)
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == 2
    [stray] = result.problems[result.problems["kind"] == "stray_log"]["reason"]
    assert f"its done marker says {said}" in stray


@pytest.mark.parametrize("edit", [
    lambda m: m,
    lambda m: {"success": True, "rc": 0},
    lambda m: {**m, "nodes": [{**m["nodes"][0], "rc": None}]},  # no result from the agent
])
def test_a_done_marker_saying_success_or_nodes_that_finished_counts_the_run(tmp_path, edit):
    _run_three_marked(tmp_path, edit)
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == 3 and "stray_log" not in set(result.problems["kind"])
