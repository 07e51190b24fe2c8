"""The suite version that ran a campaign: in every done marker, in status.json and in the
campaign input a report reads (real git repositories in tmp_path, real campaign runs of the
test workload in sleeper.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import sleeper  # noqa: F401  (registers the test_sleeper workload)

import analysis
from analysis import suite_version as sv
from analysis.campaign.runner import Campaign
from analysis.campaign.spec import from_dict
from analysis.env.folder_records import load_campaign


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def make_repo(root: Path, files: dict[str, str]) -> tuple[Path, str]:
    """A git repository at `root` with `files` committed; (root, commit)."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.invalid")
    git(root, "config", "user.name", "t")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "suite")
    return root, git(root, "rev-parse", "HEAD")


SUITE = {"analysis/x.py": "x = 1\n", "data/raw_logs/old/status.json": "{}\n",
         "reports/r/report_en.html": "<p>r</p>\n", "runs/keep.txt": "k\n"}


def test_a_clean_checkout_gives_its_commit(tmp_path):
    repo, head = make_repo(tmp_path / "suite", SUITE)
    (repo / "scratch.txt").write_text("untracked files do not count\n")
    assert sv.suite_version(checkout=repo) == {"version": analysis.__version__,
                                               "commit": head, "dirty": False}
    assert len(head) == 40


def test_changed_tracked_code_is_dirty_but_logs_reports_and_the_output_folder_are_not(tmp_path):
    repo, head = make_repo(tmp_path / "suite", SUITE)
    (repo / "data/raw_logs/old/status.json").write_text('{"runs": []}\n')
    (repo / "reports/r/report_en.html").write_text("<p>rebuilt</p>\n")
    (repo / "runs/keep.txt").write_text("the campaign's own output\n")
    assert sv.suite_version(exclude=[repo / "runs"], checkout=repo)["dirty"] is False
    assert sv.suite_version(checkout=repo)["dirty"] is True  # runs/ is not excluded here
    (repo / "analysis/x.py").write_text("x = 2\n")
    got = sv.suite_version(exclude=[repo / "runs"], checkout=repo)
    assert got == {"version": analysis.__version__, "commit": head, "dirty": True}


def test_no_checkout_gives_the_version_only(tmp_path):
    plain = tmp_path / "unpacked"
    plain.mkdir()
    assert sv.suite_version(checkout=plain) == {"version": analysis.__version__,
                                                "commit": None, "dirty": None}


def test_a_folder_inside_another_repository_is_not_the_suite_checkout(tmp_path):
    repo, _ = make_repo(tmp_path / "other", {"README": "x\n", "venv/site/analysis/x.py": "1\n"})
    got = sv.suite_version(checkout=repo / "venv" / "site")
    assert got["commit"] is None and got["dirty"] is None


def test_git_missing_never_fails(tmp_path, monkeypatch):
    repo, _ = make_repo(tmp_path / "suite", SUITE)
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert sv.suite_version(checkout=repo) == {"version": analysis.__version__,
                                               "commit": None, "dirty": None}


def spec(repeats: int = 1):
    return from_dict({"name": "sv", "workload": "test_sleeper", "precisions": ["fp32"],
                      "batch_sizes": [1], "devices": ["1n1g"], "repeats": repeats,
                      "iterations": 5, "retries": 0, "options": {"seconds": 0.2}})


def markers(out: Path) -> dict[str, dict]:
    return {p.name: json.loads(p.read_text()) for p in sorted(out.rglob("*.done"))}


@pytest.mark.slow
def test_done_markers_status_and_report_input_name_the_suite_that_ran(tmp_path, monkeypatch):
    repo, head = make_repo(tmp_path / "suite", SUITE)
    monkeypatch.setattr(sv, "CHECKOUT", repo)
    out = repo / "runs" / "sv"  # inside the checkout, outside data/raw_logs
    status = Campaign(spec(), out_dir=out).run(progress=False)
    assert list(status["state"]) == ["done"]
    clean = {"version": analysis.__version__, "commit": head, "dirty": False}
    assert [m["suite"] for m in markers(out).values()] == [clean]
    assert json.loads((out / "status.json").read_text())["suite"] == clean
    assert load_campaign(out).suite_commits == {head}

    # the campaign is committed, then resumed twice with one more repeat each time: the
    # changes the campaign makes to its own committed records (campaign.yaml, status.json)
    # do not make the suite dirty
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "campaign")
    second = git(repo, "rev-parse", "HEAD")
    for repeats in (2, 3):
        status = Campaign(spec(repeats), out_dir=out).run(progress=False)
        assert set(status["state"]) == {"done"}
    assert git(repo, "status", "--porcelain", "--untracked-files=no", "runs")  # changed
    got = markers(out)
    assert got["resnet50_b1_fp32_1.done"]["suite"] == clean  # kept: that run is not re-run
    assert got["resnet50_b1_fp32_2.done"]["suite"] == {**clean, "commit": second}
    assert got["resnet50_b1_fp32_3.done"]["suite"] == {**clean, "commit": second}
    assert load_campaign(out).suite_commits == {head, second}

    (repo / "analysis/x.py").write_text("x = 3\n")  # the suite's code changed, uncommitted
    Campaign(spec(4), out_dir=out).run(progress=False)
    assert markers(out)["resnet50_b1_fp32_4.done"]["suite"]["dirty"] is True
    assert json.loads((out / "status.json").read_text())["suite"]["dirty"] is True
    assert load_campaign(out).suite_commits == {head, second, f"{second}-dirty"}


def test_report_input_takes_commits_of_finished_runs_only(tmp_path):
    def marker(name: str, **data) -> None:
        path = tmp_path / "1n1g" / f"{name}.done"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data))

    marker("a_1", ok=True, suite={"version": "0.1.0", "commit": "c1", "dirty": False})
    marker("a_2", ok=True, suite={"version": "0.1.0", "commit": "c1", "dirty": True})
    marker("a_3", ok=False, suite={"version": "0.1.0", "commit": "c9", "dirty": False})
    marker("a_4", ok=True)  # written before suites were recorded
    marker("a_5", ok=True, suite={"version": "0.1.0", "commit": None, "dirty": None})
    assert load_campaign(tmp_path).suite_commits == {"c1", "c1-dirty"}
