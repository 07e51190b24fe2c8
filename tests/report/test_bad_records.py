"""Records beside the logs that cannot be read (a truncated env record of an interrupted
campaign, a FIFO that would block, a damaged done marker) are left out and said so: the
report lists them under Problems, `dlperf compare` warns; nothing stops or hangs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from changes.campaigns import JITTER, stretch_log
from conftest import ROOT

from analysis.env.folder_records import gather
from analysis.report.build import build

RN50 = ROOT / "data" / "raw_logs" / "rn50_4gpu" / "1n1g"
H200 = ROOT / "tests" / "data" / "topology" / "h200_x4" / "topo.txt"


def _rerun(root):
    """The bundled 1n1g runs made again (each line's timing its own): not copies of the
    logs NEW is made from, which compare would leave out."""
    shutil.copytree(RN50, root / "1n1g")
    for log in (root / "1n1g").glob("*.log"):
        stretch_log(log, 1.0, JITTER)
    return root


def _damaged(root):
    shutil.copytree(RN50, root / "1n1g")
    record = root / "1n1g" / "resnet50_b256_amp_1.node0.env.json"
    record.write_bytes(record.read_bytes()[:300])
    os.mkfifo(root / "1n1g" / "x.env.json")
    os.mkfifo(root / "topo_x.txt")
    os.mkfifo(root / "1n1g" / "y.done")
    return root


def test_unreadable_records_are_left_out_and_listed(tmp_path):
    root = _damaged(tmp_path / "logs")
    envs, topos, camp = gather(root)
    names = sorted(name for name, _ in camp.unreadable)
    assert names == ["1n1g/resnet50_b256_amp_1.node0.env.json", "1n1g/x.env.json",
                     "1n1g/y.done", "topo_x.txt"]
    assert len(envs) == 9 and topos == []  # the other nine records of the ten runs
    problems = build(root, lang="en").problems().data
    listed = problems[problems.iloc[:, 1] == "unreadable file (unreadable_file)"]
    assert sorted(listed.iloc[:, 0]) == names


def test_compare_warns_and_goes_on(tmp_path):
    base = _rerun(tmp_path / "base")
    new = _damaged(tmp_path / "new")
    done = subprocess.run([sys.executable, "-m", "analysis", "compare", str(base), str(new)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    warnings = [ln for ln in done.stderr.splitlines() if ln.startswith("dlperf: warning:")]
    assert len(warnings) == 4 and all(ln.endswith("; left out") for ln in warnings)
    assert "unchanged" in done.stdout


def test_a_topology_cut_short_is_shown_and_said_not_to_be_a_matrix(tmp_path):
    root = tmp_path / "logs"
    shutil.copytree(RN50, root / "1n1g")
    for record in (root / "1n1g").glob("*.env.json"):
        record.unlink()
    (root / "topo_node0.txt").write_text("\n".join(H200.read_text().split("\n")[:5]))
    for lang, words in (("en", "not a valid"), ("zh", "不是有效的")):
        rep = build(root, lang=lang)
        md = str(rep.environment())
        assert "GPU3" in md and words in md and "no row NIC0" in md
        assert rep.topology() is None


def test_problems_name_records_relative_to_the_logs(tmp_path):
    root = _damaged(tmp_path / "logs")
    (root / "1n1g" / "gone.env.json").symlink_to(tmp_path / "nowhere.json")
    (root / "topo_gone.txt").symlink_to(tmp_path / "nowhere.txt")
    _, _, camp = gather(root)
    assert len(camp.unreadable) == 6
    for _, reason in camp.unreadable:
        assert str(tmp_path) not in reason, reason  # a published report shows no local path


def _mistyped(root, **more):
    """The bundled runs with one record of wrong field types (as a hand edit leaves them)."""
    shutil.copytree(RN50, root / "1n1g")
    path = root / "1n1g" / "resnet50_b256_amp_1.node0.env.json"
    record = json.loads(path.read_text())
    record.update(gpu_count="4", driver_version=580.95,
                  frameworks={**record["frameworks"], "torch": {"version": 2.9}}, **more)
    record["gpus"][0]["memory_total_mib"] = "141GB"
    record["env"]["NCCL_ALGO"] = 1
    path.write_text(json.dumps(record))
    return root, path


def test_fields_of_a_wrong_type_are_listed_and_the_rest_of_the_record_used(tmp_path):
    root, path = _mistyped(tmp_path / "logs", cpu=["EPYC"])
    envs, _, camp = gather(root)
    assert camp.unreadable == [] and len(envs) == 10
    env = next(e for e in envs if e.name == "1n1g/resnet50_b256_amp_1.node0.env.json")
    assert env.problems == [
        'gpu_count: "4" is a string, expected an integer; not used',
        "gpus[0].memory_total_mib: \"141GB\" is a string, expected an integer or null; not used",
        "driver_version: 580.95 is a number, expected a string or null; not used",
        "frameworks.torch.version: 2.9 is a number, expected a string; not used",
        'cpu: ["EPYC"] is a list, expected a mapping; not used',
        "env.NCCL_ALGO: 1 is an integer, expected a string; not used"]
    record = env.record
    assert "gpu_count" not in record and "driver_version" not in record and "cpu" not in record
    assert record["gpu_model"] == "NVIDIA H200" and record["gpus"][0]["name"] == "NVIDIA H200"
    assert "NCCL_ALGO" not in record["env"] and record["env"]["NCCL_DEBUG"] == "WARN"
    rep = build(root, lang="en")
    problems = rep.problems().data
    listed = problems[problems.iloc[:, 1] == "wrong field type (bad_record_field)"]
    assert list(listed.iloc[:, 0]) == [env.name] * 6
    assert list(listed.iloc[:, 2]) == env.problems
    assert "580.95" not in str(rep.environment())  # the other nine records' driver is shown
    assert json.loads(path.read_text())["gpu_count"] == "4"  # the file itself is untouched


def test_compare_warns_of_fields_of_a_wrong_type_and_does_not_use_them(tmp_path):
    base = _rerun(tmp_path / "base")
    new, _ = _mistyped(tmp_path / "new")
    done = subprocess.run([sys.executable, "-m", "analysis", "compare", str(base), str(new),
                           "--format", "json"], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    warnings = [ln for ln in done.stderr.splitlines() if ln.startswith("dlperf: warning:")]
    assert len(warnings) == 5
    assert all("resnet50_b256_amp_1.node0.env.json: " in w for w in warnings)
    changes = {r["env_changes"] for r in json.loads(done.stdout)}
    assert changes == {""}, changes  # no "driver 580.159.04 -> 580.159.04, 580.95"
