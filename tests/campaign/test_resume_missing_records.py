"""A finished `dlperf run` folder that lost a record, resumed: done runs whose environment
records are gone are refused (the variables they kept cannot be compared), by the dry run
with the same text; a run whose done marker is gone while status.json lists it as done, or
whose log is gone, is read by the resume as `dlperf summarize` reads it, so the count stays
what it was and the loss stays flagged. A real local campaign whose `python:` is a stand-in
that prints a bundled real log (another per start) instead of training."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from analysis.campaign.resume import FolderMismatch
from analysis.campaign.runner import Campaign
from analysis.campaign.spec import from_dict
from analysis.discover import find_logs

pytestmark = pytest.mark.slow

LOGS = Path(__file__).resolve().parents[2] / "data" / "raw_logs" / "rn50_4gpu" / "1n1g"

STAND_IN = """#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "torch.distributed.run" ]; then
  n=$(( $(cat "{counter}" 2>/dev/null || echo 0) + 1 )); echo $n > "{counter}"
  cat "{logs}/resnet50_b128_fp32_$n.log"
  exit 0
fi
exec "{python}" "$@"
"""


@pytest.fixture
def spec(tmp_path, monkeypatch):
    """A spec factory whose `python:` is the stand-in; `.starts()` counts workload starts."""
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    counter, fake = tmp_path / "starts", tmp_path / "python"
    fake.write_text(STAND_IN.format(counter=counter, logs=LOGS, python=sys.executable))
    fake.chmod(0o755)

    def make(**kw):
        raw = {"name": "m1", "workload": "builtin", "model": "resnet50", "precisions": ["fp32"],
               "batch_sizes": [4], "devices": ["1n1g"], "repeats": 3, "iterations": 130,
               "backend": "local", "device": "cpu", "python": str(fake), "retries": 0}
        return from_dict({**raw, **kw})

    make.starts = lambda: int(counter.read_text()) if counter.exists() else 0
    return make


def _finished(spec, tmp_path) -> Path:
    """A finished campaign of 3 runs (run in the test: pytest's variables change per phase)."""
    out = tmp_path / "out"
    Campaign(spec(), out_dir=out).run(progress=False)
    assert spec.starts() == 3
    return out


def _read(out: Path) -> tuple[list[str], list[tuple[str, str]]]:
    """The runs `dlperf summarize` counts in `out`, and its problems (kind, file name)."""
    found, problems = find_logs([out])
    return sorted(f.run_id for f in found if not f.stray), \
        [(p.kind, Path(p.source).name) for p in problems]


def _states(out: Path) -> list[str]:
    return [r["state"] for r in json.loads((out / "status.json").read_text())["runs"]]


def test_done_runs_without_their_environment_records_are_refused_by_both(
        spec, tmp_path, monkeypatch):
    done = _finished(spec, tmp_path)
    for record in done.glob("1n1g/*.node0.env.json"):
        record.unlink()
    monkeypatch.setenv("MKL_NUM_THREADS", "2")  # kept by the records, not by the digests
    with pytest.raises(FolderMismatch) as real:
        Campaign(spec(repeats=4), out_dir=done).run(progress=False)
    with pytest.raises(FolderMismatch) as dry:
        Campaign(spec(repeats=4), out_dir=done).dry_run()
    text = str(real.value)
    assert str(dry.value) == text
    assert "node 0 environment record (<run>.node0.env.json): missing or unreadable" in text
    assert "(3 done run(s), e.g. 1n1g/resnet50_b4_fp32_1)" in text and "--fresh" in text
    assert spec.starts() == 3  # nothing ran
    st = Campaign(spec(repeats=4), out_dir=done).run(progress=False, fresh=True)
    assert list(st["state"]) == ["done"] * 4


def test_a_done_run_whose_marker_is_gone_keeps_its_count_across_a_resume(spec, tmp_path):
    done = _finished(spec, tmp_path)
    (done / "1n1g" / "resnet50_b4_fp32_2.done").unlink()
    before = _read(done)
    assert len(before[0]) == 3
    assert before[1] == [("missing_done_marker", "resnet50_b4_fp32_2.done")]
    st = Campaign(spec(), out_dir=done).run(progress=False)
    assert list(st["state"]) == ["done"] * 3 and _states(done) == ["done"] * 3
    assert _read(done) == before and spec.starts() == 3


def test_a_done_run_whose_log_is_gone_stays_flagged_across_a_resume(spec, tmp_path):
    done = _finished(spec, tmp_path)
    (done / "1n1g" / "resnet50_b4_fp32_2.log").unlink()
    before = _read(done)
    assert len(before[0]) == 2 and before[1] == [("missing_log", "resnet50_b4_fp32_2.done")]
    Campaign(spec(), out_dir=done).run(progress=False)
    assert _states(done) == ["done", "failed", "done"]
    assert _read(done) == before and spec.starts() == 3
