"""`dlperf check` on a `dlperf run` folder some of whose runs failed before writing a log:
their done markers and status.json are the only records of them."""

from __future__ import annotations

import io

import pandas as pd
from cli._helpers import run_cli

from .campaigns import BUNDLED, failed_case_campaign

AMP = "PyTorch/resnet50/amp/b256/1n1g"
FP32 = "PyTorch/resnet50/fp32/b128/1n1g"


def _check(dlperf_exe, tmp_path, folder):
    refs = tmp_path / "refs.yaml"
    refs.write_text("hardware: 4x NVIDIA H200\nsource: ours\ntolerance: 50%\nreferences:\n"
                    f"  - {{key: {FP32}, value: 3000}}\n  - {{key: {AMP}, value: 6000}}\n")
    done = run_cli(dlperf_exe, "check", folder, "--references", refs, "--format", "csv")
    return done, pd.read_csv(io.StringIO(done.stdout)).set_index("reference")


def test_a_case_whose_every_run_failed_is_all_runs_failed_exit_4(dlperf_exe, tmp_path):
    """Before: the reference of the failed case read 'no runs', exit 0, nothing said."""
    done, table = _check(dlperf_exe, tmp_path, failed_case_campaign(tmp_path / "c"))
    assert done.returncode == 4, done.stderr
    assert table.loc[AMP, "verdict"] == "all runs failed"
    assert table.loc[AMP, "case_key"] == AMP and table.loc[AMP, "repeats"] == 0
    assert table.loc[FP32, "verdict"] == "within"
    assert f"no throughput (every run failed): {AMP}" in done.stderr
    assert f"3 run(s) failed in the campaign records, not counted as repeats: {AMP} " \
           "(3, every run); e.g. 1n1g/resnet50_b256_amp_1: exit 1: CUDA out of memory" \
           in done.stderr


def test_a_campaign_whose_every_run_failed_is_all_runs_failed_exit_4(dlperf_exe, tmp_path):
    """No log at all: before, 'every run failed' on stderr, then 'no runs', exit 0."""
    folder = failed_case_campaign(tmp_path / "c", repeats=2)
    for f in (folder / "1n1g").glob("resnet50_b128_fp32_*"):
        f.unlink()
    done, table = _check(dlperf_exe, tmp_path, folder)
    assert done.returncode == 4, done.stderr
    assert "no logs, every run failed" in done.stderr
    assert table.loc[AMP, "verdict"] == "all runs failed"
    # the fp32 runs left no record at all here: their reference matches nothing
    assert table.loc[FP32, "verdict"] == "no runs"


def test_a_case_with_some_runs_failed_keeps_the_verdict_of_those_that_ran(dlperf_exe, tmp_path):
    done, table = _check(dlperf_exe, tmp_path,
                         failed_case_campaign(tmp_path / "c", failed_repeats=(2,)))
    assert done.returncode == 0, done.stderr
    assert table.loc[AMP, "verdict"] == "within" and table.loc[AMP, "repeats"] == 2
    assert f"1 run(s) failed in the campaign records, not counted as repeats: {AMP} (1);" \
           in done.stderr


def test_compare_says_failed_in_new_only_of_the_case_that_failed(dlperf_exe, tmp_path):
    """NEW ran one 1n1g case (copies of BASE's: not re-measured) and its other failed in
    every run; BASE's other configurations NEW did not run. Before: 'only in base' for all."""
    new = failed_case_campaign(tmp_path / "new")
    done = run_cli(dlperf_exe, "compare", BUNDLED, new, "--format", "csv")
    assert done.returncode == 4, done.stderr
    verdicts = pd.read_csv(io.StringIO(done.stdout)).set_index("case_key")["verdict"]
    assert verdicts.pop(AMP) == "failed in new"
    assert verdicts.pop(FP32) == "not re-measured"
    assert set(verdicts) == {"only in base"} and len(verdicts) == 6


def test_compare_says_failed_in_base_of_a_case_whose_base_runs_failed(dlperf_exe, tmp_path):
    """The mirror: BASE's amp runs all failed, NEW measured them. Before: 'only in new'."""
    base = failed_case_campaign(tmp_path / "base")
    done = run_cli(dlperf_exe, "compare", base, BUNDLED, "--format", "csv")
    verdicts = pd.read_csv(io.StringIO(done.stdout)).set_index("case_key")["verdict"]
    assert verdicts.pop(AMP) == "failed in base", done.stderr
    assert "failed in base" not in set(verdicts)


def _restate(folder, marker_fields=(), run_id=None, status=True):
    """`folder`'s failed amp runs with `marker_fields` taken out of their done markers, their
    run id replaced by `run_id` (its repeat appended), status.json deleted unless `status`."""
    import json

    for marker_path in (folder / "1n1g").glob("resnet50_b256_amp_*.done"):
        marker = json.loads(marker_path.read_text())
        for f in marker_fields:
            marker.pop(f)
        if run_id:
            marker["run_id"] = f"{run_id}_{marker['run_id'][-1]}"
        marker_path.write_text(json.dumps(marker))
    if not status:
        (folder / "status.json").unlink()
    return folder


def test_a_failed_case_its_markers_leave_unstated_is_read_from_status_or_run_id(
        dlperf_exe, tmp_path):
    """Markers without `case` (a run that failed early, another writer's markers): before,
    the case was 'PyTorch/?/?/b?/?n?g' on stderr and its reference 'no runs', exit 0."""
    for status in (True, False):  # status.json's rows, else the run id
        folder = _restate(failed_case_campaign(tmp_path / f"c{status}"), ["case"],
                          status=status)
        done, table = _check(dlperf_exe, tmp_path, folder)
        assert done.returncode == 4, done.stderr
        assert table.loc[AMP, "verdict"] == "all runs failed"
        assert table.loc[AMP, "case_key"] == AMP
        assert f"not counted as repeats: {AMP} (3, every run)" in done.stderr
        assert "?" not in done.stderr


def test_a_failed_run_whose_case_nothing_states_is_case_unknown_and_no_pass(
        dlperf_exe, tmp_path):
    """Nothing states the amp runs' model, precision nor batch: they are 'case unknown', and
    a reference without runs that they may be is not passed; one they cannot be is 'no
    runs'."""
    folder = _restate(failed_case_campaign(tmp_path / "c"), ["case"], "1n1g/attempt",
                      status=False)
    refs = tmp_path / "refs.yaml"
    refs.write_text("hardware: 4x NVIDIA H200\nsource: ours\ntolerance: 50%\nreferences:\n"
                    f"  - {{key: {FP32}, value: 3000}}\n  - {{key: {AMP}, value: 6000}}\n"
                    "  - {key: PyTorch/resnet50/amp/b256/2n8g, value: 6000}\n")
    done = run_cli(dlperf_exe, "check", folder, "--references", refs, "--format", "csv")
    table = pd.read_csv(io.StringIO(done.stdout), keep_default_na=False).set_index("reference")
    assert done.returncode == 4, done.stderr
    assert table.loc[AMP, ["case_key", "verdict"]].tolist() == ["case unknown",
                                                                "all runs failed"]
    assert table.loc[FP32, "verdict"] == "within"
    assert table.loc["PyTorch/resnet50/amp/b256/2n8g", "verdict"] == "no runs"
    assert "not counted as repeats: case unknown (3, their records do not state their " \
           "case); e.g. 1n1g/attempt_1" in done.stderr
    assert "?" not in done.stderr


def test_compare_lists_a_case_failed_on_both_sides(dlperf_exe, tmp_path):
    """A folder compared with itself whose amp case failed in every run: before, the case
    was missing from the table."""
    folder = failed_case_campaign(tmp_path / "c")
    done = run_cli(dlperf_exe, "compare", folder, folder, "--format", "csv")
    assert done.returncode == 0, done.stderr
    verdicts = pd.read_csv(io.StringIO(done.stdout)).set_index("case_key")["verdict"]
    assert verdicts.to_dict() == {FP32: "unchanged", AMP: "failed in both"}
