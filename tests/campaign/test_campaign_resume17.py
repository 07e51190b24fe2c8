"""Campaign folders that neither mix nor lose runs: a retry with a smaller matrix keeps the
other cases' done runs listed; a resume from a shell exporting variables that reach the
workload, or with another workdir, is refused naming them; a done marker saying failed beside
its finished log is said once, never re-run into a refusal; a marker of another campaign is
a stray. `dlperf run` runs on the local backend with a stand-in interpreter (`python:` in the
spec) that prints a bundled real log instead of training."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from analysis.campaign.resume import FolderMismatch
from analysis.campaign.runner import Campaign
from analysis.campaign.spec import from_dict
from analysis.collect import parse_paths
from analysis.stats import summarize

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "data" / "raw_logs" / "rn50_4gpu" / "1n1g"
STEM = "resnet50_b128_fp32_{}"

#: The workload launch (`-m torch.distributed.run ...`) prints bundled run 1, 2, 3, 1, ... in
#: turn and counts its starts; anything else (the node agent) goes to the real interpreter.
STAND_IN = """#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "torch.distributed.run" ]; then
  n=$(( $(cat "{counter}" 2>/dev/null || echo 0) + 1 )); echo $n > "{counter}"
  echo "stand-in: CUDA_LAUNCH_BLOCKING=${{CUDA_LAUNCH_BLOCKING-unset}}" >&2
  cat "{logs}/resnet50_b128_fp32_$(( (n - 1) % 3 + 1 )).log"
  exit 0
fi
exec "{python}" "$@"
"""


@pytest.fixture
def spec(tmp_path, monkeypatch):
    """A spec factory whose `python:` is the stand-in; `.starts()` counts workload starts."""
    for name in ("CUDA_LAUNCH_BLOCKING", "PYTORCH_CUDA_ALLOC_CONF", "SLURM_JOB_ID"):
        monkeypatch.delenv(name, raising=False)
    counter, fake = tmp_path / "starts", tmp_path / "python"
    fake.write_text(STAND_IN.format(counter=counter, logs=LOGS, python=sys.executable))
    fake.chmod(0o755)

    def make(**kw):
        raw = {"name": "b1", "workload": "builtin", "model": "resnet50", "precisions": ["fp32"],
               "batch_sizes": [4], "devices": ["1n1g"], "repeats": 1, "iterations": 130,
               "backend": "local", "device": "cpu", "python": str(fake), "env": {},
               "retries": 2}
        return from_dict({**raw, **kw})

    make.starts = lambda: int(counter.read_text()) if counter.exists() else 0
    return make


def _strays(out: Path) -> dict[str, str]:
    p = parse_paths([out]).problems
    p = p[p["kind"] == "stray_log"]
    return {Path(s).name: r for s, r in zip(p["source"], p["reason"], strict=True)}


def test_a_retry_with_a_smaller_matrix_keeps_the_other_cases_runs(spec, tmp_path):
    out = tmp_path / "out"
    Campaign(spec(batch_sizes=[4, 8]), out_dir=out).run(progress=False)
    for p in (out / "1n1g").glob("resnet50_b8_fp32_1.*"):  # retry the b8 case
        p.unlink()
    st = Campaign(spec(batch_sizes=[8]), out_dir=out).run(progress=False)
    assert list(st["state"]) == ["done"]
    status = json.loads((out / "status.json").read_text())
    assert {r["run_id"]: r["state"] for r in status["runs"]} == {
        "1n1g/resnet50_b8_fp32_1": "done", "1n1g/resnet50_b4_fp32_1": "done"}
    assert status["counts"]["done"] == 2
    result = parse_paths([out])
    assert len(result.runs) == 2 and _strays(out) == {}
    # a folder whose status.json lost the run (an older suite): said truly, no copy claimed
    status["runs"] = [r for r in status["runs"] if "b4" not in r["run_id"]]
    (out / "status.json").write_text(json.dumps(status))
    reason = _strays(out)["resnet50_b4_fp32_1.log"]
    assert "status.json does not list it" in reason and "cop" not in reason


def test_a_resume_from_a_shell_exporting_workload_variables_is_refused(spec, tmp_path,
                                                                      monkeypatch):
    out = tmp_path / "out"
    Campaign(spec(), out_dir=out).run(progress=False)
    monkeypatch.setenv("CUDA_LAUNCH_BLOCKING", "1")
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    with pytest.raises(FolderMismatch) as err:
        Campaign(spec(repeats=2), out_dir=out).run(progress=False)
    assert "env.CUDA_LAUNCH_BLOCKING: (unset) → 1" in str(err.value)
    assert "env.PYTORCH_CUDA_ALLOC_CONF: (unset) → expandable_segments:True" in str(err.value)
    assert spec.starts() == 1  # nothing ran
    # per-job ids and ports are not settings: the same shell but them resumes
    monkeypatch.delenv("CUDA_LAUNCH_BLOCKING")
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF")
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    monkeypatch.setenv("MASTER_PORT", "29999")
    st = Campaign(spec(repeats=2), out_dir=out).run(progress=False)
    assert list(st["state"]) == ["done", "done"] and spec.starts() == 2


def test_summarize_flags_repeats_recorded_under_other_workload_variables(tmp_path):
    """Runs 1-2 of the bundled rn50 campaign; run 2's record with CUDA_LAUNCH_BLOCKING set
    (and another job id and port, which are not settings)."""
    camp = tmp_path / "rn50_4gpu" / "1n1g"
    camp.mkdir(parents=True)
    for i in (1, 2):
        for suffix in (".log", ".done", ".node0.env.json"):
            shutil.copy(LOGS / f"{STEM.format(i)}{suffix}", camp)
    record = camp / f"{STEM.format(2)}.node0.env.json"
    data = json.loads(record.read_text())
    data["env"].update(SLURM_JOB_ID="77", MASTER_PORT="29555")
    record.write_text(json.dumps(data))
    [row] = summarize(parse_paths([camp], cache=False)).to_dict("records")
    assert row["flags"] == ""
    data["env"]["CUDA_LAUNCH_BLOCKING"] = "1"
    record.write_text(json.dumps(data))
    result = parse_paths([camp], cache=False)
    [row] = summarize(result).to_dict("records")
    assert row["flags"] == "configuration differs in CUDA_LAUNCH_BLOCKING"
    [mixed] = [p for p in result.problem_list() if p.kind == "mixed_configuration"]
    assert f"CUDA_LAUNCH_BLOCKING: (absent) ({STEM.format(1)}), 1 ({STEM.format(2)})" \
        in mixed.reason
    # a run without a record (its capture failed) states only its marker's NCCL settings:
    # the variables the others record are not differences
    shutil.copy(LOGS / f"{STEM.format(3)}.log", camp)
    shutil.copy(LOGS / f"{STEM.format(3)}.done", camp)
    record.unlink()
    [row] = summarize(parse_paths([camp], cache=False)).to_dict("records")
    assert row["repeats"] == 3 and row["flags"] == ""


def test_a_resume_with_another_workdir_is_refused(spec, tmp_path):
    out = tmp_path / "out"
    Campaign(spec(), out_dir=out).run(progress=False)
    with pytest.raises(FolderMismatch, match=f"workdir: .* → {tmp_path}"):
        Campaign(spec(repeats=2, workdir=str(tmp_path)), out_dir=out).run(progress=False)
    assert spec.starts() == 1
    # a marker of an older suite does not record its workdir: not a difference
    marker = out / "1n1g" / "resnet50_b4_fp32_1.done"
    data = json.loads(marker.read_text())
    del data["workdir"]
    marker.write_text(json.dumps(data))
    assert Campaign(spec(repeats=2), out_dir=out).changes() == {}


def test_a_failed_marker_beside_its_finished_log_is_said_not_rerun(spec, tmp_path):
    out = tmp_path / "out"
    Campaign(spec(), out_dir=out).run(progress=False)
    marker = out / "1n1g" / "resnet50_b4_fp32_1.done"
    marker.write_text(marker.read_text().replace('"ok": true', '"ok": false'))
    kept = marker.read_bytes()
    for _ in range(2):
        row = Campaign(spec(), out_dir=out).run(progress=False).iloc[0]
        assert row.state == "failed" and row.attempts == 1
        assert '"ok": false' in row.reason and "resnet50_b4_fp32_1.log are there" in \
            row.reason.replace(", 1n1g/resnet50_b4_fp32_1.node0.env.json", "")
        assert "delete 1n1g/resnet50_b4_fp32_1.done, 1n1g/resnet50_b4_fp32_1.log" in row.reason
        assert "already exist" not in row.reason
        assert spec.starts() == 1 and marker.read_bytes() == kept


def test_a_marker_naming_another_campaign_is_a_stray(tmp_path):
    camp = tmp_path / "camp"
    (camp / "1n1g").mkdir(parents=True)
    runs = []
    for i in (1, 2):
        for suffix in (".log", ".done"):
            shutil.copy(LOGS / f"{STEM.format(i)}{suffix}", camp / "1n1g")
        runs.append({"run_id": f"1n1g/{STEM.format(i)}", "state": "done"})
    (camp / "status.json").write_text(json.dumps({"campaign": "rn50_4gpu", "runs": runs}))
    marker = camp / "1n1g" / f"{STEM.format(1)}.done"
    marker.write_text(json.dumps(dict(json.loads(marker.read_text()), campaign="other")))
    assert parse_paths([camp]).runs["repeat"].tolist() == [2]
    assert _strays(camp)[f"{STEM.format(1)}.log"].startswith(
        "its done marker names campaign 'other', status.json names campaign 'rn50_4gpu'")
