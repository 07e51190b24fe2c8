"""Every registered parser survives arbitrary input (property-based), and what it returns is
consistent: observations sit on non-blank lines of the file, phases are known, problems point
into the file, and a second parse gives the same result."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis import metrics, parsers
from analysis.logtext import LogText

FAMILIES = parsers.names()
# Bytes biased towards log-like text so the parsers' regexes actually engage.
TOKENS = st.sampled_from([
    b"DLL ", b"DLLL {", b"train: epoch 0, iter ", b"validation: ", b"step: ", b"| step ",
    b" iteration ", b"samples/s: ", b"throughput: ", b"latency", b" : ", b"nan", b"None",
    b"1.5e+03", b"12", b"\n", b"\r\n", b"\t", b"\x1b[4m", b"[1,0]<stdout>:", b"\xff\xfe",
    b"utilization.gpu [%], memory.used [MiB]\n", b"100 %, 11838 MiB", b"max device0 memory usage is: ",
    b"Iteration: ", b"Epoch: ", b"(0, 20)", b"2020-09-15 14:29:13.473765", b" = ", b"|", b",",
])
LOGLIKE = st.lists(st.one_of(TOKENS, st.binary(max_size=8)), max_size=60).map(b"".join)


def _rows(parsed) -> list[tuple]:
    """The observations as comparable rows (NaN-safe), in order."""
    rows = []
    for b in parsed.obs.blocks:
        cols = [np.broadcast_to(np.asarray(b[k], dtype=object), (b["n"],))
                for k in ("line", "metric", "phase", "unit", "step", "epoch", "rank", "device")]
        vals = [np.nan_to_num(np.asarray(b[k], dtype=float), nan=-0.5) for k in ("value", "timestamp")]
        rows += list(zip(*cols, *vals))
    return rows


def check_parse(log: LogText, name: str) -> None:
    parsed = parsers.get(name).parse(log)
    n_lines = log.data.count(b"\n") + 1
    for b in parsed.obs.blocks:
        lines = np.asarray(b["line"])
        assert ((lines >= 1) & (lines <= n_lines)).all(), (name, lines)
        blank = [int(ln) for ln in np.unique(lines) if not log.line_text(int(ln)).strip()]
        assert blank == [], f"{name}: observations on blank lines {blank}"
    assert parsed.obs.phases() <= set(metrics.PHASES), (name, parsed.obs.phases())
    for p in parsed.problems:
        assert p.line is None or 1 <= p.line <= n_lines, (name, p)
    again = parsers.get(name).parse(log)
    assert _rows(again) == _rows(parsed), f"{name}: a second parse differs"
    assert [(p.line, p.kind) for p in again.problems] == [(p.line, p.kind) for p in parsed.problems]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.one_of(st.binary(max_size=2000), LOGLIKE))
def test_no_parser_raises_on_arbitrary_bytes(data):
    log = LogText.from_bytes(data, "fuzz.log")
    for name in FAMILIES:
        check_parse(log, name)


def test_the_checks_catch_an_observation_on_a_blank_line(monkeypatch):
    """The property above can fail: a parser that reports a line off by one is caught."""
    log = LogText.from_bytes(
        b"train: epoch 0, iter 20, loss: 6.5, top_1: 0.0, top_k: 0.0, samples/s: 288.0\n\n", "x.log")
    check_parse(log, "oneflow_cnn")
    parsed = parsers.get("oneflow_cnn").parse(log)
    assert len(parsed.obs) > 0
    real_lines_at = LogText.lines_at
    monkeypatch.setattr(LogText, "lines_at", lambda self, off: real_lines_at(self, off) + 1)
    with pytest.raises(AssertionError, match="blank lines"):
        check_parse(log, "oneflow_cnn")
