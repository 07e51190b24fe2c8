"""The lean readers match a log's lines a chunk at a time (issue 10): whatever the chunk
size, they read the same lines as one pass over the whole file would."""

from __future__ import annotations

import re

import numpy as np
import pytest

from analysis.logtext import LogText
from analysis.parsers import _dllogger, get, oneflow_cnn
from analysis.parsers._scan import line_matches
from analysis.parsers.base import line_batches
from tests.core.test_lean_read import LOGS

LINE = re.compile(rb"\nstep (\d+) value ([0-9.]+)(?:[ \t]+(x))?$", re.M)


def _whole_file(data: bytes) -> list:
    return [(start, start + len(m.group()) - 1, m.groups(b"")) for start, m in line_matches(LINE, data)]


@pytest.mark.parametrize("text", [
    b"step 1 value 1.5\nnoise\nstep 2 value 2.25 x\nstep 3 value 3.0\n",
    b"noise\nstep 10 value 10.125\n\nstep 11 value 11.5\nstep 12 value 12",  # no final newline
    b"",
    b"step 7 value 7.0",
])
def test_batches_hold_every_line_once_whatever_the_chunk(text):
    want = _whole_file(text)
    for chunk in range(1, len(text) + 3):
        batches = list(line_batches(LINE, text, chunk))
        assert batches, chunk
        assert [row for batch in batches for row in batch] == want, chunk


def test_a_chunk_never_cuts_a_line():
    # cut at a byte inside "12.5" a line would read as 12.0 (or 1) under a plain byte limit
    text = b"step 1 value 12.5\nstep 2 value 99.75\n"
    for chunk in range(1, len(text)):
        rows = [row for batch in line_batches(LINE, text, chunk) for row in batch]
        assert [r[2][1] for r in rows] == [b"12.5", b"99.75"]


def _observations(parsed):
    """The blocks of `parsed` as text (nan compares equal to nan)."""
    return repr([{k: (v if isinstance(v, str) else np.asarray(v).tolist()) for k, v in b.items()}
            for b in parsed.obs.blocks]) if parsed is not None else None


@pytest.mark.parametrize("name", sorted(LOGS))
def test_lean_reads_do_not_depend_on_the_chunk_size(name, monkeypatch):
    log = LogText.from_bytes(LOGS[name].encode(), name)
    parser = get("dll_pytorch" if name.startswith("pytorch") else "oneflow_cnn")
    seen = []
    for line_guess, chunk in ((0, 1), (1, 97), (40, 4096), (1 << 20, 1 << 30)):
        monkeypatch.setattr(_dllogger, "_LINE_GUESS", line_guess)  # first chunk: 126 × this
        monkeypatch.setattr(oneflow_cnn, "_RULE_CHUNK", chunk)
        parsed = parser.parse_for_rule(log)
        seen.append((_observations(parsed), None if parsed is None else parsed.problems))
    assert (seen[0][0] is None) == name.endswith(("fp32_3.log", "fp32_5.log"))
    assert all(s == seen[0] for s in seen[1:])
