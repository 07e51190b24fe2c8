"""`dlperf summarize` on a `dlperf run` folder some of whose runs failed before writing a log:
the runs its done markers say failed are named, never passed over."""

from __future__ import annotations

from changes.campaigns import failed_case_campaign

from cli._helpers import run_cli

AMP = "PyTorch/resnet50/amp/b256/1n1g"


def test_a_case_whose_every_run_failed_is_named_and_fails_strict(dlperf_exe, tmp_path):
    """Before: only the fp32 case shown, nothing said of the amp case's 3 failed runs, and
    --strict passed."""
    folder = failed_case_campaign(tmp_path / "c")
    done = run_cli(dlperf_exe, "summarize", folder, "--no-cache")
    assert done.returncode == 0, done.stderr
    assert " amp " not in done.stdout and " fp32 " in done.stdout
    assert f"dlperf: {folder}: 3 run(s) failed in the campaign records, not counted as " \
           f"repeats: {AMP} (3, every run); e.g. 1n1g/resnet50_b256_amp_1: exit 1: CUDA " \
           "out of memory" in done.stderr
    strict = run_cli(dlperf_exe, "summarize", folder, "--no-cache", "--strict")
    assert strict.returncode == 3
    assert f"{folder}: failed_run: 3 run(s) failed" in strict.stderr
    assert "Traceback" not in strict.stderr and not strict.stdout


def test_a_case_with_one_failed_run_counts_the_others_and_says_so(dlperf_exe, tmp_path):
    folder = failed_case_campaign(tmp_path / "c", failed_repeats=(3,))
    done = run_cli(dlperf_exe, "summarize", folder, "--no-cache", "--format", "csv")
    assert done.returncode == 0, done.stderr
    amp = next(line for line in done.stdout.splitlines() if ",amp," in line)
    assert ",2," in amp  # two repeats
    assert f"1 run(s) failed in the campaign records, not counted as repeats: {AMP} (1);" \
           in done.stderr


def test_a_campaign_with_no_failed_run_says_nothing_of_failures(dlperf_exe, tmp_path):
    folder = failed_case_campaign(tmp_path / "c", failed_repeats=())
    done = run_cli(dlperf_exe, "summarize", folder, "--no-cache", "--strict")
    assert done.returncode == 0, done.stderr
    assert "failed" not in done.stderr
