"""`dlperf check LOG_DIR --references FILE` (issue 12, Deliver 2): YAML or CSV references,
value with tolerance or bounds, the same exit rule as compare, one-line errors naming the
file and line."""

from __future__ import annotations

import contextlib
import io
import json
import shutil

import pandas as pd
import pytest
from cli._helpers import ROOT, assert_one_clean_line, run_cli

from analysis.changes import references
from analysis.cli import main
from analysis.errors import UsageError

from .campaigns import BUNDLED

EXAMPLE = ROOT / "examples" / "references" / "dlperf_pytorch_resnet50_v100.yaml"
FP32_1N4G = "PyTorch/resnet50/fp32/b128/1n4g"
MEDIAN_FP32_1N4G = 11661.87  # dlperf summarize data/raw_logs/rn50_4gpu
#: A case named completely, with its source and hardware (every reference needs them).
CASE = ("framework: PyTorch, model: resnet50, precision: fp32, batch_size_per_device: 128, "
        "num_nodes: 1, gpus_per_node: 1, source: s, hardware: 1x A100")


def _check(*args) -> tuple[int, pd.DataFrame]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        status = main(["check", str(BUNDLED), *map(str, args), "--format", "json"])
    return status, pd.DataFrame(json.loads(buf.getvalue()))


def test_the_bundled_dlperf_v100_references_are_other_hardware_or_listed():
    """V100 references against the H200 campaign: no verdict, the reason names both GPUs."""
    status, df = _check("--references", EXAMPLE)
    assert status == 0
    assert len(df) == 10
    other = df[df["verdict"] == "other hardware"]
    assert sorted(other["case_key"]) == [
        "PyTorch/resnet50/amp/b256/1n1g", "PyTorch/resnet50/amp/b256/1n4g",
        "PyTorch/resnet50/fp32/b128/1n1g", FP32_1N4G]
    assert other["ratio"].isna().all()
    assert other["excluded"].str.contains("V100-SXM2-16GB").all()
    assert other["excluded"].str.contains("H200").all()
    assert (df.loc[df["verdict"] != "other hardware", "verdict"] == "no runs").all()
    one = df.set_index("case_key").loc["PyTorch/resnet50/fp32/b128/1n1g"]
    assert (one["value"], one["lower"], one["upper"]) == pytest.approx(
        (367.29, 367.29 * 0.95, 367.29 * 1.05))
    assert one["source"].startswith("DLPerf")


def test_a_case_below_its_reference_fails_the_gate(dlperf_exe, tmp_path):
    refs = tmp_path / "refs.yaml"
    refs.write_text(f"hardware: 4x NVIDIA H200\nsource: ours\nreferences:\n"
                    f"  - key: '{FP32_1N4G}'\n"
                    f"    value: {MEDIAN_FP32_1N4G * 1.05}\n    tolerance: 2%\n")
    done = run_cli(dlperf_exe, "check", BUNDLED, "--references", refs)
    assert done.returncode == 1
    assert_one_clean_line(done.stderr, "1 case(s) slower than their reference", FP32_1N4G)
    refs.write_text(f"- {{key: '{FP32_1N4G}', value: {MEDIAN_FP32_1N4G * 1.01}, "
                    "hardware: 4x H200, source: ours}\n")
    status, df = _check("--references", refs)  # within the default 2 %
    assert status == 0 and df["verdict"].tolist() == ["within"]
    status, df = _check("--references", refs, "--tolerance", "0.5%")
    assert status == 1 and df["verdict"].tolist() == ["slower"]


def test_csv_references_with_bounds(tmp_path):
    refs = tmp_path / "refs.csv"
    refs.write_text("framework,model,precision,batch_size_per_device,num_nodes,gpus_per_node,"
                    "lower,upper,unit,hardware,source\n"
                    "PyTorch,resnet50,FP32,128,1,4,11000,12000,samples/s,4x H200,ours\n"
                    "PyTorch,resnet50,amp,256,1,1,20000,,,4x H200,ours\n"
                    "PyTorch,resnet50,amp,256,2,2,20000,,,4x H200,ours\n")
    status, df = _check("--references", refs)
    assert status == 1
    first = df[df["reference"] == "PyTorch/resnet50/FP32/b128/1n4g"]
    assert first["case_key"].tolist() == [FP32_1N4G] and first["verdict"].tolist() == ["within"]
    amp = df[df["reference"].str.contains("/amp/")]
    assert amp.set_index("case_key")["verdict"].to_dict() == {
        "PyTorch/resnet50/amp/b256/1n1g": "slower",
        "PyTorch/resnet50/amp/b256/2n2g": "within"}  # no upper bound


@pytest.mark.parametrize("name, text, needles", [
    ("r.yaml", f"references:\n  - {{{CASE}, value: 1}}\n  - {{{CASE}}}\n",
     ["r.yaml:3", "value"]),
    ("r.yaml", "- {model: resnet50, value: 1, speed: 3}\n", ["r.yaml:1", "speed"]),
    ("r.yaml", f"- {{{CASE}, value: 1, unit: ms}}\n", ["r.yaml:1", "'ms'"]),
    ("r.yaml", f"- {{{CASE}, lower: 5, upper: 2}}\n", ["r.yaml:1", "lower 5"]),
    # a value outside its own bounds: two references in one entry, neither taken
    ("r.yaml", f"- {{{CASE}, value: 2560, lower: 2700, upper: 2900}}\n",
     ["r.yaml:1", "value 2560 lies outside its own bounds (lower 2700, upper 2900)"]),
    ("r.yaml", f"- {{{CASE}, value: 2560, upper: 2500}}\n",
     ["r.yaml:1", "value 2560 lies outside its own bounds (upper 2500)"]),
    ("r.yaml", f"- {{{CASE}, value: fast}}\n", ["r.yaml:1", "value"]),
    ("r.yaml", "- {value: 3}\n", ["r.yaml:1", "name the case"]),
    ("r.yaml", "references: [unclosed\n", ["r.yaml", "not valid YAML"]),
    ("r.csv", "model,num_nodes,value\nresnet50,one,3\n", ["r.csv:2", "num_nodes"]),
    ("r.csv", "key\tvalue\n", ["r.csv", "no references"]),  # a gate that could never fail
])
def test_a_bad_references_file_is_one_line_naming_file_and_line(dlperf_exe, tmp_path, name,
                                                                 text, needles):
    refs = tmp_path / name
    refs.write_text(text)
    done = run_cli(dlperf_exe, "check", BUNDLED, "--references", refs)
    assert done.returncode == 2 and done.stdout == ""
    assert_one_clean_line(done.stderr, *needles)


def test_a_reference_in_tokens_per_second_is_refused_not_read_as_samples(tmp_path):
    """The medians are samples/s: a tokens/s figure (samples/s x sequence length) was
    compared as it stands, so a GPT case at its reference was 'slower' with ratio 0.00."""
    refs = tmp_path / "r.yaml"
    refs.write_text(f"- {{{CASE}, value: 135373, unit: tokens/s}}\n")
    with pytest.raises(UsageError, match=r"r\.yaml:1 .*tokens/s.*sequence length"):
        references.load_references(refs)


def test_a_reference_whose_case_failed_every_run_fails_the_gate(dlperf_exe, tmp_path):
    """Every 1n2g fp32 run cut before the DLPerf window: the case still matches its
    reference, but with no throughput it read 'no runs' and exited 0 — a CI gate passed a
    total breakage. Now 'all runs failed', exit 4, the case named on stderr."""
    logs = tmp_path / "logs"
    shutil.copytree(BUNDLED, logs)
    for log in (logs / "1n2g").glob("resnet50_b128_fp32_*.log"):
        log.write_bytes(log.read_bytes()[:3000])
    refs = tmp_path / "refs.yaml"
    refs.write_text("hardware: 4x NVIDIA H200\nsource: ours\nreferences:\n"
                    "  - {key: 'PyTorch/resnet50/fp32/b128/1n2g', value: 6000}\n"
                    f"  - {{key: '{FP32_1N4G}', value: {MEDIAN_FP32_1N4G}}}\n")
    done = run_cli(dlperf_exe, "check", logs, "--references", refs, "--format", "csv")
    assert done.returncode == 4, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "dlperf: 1 case(s) with a reference have no throughput (every run failed): "
        "PyTorch/resnet50/fp32/b128/1n2g")
    df = pd.read_csv(io.StringIO(done.stdout)).set_index("case_key")
    assert df.loc["PyTorch/resnet50/fp32/b128/1n2g", "verdict"] == "all runs failed"
    assert df.loc[FP32_1N4G, "verdict"] == "within"


def test_require_all_fails_on_a_reference_no_case_matches(dlperf_exe, tmp_path):
    refs = tmp_path / "refs.yaml"
    refs.write_text("hardware: 4x NVIDIA H200\nsource: ours\nreferences:\n"
                    f"  - {{key: '{FP32_1N4G}', value: {MEDIAN_FP32_1N4G}}}\n"
                    "  - {key: 'PyTorch/resnet50/fp32/b128/4n8g', value: 90000}\n")
    assert run_cli(dlperf_exe, "check", BUNDLED, "--references", refs).returncode == 0
    done = run_cli(dlperf_exe, "check", BUNDLED, "--references", refs, "--require-all")
    assert done.returncode == 4
    assert_one_clean_line(done.stderr, "1 reference(s) match no case (--require-all)",
                          "PyTorch/resnet50/fp32/b128/4n8g")
    help_text = " ".join(run_cli(dlperf_exe, "check", "--help").stdout.split())
    assert "4 a reference matched a case whose runs all failed" in help_text


def _flagged_copy(tmp_path, stated: int):
    """The bundled campaign's fp32 1n1g runs with `global_batch_size : <stated>` in their
    PARAMETER lines (the lines still print what 128 ran): figure_mismatch in summarize."""
    import re

    camp = tmp_path / "camp"
    (camp / "1n1g").mkdir(parents=True)
    for src in (BUNDLED / "1n1g").glob("resnet50_b128_fp32_*"):
        shutil.copy(src, camp / "1n1g")
    for log in (camp / "1n1g").glob("*.log"):
        text = log.read_text()
        log.write_text(re.sub(r"global_batch_size : \d+ ", f"global_batch_size : {stated} ",
                              text, count=1))
    return camp


@pytest.mark.parametrize("stated", [64, 1024])
def test_a_case_checked_on_a_flagged_figure_says_so(tmp_path, stated):
    """A stated global batch the printed throughput contradicts: check said 'slower' (exit 1)
    or 'faster' with nothing else; now the flags column and a stderr line name
    figure_mismatch (the verdict is kept, as compare keeps it)."""
    camp = _flagged_copy(tmp_path, stated)
    refs = tmp_path / "refs.yaml"
    refs.write_text("hardware: 4x NVIDIA H200\nsource: ours\nreferences:\n"
                    "  - key: 'PyTorch/resnet50/fp32/b128/1n1g'\n    value: 3000\n"
                    "    tolerance: 5%\n")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["check", str(camp), "--references", str(refs), "--format", "csv"])
    table = pd.read_csv(io.StringIO(out.getvalue()), keep_default_na=False)
    assert table["flags"].tolist() == ["5 of 5 run(s) figure_mismatch"]
    assert table["verdict"].tolist() == ["slower" if stated < 128 else "faster"]
    assert "checked on a flagged figure: PyTorch/resnet50/fp32/b128/1n1g (5 of 5 run(s) " \
        "figure_mismatch)" in err.getvalue()
    assert status == (1 if stated < 128 else 0)


def test_a_wide_spread_case_within_its_reference_is_flagged():
    """Checked at the summary's default spread threshold, as compare does."""
    summary = pd.DataFrame([{"framework": "PyTorch", "model": "resnet50", "precision": "fp32",
                             "batch_size_per_device": 128, "num_nodes": 1, "gpus_per_node": 1,
                             "case": None, "repeats": 3, "throughput_median": 100.0,
                             "interval_low": 90.0, "interval_high": 99.5, "spread_pct": 9.5,
                             "flags": ""}])
    refs = [{"match": {"framework": "PyTorch", "model": "resnet50", "precision": "fp32",
                       "batch_size_per_device": 128, "num_nodes": 1, "gpus_per_node": 1},
             "value": 100.0, "lower": 95.0, "upper": 105.0, "unit": "samples/s",
             "source": "s", "hardware": "1x H200"}]
    [row] = references.check(summary, refs).to_dict("records")
    assert row["verdict"] == "within" and row["flags"] == "spread 9.5 % > 5 %"


@pytest.mark.parametrize("logs, unit, key", [
    (BUNDLED, "min", "PyTorch/resnet50/fp32/b128/1n4g"),
    (ROOT / "tests" / "data" / "real" / "mlperf_v1_0_nvidia_mxnet_resnet", "samples/s",
     "MXNet/resnet/?/b?/?n?g")])
def test_a_reference_in_another_units_kind_is_a_bad_entry(dlperf_exe, tmp_path, logs, unit,
                                                          key):
    # a time to train for a throughput case (or the reverse) read "all runs failed", exit 4
    refs = tmp_path / "refs.yaml"
    refs.write_text(f"unit: {unit}\ntolerance: 5%\nhardware: 4x H200\nsource: test\n"
                    f"references:\n  - {{key: \"{key}\", value: 25}}\n")
    done = run_cli(dlperf_exe, "check", logs, "--references", refs)
    assert done.returncode == 2, done.stdout + done.stderr
    assert_one_clean_line(done.stderr, f"{refs}:6 (reference 1): unit {unit} for case {key}")
