"""Inputs of a second attack on the checks of a run's figure (the attack's findings file)
that got a wrong number, a false flag or silence out of them. DLLogger logs of batch 128 on
1 GPU at 50 ms an iteration (2,560 img/s) unless said."""

from __future__ import annotations

import sys
from pathlib import Path

from analysis.collect import parse_paths
from analysis.stats.summary import summarize

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dll_synth as S  # noqa: E402


def test_one_value_in_other_spellings_is_one_configuration(tmp_path):
    """lr 0.1, 0.10 and 1e-1, amp True and true: flagged mixed_configuration, --strict
    failed and the case had no speedup."""
    for r, (lr, amp) in enumerate((("0.1", "True"), ("0.10", "true"), ("1e-1", "True")), 1):
        text = S.lines(300, lr=lr)
        text[0] = text[0].replace("amp : True", f"amp : {amp}")
        S.write(tmp_path, text, f"1n1g/r50_b128_amp_{r}.log")
    result = parse_paths([tmp_path])
    summarize(result)
    assert "mixed_configuration" not in set(result.problems["kind"])


def test_another_value_is_still_another_configuration(tmp_path):
    for r, lr in enumerate(("0.1", "0.10", "0.2"), 1):
        S.write(tmp_path, S.lines(300, lr=lr), f"1n1g/r50_b128_amp_{r}.log")
    result = parse_paths([tmp_path])
    summarize(result)
    flags = result.problems[result.problems["kind"] == "mixed_configuration"]
    assert len(flags) == 1 and "configuration differs in lr:" in flags["reason"].iloc[0]
    assert "0.10" in flags["reason"].iloc[0]  # the values as the logs print them
