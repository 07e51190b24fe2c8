"""Inputs of a fourteenth attack on detection: run 1 of the bundled ResNet-50 case
(data/raw_logs/rn50_4gpu, 1 node of 4 GPUs x 128, DLLogger PyTorch stdout) with an
nvidia-smi query block teed into its head, its steps printed in dllogger's default form
(``str(step)``: a tuple or a bare number), or its lines behind torchrun's ``[rank0]:`` tags.
Each is the same run: 11,684.55 samples/s by the DLPerf PyTorch rule, 11,677.45 by the
window. Built in tmp_path."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from analysis import parsers
from analysis.collect import parse_paths
from analysis.logtext import LogText
from analysis.stats.per_run import run_throughputs

CASE = Path(__file__).resolve().parents[2] / "data" / "raw_logs" / "rn50_4gpu" / "1n4g"
RUN1 = CASE / "resnet50_b128_fp32_1.log"
STEP = re.compile(r"^(DLL \S+ \S+ - )Epoch: 0 Iteration: (\d+)  ", re.M)
DLPERF, WINDOW = 11_684.55, 11_677.45
SMI = ("timestamp, index, name, memory.used [MiB], memory.total [MiB]\n"
       + "".join(f"2026/11/21 20:41:2{i}.000, {i}, NVIDIA H200, {100 + i} MiB, 143771 MiB\n"
                 for i in range(4)))


def _run(tmp_path: Path, text: str):
    folder = tmp_path / "1n4g"
    folder.mkdir(parents=True)
    (folder / RUN1.name).write_text(text)
    result = parse_paths([tmp_path], cache=False)
    rows = {m: df.iloc[0] for m, df in run_throughputs(result, ("window", "dlperf")).items()}
    return result, rows


def _steps(form) -> str:
    return STEP.sub(lambda m: f"{m.group(1)}{form(int(m.group(2)))}  ", RUN1.read_text())


def _assert_the_run(result, rows) -> None:
    run = result.runs.iloc[0]
    assert (run["family"], run["framework"]) == ("dll_pytorch", "PyTorch")
    assert result.problems.empty, result.problems[["kind", "reason"]].to_string()
    assert rows["dlperf"]["throughput"] == DLPERF
    assert rows["window"]["throughput"] == pytest.approx(WINDOW, abs=0.005)


@pytest.mark.parametrize("where", ["first", "after_parameter"])
def test_an_nvidia_smi_block_in_a_dll_log_is_its_memory_samples(tmp_path, where):
    """The block's header made the whole log a memory-sample file: runs 0, a bad_line on
    every DLL line. Its rows are the samples a wrapper's query took: read as such."""
    text = RUN1.read_text()
    if where == "first":
        text = SMI + text
    else:
        at = text.index("\n", text.index(" - PARAMETER ")) + 1
        text = text[:at] + SMI + text[at:]
    result, rows = _run(tmp_path, text)
    _assert_the_run(result, rows)
    mem = result.observations.query("metric == 'memory_used'")
    assert sorted(zip(mem["device"], mem["value"])) == [(i, 100.0 + i) for i in range(4)]


def test_a_sampling_file_is_still_one():
    sidecar = CASE / "resnet50_b128_fp32_1.gpu.csv"
    assert parsers.detect(LogText.read(sidecar).data).name == "gpu_memory"


@pytest.mark.parametrize("form", [
    lambda i: f"(0, {i})",  # step=(epoch, iteration), dllogger's tuple
    lambda i: str(i),  # step=iteration
])
def test_steps_in_dllogger_s_own_form_under_a_pytorch_dump(tmp_path, form):
    """Tuple steps were read as TensorFlow (its rule, 11,558.26) though the dump says
    PyTorch; bare numbers were a bad_line each."""
    _assert_the_run(*_run(tmp_path, _steps(form)))


def test_tuple_steps_restarting_each_epoch_read_as_the_epoch_iteration_form(tmp_path):
    tuples = _run(tmp_path / "a", _steps(lambda i: f"({(i - 1) // 75}, {(i - 1) % 75 + 1})"))
    named = _run(tmp_path / "b", _steps(
        lambda i: f"Epoch: {(i - 1) // 75} Iteration: {(i - 1) % 75 + 1}"))
    assert tuples[0].runs.iloc[0]["framework"] == "PyTorch"
    for method in ("dlperf", "window"):
        assert tuples[1][method]["throughput"] == named[1][method]["throughput"]


def test_a_dump_stating_tensorflow_is_read_as_tensorflow():
    text = _steps(lambda i: f"Epoch: 0 Iteration: {i}").replace(
        "framework : PyTorch", "framework : TensorFlow")
    assert parsers.detect(text.encode()).name == "dll_tensorflow"


@pytest.mark.parametrize("form", [lambda i: f"({i},)", lambda i: f"(0, {i}, {i * 128})"])
def test_one_and_three_tuples_stay_flagged(tmp_path, form):
    """dllogger prints any tuple; DLE programs print (epoch,) on epoch lines and (epoch,
    iteration, validation iteration) on evaluation lines: a log that prints its training
    lines so reads as having none, and says so."""
    result, _ = _run(tmp_path, _steps(form))
    assert result.problems["kind"].tolist() == ["no_training_lines"]


@pytest.mark.parametrize("tag", ["[rank0]:", "[rank0]: "])
def test_dll_lines_behind_torchrun_rank_tags(tmp_path, tag):
    text = "\n".join(tag + line for line in RUN1.read_text().split("\n"))
    _assert_the_run(*_run(tmp_path, text))


def test_a_second_rank_s_tagged_lines_are_its_own(tmp_path):
    """Rank 1 prints the same lines with its own share of the rate: rank 0's are the run's."""
    out = []
    for line in RUN1.read_text().split("\n"):
        out.append("[rank0]:" + line)
        if STEP.match(line):
            out.append("[rank1]:" + re.sub(r"(train\.total_ips : )([\d.]+)",
                                           lambda m: f"{m.group(1)}{float(m.group(2)) / 4:.2f}", line))
    text = "\n".join(out)
    log = LogText.from_bytes(text.encode(), "x.log")
    assert set(log.line_ranks.values()) == {0, 1}
    assert not np.char.startswith(np.array(log.data.split(b"\n")), b"[rank").any()
    _assert_the_run(*_run(tmp_path, text))
