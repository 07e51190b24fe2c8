"""Detection past a log's first 64 KiB, and DLL lines glued after progress bars or tags.

Synthetic logs of TensorFlow BERT's DLL shape (docs/formats.md §7): a multi-GPU run prints
~150 KB of start-up before its first DLL line; tqdm bars on stderr end without a line end,
so the next stdout line (tagged by mpirun or not) is glued after the bar on one line.
"""

from __future__ import annotations

import numpy as np
import pytest

from analysis import metrics as M
from analysis import parsers
from analysis.collect import parse_paths
from analysis.logtext import LogText

BAR = "Iteration:   7%|7         | 78/1147 [00:14<03:20,  5.33it/s]"
ASCTIME = "Thu Jun  9 09:15:32 2022"


def _dll(n: int = 130, tag: str = "") -> list[str]:
    lines = [f"{tag}DLL 2022-06-09 09:00:00 - PARAMETER train_batch_size : 32  use_fp16 : True "]
    for i in range(1, n + 1):
        s = 5 + i * 0.25
        lines.append(f"{tag}DLL 2022-06-09 09:{int(s) // 60:02d}:{int(s) % 60:02d}."
                     f"{round((s % 1) * 1e6):06d} - Iteration: {i}  throughput_train : 128.000 "
                     "seq/s mlm_loss : 7.1  nsp_loss : 0.69  total_loss : 7.8 ")
    return lines


def _startup(nbytes: int, tag: str = "[1,0]<stderr>:") -> list[str]:
    out, size = [], 0
    while size < nbytes:
        i = len(out)
        out.append(f"{tag}INFO:tensorflow:Initialize variable bert/encoder/layer_{i % 24}/"
                   f"attention/self/query/kernel:0 from checkpoint {i}")
        size += len(out[-1]) + 1
    return out


def _write(path, lines: list[str], end: str = "\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(end.join(lines).encode() + b"\n")


def _steps(result) -> list[int]:
    obs = result.observations
    rows = obs[(obs["metric"] == M.THROUGHPUT) & (obs["phase"] == M.TRAIN)]
    return rows["step"].astype(int).tolist()


def test_dll_lines_after_150_kb_of_start_up_are_detected(tmp_path):
    log = tmp_path / "1n8g" / "bert_base_b32_fp16_1.log"
    _write(log, _startup(150_000) + _dll(tag="[1,0]<stdout>:"))
    assert LogText.read(log).data.find(b"DLL ") > parsers.SNIFF_SIZES[-1]
    r = parse_paths([tmp_path])
    assert r.problems.empty, r.problems
    assert r.runs["family"].tolist() == ["dll_tensorflow"]
    assert _steps(r) == list(range(1, 131))


def test_detection_is_bounded_by_sniff_limit():
    noise = b"".join(f"line {i} of nothing\n".encode() for i in range(600_000))
    assert len(noise) > parsers.SNIFF_LIMIT
    dll = b"\n".join(s.encode() for s in _dll(30)) + b"\n"
    # beyond the stated bound and before the log's last window: not looked at
    assert parsers.detect(noise + dll + noise[:2 * parsers.SNIFF_WINDOW]) is None
    early = noise[:parsers.SNIFF_LIMIT // 2] + dll
    assert parsers.detect(early).name == "dll_tensorflow"
    # the last window is: training lines run to a log's end, after start-up of any length
    assert parsers.detect(noise + dll).name == "dll_tensorflow"


def test_windows_start_at_lines_and_cover_the_bound():
    data = b"".join(f"{i:07d}\n".encode() for i in range(2_000_000))  # 16 MB
    parts = list(parsers._sniff_parts(data))
    far = parts[len(parsers.SNIFF_SIZES):]
    assert all(p[7:8] == b"\n" and p[:7].isdigit() and p.endswith(b"\n") for p in far)
    assert sum(map(len, far[:-1])) + parts[-len(far) - 1].rfind(b"\n") + 1 >= parsers.SNIFF_LIMIT
    assert sum(map(len, far)) < parsers.SNIFF_LIMIT + 2 * parsers.SNIFF_WINDOW  # and the last
    assert data.endswith(far[-1]) and len(far[-1]) <= parsers.SNIFF_WINDOW


@pytest.mark.parametrize("glue", [
    pytest.param(lambda line: f"[1,1]<stderr>:{BAR}{ASCTIME}{line}", id="mpirun-asctime"),
    pytest.param(lambda line: f"[1,1]<stderr>:{BAR}{line}", id="mpirun"),
    pytest.param(lambda line: f"[1,1]<stderr>:{BAR}\r{ASCTIME}{line}", id="cr-asctime"),
])
def test_tagged_dll_lines_glued_after_a_bar_are_read(tmp_path, glue):
    lines = _dll(tag="[1,0]<stdout>:")
    glued = [glue(ln) if i % 3 == 1 else ln for i, ln in enumerate(lines)]
    log = tmp_path / "1n8g" / "bert_base_b32_fp16_1.log"
    _write(log, glued)
    text = LogText.read(log)
    assert text.data.count(b"\nDLL ") + text.data.startswith(b"DLL ") == len(lines)
    r = parse_paths([log])
    assert r.problems.empty, r.problems
    assert _steps(r) == list(range(1, 131))
    obs = r.observations
    assert set(obs["rank"].dropna().astype(int)) == {0}
    # lines keep the file's numbering (a lone CR ends a line, as before)
    extra = sum(ln.count("\r") for ln in glued)
    assert int(obs["line"].max()) == len(lines) + extra


def test_untagged_dll_lines_glued_after_a_bar_are_read_and_detected(tmp_path):
    lines = _dll()
    # the first DLL lines of the head all come after a bar: detection needs them too
    glued = [f"{BAR}{ln}" if i < 40 or i % 3 == 1 else ln for i, ln in enumerate(lines)]
    log = tmp_path / "1n1g" / "bert_base_b32_fp16_1.log"
    _write(log, glued)
    r = parse_paths([log])
    assert r.problems.empty, r.problems
    assert r.runs["family"].tolist() == ["dll_tensorflow"]
    assert _steps(r) == list(range(1, 131))


def test_a_bar_at_a_line_end_is_kept():
    raw = f"{BAR}\nDLL text\nmore [00:14<03:20, 5.3it/s]\n".encode()
    assert LogText.from_bytes(raw, "x").data == raw


def test_glued_and_clean_logs_give_the_same_figure(tmp_path):
    lines = _dll(tag="[1,0]<stdout>:")
    _write(tmp_path / "1n1g" / "bert_base_b32_fp16_1.log", lines)
    lines = _dll(131, tag="[1,0]<stdout>:")  # one line more: not the same content
    glued = [f"[1,0]<stderr>:{BAR}{ASCTIME}{ln}" if i % 2 else ln for i, ln in enumerate(lines)]
    _write(tmp_path / "1n1g" / "bert_base_b32_fp16_2.log", glued)
    from analysis.stats import run_throughput

    runs = run_throughput(parse_paths([tmp_path]), "dlperf")
    vals = runs.sort_values("run_id")["throughput"].to_numpy(dtype=np.float64)
    assert len(vals) == 2 and np.isfinite(vals).all() and vals[0] == vals[1]
