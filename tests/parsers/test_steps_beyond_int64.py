"""A step, iteration or epoch number beyond int64 (a garbled line; no run prints one) in the
line-based families other than DLLogger: a ``bad_line`` problem naming the file and line, as
the DLL parsers report it, and the run still read (tests/parsers/test_dll_pytorch.py has the
DLL cases)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.collect import parse_paths
from analysis.stats import run_throughput

DATA = Path(__file__).resolve().parents[1] / "data"
HUGE = b"99999999999999999999999"

# (family, fixture, text to replace, its replacement)
CASES = [
    ("megatron", "megatron/iterations/1n4g/gpt_b1_amp_1.log",
     b" iteration       20/", b" iteration " + HUGE + b"/"),
    ("megatron", "megatron/iterations/1n4g/gpt_b1_amp_1.log",
     b"(after 10 iterations) memory", b"(after " + HUGE + b" iterations) memory"),
    ("libai", "libai/gpt2_stdout/1n8g/gpt2_b4_amp_1.log",
     b"iteration: 39/220", b"iteration: " + HUGE + b"/220"),
    ("libai", "libai/gpt2_stdout/1n8g/gpt2_b4_amp_1.log",  # stored +1: beyond int64 then
     b"iteration: 39/220", b"iteration: 9223372036854775807/220"),
    ("oneflow_bert", "oneflow_bert/with_timestamps/1n1g/bert_base_b24_fp32_1.log",
     b"step: 39,", b"step: " + HUGE + b","),
    ("oneflow_cnn", "oneflow_cnn/with_timestamps/1n8g/resnet50_b128_fp32_1.log",
     b"train: epoch 0, iter 40,", b"train: epoch 0, iter " + HUGE + b","),
    ("oneflow_cnn", "oneflow_cnn/with_timestamps/1n8g/resnet50_b128_fp32_1.log",
     b"train: epoch 0, iter 40,", b"train: epoch " + HUGE + b", iter 40,"),
    ("oneflow_gpt", "oneflow_gpt/table/pretrain_gpt_1n1d_dp1_mp1_pp1_mbz2_gbz2_s2048_l16_h1536"
     "_nh16.log", b"| 20       |", b"| " + HUGE + b" |"),
    ("oneflow_gpt", "oneflow_gpt/key_value/pretrain_gpt_4n8d_dp8_mp1_pp4_mbz2_gbz512_s2048_l16"
     "_h1536_nh16.log", b"step=30,", b"step=" + HUGE + b","),
]
#: OneFlow models reads at most 9 digits per number (so its step, epoch x iterations per
#: epoch + iteration, fits too): a longer one is a line of the wrong shape, a `bad_line`.
MODELS = [
    ("oneflow_models/graph_dated/1n2g/resnet50_b192_amp_1.log",
     b"[rank:0] [train], epoch: 0/2, iter: 100/300",
     b"[rank:0] [train], epoch: 0/2, iter: " + HUGE + b"/300"),
    ("oneflow_models/graph_dated/1n2g/resnet50_b192_amp_1.log",
     b"[rank:0] [train], epoch: 0/2, iter: 100/300",
     b"[rank:0] [train], epoch: 99999999999999999/2, iter: 100/300"),
]


def _garbled_copy(tmp_path: Path, fixture: str, old: bytes, new: bytes) -> tuple[Path, int]:
    """`fixture` copied under tmp_path (same layout folders) with the first `old` replaced
    by `new`; returns the copy and the 1-based line of the replacement."""
    src = DATA / fixture
    data = src.read_bytes()
    assert old in data, (fixture, old)
    dst = tmp_path / Path(fixture).relative_to(Path(fixture).parts[0])
    dst.parent.mkdir(parents=True)
    dst.write_bytes(data.replace(old, new, 1))
    return dst, data[:data.index(old)].count(b"\n") + 1


@pytest.mark.parametrize("dlperf_only", [False, True])
@pytest.mark.parametrize("family, fixture, old, new", CASES)
def test_a_number_beyond_int64_is_a_bad_line_naming_file_and_line(tmp_path, family, fixture,
                                                                   old, new, dlperf_only):
    path, line = _garbled_copy(tmp_path, fixture, old, new)
    r = parse_paths([tmp_path], cache=False, dlperf_only=dlperf_only)
    assert "parser_error" not in set(r.problems["kind"]), r.problems
    bad = r.problems[r.problems["kind"] == "bad_line"]
    assert len(bad) == 1, r.problems
    [row] = bad.itertuples()
    assert (Path(row.source), row.line) == (path, line)
    assert "beyond int64" in row.reason
    assert set(r.runs["family"]) == {family}  # the run is still read
    obs = r.observations
    assert line not in set(obs.loc[obs["source"] == str(path), "line"])  # it gives no value
    assert len(run_throughput(r)) == 1


@pytest.mark.parametrize("fixture, old, new", MODELS)
def test_oneflow_models_numbers_too_long_are_bad_lines(tmp_path, fixture, old, new):
    path, line = _garbled_copy(tmp_path, fixture, old, new)
    r = parse_paths([tmp_path], cache=False)
    assert "parser_error" not in set(r.problems["kind"]), r.problems
    [row] = r.problems[r.problems["kind"] == "bad_line"].itertuples()
    assert (Path(row.source), row.line) == (path, line)
    assert len(run_throughput(r)) == 1
