"""`dlperf compare BASE NEW` on the bundled campaign and altered copies (issue 12, "Done when"
and Deliver 1)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil

import pandas as pd
import pytest
from cli._helpers import assert_one_clean_line, run_cli

from analysis.cli import main

from .campaigns import BUNDLED, rerun, stretched_copy

CASES_1N4G = {"PyTorch/resnet50/amp/b256/1n4g", "PyTorch/resnet50/fp32/b128/1n4g"}


@pytest.fixture(scope="module")
def stretched(tmp_path_factory):
    return stretched_copy(tmp_path_factory.mktemp("stretched") / "rn50_4gpu")


def _records(tmp_path, *args):
    """`dlperf compare ARGS --format json` in this process: (exit status, the rows)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        status = main(["compare", *map(str, args), "--format", "json"])
    return status, pd.DataFrame(json.loads(buf.getvalue()))


def test_done_when_1n4g_stretched_by_3_percent_is_slower_and_nothing_else(dlperf_exe, stretched):
    done = run_cli(dlperf_exe, "compare", BUNDLED, stretched)
    assert done.returncode == 1, done.stderr
    lines = {ln.split()[0]: ln for ln in done.stdout.splitlines() if ln.startswith("PyTorch/")}
    assert len(lines) == 8
    slower = {k for k, ln in lines.items() if " slower " in ln}
    assert slower == CASES_1N4G
    assert all(" unchanged " in ln for k, ln in lines.items() if k not in slower)
    assert_one_clean_line(done.stderr, "2 case(s) slower", "1n4g")


def test_done_when_the_campaign_against_itself_is_unchanged(dlperf_exe):
    done = run_cli(dlperf_exe, "compare", BUNDLED, BUNDLED, "--format", "markdown")
    assert done.returncode == 0 and done.stderr == ""
    rows = [ln for ln in done.stdout.splitlines() if ln.startswith("| PyTorch/")]
    assert len(rows) == 8 and all("| unchanged |" in r for r in rows)


def test_json_carries_ratio_interval_and_the_changes_of_efficiency(tmp_path, stretched):
    status, df = _records(tmp_path, BUNDLED, stretched)
    assert status == 1
    slow = df[df["verdict"] == "slower"].set_index("case_key")
    assert set(slow.index) == CASES_1N4G
    for r in slow.itertuples():
        assert r.ratio == pytest.approx(1 / 1.03, rel=0.005)
        assert r.ratio_low < r.ratio < r.ratio_high < 0.98
        assert r.new_median / r.base_median == pytest.approx(1 / 1.03, rel=0.005)
        assert r.efficiency_change == pytest.approx(r.base_efficiency * (1 / 1.03 - 1), rel=0.05)
        assert r.memory_change == 0.0
    assert (df["threshold"] == 0.02).all()


def test_a_raised_case_threshold_lets_the_slower_case_pass(tmp_path, stretched):
    status, df = _records(tmp_path, BUNDLED, stretched, "--case-threshold", "*/1n4g=5%")
    assert status == 0
    assert set(df.loc[df["threshold"] == 0.05, "case_key"]) == CASES_1N4G
    assert (df["verdict"] == "unchanged").all()


def test_cases_on_one_side_are_listed(tmp_path):
    new = tmp_path / "new"
    rerun(new)
    shutil.rmtree(new / "2n2g")
    status, df = _records(tmp_path, BUNDLED, new)
    assert status == 4  # cases BASE measured vanished from NEW: the gate fails
    only = df[df["verdict"] == "only in base"]
    assert sorted(only["case_key"]) == ["PyTorch/resnet50/amp/b256/2n2g",
                                        "PyTorch/resnet50/fp32/b128/2n2g"]
    assert only["new_repeats"].isna().all() and (only["base_repeats"] == 5).all()
    status, df = _records(tmp_path, new, BUNDLED)
    assert status == 0  # a case added in NEW breaks nothing
    assert (df["verdict"] == "only in new").sum() == 2


def _edit_env(folder, **changes):
    for p in folder.rglob("*.env.json"):
        record = json.loads(p.read_text())
        record.update(changes)
        p.write_text(json.dumps(record))


def test_environment_differences_are_shown_beside_the_numbers(tmp_path):
    new = tmp_path / "new"
    rerun(new)
    _edit_env(new, driver_version="590.1", nccl_version="2.29.1")
    status, df = _records(tmp_path, BUNDLED, new)
    assert status == 0
    assert (df["env_changes"] == "driver 580.159.04 -> 590.1; nccl 2.28.9 -> 2.29.1").all()


def _edit_env_vars(folder, **changes):
    """Set (a value) or unset (None) variables in every record's `env`."""
    for p in folder.rglob("*.env.json"):
        record = json.loads(p.read_text())
        record["env"].update(changes)
        record["env"] = {k: v for k, v in record["env"].items() if v is not None}
        p.write_text(json.dumps(record))


def test_nccl_settings_that_differ_are_environment_differences(dlperf_exe, tmp_path):
    new = tmp_path / "new"
    rerun(new)  # the bundled records set NCCL_NVLS_ENABLE=0, NCCL_DEBUG=WARN
    _edit_env_vars(new, NCCL_ALGO="Tree", NCCL_P2P_DISABLE="1", NCCL_NVLS_ENABLE=None,
                   NCCL_IB_HCA="=mlx5_0:1", NCCL_DEBUG="INFO", NCCL_VERSION="2.29.1-1",
                   NCCL_SECRET_KEY="***")
    status, df = _records(tmp_path, BUNDLED, new)
    assert status == 0
    assert (df["env_changes"] == "NCCL_ALGO unset -> Tree; NCCL_IB_HCA unset -> =mlx5_0:1; "
            "NCCL_NVLS_ENABLE 0 -> unset; NCCL_P2P_DISABLE unset -> 1").all()
    done = run_cli(dlperf_exe, "compare", BUNDLED, new)
    assert done.returncode == 0 and "NCCL_ALGO unset -> Tree" in done.stdout
    status, df = _records(tmp_path, BUNDLED, BUNDLED)
    assert (df["env_changes"] == "").all()


def test_a_hand_written_nccl_secret_is_not_shown_by_compare(tmp_path):
    new = tmp_path / "new"
    rerun(new)
    _edit_env_vars(new, NCCL_NET_PLUGIN_TOKEN="tok-LEAK-123456", NCCL_PROTO="Simple",
                   NCCL_SOCKET_IFNAME="postgres://u:pw-LEAK-99@db/x")
    status, df = _records(tmp_path, BUNDLED, new)
    assert status == 0 and "LEAK" not in df.to_json()
    assert (df["env_changes"] == "NCCL_PROTO unset -> Simple; "
            "NCCL_SOCKET_IFNAME unset -> postgres://u:***@db/x").all()


def test_different_hardware_is_refused_unless_allowed(dlperf_exe, tmp_path):
    new = tmp_path / "new"
    rerun(new)
    _edit_env(new, gpu_model="NVIDIA H100 80GB HBM3")
    done = run_cli(dlperf_exe, "compare", BUNDLED, new)
    assert done.returncode == 2 and done.stdout == ""
    assert_one_clean_line(done.stderr, "hardware differs for 8 case(s)", "H100",
                          "--allow-different-hardware")
    status, df = _records(tmp_path, BUNDLED, new, "--allow-different-hardware")
    assert status == 0
    assert df["env_changes"].str.contains("hardware 4x NVIDIA H200").all()


def test_a_parquet_export_compares_like_its_folder(dlperf_exe, tmp_path):
    out = tmp_path / "export.parquet"
    assert run_cli(dlperf_exe, "parse", BUNDLED, "-o", out).returncode == 0
    again = rerun(tmp_path / "again")
    status, df = _records(tmp_path, again, out)
    assert status == 0 and (df["verdict"] == "unchanged").all()
    _, folder = _records(tmp_path, again, BUNDLED)
    assert df.drop(columns="env_changes").equals(folder.drop(columns="env_changes"))



def test_a_side_without_hardware_records_is_said_not_compared_silently(dlperf_exe, tmp_path):
    """H100 runs against an export without env facts (written before exports kept them):
    the hardware is not checked, and the output said nothing of it, so the verdicts read as
    a like-for-like comparison."""
    h100 = tmp_path / "h100"
    rerun(h100)
    _edit_env(h100, gpu_model="NVIDIA H100 80GB HBM3")
    out = tmp_path / "export.parquet"
    assert run_cli(dlperf_exe, "parse", BUNDLED, "-o", out).returncode == 0
    out.with_name("export.env.parquet").unlink()
    done = run_cli(dlperf_exe, "compare", h100, out)
    assert done.returncode == 0
    assert_one_clean_line(done.stderr, "hardware not recorded on one side for 8 case(s)",
                          "without the hardware check")
    assert "hardware not recorded on one side for 8 case(s): not checked" in done.stdout

def test_a_missing_side_or_a_bad_option_is_one_line_and_exit_2(dlperf_exe, tmp_path):
    done = run_cli(dlperf_exe, "compare", BUNDLED, tmp_path / "nowhere")
    assert done.returncode == 2
    assert_one_clean_line(done.stderr, "nowhere", "--store")
    lone = tmp_path / "lone.parquet"
    lone.write_bytes(b"not parquet")
    done = run_cli(dlperf_exe, "compare", BUNDLED, lone)
    assert done.returncode == 2
    assert_one_clean_line(done.stderr, "lone.parquet", "lone.runs.parquet")
    done = run_cli(dlperf_exe, "compare", BUNDLED, BUNDLED, "--threshold", "150%")
    assert done.returncode == 2 and "--threshold" in done.stderr


def test_a_broken_log_is_named_and_does_not_hide_the_good_repeats(dlperf_exe, tmp_path):
    new = tmp_path / "new"
    rerun(new)
    broken = new / "1n2g" / "resnet50_b128_fp32_1.log"
    broken.write_bytes(broken.read_bytes()[:3000])  # cut before the DLPerf window
    done = run_cli(dlperf_exe, "compare", BUNDLED, new, "--format", "csv")
    assert done.returncode == 0
    assert_one_clean_line(done.stderr, "1 run(s) without a throughput", "truncated: 1",
                          "1n2g/resnet50_b128_fp32_1.log")
    df = pd.read_csv(io.StringIO(done.stdout)).set_index("case_key")
    row = df.loc["PyTorch/resnet50/fp32/b128/1n2g"]
    assert (row["base_repeats"], row["new_repeats"], row["verdict"]) == (5, 4, "unchanged")
    assert (df["verdict"] == "unchanged").all()


def _identical_runs(folder, repeats: int, factor: float):
    """`repeats` OneFlow CNN fp32 b128 1n1g logs that all give the same throughput (the same
    timed lines, stretched by `factor`, each repeat an hour after the last, with losses of its
    own: runs of their own, not copies)."""
    import re
    import sys

    from .campaigns import ROOT

    sys.path.insert(0, str(ROOT / "tests" / "report"))
    import synth

    case = folder / "1n1g"
    case.mkdir(parents=True)
    text = synth.oneflow_cnn_log(1, 1, 128, "fp32", 3)

    def moved(m, rep):
        return f"{synth.T0 + 3600 * rep + (float(m.group(1)) - synth.T0) * factor:.7f}"

    for rep in range(1, repeats + 1):
        timed = re.sub(r"(?<=samples/s: )\S+ (\d+\.\d+)$", lambda m, rep=rep: m.group(0).split()[0]
                       + " " + moved(m, rep), text, flags=re.M)
        timed = re.sub(r"(?<=loss: )(\d+\.\d+)",
                       lambda m, rep=rep: f"{float(m.group(1)) + rep / 1e3:.6f}", timed)
        (case / f"r50_b128_fp32_{rep}.log").write_text(timed + f"repeat {rep}\n")
    return folder


def test_identical_repeats_on_both_sides_show_no_interval_not_a_certain_one(tmp_path):
    base = _identical_runs(tmp_path / "base", 5, 1.0)
    new = _identical_runs(tmp_path / "new", 5, 1 / 0.97)  # 3 % slower, every repeat alike
    status, df = _records(tmp_path, base, new)
    [row] = df.to_dict("records")
    assert (row["base_repeats"], row["new_repeats"]) == (5, 5)
    assert row["ratio"] == pytest.approx(0.97, rel=1e-6)
    assert row["no_spread"] is True
    assert row["ratio_low"] is None and row["ratio_high"] is None  # was [0.97, 0.97]
    assert row["verdict"] == "slower" and status == 1  # the threshold still gates
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        main(["compare", str(base), str(new)])
    assert "no spread measured" in buf.getvalue()


def test_a_case_whose_new_runs_all_failed_fails_the_gate(dlperf_exe, tmp_path):
    """Every NEW run of 1n2g fp32 cut before the DLPerf window: before, 'too few repeats'
    and exit 0 ('no slower case'), so a CI gate passed a total breakage."""
    new = tmp_path / "new"
    rerun(new)
    for log in (new / "1n2g").glob("resnet50_b128_fp32_*.log"):
        log.write_bytes(log.read_bytes()[:3000])
    done = run_cli(dlperf_exe, "compare", BUNDLED, new, "--format", "csv")
    assert done.returncode == 4, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("dlperf: ") and "truncated: 5" in lines[0]
    assert lines[1] == (f"dlperf: 1 case(s) measured in {BUNDLED} have no throughput in {new} "
                        "(absent, or every run failed): PyTorch/resnet50/fp32/b128/1n2g "
                        "(failed in new)")
    df = pd.read_csv(io.StringIO(done.stdout)).set_index("case_key")
    row = df.loc["PyTorch/resnet50/fp32/b128/1n2g"]
    assert (row["base_repeats"], row["new_repeats"], row["verdict"]) == (5, 0, "failed in new")
    assert (df.drop(index="PyTorch/resnet50/fp32/b128/1n2g")["verdict"] == "unchanged").all()
    status, df = _records(tmp_path, new, BUNDLED)  # the other way round: nothing broke
    assert status == 0
    assert df.set_index("case_key").loc["PyTorch/resnet50/fp32/b128/1n2g", "verdict"] == (
        "failed in base")


def test_the_gate_statuses_are_in_compare_help(dlperf_exe):
    done = run_cli(dlperf_exe, "compare", "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "4 a case BASE measured has no throughput in NEW" in text
    assert "1 a case is slower beyond its threshold" in text


@pytest.mark.parametrize("table, column, value, message", [
    ("", "value", "text", "column value holds str values, not numbers"),
    (".runs", "batch_size_per_device", -256, "column batch_size_per_device holds a count below 1"),
])
def test_an_export_edited_into_text_or_negative_counts_is_refused(dlperf_exe, tmp_path, table,
                                                                   column, value, message):
    """Text compares as text (the memory change of an export whose values were strings read
    -27 %, a figure presented as right); a batch of -256 made cases of its own."""
    out = tmp_path / "export.parquet"
    assert run_cli(dlperf_exe, "parse", BUNDLED, "-o", out).returncode == 0
    edited = out.with_name(f"export{table}.parquet")
    frame = pd.read_parquet(edited)
    frame[column] = frame[column].astype(str) if value == "text" else value
    frame.to_parquet(edited)
    done = run_cli(dlperf_exe, "compare", BUNDLED, out)
    assert done.returncode == 2
    assert_one_clean_line(done.stderr, edited.name, message)


@pytest.mark.parametrize("option, value", [("--threshold", "0.5"), ("--threshold", "2"),
                                           ("--case-threshold", "*/1n1g=0.5"),
                                           ("--confidence", "0.95")])
def test_a_bare_number_is_refused_with_how_to_write_it(dlperf_exe, option, value):
    """`--threshold 0.5` meant 50 % (a 10 % drop passed) while `--threshold 2` was refused."""
    done = run_cli(dlperf_exe, "compare", BUNDLED, BUNDLED, option, value)
    assert done.returncode == 2
    assert option in done.stderr and "write 2% for two percent" in done.stderr


def test_the_same_percentage_form_for_check_and_store(dlperf_exe, tmp_path):
    for args in (["check", BUNDLED, "--references", tmp_path / "r.yaml", "--tolerance", "5"],
                 ["store", "trend", "--store", tmp_path, "--threshold", "0.02"]):
        done = run_cli(dlperf_exe, *args)
        assert done.returncode == 2 and "write 2% for two percent" in done.stderr, args


def test_a_case_threshold_pattern_that_matches_no_case_is_an_error(dlperf_exe):
    done = run_cli(dlperf_exe, "compare", BUNDLED, BUNDLED, "--case-threshold", "*/1n8g=5%")
    assert done.returncode == 2
    assert_one_clean_line(done.stderr, "'*/1n8g' matches no case",
                          "PyTorch/resnet50/amp/b256/1n1g")


def test_a_new_campaign_whose_every_run_failed_is_failed_in_new_exit_4(dlperf_exe, tmp_path):
    """`dlperf run` moves a failed attempt's files aside: NEW holds only done markers that
    say ok: false. Before: 'no logs found under NEW', exit 1."""
    new = tmp_path / "new"
    (new / "1n1g").mkdir(parents=True)
    shutil.copy(BUNDLED / "campaign.yaml", new)
    (new / "1n1g" / "resnet50_b256_amp_1.done").write_text(json.dumps(
        {"run_id": "1n1g/resnet50_b256_amp_1", "ok": False, "state": "failed",
         "reason": "exit status 1"}))
    done = run_cli(dlperf_exe, "compare", BUNDLED, new, "--format", "csv")
    assert done.returncode == 4, done.stderr
    assert "no logs, every run failed" in done.stderr
    assert f"have no throughput in {new} (absent, or every run failed)" in done.stderr
    df = pd.read_csv(io.StringIO(done.stdout))
    assert (df["verdict"] == "failed in new").all() and len(df) == 8


MLPERF = BUNDLED.parents[2] / "tests" / "data" / "real" / "mlperf_v1_0_google_tf_resnet"


@pytest.mark.parametrize("aborted", [("result_3.txt", "result_4.txt"), ()])
def test_mlperf_new_without_a_score_is_failed_in_new(tmp_path, aborted):
    """The real Google TF ResNet results, two of NEW's five runs aborted: no time-to-train
    score (the rule drops one run), which compared as 'failed in both', exit 0; now 'failed
    in new', exit 4 as for any case BASE measured and NEW did not. With no run aborted, the
    same scores: unchanged, exit 0."""
    new = tmp_path / "new"
    shutil.copytree(MLPERF, new)
    for name in aborted:
        text = (new / name).read_text()
        assert text.count('"status": "success"') == 1
        (new / name).write_text(text.replace('"status": "success"', '"status": "aborted"'))
    status, rows = _records(tmp_path, MLPERF, new)
    assert rows["verdict"].tolist() == (["failed in new"] if aborted else ["unchanged"])
    assert status == (4 if aborted else 0)
    status, rows = _records(tmp_path, new, MLPERF)
    assert rows["verdict"].tolist() == (["failed in base"] if aborted else ["unchanged"])
    assert status == 0
