"""Inputs of a seventh attack on what a log states: a global batch its own PARAMETER line
states far from its devices x batch, a Megatron batch ramp-up that leaves too few intervals
for the DLPerf rule, and done markers of other tools saying their run failed. Built in
tmp_path from the bundled ResNet-50 campaign (data/raw_logs/rn50_4gpu: 1 node of 4 GPUs,
batch 128) and the real Megatron-DeepSpeed log of the test bed."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from analysis.collect import parse_paths
from analysis.problems import strict_failures

ROOT = Path(__file__).resolve().parents[2]
RN50 = ROOT / "data" / "raw_logs" / "rn50_4gpu" / "1n4g"
STEM = "resnet50_b128_fp32_"
MEGATRON = ROOT / "tests" / "data" / "real" / "megatron_deepspeed_examples" \
    / "gpt3-0.125B-tokendropping-graduallyIncrease-lr-3.0e-4.log.gz"


def _log_stating(tmp_path: Path, instead: str) -> Path:
    """Run 1's log alone (no sidecars) with `instead` for its PARAMETER line's
    ``global_batch_size : 512``."""
    folder = tmp_path / "1n4g"
    folder.mkdir()
    text = (RN50 / f"{STEM}1.log").read_text()
    assert "global_batch_size : 512  " in text
    (folder / f"{STEM}1.log").write_text(text.replace("global_batch_size : 512  ", instead))
    return folder


# --- a global batch the log's own PARAMETER line states ---------------------------------------

@pytest.mark.parametrize("stated, said", [
    (51200, "= 100 x (4 device(s) x batch 128)"),
    (1000, "global_batch_size=1,000, not a whole multiple of the 4 device(s) x batch 128"),
])
def test_a_global_batch_the_log_states_off_its_layout_fails_strict(tmp_path, stated, said):
    """A PARAMETER line stating 4 GPUs x batch 128 and a global batch of 51,200 (or 1,000)
    gave 100 times (or 1.95 times) the run's figure with 0 problems, where the same number
    through --meta is a metadata_conflict."""
    _log_stating(tmp_path, f"global_batch_size : {stated}  ")
    result = parse_paths([tmp_path], cache=False)
    [failed] = strict_failures(result.problem_list())
    assert failed.kind == "metadata_conflict"
    assert said in failed.reason and failed.reason.startswith("the log says")
    assert failed.line == 6  # the PARAMETER line


@pytest.mark.parametrize("instead, said", [
    ("global_batch_size : 1024  ", "which no accumulation count in the log states"),
    ("global_batch_size : 8192  gradient_accumulation_steps : 16  ",
     "as the log's argument dump states"),
    ("global_batch_size : 33792  Config : Namespace(gradient_accumulation_steps=66, lr=6e-3)  ",
     "accumulated 66 batches, as the log's argument dump states"),
])
def test_a_global_batch_the_log_states_accumulating_is_a_note(tmp_path, instead, said):
    """2 x the layout (a usual unstated accumulation), or 16 x (66 x) where the dump (its
    printed Namespace, as DLE BERT's) states that many accumulated batches, is used and
    noted, not a --strict failure."""
    _log_stating(tmp_path, instead)
    result = parse_paths([tmp_path], cache=False)
    notes = result.problems[result.problems["kind"] == "accumulation_implied"]
    assert len(notes) == 1 and said in notes["reason"].iloc[0]
    assert not strict_failures(result.problem_list())


def test_a_global_batch_the_log_states_is_held_to_the_paths_devices(tmp_path):
    """A dump stating no devices is held to the path's (1n4g)."""
    folder = _log_stating(tmp_path, "global_batch_size : 5120  ")
    log = folder / f"{STEM}1.log"
    text = log.read_text()
    for key in ("world_size : 4  ", "num_nodes : 1  ", "gpus_per_node : 4  "):
        assert key in text
        text = text.replace(key, "")
    log.write_text(text)
    [failed] = strict_failures(parse_paths([tmp_path], cache=False).problem_list())
    assert "= 10 x (4 device(s) x batch 128)" in failed.reason


def test_a_global_batch_the_log_states_as_its_layout_runs_is_not_flagged(tmp_path):
    _log_stating(tmp_path, "global_batch_size : 512  ")
    assert parse_paths([tmp_path], cache=False).problems.empty


# --- a Megatron batch-size ramp-up that ends near the end of the log -------------------------

def _ramp_up_to(tmp_path: Path, last: int) -> list[float]:
    """The real Megatron-DeepSpeed log (iterations 10..120, every 10; the interval ending at
    110 holds an evaluation) with iterations up to `last` rewritten as a stated ramp-up at
    global batch 32 (samples re-counted, each iteration an eighth as long: every line's
    samples/s unchanged). The latencies (ms) printed after the ramp-up."""
    out, after = [], []
    for ln in gzip.open(MEGATRON, "rt").read().split("\n"):
        if re.match(r"\s*rampup_batch_size \.+ None", ln):
            ln = ln.replace("None", "['32', '32', '25600']")
        m = re.match(r"\s*iteration +(\d+)/", ln)
        if m:
            k = int(m.group(1))
            ms = float(re.search(r"per iteration \(ms\): ([0-9.]+)", ln)[1])
            if k <= last:
                samples = 32 * k
                ln = re.sub(r"consumed samples: +\d+", f"consumed samples: {samples:>12}", ln)
                ln = re.sub(r"consumed tokens: +\d+", f"consumed tokens: {samples * 2048:>12}",
                            ln)
                ln = ln.replace(f"(ms): {ms}", f"(ms): {ms / 8:.1f}")
                ln = ln.replace("global batch size:   256", "global batch size:    32")
            else:
                after.append(ms)
        out.append(ln)
    (tmp_path / "gpt3_rampup.log").write_text("\n".join(out))
    return after


def test_a_ramp_up_ending_near_the_end_leaves_no_dlperf_figure(tmp_path):
    """A ramp-up to iteration 100 left the lines of 110 (holding the evaluation) and 120: the
    rule's median of those two gave 341.70 samples/s for a run at 438, 0 problems."""
    from analysis.stats import run_throughput

    assert len(_ramp_up_to(tmp_path, 100)) == 2
    row = run_throughput(parse_paths([tmp_path], cache=False), "dlperf").iloc[0]
    assert not np.isfinite(row["throughput"])
    assert row["problem_kind"] == "truncated"
    assert "2 latency interval(s) after it, 1 after the first" in row["problem"]
    assert "at least 3 are needed" in row["problem"]


def test_the_first_interval_after_a_ramp_up_is_left_out(tmp_path):
    """A ramp-up to iteration 50: the figure is the median of the intervals at the final
    batch after the first of them (60, the new batch's start-up), as the run's first is."""
    from analysis.stats import run_throughput

    after = _ramp_up_to(tmp_path, 50)
    row = run_throughput(parse_paths([tmp_path], cache=False), "dlperf").iloc[0]
    assert row["problem_kind"] == ""
    assert row["throughput"] == pytest.approx(256 / (np.median(after[1:]) / 1e3))
    assert row["throughput"] != pytest.approx(256 / (np.median(after) / 1e3))


# --- done markers of other tools saying their run failed --------------------------------------

def _campaign_marked(tmp_path: Path, marker: dict) -> Path:
    """Runs 1-3 with their sidecars, run 3's done marker replaced by `marker`."""
    folder = tmp_path / "1n4g"
    folder.mkdir()
    for i in (1, 2, 3):
        for f in RN50.glob(f"{STEM}{i}.*"):
            shutil.copy(f, folder)
    (folder / f"{STEM}3.done").write_text(json.dumps({"run_id": f"1n4g/{STEM}3", **marker}))
    return folder


@pytest.mark.parametrize("marker, said", [
    ({"result": "failed", "reason": "killed (OOM)"}, "failed (killed (OOM))"),
    ({"status": "done", "exit_code": "137"}, '"exit_code": "137"'),
    ({"returncode": "-9"}, '"returncode": "-9"'),
])
def test_a_done_marker_saying_failed_under_other_keys_leaves_the_run_out(tmp_path, marker, said):
    """Another tool's marker stating `result` failed, or an exit status as text, counted
    the run (3 repeats, 0 problems); the campaign ran 2."""
    _campaign_marked(tmp_path, marker)
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == 2
    [stray] = result.problems[result.problems["kind"] == "stray_log"]["reason"]
    assert f"its done marker says {said}" in stray


@pytest.mark.parametrize("marker", [
    {"result": "success", "exit_code": "0"},
    {"result": {"throughput": 11661.87}, "rc": 0},
])
def test_a_done_marker_of_another_tool_saying_done_counts_the_run(tmp_path, marker):
    _campaign_marked(tmp_path, marker)
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == 3 and "stray_log" not in set(result.problems["kind"])
