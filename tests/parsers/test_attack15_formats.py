"""Formats attacked on their edges: nvidia-smi samples teed into a log from another time, the
TF2 Keras log without its TF C++ lines, rank 0 untagged beside tagged ranks, LiBai stamps of
impossible dates, and a scaling.json far larger than its one key."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput

ROOT = Path(__file__).resolve().parents[2]
RN50 = ROOT / "data" / "raw_logs" / "rn50_4gpu" / "1n4g" / "resnet50_b128_fp32_1.log"
SMI_HEADER = "timestamp, index, name, memory.used [MiB], memory.total [MiB]\n"


def _smi_block(stamp: str) -> str:
    return SMI_HEADER + "".join(f"{stamp}, {g}, NVIDIA H200, 70000 MiB, 143771 MiB\n"
                                for g in range(4))


@pytest.mark.parametrize("stamp, at_end", [("2025/11/21 20:41:20.000", False),  # a year before
                                           ("2026/11/21 19:41:20.000", False),  # an hour before
                                           ("2026/11/21 20:51:40.000", True)],  # 10 min after
                         ids=["year_before", "hour_before", "ten_min_after"])
def test_a_teed_smi_block_from_another_time_is_not_the_runs_memory(tmp_path, stamp, at_end):
    """The run (20:41:28 to 20:41:38) is the log's own; 70 GB sampled outside it is not its
    peak, as with the same rows in a sidecar: left out, said in foreign_gpu_sample."""
    text, block = RN50.read_text(), _smi_block(stamp)
    out = tmp_path / "1n4g" / RN50.name
    out.parent.mkdir()
    out.write_text(text + block if at_end else block + text)
    result = parse_paths([tmp_path])
    row = run_throughput(result, "window").iloc[0]
    assert row["throughput"] == pytest.approx(11677.45, abs=0.005)
    assert not row["memory_sampled_mib"] == row["memory_sampled_mib"]  # NaN: no sample is its
    said = result.problems[result.problems["kind"] == "foreign_gpu_sample"]
    assert len(said) == 1 and "taken outside the run's time" in said["reason"].iloc[0]


def test_a_teed_smi_block_while_the_run_ran_is_its_memory(tmp_path):
    text = RN50.read_text().replace("NCCL version", _smi_block("2026/11/21 20:41:30.000")
                                    + "NCCL version", 1)
    out = tmp_path / "1n4g" / RN50.name
    out.parent.mkdir()
    out.write_text(text)
    result = parse_paths([tmp_path])
    assert run_throughput(result, "window").iloc[0]["memory_sampled_mib"] == 70000
    assert "foreign_gpu_sample" not in set(result.problems["kind"])


TF2 = ROOT / "tests" / "data" / "real" / "dlperf_tf2" / "1n1g" / "rn50_b128_fp32_2.log"


def test_tf2_without_its_tf_cpp_lines_keeps_its_window(tmp_path):
    """TF_CPP_MIN_LOG_LEVEL hides the dated TF C++ lines; the absl prefixes still time the
    TimeHistory lines (in a nominal year), so the window keeps the whole log's figure."""
    text = re.sub(r"(?m)^\d{4}-.*\n", "", TF2.read_text())
    assert not re.search(r"(?m)^\d{4}-", text)
    out = tmp_path / "1n1g" / TF2.name
    out.parent.mkdir()
    out.write_text(text)
    result = parse_paths([tmp_path])
    for method, figure in {"window": 325.10, "dlperf": 321.80, "reported": 321.30}.items():
        row = run_throughput(result, method).iloc[0]
        assert (row["throughput"], row["problem_kind"]) == (pytest.approx(figure, abs=0.005),
                                                             ""), method


def test_rank0_untagged_beside_tagged_rank1_is_one_process(tmp_path):
    """A launcher that tags the ranks it tees (`[rank1]:`) leaves its own rank's lines
    untagged: those are rank 0's, read alone, not one process with rank 1's."""
    out = []
    for line in RN50.read_text().split("\n"):
        out.append(line)
        m = re.match(r"(DLL \S+ \S+ - Epoch: \d+ Iteration: \d+ .*train\.total_ips : )(\S+)", line)
        if m:  # rank 1 prints its own rate, a quarter of the global one
            out.append(f"[rank1]:{m[1]}{float(m[2]) / 4:.2f} img/s")
    (tmp_path / "1n4g").mkdir()
    (tmp_path / "1n4g" / RN50.name).write_text("\n".join(out))
    result = parse_paths([tmp_path])
    for method, figure in {"window": 11677.45, "dlperf": 11684.55}.items():
        row = run_throughput(result, method).iloc[0]
        assert (row["throughput"], row["problem_kind"]) == (pytest.approx(figure, abs=0.005),
                                                             ""), method


def test_a_teed_smi_block_in_a_log_without_a_year_is_said_unchecked(tmp_path):
    """LiBai prints no year: the block's time cannot be held against the run's, so the
    samples are kept and a note says their time was not checked."""
    src = ROOT / "tests" / "data" / "libai" / "gpt2_stdout" / "1n8g" / "gpt2_b4_amp_1.log"
    out = tmp_path / "1n8g" / src.name
    out.parent.mkdir()
    out.write_text(_smi_block("2025/11/21 20:41:20.000") + src.read_text())
    result = parse_paths([tmp_path])
    assert run_throughput(result, "window").iloc[0]["memory_sampled_mib"] == 70000
    (said,) = result.problems[result.problems["kind"] == "foreign_gpu_sample"].itertuples()
    assert "not checked" in said.reason and said.line == 2


LIBAI = ROOT / "tests" / "data" / "libai" / "gpt2_stdout" / "1n8g" / "gpt2_b4_amp_1.log"


@pytest.mark.parametrize("day", ["13/01", "00/10", "02/30", "04/31"])
def test_libai_stamps_of_no_date_are_said_not_read(tmp_path, day):
    text = LIBAI.read_text()
    line = next(i for i, ln in enumerate(text.split("\n"), 1) if "iteration: " in ln)
    text = re.sub(r"\[\d\d/\d\d (\d\d:\d\d:\d\d lb\.utils\.events\])", rf"[{day} \1", text)
    out = tmp_path / "1n8g" / LIBAI.name
    out.parent.mkdir()
    out.write_text(text)
    result = parse_paths([tmp_path])
    bad = result.problems[result.problems["kind"] == "bad_line"]
    assert len(bad) and bad["line"].min() == line and "no date" in bad["reason"].iloc[0]
    assert not result.observations.query("phase == 'train'")["timestamp"].notna().any()


def test_libai_feb_29_is_a_date(tmp_path):
    text = re.sub(r"\[\d\d/\d\d (\d\d:\d\d:\d\d lb\.utils\.events\])", r"[02/29 \1",
                  LIBAI.read_text())
    out = tmp_path / "1n8g" / LIBAI.name
    out.parent.mkdir()
    out.write_text(text)
    result = parse_paths([tmp_path])
    assert "bad_line" not in set(result.problems["kind"])
    assert result.observations.query("phase == 'train'")["timestamp"].notna().all()


def test_a_scaling_json_larger_than_a_record_is_not_read(tmp_path):
    """scaling.json states one key: one of many megabytes is not read whole (memory grows
    with it), and the rule text names the file and its size."""
    from analysis.fsutil import MAX_RECORD_BYTES
    from analysis.stats import summarize
    mxnet = ROOT / "tests" / "data" / "real" / "mlperf_v1_0_nvidia_mxnet_resnet"
    folder = tmp_path / "resnet"
    folder.mkdir()
    for log in sorted(mxnet.glob("result_*.txt.gz")):
        shutil.copy(log, folder / log.name)
    pad = "x" * (MAX_RECORD_BYTES + 1)
    (folder / "scaling.json").write_text(f'{{"scaling_factor": 1.1, "pad": "{pad}"}}')
    row = summarize(parse_paths([tmp_path]), "reported").iloc[0]
    rule = row["time_to_train_rule"]
    assert row["time_to_train_min"] != row["time_to_train_min"]  # NaN: no score
    assert f"{folder / 'scaling.json'}: unreadable (scaling.json holds" in rule
    assert rule.endswith("no score")
