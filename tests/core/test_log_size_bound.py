"""What one log may make a parse hold is bounded by default: a parse holds about 11 times
the bytes it reads at its peak (a 250 MB DLLogger log, summarize --method window: 2.75 GB
resident), so a 2.5 GB log needed tens of GB; the default cap reads 256 MiB of it and says
so (`too_large`)."""

from __future__ import annotations

from analysis.logtext import DEFAULT_MAX_LOG_BYTES, LogText


def test_a_log_over_the_default_cap_is_read_up_to_it_and_flagged(tmp_path, monkeypatch):
    monkeypatch.delenv("DLPERF_MAX_LOG_BYTES", raising=False)
    line = b"DLL 2026-11-21 20:38:05.405872 - Epoch: 0 Iteration: 1  train.loss : 7.0\n"
    big = tmp_path / "run_1.log"
    with open(big, "wb") as fh:
        block = line * ((8 << 20) // len(line))
        for _ in range(33):  # 264 MiB
            fh.write(block)
    assert big.stat().st_size > DEFAULT_MAX_LOG_BYTES == 256 << 20
    text = LogText.read(big)
    assert len(text.data) <= DEFAULT_MAX_LOG_BYTES and text.data.endswith(b"\n")
    assert [p.kind for p in text.problems] == ["too_large"]
    assert f"the limit is {DEFAULT_MAX_LOG_BYTES:,} bytes" in text.problems[0].reason
