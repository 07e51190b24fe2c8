"""Inputs of a sixth attack on cases and campaigns: done markers saying failed in other
spellings, near-copies of a run, repeats recorded on other hardware or software, a stated
global batch far above the layout, and exports without the runs' hardware records. Built in
tmp_path from the bundled ResNet-50 campaign (data/raw_logs/rn50_4gpu: three repeats on 1
node of 4 GPUs, batch 128)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from analysis.collect import parse_paths

ROOT = Path(__file__).resolve().parents[2]
RN50 = ROOT / "data" / "raw_logs" / "rn50_4gpu" / "1n4g"
STEM = "resnet50_b128_fp32_"


def _kinds(result) -> list[str]:
    return list(result.problems["kind"])


def _campaign(tmp_path: Path, runs=(1, 2, 3)) -> Path:
    """Runs of the bundled campaign with their done markers, environment records and GPU
    samples (no status.json)."""
    folder = tmp_path / "1n4g"
    folder.mkdir(parents=True)
    for i in runs:
        for f in RN50.glob(f"{STEM}{i}.*"):
            shutil.copy(f, folder)
    return folder


# --- a done marker saying failed in another spelling -----------------------------------------

@pytest.mark.parametrize("edit, said", [
    ({"ok": "false"}, '"ok": "false"'),
    ({"ok": 0}, '"ok": 0'),
    ({"ok": None, "state": "failed", "reason": "exit 1"}, "failed (exit 1)"),
    ({"ok": True, "state": "failed", "reason": "timeout"}, "failed (timeout)"),
    ({"ok": None, "state": None, "status": "failed", "exit_code": 137, "reason": "killed (OOM)"},
     "failed (killed (OOM))"),
    ({"ok": None, "state": None, "reason": None, "exit_code": 137}, '"exit_code": 137'),
])
def test_a_done_marker_saying_failed_in_any_spelling_leaves_the_run_out(tmp_path, edit, said):
    """Only the exact JSON `"ok": false` left a run out; `"ok": "false"`, `0`, a failed state
    without `ok`, `ok` true beside a failed state, or another tool's `status` or non-zero exit
    code counted the run, 0 problems."""
    folder = _campaign(tmp_path)
    marker = folder / f"{STEM}3.done"
    record = json.loads(marker.read_text())
    for key, value in edit.items():
        if value is None:
            record.pop(key)
        else:
            record[key] = value
    marker.write_text(json.dumps(record))
    result = parse_paths([tmp_path], cache=False)
    assert sorted(result.runs["run_id"]) == [f"1n4g/{STEM}{i}" for i in (1, 2)]
    stray = result.problems[result.problems["kind"] == "stray_log"]["reason"]
    assert len(stray) == 1 and f"its done marker says {said}" in stray.iloc[0]


def test_a_done_marker_saying_ok_in_words_counts_the_run(tmp_path):
    folder = _campaign(tmp_path)
    marker = folder / f"{STEM}3.done"
    record = json.loads(marker.read_text())
    record["ok"] = "true"
    marker.write_text(json.dumps(record))
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == 3 and "stray_log" not in _kinds(result)


# --- a copy of a run with one value or stamp changed ------------------------------------------

def _logs_only(tmp_path: Path, runs=(1, 2, 3)) -> Path:
    folder = tmp_path / "1n4g"
    folder.mkdir(parents=True)
    for i in runs:
        shutil.copy(RN50 / f"{STEM}{i}.log", folder)
    return folder


def _one_loss_digit(text: str) -> str:
    head, line, tail = text.partition("train.loss : ")
    assert line
    return head + line + ("1" if tail[0] != "1" else "2") + tail[1:]


def _one_stamp_microsecond(text: str) -> str:
    import re

    match = re.search(r"(\d\d:\d\d:\d\d\.)(\d{6})", text.split("train.loss", 1)[1])
    assert match
    old = match.group(0)
    new = match.group(1) + f"{(int(match.group(2)) + 1) % 10**6:06d}"
    return text.replace(old, new, 1)


def _stamps_to_ms(text: str) -> str:
    import re

    return re.sub(r"(\d\d:\d\d:\d\d\.\d{3})\d{3}", r"\g<1>000", text)


@pytest.mark.parametrize("edit, to_the", [(_one_loss_digit, "microsecond"),
                                           (_one_stamp_microsecond, "microsecond"),
                                           (_stamps_to_ms, "millisecond")])
def test_a_copy_with_one_value_or_stamp_changed_is_one_run(tmp_path, edit, to_the):
    """A copy of run 1 as run 4 with one loss digit changed, one stamp a microsecond later or
    its stamps cut to milliseconds was a fourth repeat: median 11,673.21 where runs 1-3
    give 11,661.87."""
    from analysis.stats import summarize

    folder = _logs_only(tmp_path)
    text = (folder / f"{STEM}1.log").read_text()
    edited = edit(text)
    assert edited != text
    (folder / f"{STEM}4.log").write_text(edited)
    result = parse_paths([tmp_path], cache=False)
    assert sorted(result.runs["run_id"]) == [f"1n4g/{STEM}{i}" for i in (1, 2, 3)]
    dup = result.problems[result.problems["kind"] == "duplicate_run"]
    assert len(dup) == 1 and dup["source"].iloc[0].endswith(f"{STEM}4.log")
    assert f"stamps the same to the {to_the}" in dup["reason"].iloc[0]
    [row] = summarize(result).to_dict("records")
    assert row["repeats"] == 3 and round(row["throughput_median"], 2) == 11661.87


def test_repeats_an_hour_apart_with_their_own_stamps_stay_repeats(tmp_path):
    _logs_only(tmp_path)
    result = parse_paths([tmp_path], cache=False)
    assert len(result.runs) == 3 and "duplicate_run" not in _kinds(result)


# --- repeats recorded on other hardware or software -------------------------------------------

def _edit_env(record: dict, what: str) -> None:
    if what == "GPU model":
        record["gpu_model"] = "NVIDIA H100 80GB HBM3"
        for gpu in record["gpus"]:
            gpu["name"], gpu["memory_total_mib"] = "NVIDIA H100 80GB HBM3", 81559
    elif what == "torch":
        record["frameworks"]["torch"]["version"] = "2.4.0"
    elif what == "CUDA":
        record["cuda_version"] = "12.4"
    elif what == "power":
        for gpu in record["gpus"]:
            gpu["power_limit_w"] = 300.0


@pytest.mark.parametrize("what, named, said", [
    ("GPU model", "hardware",
     "4x NVIDIA H100 80GB HBM3, Intel(R) Xeon(R) Processor (64 CPUs), 504 GiB, x86_64"),
    ("torch", "frameworks", "torch 2.4.0"),
    ("CUDA", "CUDA", "12.4"),
    ("power", "GPU power limit", "300 W"),
    ("backend", "node 0 command", "--dist-backend gloo"),
    ("launch env", "env CUDA_DEVICE_MAX_CONNECTIONS", "1"),
])
def test_repeats_recorded_on_other_hardware_or_software_are_a_mixed_configuration(
        tmp_path, what, named, said):
    """Run 3 recorded on another GPU model, torch or CUDA version, power limit, launch
    command or launch variable: averaged as repeats of one case, 0 problems, --strict rc 0,
    though `compare` refuses the other GPU model."""
    from analysis.stats import summarize

    folder = _campaign(tmp_path)
    if what in ("backend", "launch env"):
        path = folder / f"{STEM}3.done"
        record = json.loads(path.read_text())
        if what == "backend":
            command = record["nodes"][0]["command"]
            command[command.index("nccl")] = "gloo"
        else:
            record["env"]["CUDA_DEVICE_MAX_CONNECTIONS"] = "1"
    else:
        path = folder / f"{STEM}3.node0.env.json"
        record = json.loads(path.read_text())
        _edit_env(record, what)
    path.write_text(json.dumps(record))
    result = parse_paths([tmp_path], cache=False)
    [row] = summarize(result).to_dict("records")
    assert row["flags"] == f"configuration differs in {named}" and row["problems"] == 3
    [mixed] = [p for p in result.problem_list() if p.kind == "mixed_configuration"]
    assert f"{said} (1n4g/{STEM}3)" in mixed.reason


def test_repeats_launched_on_other_ports_are_not_flagged(tmp_path):
    """The rendezvous port is picked per run: repeats differing only there are one case."""
    from analysis.stats import summarize

    folder = _campaign(tmp_path)
    for i, port in ((1, "29501"), (2, "41234"), (3, "35555")):
        path = folder / f"{STEM}{i}.done"
        record = json.loads(path.read_text())
        record["nodes"][0]["command"][1:1] = ["--master_port", port, f"--rdzv-id={port}"]
        record["env"]["MASTER_PORT"] = port
        path.write_text(json.dumps(record))
    result = parse_paths([tmp_path], cache=False)
    [row] = summarize(result).to_dict("records")
    assert row["flags"] == "" and row["problems"] == 0


# --- a stated global batch far above the layout ----------------------------------------------

def _no_global_batch(tmp_path: Path, instead: str = "") -> Path:
    """Run 1 with the global batch left out of its PARAMETER line (`instead` put there)."""
    folder = _logs_only(tmp_path, (1,))
    log = folder / f"{STEM}1.log"
    text = log.read_text()
    assert "global_batch_size : 512  " in text
    log.write_text(text.replace("global_batch_size : 512  ", instead))
    return folder


@pytest.mark.parametrize("stated", [5120, 512000])
def test_a_stated_global_batch_many_times_the_layout_fails_strict(tmp_path, stated):
    """--meta global_batch_size=512000 on a 4 x 128 run gave 1,000 times its figure with a
    note only, and --strict passed."""
    from analysis.problems import strict_failures

    _no_global_batch(tmp_path)
    result = parse_paths([tmp_path], meta={"global_batch_size": stated}, cache=False)
    [failed] = strict_failures(result.problem_list())
    assert failed.kind == "metadata_conflict"
    assert f"accumulated {stated // 512:,} batches, which nothing else states" in failed.reason


def test_a_stated_global_batch_the_log_states_accumulating_is_a_note():
    """A log whose argument dump states 16 accumulated batches (and no global batch) makes a
    statement of 16 x the layout a note, where 16 unstated is a conflict."""
    from analysis.user_meta import accumulation_counts, stated_global_batch

    row = {"global_batch_size": 8192, "num_devices": 4, "batch_size_per_device": 128}
    origin = {"global_batch_size": "--meta"}
    counts = accumulation_counts({"gradient_accumulation_steps": "16", "lr": "0.1"})
    assert counts == {16}
    kind, why = stated_global_batch(row, origin, False, counts)
    assert kind == "accumulation_implied"
    assert "accumulated 16 batches, as the log's argument dump states" in why
    assert stated_global_batch(row, origin, False, set())[0] == "metadata_conflict"


# --- an export without the runs' hardware records -------------------------------------------

def test_an_export_keeps_the_hardware_compare_checks(tmp_path, capsys):
    """`compare` of an H200 campaign against the export of an H100 one ran "without the
    hardware check", where the two folders are refused: the export dropped the records."""
    from analysis.changes import sources
    from analysis.cli import main

    base = _campaign(tmp_path / "h200")
    other = _campaign(tmp_path / "h100")
    for i in (1, 2, 3):
        path = other / f"{STEM}{i}.node0.env.json"
        record = json.loads(path.read_text())
        _edit_env(record, "GPU model")
        path.write_text(json.dumps(record))
    export = tmp_path / "h100.parquet"
    assert main(["parse", str(other.parent), "-o", str(export)]) == 0
    assert sources.from_export(export).key == sources.from_folder(other.parent).key
    capsys.readouterr()
    assert main(["compare", str(base.parent), str(export)]) == 2
    err = capsys.readouterr().err
    assert "hardware differs" in err and "4x NVIDIA H100 80GB HBM3" in err


# --- iteration counters restarting in short epochs ---------------------------------------------

def test_short_epochs_are_not_called_truncated_by_the_dlperf_rule(tmp_path):
    """150 lines in epochs of 7 (the counter restarting each epoch): "truncated: only 20
    training lines after Iteration 5 (of 150)", though nothing was cut off."""
    import re

    from analysis.stats import run_throughput

    folder = _logs_only(tmp_path, (1,))
    log = folder / f"{STEM}1.log"

    def local(match: re.Match) -> str:
        i = int(match.group(1)) - 1
        return f"Epoch: {i // 7} Iteration: {i % 7 + 1} "

    log.write_text(re.sub(r"Epoch: 0 Iteration: (\d+) ", local, log.read_text()))
    result = parse_paths([tmp_path], cache=False)
    [row] = run_throughput(result, "dlperf").to_dict("records")
    assert row["problem_kind"] == "method_fallback"
    assert "the iteration counter restarts 21 times (epochs of up to 7 lines)" in row["problem"]
    assert "--method window" in row["problem"]
    from analysis.i18n import Translator

    [inner] = re.findall(r"only \d+ .*?numbers the iterations on\)", row["problem"])
    assert "迭代计数器重新开始了 21 次" in Translator("zh").reason(inner)
