"""Resuming a campaign folder: a changed spec is refused (or started afresh with the old runs
moved aside), a done run whose log is gone is reported and not re-run, a missing workdir is
named (real processes of the test workload in sleeper.py)."""

from __future__ import annotations

import json
import uuid

import pytest
import sleeper  # noqa: F401  (registers the test_sleeper workload)
import yaml

from analysis.campaign.resume import FolderMismatch
from analysis.campaign.runner import Campaign
from analysis.campaign.spec import from_dict
from analysis.cli import main

pytestmark = pytest.mark.slow


def raw(**kw) -> dict:
    r = {"name": "resume", "workload": "test_sleeper", "precisions": ["fp32"],
         "batch_sizes": [1], "devices": ["1n1g"], "repeats": 2, "iterations": 150,
         "retries": 0, "env": {"NCCL_ALGO": "Ring"},
         "options": {"marker": f"dlperf-t-{uuid.uuid4().hex[:8]}", "seconds": 0.2}}
    r.update(kw)
    return r


def test_changed_spec_is_refused_with_its_differences_before_anything_runs(tmp_path, capsys):
    first = raw()
    assert list(Campaign(from_dict(first), out_dir=tmp_path).run(progress=False)["state"]) == \
        ["done", "done"]
    stored = (tmp_path / "campaign.yaml").read_text()
    changed = dict(first, repeats=3, env={"NCCL_ALGO": "Tree"}, iterations=200)
    with pytest.raises(FolderMismatch) as err:
        Campaign(from_dict(changed), out_dir=tmp_path).run(progress=False)
    assert "env.NCCL_ALGO: Ring → Tree" in str(err.value)
    assert "case.iterations: 150 → 200" in str(err.value)
    assert "2 done run(s)" in str(err.value) and "--fresh" in str(err.value)
    assert not (tmp_path / "1n1g" / "resnet50_b1_fp32_3.done").exists()  # nothing ran
    assert (tmp_path / "campaign.yaml").read_text() == stored  # the record still says the old
    with pytest.raises(FolderMismatch, match="campaign: resume → other"):
        Campaign(from_dict(dict(first, name="other")), out_dir=tmp_path).run(progress=False)
    with pytest.raises(FolderMismatch, match="node 0 command: .* → .*--extra"):
        Campaign(from_dict(dict(first, workload_args=["--extra"])), out_dir=tmp_path).run(
            progress=False)
    # the CLI: one error line naming the difference, usage exit status
    spec = tmp_path.parent / f"{tmp_path.name}-changed.yaml"
    spec.write_text(yaml.safe_dump(changed))
    assert main(["run", str(spec), "-o", str(tmp_path), "--no-progress"]) == 2
    assert "env.NCCL_ALGO: Ring → Tree" in capsys.readouterr().err


def test_more_repeats_more_cases_and_a_time_budget_still_resume(tmp_path):
    first = raw(repeats=1)
    Campaign(from_dict(first), out_dir=tmp_path).run(progress=False)
    log = tmp_path / "1n1g" / "resnet50_b1_fp32_1.log"
    kept = log.read_bytes()
    more = from_dict(dict(first, repeats=2, devices=["1n1g", "2n1g"]))
    st = Campaign(more, out_dir=tmp_path).run(progress=False, time_budget=600)
    assert list(st["state"]) == ["done"] * 4
    assert log.read_bytes() == kept


def test_fresh_moves_the_old_runs_aside_and_runs_the_new_spec(tmp_path):
    out = tmp_path / "out"
    Campaign(from_dict(raw(repeats=1)), out_dir=out).run(progress=False)
    old_log = (out / "1n1g" / "resnet50_b1_fp32_1.log").read_bytes()
    new = from_dict(raw(repeats=1, env={"NCCL_ALGO": "Tree"}))
    st = Campaign(new, out_dir=out).run(progress=False, fresh=True)
    assert list(st["state"]) == ["done"]
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("out.")]
    assert len(aside) == 1  # out.<YYYYmmdd-HHMMSS>, beside the folder
    assert (aside[0] / "1n1g" / "resnet50_b1_fp32_1.log").read_bytes() == old_log
    assert json.loads((aside[0] / "1n1g" / "resnet50_b1_fp32_1.done").read_text())[
        "env"]["NCCL_ALGO"] == "Ring"
    done = json.loads((out / "1n1g" / "resnet50_b1_fp32_1.done").read_text())
    assert done["env"]["NCCL_ALGO"] == "Tree"
    assert yaml.safe_load((out / "campaign.yaml").read_text())["env"] == {"NCCL_ALGO": "Tree"}


def test_rendezvous_hosts_and_port_are_not_differences(tmp_path):
    """Runs of a 2-node case carry the master address and a random port in their commands."""
    spec = from_dict({"name": "rdzv", "workload": "builtin", "model": "resnet50",
                      "precisions": ["fp32"], "batch_sizes": [4], "devices": ["2n1g"],
                      "repeats": 1, "iterations": 130, "device": "cpu"})
    c = Campaign(spec, out_dir=tmp_path)
    run = c.runs[0]
    marker = c.expected_marker(run, "cpu", ["127.0.0.1", "127.0.0.1"], 29877)
    assert any("29877" in w for w in marker["nodes"][0]["command"])
    run.log_path(tmp_path).parent.mkdir(parents=True)
    run.log_path(tmp_path).write_text("log\n")
    (run.path(tmp_path, ".done")).write_text(json.dumps(marker))
    assert c.changes() == {}
    longer = Campaign(from_dict(dict(spec.raw, iterations=200)), out_dir=tmp_path)
    lines = longer.changes()[run.run_id]
    assert "node 0 command: '--iterations 130' → '--iterations 200'" in lines


def test_done_run_whose_log_is_gone_is_named_and_not_rerun(tmp_path, capsys):
    s = from_dict(raw(repeats=1))
    Campaign(s, out_dir=tmp_path).run(progress=False)
    log, marker = (tmp_path / "1n1g" / "resnet50_b1_fp32_1.log",
                   tmp_path / "1n1g" / "resnet50_b1_fp32_1.done")
    kept = marker.read_bytes()
    log.unlink()
    for _ in range(2):  # every time: the same report, never a run into a refusal
        row = Campaign(s, out_dir=tmp_path).run(progress=False).iloc[0]
        assert row.state == "failed" and row.attempts == 1
        assert "log 1n1g/resnet50_b1_fp32_1.log is missing" in row.reason
        assert "delete 1n1g/resnet50_b1_fp32_1.done" in row.reason
        assert "already exist" not in row.reason
        assert marker.read_bytes() == kept
        assert "resnet50_b1_fp32_1.log is missing" in capsys.readouterr().err
    assert not (tmp_path / ".campaign" / "failed").exists()
    # deleting the files it names runs it again
    for name in row.reason.split("delete ")[1].split(" (in ")[0].split(", "):
        (tmp_path / name).unlink()
    row = Campaign(s, out_dir=tmp_path).run(progress=False).iloc[0]
    assert row.state == "done" and log.exists()


def test_missing_workdir_is_named_not_the_interpreter(tmp_path):
    missing = tmp_path / "no-such-workdir"
    row = Campaign(from_dict(raw(repeats=1, workdir=str(missing))),
                   out_dir=tmp_path / "out").run(progress=False).iloc[0]
    assert row.state == "failed"
    assert f"working directory '{missing}'" in row.reason and "workdir" in row.reason
    assert "cannot start" not in row.reason
